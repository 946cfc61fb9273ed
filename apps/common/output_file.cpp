#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace raypick::tools {

OutputFile::~OutputFile() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  if (created_) std::remove(path_.c_str());
}

std::string OutputFile::open(const std::string& path, const std::string& what) {
  path_ = path;
  what_ = what;
  struct stat st;
  created_ = ::stat(path.c_str(), &st) != 0;
  // Not truncated yet: a command that fails before write() leaves a file
  // that was there as it was.
  errno = 0;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0) file_ = ::fdopen(fd, "wb");
  if (file_ == nullptr) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    if (fd >= 0 && created_) std::remove(path.c_str());
    return path + ": cannot write the " + what + " file: " + std::strerror(err);
  }
  return {};
}

std::string OutputFile::write(std::string_view bytes) {
  const std::string failed = path_ + ": cannot write the " + what_ + " file";
  if (file_ == nullptr) return failed;
  struct stat st;
  errno = 0;
  // Truncated only now (a device such as /dev/full has nothing to truncate).
  if (::fstat(fileno(file_), &st) == 0 && S_ISREG(st.st_mode) &&
      ::ftruncate(fileno(file_), 0) != 0) {
    return failed + ": " + std::strerror(errno);
  }
  errno = 0;
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file_) == bytes.size() &&
                       std::fflush(file_) == 0 && !std::ferror(file_);
  const int err = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (written && closed) return {};
  if (created_) std::remove(path_.c_str());
  return err != 0 ? failed + ": " + std::strerror(err) : failed;
}

}  // namespace raypick::tools
