#include "file_io.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace raypick::detail {

std::optional<std::string> read_file(const std::string& path,
                                     std::string& why) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status)) {
    why = "cannot open file: " +
          std::make_error_code(std::errc::is_a_directory).message();
    return std::nullopt;
  }
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    why = "cannot open file: not a regular file";
    return std::nullopt;
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    why = "cannot open file: " + std::generic_category().message(errno);
    return std::nullopt;
  }
  std::string data;
  char chunk[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) data.append(chunk, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) {
    why = "cannot read file: " + std::generic_category().message(err);
    return std::nullopt;
  }
  return data;
}

}  // namespace raypick::detail
