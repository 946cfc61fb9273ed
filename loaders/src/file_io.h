// Reading whole files, shared by the loaders. Private to loaders/.
#pragma once

#include "raypick/loaders/load.h"

#include <exception>
#include <new>
#include <optional>
#include <string>
#include <utility>

namespace raypick::detail {

class Budget;

// Reads the whole file at `path`, charging its bytes to `budget` (checked
// against the file's size before anything is read), or says why it cannot:
// `error` is a kIo LoadError with strerror's words ("cannot open file: No
// such file or directory"), or a kMalformed one when the file would pass the
// budget's max_bytes. Regular files only: a directory is refused before it
// is opened (it opens on POSIX and fails only on read), and so are devices
// and FIFOs, so a scene cannot make a loader read /dev/zero forever.
std::optional<std::string> read_file(const std::string& path, Budget& budget,
                                     LoadError& error);

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

// A failed load: no scene, this error.
inline LoadResult fail_result(LoadError::Kind kind, const std::string& file,
                              std::size_t line, std::string message) {
  LoadResult result;
  result.error = LoadError{kind, file, line, std::move(message)};
  return result;
}

// Runs `load()` (returning a LoadResult) with the loader boundary's
// guarantee: whatever a library or the standard library throws becomes a
// LoadError for `path` (out of memory included), never an exception.
template <class Load>
LoadResult guarded_load(const std::string& path, Load&& load) {
  try {
    return load();
  } catch (const std::bad_alloc&) {
    return fail_result(LoadError::Kind::kMalformed, path, 0,
                       "out of memory while loading the scene");
  } catch (const std::exception& e) {
    return fail_result(LoadError::Kind::kMalformed, path, 0,
                       std::string("cannot load scene: ") + e.what());
  }
}

}  // namespace raypick::detail
