// Reading whole files, shared by the loaders. Private to loaders/.
#pragma once

#include "raypick/loaders/load.h"

#include <optional>
#include <string>
#include <utility>

namespace raypick::detail {

class Budget;

// Reads the whole file at `path`, charging its bytes to `budget` (checked
// against the file's size before anything is read), or throws the LoadError
// saying why it cannot: kIo with strerror's words ("cannot open file: No
// such file or directory"), or kMalformed when the file would pass the
// budget's max_bytes. Regular files only: a directory is refused before it
// is opened (it opens on POSIX and fails only on read), and so are devices
// and FIFOs, so a scene cannot make a loader read /dev/zero forever.
std::string read_or_fail(const std::string& path, Budget& budget);

// The file that `reference` (a path as a scene file `scene_file` writes it,
// already decoded) names, if it may be read: the reference must be relative,
// and once joined to the scene file's folder and resolved (".." and symbolic
// links, std::filesystem::weakly_canonical) it must lie inside `root`, or
// inside the scene file's folder when `root` is empty. Returns the resolved
// path (the one to open), or nothing and `why`, which quotes the reference.
// The file need not exist; reading it reports that.
std::optional<std::string> resolve_reference(const std::string& scene_file,
                                             const std::string& reference,
                                             const std::string& root,
                                             std::string& why);

// The folder of `scene_file` ("." for a bare file name): the allowed root
// of the files it names when the options set none.
std::string folder_of(const std::string& scene_file);

// The extension of `path` in ASCII lower case (".glb"), as the loaders
// choose by it; std::tolower would depend on the C locale.
std::string lower_extension(const std::string& path);

// A failed load: this error.
inline LoadResult fail_result(LoadError::Kind kind, const std::string& file,
                              std::size_t line, std::string message) {
  return LoadResult(LoadError{kind, file, line, std::move(message)});
}

}  // namespace raypick::detail
