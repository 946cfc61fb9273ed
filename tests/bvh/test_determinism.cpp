// Answers do not depend on the number of threads: the same scene built,
// refitted and queried on 1, 2 and 4 TBB threads gives the same trees and
// the same hits, bit for bit.
#include "test_util.h"

#include "picker_impl.h"
#include "raypick/bvh/picker.h"
#include "raypick/core/camera.h"
#include "scene_gen.h"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <glm/ext/matrix_transform.hpp>

#include <cstring>
#include <random>

using namespace raypick;

namespace {

// What one run produces: the top-level tree after the build and after a
// refit that moved most objects, and every answer of the batch queries.
struct Run {
  std::vector<unsigned char> built, refitted;  // the top level's nodes' bytes
  std::vector<std::uint32_t> entry_objects;  // the object at each top-level entry
  std::vector<Hit> obb, mesh, obb_moved;
  // After the refit: each object's leaf copy (frame, mask, mesh), by id;
  // and the moved scene's answers of intersect_image (as an image 250 wide).
  std::vector<unsigned char> leaves_moved;
  std::vector<Hit> image_moved;
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

// The bytes of a picker's top-level nodes, whichever their width.
std::vector<unsigned char> top_bytes(const PickerCore& impl) {
  return impl.with_top([](const auto& top) {
    const auto nodes = top.nodes();
    const auto* p = reinterpret_cast<const unsigned char*>(nodes.data());
    return std::vector<unsigned char>(p, p + nodes.size_bytes());
  });
}

Run run_on(int threads, const Scene& scene, const std::vector<Ray>& rays, Isa isa) {
  const tbb::global_control cap(tbb::global_control::max_allowed_parallelism,
                                static_cast<std::size_t>(threads));
  tbb::task_arena arena(threads);
  Run out;
  arena.execute([&] {
    REQUIRE(tbb::this_task_arena::max_concurrency() == threads);
    // A Picker's core, whose trees the test reads: top level and per-mesh
    // trees built in parallel.
    PickerConfig config;
    config.isa = isa;
    PickerCore picker(scene, config);
    const PickerCore& impl = picker;
    const std::span<const Ray> ray_span(rays);
    out.built = top_bytes(impl);
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
    out.refitted = top_bytes(impl);
    out.obb_moved = picker.intersect_batch(ray_span, QueryOptions{PickMode::kObb});
    out.image_moved = picker.intersect_image(ray_span, 250, QueryOptions{PickMode::kObb});
    // The sweep made the moved objects' leaf copies, eight at a time under
    // AVX-512 (leaf_batch.h), else one at a time: the same bytes.
    constexpr std::size_t kLeafBytes = sizeof(LocalFrame) + 2 * sizeof(std::uint32_t);
    out.leaves_moved.assign(scene.objects.size() * kLeafBytes, 0);
    for (const auto& leaf : impl.leaf_) {
      unsigned char* at = out.leaves_moved.data() + leaf.object * kLeafBytes;
      std::memcpy(at, &leaf.frame, sizeof(LocalFrame));
      std::memcpy(at + sizeof(LocalFrame), &leaf.mask, sizeof(std::uint32_t));
      std::memcpy(at + sizeof(LocalFrame) + sizeof(std::uint32_t), &leaf.mesh,
                  sizeof(std::uint32_t));
    }
  });
  return out;
}

// n mixed boxes (mirrored, sheared, flat; seed), every fourth a sphere
// instead.
Scene boxes_and_spheres(std::size_t n, std::uint64_t seed) {
  Scene scene = tools::make_boxes_scene(n, seed, tools::mixed_options());
  scene.meshes.push_back(tools::sphere_mesh(3));
  const auto sphere = static_cast<std::uint32_t>(scene.meshes.size() - 1);
  for (std::size_t i = 0; i < scene.objects.size(); i += 4) scene.objects[i].mesh = sphere;
  return scene;
}

// Rays half aimed at objects, a third with a zero x direction of either
// sign (slab planes through the origin: 0 * inf).
std::vector<Ray> edge_rays(const Scene& scene, std::size_t n, std::uint64_t seed) {
  return test::random_scene_rays(scene, n, seed, test::SceneRayMix{3.0f, 0.5f, 0.5f, 0.3f});
}

}  // namespace

TEST_CASE("trees and answers are the same bit for bit on 1, 2 and 4 threads") {
  // Past 65,536 objects the refit sweeps in parallel, and subtrees of 1,024
  // primitives and more are built as parallel tasks; the sphere's 8,192
  // triangles make its mesh tree a parallel build too.
  Scene scene = tools::make_boxes_scene(70000, 71, tools::mixed_options());
  scene.meshes.push_back(tools::sphere_mesh(5));
  const auto sphere = static_cast<std::uint32_t>(scene.meshes.size() - 1);
  for (std::size_t i = 0; i < scene.objects.size(); i += 3) {
    if (scene.objects[i].mesh == 0) scene.objects[i].mesh = sphere;
  }
  const std::vector<Ray> rays = test::random_scene_rays(scene, 20000, 72);
  // The 8-wide top level, and the 16-wide one of the AVX-512 node test
  // (its own collapse) where the CPU has it.
  std::vector<Isa> isas{Isa::kAvx2};
  if (compiler::cpu_has_avx512()) isas.push_back(Isa::kAvx512);
  std::vector<unsigned char> first_leaves;
  for (const Isa isa : isas) {
    CAPTURE(int(isa));
    const Run one = run_on(1, scene, rays, isa);
    CHECK(same_hits(one.image_moved, one.obb_moved));
    // The leaf copies do not depend on the ISA either (nor on the tree's
    // width: they are compared by object).
    if (first_leaves.empty()) {
      first_leaves = one.leaves_moved;
    } else {
      CHECK(same_bytes(one.leaves_moved, first_leaves));
    }
    // More than one node, whichever the width.
    REQUIRE(one.built.size() > sizeof(WideNode16));
    REQUIRE(one.entry_objects.size() == scene.objects.size());
    for (int threads : {2, 4}) {
      CAPTURE(threads);
      const Run many = run_on(threads, scene, rays, isa);
      CHECK(same_bytes(many.built, one.built));
      CHECK(same_bytes(many.entry_objects, one.entry_objects));
      CHECK(same_bytes(many.refitted, one.refitted));
      CHECK(same_hits(many.obb, one.obb));
      CHECK(same_hits(many.mesh, one.mesh));
      CHECK(same_hits(many.obb_moved, one.obb_moved));
      CHECK(same_hits(many.image_moved, one.image_moved));
      CHECK(same_bytes(many.leaves_moved, one.leaves_moved));
    }
    // The answers are real ones: most rays hit something.
    std::size_t hits = 0;
    for (const Hit& h : one.mesh) hits += h.hit() ? 1 : 0;
    CHECK(hits > rays.size() / 4);
  }
}

TEST_CASE("the AVX2 node test visits the same nodes and gives the same hits as the SSE one") {
  // Mixed objects (mirrored, sheared, flat) and rays with zero direction
  // components of both signs, so that slab planes through the origin (0 * inf)
  // and flat boxes are exercised on both paths. Each picker's ISA is chosen
  // by its config, once.
  const Scene scene = boxes_and_spheres(3000, 81);
  const std::vector<Ray> rays = edge_rays(scene, 4000, 82);
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
    automatic.mesh_mode = false;
    CHECK(Picker(scene, sse).isa() == Isa::kSse2);
    CHECK(Picker(scene, wide).isa() == (avx2 ? Isa::kAvx2 : Isa::kSse2));
    const bool avx512 = avx2 && compiler::cpu_has_avx512();
    CHECK(Picker(scene, automatic).isa() ==
          (avx512 ? Isa::kAvx512 : avx2 ? Isa::kAvx2 : Isa::kSse2));
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

// The 16-wide top levels: the AVX-512 node test's (Isa::kAvx512), and,
// on any CPU, 16-wide nodes under the AVX2 test (two halves per node)
// and the SSE one (PickerConfig::top_width 16).
struct WideCase {
  Isa isa;
  int top_width;
};
const WideCase kWideCases[] = {{Isa::kAvx512, 0}, {Isa::kAvx2, 16}, {Isa::kSse2, 16}};

TEST_CASE("the 16-wide top level answers every query as the 8-wide SSE one, under each node test") {
  // A 16-wide top level is another tree (its own collapse), so only the
  // answers compare, not the nodes: single rays, any-hit, all hits, both
  // batch paths (below 8 MB packets and one ray at a time; packets and
  // interleaved rays), the region and point queries, after a refit, and
  // through saved trees.
  for (const WideCase& c : kWideCases) {
    CAPTURE(int(c.isa));
    CAPTURE(c.top_width);
    Scene scene = boxes_and_spheres(3000, 83);
    const std::vector<Ray> rays = edge_rays(scene, 3000, 84);
    const bool avx512 = compiler::cpu_has_avx512();
    const bool avx2 = compiler::cpu_has_avx2();
    // kAvx512 without AVX-512 falls back to the 8-wide tree.
    const bool sixteen = c.top_width == 16 || avx512;
    if (!sixteen) MESSAGE("this CPU has no AVX-512: kAvx512 falls back to the 8-wide tree");
    auto make = [&](Isa isa, std::size_t interleave_bytes, int top_width = 0) {
      PickerConfig config;
      config.isa = isa;
      config.batch_interleave_bytes = interleave_bytes;
      config.top_width = top_width;
      return Picker(scene, config);
    };
    const std::size_t packets = PickerConfig{}.batch_interleave_bytes;
    Picker sse = make(Isa::kSse2, packets);
    Picker wide = make(c.isa, packets, c.top_width);
    Picker wide_interleaved = make(c.isa, 0, c.top_width);
    CHECK(sse.isa() == Isa::kSse2);
    CHECK(sse.top_width() == 8);
    CHECK(wide.top_width() == (sixteen ? 16 : 8));
    const Isa best = avx2 ? Isa::kAvx2 : Isa::kSse2;
    const Isa expected = c.isa == Isa::kSse2               ? Isa::kSse2
                         : c.isa == Isa::kAvx512 && avx512 ? Isa::kAvx512
                                                           : best;
    CHECK(wide.isa() == expected);
    // The SAH's own collapse: no costlier than the 8-wide one (see the
    // trees' test), and over the same leaves.
    CHECK(wide.bvh_stats().sah_cost <= sse.bvh_stats().sah_cost * (1.0 + 1e-5));
    CHECK(wide.bvh_stats().leaves == sse.bvh_stats().leaves);

    auto compare = [&](const Picker& a, const Picker& b) {
      std::size_t hits = 0;
      for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
        CAPTURE(int(mode));
        const QueryOptions options(mode);
        for (std::size_t i = 0; i < rays.size(); ++i) {
          CAPTURE(i);
          const Hit x = a.intersect(rays[i], options), y = b.intersect(rays[i], options);
          REQUIRE(same_bytes(&x, &y, sizeof(Hit)));
          REQUIRE(a.occluded(rays[i], options) == b.occluded(rays[i], options));
          hits += x.hit() ? 1 : 0;
          if (i % 10 == 0) {
            const std::vector<Hit> all_a = a.intersect_all(rays[i], options, 8);
            REQUIRE(same_hits(all_a, b.intersect_all(rays[i], options, 8)));
          }
        }
        CHECK(same_hits(a.intersect_batch(rays, options), b.intersect_batch(rays, options)));
      }
      CHECK(hits > rays.size() / 2);
      // A region and points.
      CameraSpec spec;
      spec.eye = {60.0, 40.0, 80.0};
      spec.target = {0.0, 0.0, 0.0};
      spec.width = 320;
      spec.height = 240;
      const Frustum region = Camera(spec).frustum(60, 50, 250, 190);
      for (SelectRule rule : {SelectRule::kTouch, SelectRule::kContain}) {
        const std::vector<std::uint32_t> sa = a.select(region, rule, QueryOptions(PickMode::kObb));
        CHECK(!sa.empty());
        CHECK(sa == b.select(region, rule, QueryOptions(PickMode::kObb)));
      }
      // Points: the rays' origins and points next to objects, both modes
      // (mesh mode here without mesh trees), the whole answer.
      std::vector<glm::dvec3> points;
      for (std::size_t i = 0; i < rays.size(); i += 30) points.push_back(glm::dvec3(rays[i].org));
      for (std::size_t k = 0; k < scene.objects.size(); k += 29) {
        points.push_back(scene.objects[k].translation() + glm::dvec3(0.3, -0.2, 0.7));
      }
      for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
        const QueryOptions options{mode};
        for (const glm::dvec3& p : points) {
          const PointHit pa = a.closest_point(p, options), pb = b.closest_point(p, options);
          REQUIRE(pa.object == pb.object);
          REQUIRE(pa.triangle == pb.triangle);
          REQUIRE(pa.distance == pb.distance);
          REQUIRE(pa.point == pb.point);
          REQUIRE(a.containing_object(p, options) == b.containing_object(p, options));
        }
      }
    };
    compare(sse, wide);
    compare(sse, wide_interleaved);

    // Most objects moved, then refitted: the trees' refits agree too.
    std::mt19937_64 rng(85);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (std::uint32_t id = 0; id < scene.objects.size(); ++id) {
      if (id % 3 == 0) continue;
      const glm::mat4 m = glm::translate(glm::mat4{1.0f}, glm::vec3{u(rng), u(rng), u(rng)}) *
                          scene.objects[id].matrix;
      for (Picker* p : {&sse, &wide, &wide_interleaved}) p->set_matrix(id, m);
    }
    for (Picker* p : {&sse, &wide, &wide_interleaved}) {
      REQUIRE(p->commit(CommitMode::kRefit).refitted);
    }
    // A few moved along their paths (the path refit, not the sweep).
    for (std::uint32_t id = 1; id < scene.objects.size(); id += 97) {
      const glm::mat4 m = glm::translate(glm::mat4{1.0f}, glm::vec3{3.0f, -1.0f, 2.0f}) *
                          scene.objects[id].matrix;
      for (Picker* p : {&sse, &wide, &wide_interleaved}) p->set_matrix(id, m);
    }
    for (Picker* p : {&sse, &wide, &wide_interleaved}) {
      REQUIRE(p->commit(CommitMode::kRefit).refitted);
    }
    compare(sse, wide);
    compare(sse, wide_interleaved);

    // Saved trees: a picker of the same node test adopts them; one of the
    // other width refuses them, says why, and builds its own.
    const Picker fresh = make(c.isa, packets, c.top_width);
    const std::string saved = fresh.save_trees();
    PickerConfig same, other;
    same.isa = c.isa;
    same.top_width = c.top_width;
    other.isa = Isa::kSse2;
    std::string why = "unset";
    const Picker adopted = Picker::open(scene, saved, same, &why);
    CHECK(why.empty());
    CHECK(adopted.top_width() == fresh.top_width());
    compare(make(Isa::kSse2, packets), adopted);
    if (sixteen) {
      const Picker refused = Picker::open(scene, saved, other, &why);
      CHECK(why.find("16-wide") != std::string::npos);
      CHECK(refused.isa() == Isa::kSse2);
      CHECK(refused.top_width() == 8);
      const Picker back = Picker::open(scene, make(Isa::kSse2, packets).save_trees(), same, &why);
      CHECK(why.find("8-wide") != std::string::npos);
      CHECK(back.isa() == fresh.isa());
      CHECK(back.top_width() == 16);
    }
  }
}

TEST_CASE("kAuto makes the top level 16 wide at every size where the CPU has AVX-512, else 8 wide") {
  // In both modes, from one object to many, before the first build and
  // after commits that grow the tree.
  const bool avx512 = compiler::cpu_has_avx512() && compiler::cpu_has_avx2();
  const Isa small_isa = compiler::cpu_has_avx2() ? Isa::kAvx2 : Isa::kSse2;
  const Isa auto_isa = avx512 ? Isa::kAvx512 : small_isa;
  const int auto_width = avx512 ? 16 : 8;
  const Scene big = tools::make_boxes_scene(3000, 86);
  for (const bool mesh : {false, true}) {
    CAPTURE(mesh);
    PickerConfig config;
    config.mesh_mode = mesh;
    const Picker empty{config};
    CHECK(empty.isa() == auto_isa);
    CHECK(empty.top_width() == auto_width);
    for (const std::size_t n : {std::size_t{1}, std::size_t{40}, std::size_t{3000}}) {
      CAPTURE(n);
      Scene part = big;
      part.objects.resize(n);
      const Picker p(part, config);
      CHECK(p.isa() == auto_isa);
      CHECK(p.top_width() == auto_width);
    }
    Scene one = big;
    one.objects.resize(1);
    Picker grows(one, config);
    for (std::size_t i = 1; i < 40; ++i) grows.add_object(big.objects[i].mesh, big.objects[i].matrix);
    grows.commit();
    CHECK(grows.object_count() == 40);
    CHECK(grows.isa() == auto_isa);
    CHECK(grows.top_width() == auto_width);
    PickerConfig avx2 = config;
    avx2.isa = Isa::kAvx2;
    CHECK(Picker(big, avx2).isa() == small_isa);
    CHECK(Picker(big, avx2).top_width() == 8);
  }
  // And the answers do not change with the width.
  PickerConfig avx2;
  avx2.isa = Isa::kAvx2;
  const Picker automatic(big), fixed(big, avx2);
  for (const Ray& ray : test::random_scene_rays(big, 2000, 87)) {
    for (const PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
      const Hit x = automatic.intersect(ray, mode), y = fixed.intersect(ray, mode);
      REQUIRE(same_bytes(&x, &y, sizeof(Hit)));
    }
  }
}

TEST_CASE("top_width fixes the top level's width on any CPU, kAuto 16 wide only with AVX-512") {
  // The rule itself, on empty pickers.
  const bool avx512 = compiler::cpu_has_avx2() && compiler::cpu_has_avx512();
  for (const bool mesh : {false, true}) {
    CAPTURE(mesh);
    PickerConfig config;
    config.mesh_mode = mesh;
    const PickerCore automatic(config);
    CHECK(automatic.wide16() == avx512);
    for (const Isa isa : {Isa::kAuto, Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
      CAPTURE(int(isa));
      config.isa = isa;
      for (const int width : {8, 16}) {
        CAPTURE(width);
        config.top_width = width;
        const PickerCore core(config);
        CHECK(core.wide16() == (width == 16));
        // An empty picker has its width and node test already.
        CHECK(core.top_width() == width);
        const Isa best = compiler::cpu_has_avx2() ? Isa::kAvx2 : Isa::kSse2;
        // AVX-512 on either width (an 8-wide tree's walk takes AVX-512VL).
        const Isa expected = isa == Isa::kSse2                 ? Isa::kSse2
                             : avx512 && isa != Isa::kAvx2 ? Isa::kAvx512
                                                               : best;
        CHECK(core.isa() == expected);
      }
      config.top_width = 0;
      const PickerCore core(config);
      if (isa == Isa::kSse2 || isa == Isa::kAvx2) CHECK_FALSE(core.wide16());
      if (isa == Isa::kAvx512 || isa == Isa::kAuto) CHECK(core.wide16() == avx512);
    }
  }
}
