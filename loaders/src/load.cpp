// load_scene(): the extension dispatch, and the error formatting shared by
// every loader.
#include "raypick/loaders/load.h"

#include "budget.h"
#include "file_io.h"

#include <exception>
#include <filesystem>
#include <new>
#include <string>

namespace raypick {

std::string LoadError::to_string() const {
  if (line == 0) return file + ": " + message;
  return file + ":" + std::to_string(line) + ": " + message;
}

namespace {

LoadResult fail(LoadError::Kind kind, const std::string& file,
                std::string message) {
  return detail::fail_result(kind, file, 0, std::move(message));
}

// ASCII lower case only: extensions are ASCII, and std::tolower depends on
// the C locale.
std::string ascii_lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

LoadResult dispatch(const std::string& path, const LoadOptions& options,
                    detail::Budget& budget) {
  const std::string ext =
      ascii_lower(std::filesystem::path(path).extension().string());
  if (ext == ".obj") return detail::load_obj(path, options, budget);
  if (ext == ".gltf" || ext == ".glb") {
    return detail::load_gltf(path, options, budget);
  }
  if (ext == ".json") return detail::load_json_scene(path, options, budget);
  if (ext.empty()) {
    return fail(LoadError::Kind::kUnsupported, path,
                "scene file has no extension (expected .obj, .gltf, .glb or "
                ".json)");
  }
  return fail(LoadError::Kind::kUnsupported, path,
              "unsupported scene extension '" + ext +
                  "' (expected .obj, .gltf, .glb or .json)");
}

}  // namespace

LoadResult detail::load_any(const std::string& path, const LoadOptions& options,
                            Budget& budget) {
  // The loaders catch their own libraries' exceptions; this is the last
  // boundary, for what escapes them (allocation failure while building the
  // error itself, a path the filesystem library refuses).
  return guarded_load(path, [&] { return dispatch(path, options, budget); });
}

LoadResult load_scene(const std::string& path, const LoadOptions& options) {
  detail::Budget budget(options.budget);
  return detail::load_any(path, options, budget);
}

LoadResult load_obj(const std::string& path, const LoadOptions& options) {
  detail::Budget budget(options.budget);
  return detail::load_obj(path, options, budget);
}

LoadResult load_gltf(const std::string& path, const LoadOptions& options) {
  detail::Budget budget(options.budget);
  return detail::load_gltf(path, options, budget);
}

LoadResult load_json_scene(const std::string& path,
                           const LoadOptions& options) {
  detail::Budget budget(options.budget);
  return detail::load_json_scene(path, options, budget);
}

}  // namespace raypick
