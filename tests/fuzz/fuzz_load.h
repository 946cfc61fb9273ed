// Shared by the loader fuzz targets. Loaders read files, so each input is
// written to a file in a folder of this process's own and loaded from there
// under small budgets; a scene that loads is then picked from in both modes.
// The contract checked: a load never crashes, never hangs, never allocates
// past its budgets (libFuzzer's -rss_limit_mb and -malloc_limit_mb catch
// that), ends in exactly one of a scene and an error, an error names its
// file and says something, and a loaded scene is one the Picker accepts.
#pragma once

#include "raypick/bvh/picker.h"
#include "raypick/loaders/load.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace raypick::fuzz {

// Prints what broke and aborts: libFuzzer saves the input as a crash.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "raypick fuzz check failed: %s\n", what.c_str());
  std::abort();
}

// A folder of this process's own under $TMPDIR (or /tmp), created on first
// use and removed at exit. Besides the input it holds two small files that
// inputs may refer to: `cube.obj` (one box) and `tri.gltf` (one triangle,
// its buffer in a data URI), for JSON scenes' mesh files.
inline const std::filesystem::path& work_dir() {
  static const std::filesystem::path dir = [] {
    namespace fs = std::filesystem;
    std::string tmpl = (fs::temp_directory_path() / "raypick-fuzz-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) fail("cannot create a temporary folder");
    const fs::path d = tmpl;
    std::ofstream(d / "cube.obj") << "o cube\n"
        "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
        "f 1 2 3 4\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n";
    // Three float positions (0,0,0), (1,0,0), (0,1,0): 36 bytes in base64.
    std::ofstream(d / "tri.gltf") <<
        R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],)"
        R"("nodes":[{"name":"tri","mesh":0}],)"
        R"("meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],)"
        R"("accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3",)"
        R"("min":[0,0,0],"max":[1,1,0]}],)"
        R"("bufferViews":[{"buffer":0,"byteLength":36}],)"
        R"("buffers":[{"byteLength":36,"uri":"data:application/octet-stream;base64,)"
        R"(AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA"}]})";
    static const std::string keep = d.string();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(keep, ec);
    });
    return d;
  }();
  return dir;
}

// Budgets small enough that any input the fuzzer writes stays cheap.
inline LoadOptions small_budget() {
  LoadOptions options;
  options.budget.max_bytes = std::uint64_t{4} << 20;
  options.budget.max_vertices = std::uint64_t{1} << 16;
  options.budget.max_triangles = std::uint64_t{1} << 16;
  options.budget.max_objects = std::uint64_t{1} << 12;
  return options;
}

// A few rays at the first objects of a loaded scene, in both modes: every
// query path must run cleanly on whatever the loaders accept. A saved
// scene's trees (`trees`), adopted or refused, must give the built
// picker's answers exactly.
inline void pick_some(const Scene& scene, std::string_view trees = {}) {
  Picker picker(scene);
  const Picker adopted = Picker::open(scene, trees);
  PickerConfig obb_only;
  obb_only.mesh_mode = false;
  const Picker adopted_obb = Picker::open(scene, trees, obb_only);
  const std::size_t n = scene.objects.size() < 8 ? scene.objects.size() : 8;
  for (std::size_t i = 0; i < n; ++i) {
    const Aabb box = picker.world_box(static_cast<std::uint32_t>(i));
    if (box.empty()) continue;
    Ray ray;
    ray.org = box.max + glm::vec3{1.0f, 2.0f, 3.0f};
    ray.dir = box.center() - ray.org;
    if (!is_valid(ray)) continue;  // boxes near the float range
    for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
      const Hit hit = picker.intersect(ray, mode);
      if (hit.hit() && hit.object >= scene.objects.size()) fail("hit names no object");
      const Hit other = adopted.intersect(ray, mode);
      if (other.object != hit.object || other.triangle != hit.triangle ||
          !(other.t == hit.t || (other.t != other.t && hit.t != hit.t))) {
        fail("a picker opened from saved trees answers otherwise");
      }
      if (mode == PickMode::kObb) {
        const Hit obb = adopted_obb.intersect(ray, mode);
        if (obb.object != hit.object || !(obb.t == hit.t || (obb.t != obb.t && hit.t != hit.t))) {
          fail("an obb picker opened from saved trees answers otherwise");
        }
      }
      (void)picker.intersect_all(ray, mode, 4);
      (void)picker.occluded(ray, mode);
    }
  }
}

// Writes the input to `name` in the work folder and loads it.
inline int load_input(const std::uint8_t* data, std::size_t size, const char* name) {
  const std::filesystem::path path = work_dir() / name;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) fail("cannot write " + path.string());
  }
  const LoadResult result = load_scene(path.string(), small_budget());
  if (!result.ok()) {
    if (result.error().file.empty() || result.error().message.empty()) {
      fail("an error without its file or message: " + result.error().to_string());
    }
    return 0;
  }
  if (result.scene().objects.empty()) fail("a scene without objects loaded");
  pick_some(result.scene(), result.saved_trees);
  return 0;
}

}  // namespace raypick::fuzz
