// load_scene(): the extension dispatch, and the one boundary every load
// passes: exceptions become a LoadError, and the scene is validated.
#include "raypick/loaders/load.h"

#include "budget.h"
#include "file_io.h"

#include <exception>
#include <new>
#include <string>

namespace raypick {

std::string LoadError::to_string() const {
  if (line == 0) return file + ": " + message;
  return file + ":" + std::to_string(line) + ": " + message;
}

namespace {

LoadResult dispatch(const std::string& path, const LoadOptions& options,
                    detail::Budget& budget) {
  const std::string ext = detail::lower_extension(path);
  if (ext == ".obj") return detail::load_obj(path, options, budget);
  if (ext == ".gltf" || ext == ".glb") {
    return detail::load_gltf(path, options, budget);
  }
  if (ext == ".json") return detail::load_json_scene(path, options, budget);
  if (ext == ".rpscene") return detail::load_saved_scene(path, options, budget);
  if (ext.empty()) {
    return detail::fail_result(LoadError::Kind::kUnsupported, path, 0,
                               "scene file has no extension (expected .obj, "
                               ".gltf, .glb, .json or .rpscene)");
  }
  return detail::fail_result(LoadError::Kind::kUnsupported, path, 0,
                             "unsupported scene extension '" + ext +
                                 "' (expected .obj, .gltf, .glb, .json or .rpscene)");
}

// Runs `load()` with the loader boundary's guarantees: whatever a loader, a
// library or the standard library throws becomes a LoadError for `path`
// (out of memory included), never an exception; and a scene that loaded is
// checked by core's validate_scene(), the last safety net for what the
// engine relies on.
template <class Load>
LoadResult guarded(const std::string& path, Load&& load) {
  const auto failure = [&](std::string message) {
    return detail::fail_result(LoadError::Kind::kMalformed, path, 0,
                               std::move(message));
  };
  try {
    LoadResult result = load();
    if (result.ok()) {
      if (std::string problem = validate_scene(result.scene());
          !problem.empty()) {
        return LoadResult(LoadError{LoadError::Kind::kMalformed, path, 0,
                                    std::move(problem)},
                          std::move(result.warnings));
      }
    }
    return result;
  } catch (const LoadError& e) {
    return LoadResult(e);
  } catch (const std::bad_alloc&) {
    return failure("out of memory while loading the scene");
  } catch (const std::exception& e) {
    return failure(std::string("cannot load scene: ") + e.what());
  }
}

}  // namespace

LoadResult detail::load_any(const std::string& path, const LoadOptions& options,
                            Budget& budget) {
  return guarded(path, [&] { return dispatch(path, options, budget); });
}

LoadResult load_scene(const std::string& path, const LoadOptions& options) {
  detail::Budget budget(options.budget);
  return detail::load_any(path, options, budget);
}

LoadResult decode_scene(std::string_view bytes, const std::string& name,
                        const LoadOptions& options) {
  detail::Budget budget(options.budget);
  return guarded(name, [&]() -> LoadResult {
    if (auto refused = budget.take(detail::Budget::kBytes, bytes.size())) {
      return detail::fail_result(LoadError::Kind::kMalformed, name, 0, *refused);
    }
    return detail::decode_scene(bytes, name, budget, options.require_objects);
  });
}

LoadResult load_obj(const std::string& path, const LoadOptions& options) {
  detail::Budget budget(options.budget);
  return guarded(path, [&] { return detail::load_obj(path, options, budget); });
}

LoadResult load_gltf(const std::string& path, const LoadOptions& options) {
  detail::Budget budget(options.budget);
  return guarded(path,
                 [&] { return detail::load_gltf(path, options, budget); });
}

LoadResult load_json_scene(const std::string& path,
                           const LoadOptions& options) {
  detail::Budget budget(options.budget);
  return guarded(
      path, [&] { return detail::load_json_scene(path, options, budget); });
}

}  // namespace raypick
