// Helpers shared by the loader tests: a temporary directory that cleans up
// after itself, load-and-require helpers, and the outcome every input must
// have.
#pragma once

#include "raypick/loaders/load.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <system_error>

namespace raypick::test {

// A fresh directory under the system's temporary directory, removed with its
// contents when the test ends.
class TempDir {
 public:
  TempDir() {
    namespace fs = std::filesystem;
    std::random_device entropy;
    const auto now =
        std::chrono::steady_clock::now().time_since_epoch().count();
    path_ =
        fs::temp_directory_path() / ("raypick_loaders_" + std::to_string(now) +
                                     "_" + std::to_string(entropy()));
    fs::create_directories(path_);
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

// The 1-based line of the first occurrence of `needle` in `text`.
inline std::size_t line_of(std::string_view text, std::string_view needle) {
  const std::size_t at = text.find(needle);
  REQUIRE(at != std::string_view::npos);
  std::size_t line = 1;
  for (std::size_t i = 0; i < at; ++i) line += text[i] == '\n' ? 1 : 0;
  return line;
}

}  // namespace raypick::test
