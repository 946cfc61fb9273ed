#include "file_io.h"

#include "budget.h"
#include "raypick/core/text.h"

#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace raypick::detail {

std::string read_or_fail(const std::string& path, Budget& budget) {
  namespace fs = std::filesystem;
  const auto fail = [&](LoadError::Kind kind, std::string why) {
    throw LoadError{kind, path, 0, std::move(why)};
  };
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status)) {
    fail(LoadError::Kind::kIo,
         "cannot open file: " +
             std::make_error_code(std::errc::is_a_directory).message());
  }
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    fail(LoadError::Kind::kIo, "cannot open file: not a regular file");
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    fail(LoadError::Kind::kIo,
         "cannot open file: " + std::generic_category().message(errno));
  }
  // The size, to refuse a file past the budget before reading it; the read
  // stops at the budget too, should the file grow meanwhile.
  const std::uintmax_t size = fs::file_size(path, ec);
  const std::uint64_t left = budget.left(Budget::kBytes);
  std::string data;
  bool over = !ec && size > left;
  bool failed = false;
  int err = 0;
  if (!over) {
    if (!ec) data.reserve(static_cast<std::size_t>(size));
    char chunk[1 << 16];
    std::size_t n = 0;
    while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) {
      if (n > left - data.size()) {
        over = true;
        break;
      }
      data.append(chunk, n);
    }
    failed = std::ferror(f) != 0;
    err = errno;
  }
  std::fclose(f);
  if (over) {
    fail(LoadError::Kind::kMalformed, budget.exceeded(Budget::kBytes));
  }
  if (failed) {
    fail(LoadError::Kind::kIo,
         "cannot read file: " + std::generic_category().message(err));
  }
  // Fits max_bytes (checked above); an explicit max_memory may still refuse.
  if (auto refused = budget.take(Budget::kBytes, data.size())) {
    fail(LoadError::Kind::kMalformed, *refused);
  }
  return data;
}

}  // namespace raypick::detail

namespace raypick::detail {

namespace {

// True when `path` is `folder` or lies below it; both are absolute and
// normal (weakly_canonical's output), compared element by element so that
// "/data/scene2" is not inside "/data/scene".
bool is_inside(const std::filesystem::path& path,
               const std::filesystem::path& folder) {
  auto p = path.begin();
  for (const std::filesystem::path& element : folder) {
    if (element.empty()) continue;  // the trailing "" of "/a/b/"
    if (p == path.end() || *p != element) return false;
    ++p;
  }
  return true;
}

}  // namespace

std::string lower_extension(const std::string& path) {
  std::string s = std::filesystem::path(path).extension().string();
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

std::string folder_of(const std::string& scene_file) {
  const std::filesystem::path dir =
      std::filesystem::path(scene_file).parent_path();
  return dir.empty() ? std::string(".") : dir.string();
}

std::optional<std::string> resolve_reference(const std::string& scene_file,
                                             const std::string& reference,
                                             const std::string& root,
                                             std::string& why) {
  namespace fs = std::filesystem;
  const std::string quoted = "'" + raypick::printable(reference, 200) + "'";
  const fs::path ref(reference);
  if (ref.empty()) {
    why = "the file reference is empty";
    return std::nullopt;
  }
  if (ref.has_root_name() || ref.has_root_directory()) {
    why = quoted +
          " is an absolute path; a scene may only refer to files by a "
          "relative path inside " +
          (root.empty() ? std::string("its own folder") : "the root folder");
    return std::nullopt;
  }
  std::error_code ec;
  const fs::path folder =
      fs::weakly_canonical(fs::absolute(folder_of(scene_file), ec), ec);
  fs::path allowed = folder;
  if (!ec && !root.empty()) {
    allowed = fs::weakly_canonical(fs::absolute(root, ec), ec);
  }
  fs::path target;
  if (!ec) target = fs::weakly_canonical(folder / ref, ec);
  if (ec) {
    why = "cannot resolve the file reference " + quoted + ": " + ec.message();
    return std::nullopt;
  }
  if (!is_inside(target, allowed)) {
    why = quoted + " resolves to '" + raypick::printable(target.string(), 200) +
          "', outside " +
          (root.empty() ? "the scene file's folder" : "the root folder") +
          " '" + raypick::printable(allowed.string(), 200) +
          "' (a scene may only refer to files inside it)";
    return std::nullopt;
  }
  return target.string();
}

}  // namespace raypick::detail
