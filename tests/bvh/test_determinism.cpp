// Answers do not depend on the number of threads: the same scene built,
// refitted and queried on 1, 2 and 4 TBB threads gives the same trees and
// the same hits, bit for bit.
#include "test_util.h"

#include "picker_impl.h"
#include "raypick/bvh/picker.h"
#include "scene_gen.h"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <glm/ext/matrix_transform.hpp>

#include <cstring>

using namespace raypick;

namespace {

// What one run produces: the top-level tree after the build and after a
// refit that moved most objects, and every answer of the batch queries.
struct Run {
  std::vector<WideNode> built, refitted;
  std::vector<std::uint32_t> entry_objects;  // the object at each top-level entry
  std::vector<Hit> obb, mesh, obb_moved;
};

bool same_bytes(const void* a, const void* b, std::size_t n) {
  return n == 0 || std::memcmp(a, b, n) == 0;
}

template <typename T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && same_bytes(a.data(), b.data(), a.size() * sizeof(T));
}

bool same_hits(const std::vector<Hit>& a, const std::vector<Hit>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    // Hit has no padding: every field is 4 bytes.
    if (!same_bytes(&a[i], &b[i], sizeof(Hit))) return false;
  }
  return true;
}

Run run_on(int threads, const Scene& scene, const std::vector<Ray>& rays) {
  const tbb::global_control cap(tbb::global_control::max_allowed_parallelism,
                                static_cast<std::size_t>(threads));
  tbb::task_arena arena(threads);
  Run out;
  arena.execute([&] {
    REQUIRE(tbb::this_task_arena::max_concurrency() == threads);
    // A Picker's core, whose trees the test reads: top level and per-mesh
    // trees built in parallel.
    PickerCore picker(scene);
    const PickerCore& impl = picker;
    const std::span<const Ray> ray_span(rays);
    out.built.assign(std::get<WideBvh>(impl.top_).nodes().begin(), std::get<WideBvh>(impl.top_).nodes().end());
    for (const auto& leaf : impl.leaf_) out.entry_objects.push_back(leaf.object);
    out.obb = picker.intersect_batch(ray_span, QueryOptions{PickMode::kObb});
    out.mesh = picker.intersect_batch(ray_span, QueryOptions{PickMode::kMesh});
    // Move all but every fifth object: the refit takes the parallel sweep.
    for (std::uint32_t id = 0; id < scene.objects.size(); ++id) {
      if (id % 5 == 0) continue;
      const glm::vec3 d{float(id % 7) * 0.1f, float(id % 3) * -0.2f, 0.05f};
      picker.set_matrix(id, glm::translate(glm::mat4{1.0f}, d) * scene.objects[id].matrix);
    }
    const CommitStats st = picker.commit(CommitMode::kRefit);
    REQUIRE(st.refitted);
    out.refitted.assign(std::get<WideBvh>(impl.top_).nodes().begin(), std::get<WideBvh>(impl.top_).nodes().end());
    out.obb_moved = picker.intersect_batch(ray_span, QueryOptions{PickMode::kObb});
  });
  return out;
}

}  // namespace

TEST_CASE("trees and answers are the same bit for bit on 1, 2 and 4 threads") {
  // Past 65,536 objects the refit sweeps in parallel, and subtrees of 4,096
  // primitives and more are built as parallel tasks; the sphere's 8,192
  // triangles make its mesh tree a parallel build too.
  Scene scene = tools::make_boxes_scene(70000, 71, tools::mixed_options());
  scene.meshes.push_back(tools::sphere_mesh(5));
  const auto sphere = static_cast<std::uint32_t>(scene.meshes.size() - 1);
  for (std::size_t i = 0; i < scene.objects.size(); i += 3) {
    if (scene.objects[i].mesh == 0) scene.objects[i].mesh = sphere;
  }
  const std::vector<Ray> rays = test::random_scene_rays(scene, 20000, 72);
  const Run one = run_on(1, scene, rays);
  REQUIRE(one.built.size() > 1);
  REQUIRE(one.entry_objects.size() == scene.objects.size());
  for (int threads : {2, 4}) {
    CAPTURE(threads);
    const Run many = run_on(threads, scene, rays);
    CHECK(same_bytes(many.built, one.built));
    CHECK(same_bytes(many.entry_objects, one.entry_objects));
    CHECK(same_bytes(many.refitted, one.refitted));
    CHECK(same_hits(many.obb, one.obb));
    CHECK(same_hits(many.mesh, one.mesh));
    CHECK(same_hits(many.obb_moved, one.obb_moved));
  }
  // The answers are real ones: most rays hit something.
  std::size_t hits = 0;
  for (const Hit& h : one.mesh) hits += h.hit() ? 1 : 0;
  CHECK(hits > rays.size() / 4);
}

TEST_CASE("the AVX2 node test visits the same nodes and gives the same hits as the SSE one") {
  // Mixed objects (mirrored, sheared, flat) and rays with zero direction
  // components of both signs, so that slab planes through the origin (0 * inf)
  // and flat boxes are exercised on both paths. Each picker's ISA is chosen
  // by its config, once.
  Scene scene = tools::make_boxes_scene(3000, 81, tools::mixed_options());
  scene.meshes.push_back(tools::sphere_mesh(3));
  const auto sphere = static_cast<std::uint32_t>(scene.meshes.size() - 1);
  for (std::size_t i = 0; i < scene.objects.size(); i += 4) scene.objects[i].mesh = sphere;
  const std::vector<Ray> rays =
      test::random_scene_rays(scene, 4000, 82, test::SceneRayMix{3.0f, 0.5f, 0.5f, 0.3f});
  auto answers = [&](Isa isa, PickMode mode) {
    PickerConfig config;
    config.mesh_mode = true;
    config.isa = isa;
    const Picker picker(scene, config);
    std::vector<PickResult> out;
    for (const Ray& ray : rays) out.push_back(picker.intersect_stats(ray, QueryOptions{mode}));
    return out;
  };
  const bool avx2 = compiler::cpu_has_avx2();
  {
    PickerConfig sse, wide, automatic;
    sse.isa = Isa::kSse2;
    wide.isa = Isa::kAvx2;
    CHECK(Picker(scene, sse).isa() == Isa::kSse2);
    CHECK(Picker(scene, wide).isa() == (avx2 ? Isa::kAvx2 : Isa::kSse2));
    CHECK(Picker(scene, automatic).isa() == (avx2 ? Isa::kAvx2 : Isa::kSse2));
  }
  if (!avx2) MESSAGE("this CPU has no AVX2: the SSE path is compared with itself");
  std::size_t hits = 0;
  for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
    const std::vector<PickResult> sse = answers(Isa::kSse2, mode);
    const std::vector<PickResult> wide = answers(Isa::kAvx2, mode);
    for (std::size_t i = 0; i < rays.size(); ++i) {
      CAPTURE(i);
      REQUIRE(same_bytes(&wide[i].hit, &sse[i].hit, sizeof(Hit)));
      REQUIRE(wide[i].stats.nodes_visited == sse[i].stats.nodes_visited);
      REQUIRE(wide[i].stats.leaves_visited == sse[i].stats.leaves_visited);
      REQUIRE(wide[i].stats.prims_tested == sse[i].stats.prims_tested);
      hits += sse[i].hit.hit() ? 1 : 0;
    }
  }
  CHECK(hits > rays.size() / 2);
}
