// An output file (a PNG, bench's JSON, validate's dump) opened before the
// work that fills it, so that a path that cannot be written fails at once,
// and written whole at the end. A file that was there keeps its contents
// until write(); should the OutputFile be destroyed before write()
// succeeded (an error or an exception on the way), a file that open()
// created is removed again: a failed command leaves no empty or partial
// file behind.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace raypick::tools {

class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  // Opens `path` for writing, creating it if need be; "" on success, else
  // "PATH: cannot write the WHAT file: REASON". `what` names the file in
  // messages ("PNG", "JSON", "dump").
  std::string open(const std::string& path, const std::string& what);
  // Replaces the file's contents with `bytes` and closes it; "" on
  // success, else "PATH: cannot write the WHAT file[: REASON]".
  std::string write(std::string_view bytes);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string what_;
  std::FILE* file_ = nullptr;
  bool created_ = false;
};

}  // namespace raypick::tools
