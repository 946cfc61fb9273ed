// A temporary directory for tests: TempDir, a fresh directory removed with
// its contents when it goes out of scope, and temp_dir(), one of them for
// the whole test process.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <unistd.h>

namespace raypick::test {

// A fresh directory under the system's temporary directory, removed with its
// contents when it goes out of scope.
class TempDir {
 public:
  TempDir() {
    // Short (messages quote paths up to 40 bytes): this process's id and a
    // count, so that neither tests in parallel processes nor two TempDirs
    // of one process share a directory.
    static std::atomic<unsigned> count{0};
    path_ = std::filesystem::temp_directory_path() /
            ("rp_" + std::to_string(::getpid()) + "_" + std::to_string(count++));
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);  // left by an earlier process
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `bytes` exactly as given (binary mode: "\r\n" stays) and returns
  // the file's path. `name` may contain a subdirectory that exists.
  std::string write(const std::string& name, std::string_view bytes) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
    return file.string();
  }

  std::string path_of(const std::string& name) const {
    return (path_ / name).string();
  }

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A directory of this test process's own, made on first use and removed
// when the process exits.
inline const TempDir& process_dir() {
  static const TempDir dir;
  return dir;
}
inline const std::filesystem::path& temp_dir() { return process_dir().path(); }

}  // namespace raypick::test
