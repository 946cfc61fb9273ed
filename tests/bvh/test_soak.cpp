// A picker that runs for days: the embedded Picker as an editor uses it,
// frame after frame of moves, adds, removals and mask changes, each
// committed and then queried from two threads; every few frames the
// answers are checked against brute force (obb mode) and a fresh build
// (mesh mode), and the process's memory must stay where it was after the
// warm-up. Short by default (about 2 s; "concurrent" in its name, so the
// TSan step runs it); RAYPICK_SOAK_SECONDS=600 runs it for 10 minutes
// (docs/testing.md).
#include "test_util.h"
#include "support/obb_brute_force.h"

#include "bench_scenes.h"
#include "raypick/bvh/picker.h"
#include "scene_gen.h"

#include <malloc.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>

#if defined(__SANITIZE_ADDRESS__)
// libasan's (declared in clang's sanitizer/allocator_interface.h, which
// GCC does not ship).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace raypick {
namespace {

// The memory the process holds: its resident pages after malloc_trim;
// under AddressSanitizer the bytes its allocator has handed out and not
// got back, since its quarantine keeps freed blocks resident (up to 256
// MB) and a process that starts with this test would grow until it is full.
std::size_t held_bytes() {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#else
  malloc_trim(0);
  return tools::resident_bytes();
#endif
}

TEST_CASE("concurrent soak: frames of moves, adds, removals and mask changes stay right, memory flat") {
  const char* env = std::getenv("RAYPICK_SOAK_SECONDS");
  const double seconds = env ? std::max(1.0, std::atof(env)) : 2.0;
  Scene scene = tools::make_boxes_scene(1500, 61, tools::mixed_options());
  std::vector<bool> alive(scene.objects.size(), true);
  std::vector<std::uint32_t> masks(scene.objects.size(), ~0u);
  PickerConfig config;
  config.mesh_mode = true;
  Picker picker(scene, config);
  std::mt19937_64 rng(62);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const Aabb bounds = world_bounds(scene);
  const glm::vec3 size = bounds.max - bounds.min;
  auto random_place = [&] {
    glm::mat4 m = test::random_affine(rng, true);
    m[3] = glm::vec4(bounds.min + (glm::vec3{u(rng), u(rng), u(rng)} * 0.5f + 0.5f) * size, 1.0f);
    return m;
  };
  std::size_t frames = 0, queries = 0, checks = 0, rss_warm = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (elapsed() < seconds || frames < 20) {
    // The editor's frame: 2% of the objects moved, a few masks changed,
    // and every 5th frame 4 objects added and 4 removed.
    for (int k = 0; k < 30; ++k) {
      const auto id = static_cast<std::uint32_t>(rng() % scene.objects.size());
      if (!alive[id]) continue;
      scene.objects[id].matrix = random_place();
      picker.set_matrix(id, scene.objects[id].matrix);
    }
    for (int k = 0; k < 3; ++k) {
      const auto id = static_cast<std::uint32_t>(rng() % scene.objects.size());
      masks[id] = static_cast<std::uint32_t>(rng() % 4);
      picker.set_mask(id, masks[id]);
    }
    if (frames % 5 == 0) {
      for (int k = 0; k < 4; ++k) {
        Object o;
        o.mesh = static_cast<std::uint32_t>(rng() % scene.meshes.size());
        o.matrix = random_place();
        const std::uint32_t id = picker.add_object(o.mesh, o.matrix, ~0u);
        REQUIRE(id == scene.objects.size());
        scene.objects.push_back(o);
        alive.push_back(true);
        masks.push_back(~0u);
        const auto gone = static_cast<std::uint32_t>(rng() % scene.objects.size());
        if (alive[gone]) {
          picker.remove_object(gone);
          alive[gone] = false;
        }
      }
    }
    picker.commit();
    // Queries from two threads on the committed picker.
    const std::vector<Ray> rays =
        test::random_scene_rays(scene, 256, 1000 + frames, test::SceneRayMix{2.0f, 0.6f, 0.5f, 0.1f});
    std::vector<Hit> obb_hits(rays.size()), mesh_hits(rays.size());
    const QueryOptions obb_opt(PickMode::kObb, 0x3u), mesh_opt(PickMode::kMesh, 0x3u);
    std::thread a([&] {
      for (std::size_t i = 0; i < rays.size(); i += 2) obb_hits[i] = picker.intersect(rays[i], obb_opt);
      for (std::size_t i = 0; i < rays.size(); i += 2) mesh_hits[i] = picker.intersect(rays[i], mesh_opt);
    });
    std::thread b([&] {
      for (std::size_t i = 1; i < rays.size(); i += 2) obb_hits[i] = picker.intersect(rays[i], obb_opt);
      const std::vector<Hit> batch = picker.intersect_batch(rays, mesh_opt);
      for (std::size_t i = 1; i < rays.size(); i += 2) mesh_hits[i] = batch[i];
    });
    a.join();
    b.join();
    queries += 2 * rays.size();
    if (frames % 10 == 0) {
      // Against brute force (obb) and a picker built fresh (mesh).
      Scene live = scene;
      for (std::size_t i = 0; i < live.objects.size(); ++i) {
        if (!alive[i]) live.objects[i].matrix = glm::mat4{0.0f};  // never hit
        live.objects[i].mask = masks[i];
      }
      const Picker fresh(live, config);
      const test::ObbBruteForce brute(scene);
      for (std::size_t i = 0; i < rays.size(); ++i) {
        const Hit want = brute.nearest(
            rays[i], [&](std::uint32_t id) { return alive[id] && (masks[id] & 0x3u) != 0; });
        REQUIRE(obb_hits[i].object == want.object);
        REQUIRE(obb_hits[i].t == want.t);
        const Hit fresh_mesh = fresh.intersect(rays[i], mesh_opt);
        REQUIRE(mesh_hits[i].object == fresh_mesh.object);
        REQUIRE(mesh_hits[i].t == fresh_mesh.t);
        REQUIRE(mesh_hits[i].triangle == fresh_mesh.triangle);
        ++checks;
      }
    }
    ++frames;
    if (frames == 20) rss_warm = held_bytes();
  }
  const std::size_t rss_end = held_bytes();
  MESSAGE("soak: " << frames << " frames, " << queries << " queries, " << checks
                   << " checked against brute force and a fresh build; memory held after warm-up "
                   << rss_warm / 1024 << " KiB, at the end " << rss_end / 1024 << " KiB");
  CHECK(checks >= 2 * 256);
  // Flat memory: a few percent over the warm-up figure (ids are never
  // reused, so each frame's 4 adds keep 4 records: about 0.8 KiB a frame).
  CHECK(rss_end <= rss_warm + rss_warm / 20 + frames * 1024);
}

}  // namespace
}  // namespace raypick
