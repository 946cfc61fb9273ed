#include "common.h"

#include "raypick/core/text.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace raypick::cli {

int fail(int status, const std::string& message) {
  std::fflush(stdout);
  const std::string line = "raypick: " + printable(message) + "\n";
  std::fputs(line.c_str(), stderr);
  return status;
}

int finish_output(int status) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (flushed && !std::ferror(stdout)) return status;
  // A write that failed earlier leaves the error flag; errno then may no
  // longer say why.
  std::string why = "cannot write to standard output";
  if (!flushed && err != 0) why += std::string(": ") + std::strerror(err);
  return fail(kExitBadInput, why);
}

}  // namespace raypick::cli
