// Helpers shared by the loader tests: the temporary directory (TempDir,
// temp_dir.h), load-and-require helpers, and the outcome every input must
// have.
#pragma once

#include "temp_dir.h"

#include "raypick/loaders/load.h"

#include <doctest/doctest.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace raypick::test {

// Loads `path` and requires success and a sound scene.
inline Scene require_load(const std::string& path) {
  LoadResult result = load_scene(path);
  INFO("load error: ", (!result.ok() ? result.error().to_string() : "none"));
  REQUIRE(result.ok());
  CHECK(validate_scene(result.scene()).empty());
  return result.scene();
}

// Loads `path` and requires failure with a message naming the file.
inline LoadError require_error(const std::string& path) {
  LoadResult result = load_scene(path);
  INFO("unexpectedly loaded: ", path);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().file == path);
  CHECK_FALSE(result.error().message.empty());
  return result.error();
}

// The outcome every input must have, whatever it holds: a sound scene with
// at least one object, or an error with a message. Returns whether it
// loaded.
inline bool loads_or_fails_cleanly(const std::string& path) {
  const LoadResult result = load_scene(path);
  if (result.ok()) {
    CHECK_FALSE(result.scene().objects.empty());
    CHECK(validate_scene(result.scene()).empty());
    return true;
  }
  CHECK(result.error().file == path);
  CHECK_FALSE(result.error().message.empty());
  return false;
}

inline const Mesh& mesh_of(const Scene& scene, std::size_t object) {
  REQUIRE(object < scene.objects.size());
  REQUIRE(scene.objects[object].mesh < scene.meshes.size());
  return scene.meshes[scene.objects[object].mesh];
}

// The objects' names, in object id order.
inline std::vector<std::string> object_names(const Scene& scene) {
  std::vector<std::string> names;
  for (const Object& object : scene.objects) names.push_back(object.name);
  return names;
}

// The 1-based line of the first occurrence of `needle` in `text`.
inline std::size_t line_of(std::string_view text, std::string_view needle) {
  const std::size_t at = text.find(needle);
  REQUIRE(at != std::string_view::npos);
  std::size_t line = 1;
  for (std::size_t i = 0; i < at; ++i) line += text[i] == '\n' ? 1 : 0;
  return line;
}

}  // namespace raypick::test
