// The embedding API: adds, removals and moves with commit(); masks and
// filters; refit versus rebuild; batch and concurrent queries.
#include "test_util.h"

#include "embree_scene.h"
#include "support/frame_oracle.h"
#include "support/obb_brute_force.h"
#include "picker_impl.h"
#include "raypick/bvh/picker.h"
#include "scene_gen.h"
#include "validate.h"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <type_traits>

using namespace raypick;

namespace {

// The picker's objects as the test believes them to be: a Scene whose
// object ids match the picker's. A removed object keeps its slot with an
// empty mesh, so it can never be hit.
struct Mirror {
  Scene scene;
  std::vector<std::uint32_t> masks;
  std::uint32_t empty_mesh;

  // Sets object `id`'s matrix in `picker` (a Picker or a PickerCore) and
  // here.
  template <class P>
  void set_matrix(P& picker, std::uint32_t id, const glm::mat4& matrix) {
    picker.set_matrix(id, matrix);
    scene.objects[id].matrix = matrix;
  }
  // Removes object `id` from `picker`; here it keeps its slot, never hit.
  template <class P>
  void remove(P& picker, std::uint32_t id) {
    picker.remove_object(id);
    scene.objects[id].mesh = empty_mesh;
  }
};

// Random translations: each by (u(rng), u(rng), u(rng)).
struct Shifts {
  std::mt19937_64 rng;
  std::uniform_real_distribution<float> u;
  glm::mat4 next() { return glm::translate(glm::mat4{1.0f}, {u(rng), u(rng), u(rng)}); }
};

// Rays over the scene with a wider margin.
constexpr test::SceneRayMix kDynamicMix{5.0f, 0.5f, 0.0f, 0.0f};

Mirror make_mirror(const Scene& base) {
  Mirror m{base, std::vector<std::uint32_t>(base.objects.size(), ~0u), 0};
  m.scene.meshes.push_back(Mesh{});
  m.empty_mesh = static_cast<std::uint32_t>(m.scene.meshes.size() - 1);
  return m;
}

// Brute force over the mirror's objects as they are when it is made, with
// the query's mask and filter: test::ObbBruteForce.
class Brute {
 public:
  explicit Brute(const Mirror& m) : m_(m), all_(m.scene) {}
  Hit operator()(const Ray& ray, const QueryOptions& opt) const {
    return all_.nearest(ray, [&](std::uint32_t i) {
      return (m_.masks[i] & opt.mask) != 0 && (!opt.filter || opt.filter(i));
    });
  }

 private:
  const Mirror& m_;
  test::ObbBruteForce all_;
};

// Every closest hit of `picker` (a PickerCore) on 300 rays over the
// mirror's scene equals brute force: no box too small.
void require_brute_answers(const PickerCore& picker, const Mirror& m, std::uint64_t seed) {
  const QueryOptions any;
  const Brute brute(m);
  for (const Ray& ray : test::random_scene_rays(m.scene, 300, seed, kDynamicMix)) {
    const Hit expected = brute(ray, any);
    const Hit got = picker.intersect(ray, any).hit;
    REQUIRE(got.object == expected.object);
    REQUIRE(got.t == expected.t);
  }
}

}  // namespace

TEST_CASE("after random moves, inserts and removals every query equals brute force and a fresh build") {
  const Scene base = tools::make_boxes_scene(600, 31);
  Picker picker(base);
  Mirror m = make_mirror(base);
  std::mt19937_64 rng(32);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const float extent = 4.0f * std::cbrt(600.0f);
  for (int round = 0; round < 8; ++round) {
    CAPTURE(round);
    // Move some, remove some, add some, retag some.
    for (int k = 0; k < 60; ++k) {
      const auto id = static_cast<std::uint32_t>(u(rng) * float(m.scene.objects.size())) %
                      static_cast<std::uint32_t>(m.scene.objects.size());
      if (m.scene.objects[id].mesh == m.empty_mesh) continue;  // removed
      const float what = u(rng);
      if (what < 0.6f) {
        m.set_matrix(picker, id,
                     glm::translate(glm::mat4{1.0f}, {u(rng) * 6 - 3, u(rng) * 6 - 3, u(rng) * 6 - 3}) *
                         m.scene.objects[id].matrix);
      } else if (what < 0.75f) {
        m.remove(picker, id);
      } else if (what < 0.9f) {
        const std::uint32_t mask = 1u << (static_cast<unsigned>(u(rng) * 4.0f) & 3u);
        picker.set_mask(id, mask);
        m.masks[id] = mask;
      } else {
        Object o = m.scene.objects[id];
        o.matrix = glm::translate(glm::mat4{1.0f}, {u(rng) * extent, u(rng) * extent, u(rng) * extent});
        const std::uint32_t nid = picker.add_object(o.mesh, o.matrix);
        CHECK(nid == m.scene.objects.size());  // ids are never reused
        m.scene.objects.push_back(o);
        m.masks.push_back(~0u);
      }
    }
    const CommitStats st = picker.commit();
    CHECK((st.rebuilt || st.refitted));
    QueryOptions masked;
    masked.mask = 0b0101;
    QueryOptions filtered;
    filtered.filter = [](std::uint32_t id) { return id % 3 != 0; };
    // A fresh picker from the mirror must answer the same.
    Scene fresh_scene = m.scene;
    Picker fresh(fresh_scene);
    for (std::uint32_t i = 0; i < m.masks.size(); ++i) fresh.set_mask(i, m.masks[i]);
    const Brute brute(m);
    for (const Ray& ray : test::random_scene_rays(m.scene, 600, 100 + round, kDynamicMix)) {
      for (const QueryOptions* opt : {&masked, &filtered}) {
        const Hit expected = brute(ray, *opt);
        const Hit got = picker.intersect(ray, *opt);
        REQUIRE(got.object == expected.object);
        REQUIRE(got.t == expected.t);
        const Hit again = fresh.intersect(ray, *opt);
        CHECK(again.object == got.object);
        CHECK(picker.occluded(ray, *opt) == expected.hit());
        const auto all = picker.intersect_all(ray, *opt);
        CHECK(all.size() == fresh.intersect_all(ray, *opt).size());
        if (expected.hit()) {
          REQUIRE_FALSE(all.empty());
          CHECK(all.front().object == expected.object);
        }
      }
    }
  }
}

TEST_CASE("moving most of a large scene refits in one parallel sweep with exact boxes") {
  // Past 65,536 entries the commit sweep runs on TBB ranges aligned to the
  // tree's leaf slots; every box must still come out exact.
  const Scene base = tools::make_boxes_scene(70000, 43);
  PickerCore picker(base);  // a Picker's core, whose tree the test reads
  Mirror m = make_mirror(base);
  Shifts shifts{std::mt19937_64(44), std::uniform_real_distribution<float>(-1.0f, 1.0f)};
  for (std::uint32_t id = 0; id < base.objects.size(); ++id) {
    if (id % 5 == 0) continue;  // some stay
    m.set_matrix(picker, id, shifts.next() * m.scene.objects[id].matrix);
  }
  const CommitStats st = picker.commit(CommitMode::kRefit);
  REQUIRE(st.refitted);
  REQUIRE_FALSE(st.rebuilt);
  // The top level of either width (kAuto makes it 16 wide at this size
  // where the CPU has AVX-512).
  picker.with_top([&](const auto& tree) {
    constexpr int kWidth = std::decay_t<decltype(tree)>::kWidth;
    // The sweep: the leaf slots holding a moved object, then every inner
    // slot (one per node but the root).
    std::size_t moved_slots = 0;
    for (const auto& n : tree.nodes()) {
      for (int s = 0; s < kWidth; ++s) {
        bool any = false;
        for (std::uint32_t e = n.child[s]; n.is_leaf(s) && e < n.child[s] + n.count[s]; ++e) {
          any = any || picker.leaf_[e].object % 5 != 0;
        }
        moved_slots += any;
      }
    }
    CHECK(st.slots_updated == moved_slots + tree.nodes().size() - 1);
    // The root's box is exactly the union of the objects' boxes, and every
    // inner slot's box exactly its child's.
    Aabb all;
    for (std::uint32_t id = 0; id < base.objects.size(); ++id) all.extend(picker.world_box(id));
    CHECK(picker.world_bounds() == all);
    for (const auto& n : tree.nodes()) {
      for (int s = 0; s < kWidth; ++s) {
        if (n.is_inner(s)) REQUIRE(n.slot_box(s) == tree.nodes()[n.child[s]].box());
      }
    }
  });
  CHECK(st.sah_cost == doctest::Approx(picker.bvh_stats().sah_cost).epsilon(1e-9));
  require_brute_answers(picker, m, 45);
}

TEST_CASE("moving a sixth of the objects, whole leaf slots among them, refits along their paths with exact boxes at both top widths") {
  // Under 1 in 5 moved the commit takes the path refit (its moved leaf
  // copies made first, in the order of the moves): every slot box must
  // still come out exact, leaf slots whose entries all moved, a singular
  // matrix and both widths of the top level included.
  for (int width : {8, 16}) {
    CAPTURE(width);
    const Scene base = tools::make_boxes_scene(20000, 47);
    PickerConfig config;
    config.top_width = width;
    PickerCore picker(base, config);
    Mirror m = make_mirror(base);
    Shifts shifts{std::mt19937_64(48), std::uniform_real_distribution<float>(-1.0f, 1.0f)};
    const std::size_t n = base.objects.size();
    std::vector<std::uint8_t> moving(n, 0);
    picker.with_top([&](const auto& tree) {
      constexpr int kWidth = std::decay_t<decltype(tree)>::kWidth;
      int multi = 0;
      for (const auto& node : tree.nodes()) {
        for (int s = 0; s < kWidth; ++s) {
          if (!node.is_leaf(s) || node.count[s] < 2 || multi++ % 3 != 0) continue;
          for (std::uint32_t e = node.child[s]; e < node.child[s] + node.count[s]; ++e) {
            moving[picker.leaf_[e].object] = 1;
          }
        }
      }
    });
    for (std::size_t id = 0; id < n; id += 13) moving[id] = 1;
    std::size_t count = 0;
    for (std::uint32_t id = 0; id < n; ++id) {
      if (moving[id] == 0) continue;
      ++count;
      m.set_matrix(picker, id, shifts.next() * m.scene.objects[id].matrix);
    }
    REQUIRE(count * 5 < n);
    REQUIRE(count * 8 > n);
    // One moved object flattened to a plane: never hit, no box.
    m.set_matrix(picker, 26, glm::scale(m.scene.objects[26].matrix, glm::vec3{1.0f, 0.0f, 1.0f}));
    const CommitStats st = picker.commit(CommitMode::kRefit);
    REQUIRE(st.refitted);
    REQUIRE_FALSE(st.rebuilt);
    CHECK(st.moved == count + (moving[26] == 0 ? 1 : 0));
    CHECK(picker.world_box(26).empty());
    picker.with_top([&](const auto& tree) {
      constexpr int kWidth = std::decay_t<decltype(tree)>::kWidth;
      REQUIRE(kWidth == width);
      std::size_t sweep_slots = tree.nodes().size() - 1;
      for (const auto& node : tree.nodes()) {
        for (int s = 0; s < kWidth; ++s) {
          if (node.is_inner(s)) REQUIRE(node.slot_box(s) == tree.nodes()[node.child[s]].box());
          if (!node.is_leaf(s)) continue;
          // Each leaf slot: the union of its objects' padded world boxes,
          // made here from the records (Picker::world_box).
          Aabb b;
          bool any = false;
          for (std::uint32_t e = node.child[s]; e < node.child[s] + node.count[s]; ++e) {
            const std::uint32_t id = picker.leaf_[e].object;
            b.extend(picker.world_box(id));
            any = any || moving[id] != 0 || id == 26;
          }
          REQUIRE(node.slot_box(s) == b);
          sweep_slots += any;
        }
      }
      // The path recomputed fewer slots than a sweep would have.
      CHECK(st.slots_updated < sweep_slots);
    });
    CHECK(st.sah_cost == doctest::Approx(picker.bvh_stats().sah_cost).epsilon(1e-9));
    require_brute_answers(picker, m, 49);
  }
}

TEST_CASE("moving a few objects refits along their paths only, without a rebuild") {
  const Scene base = tools::make_boxes_scene(20000, 41);
  Picker picker(base);
  const BvhStats tree = picker.bvh_stats();
  const std::size_t nodes = tree.nodes;
  const int depth = tree.max_depth;
  for (std::uint32_t id : {5u, 77u, 1234u}) {
    picker.set_matrix(id, glm::translate(glm::mat4{1.0f}, {0.3f, 0.0f, 0.0f}) *
                              base.objects[id].matrix);
  }
  const CommitStats st = picker.commit();
  CHECK(st.refitted);
  CHECK_FALSE(st.rebuilt);
  CHECK(st.moved == 3);
  // Slots on the three paths up from the moved objects' leaf slots.
  CHECK(st.slots_updated >= 3u);
  CHECK(st.slots_updated <= 3u * static_cast<std::size_t>(depth + 1));
  CHECK(st.slots_updated < nodes / 100);
  CHECK(st.refits == 1);
  CHECK(st.rebuilds == 1);
  // Moving every object a little: one sweep over the tree, still a refit.
  for (std::uint32_t id = 0; id < base.objects.size(); ++id) {
    picker.set_matrix(id, glm::translate(glm::mat4{1.0f}, {0.01f, 0.0f, 0.0f}) *
                              base.objects[id].matrix);
  }
  const CommitStats all = picker.commit();
  CHECK(all.refitted);
  CHECK_FALSE(all.rebuilt);
  CHECK(all.slots_updated == tree.leaves + nodes - 1);  // every slot in use
  CHECK(all.sah_cost == doctest::Approx(picker.bvh_stats().sah_cost).epsilon(1e-6));
}

TEST_CASE("an object moved again after a rebuild is refitted again, moved twice it counts once") {
  // set_matrix() marks a moved object (once, however often it moves); every
  // kind of commit must clear the mark, or the next move would be lost.
  const Scene base = tools::make_boxes_scene(3000, 43);
  Mirror m = make_mirror(base);
  Picker picker(base);
  Shifts shift{std::mt19937_64(44), std::uniform_real_distribution<float>(-3.0f, 3.0f)};
  auto moved_again = [&](std::uint32_t id) {
    return shift.next() * m.scene.objects[id].matrix;
  };
  auto check_rays = [&](std::uint64_t seed) {
    std::vector<Ray> rays = test::random_scene_rays(m.scene, 400, seed, kDynamicMix);
    // And rays at the moved objects' centres, which a stale box would cull.
    for (std::uint32_t id : {7u, 8u, 9u}) {
      const glm::vec3 at{m.scene.objects[id].matrix[3]};
      const glm::vec3 from{20.0f, 17.0f, 13.0f};
      rays.push_back(Ray{at + from, -from});
      rays.push_back(Ray{at - from, from});
    }
    const Brute brute(m);
    for (const Ray& ray : rays) {
      const Hit got = picker.intersect(ray);
      const Hit want = brute(ray, QueryOptions{});
      REQUIRE(got.object == want.object);
      REQUIRE(got.t == want.t);
    }
  };
  // Moved twice before one commit: one moved object.
  m.set_matrix(picker, 7, moved_again(7));
  m.set_matrix(picker, 7, moved_again(7));
  m.set_matrix(picker, 8, moved_again(8));
  CommitStats st = picker.commit(CommitMode::kRefit);
  CHECK(st.moved == 2);
  check_rays(1);
  // Moved, then a rebuild; moved again, then a refit that must see it.
  m.set_matrix(picker, 7, moved_again(7));
  st = picker.commit(CommitMode::kRebuild);
  CHECK(st.rebuilt);
  m.set_matrix(picker, 7, moved_again(7));
  st = picker.commit(CommitMode::kRefit);
  CHECK(st.refitted);
  CHECK(st.moved == 1);
  check_rays(2);
  // Moved, then an add (a rebuild by structure); moved again, then a refit.
  m.set_matrix(picker, 9, moved_again(9));
  const std::uint32_t added =
      picker.add_object(m.scene.objects[9].mesh, m.scene.objects[9].matrix);
  m.scene.objects.push_back(m.scene.objects[9]);
  m.masks.push_back(~0u);
  CHECK(added == m.scene.objects.size() - 1);
  st = picker.commit();
  CHECK(st.rebuilt);
  m.set_matrix(picker, 9, moved_again(9));
  st = picker.commit(CommitMode::kRefit);
  CHECK(st.moved == 1);
  check_rays(3);
}

TEST_CASE("a path refit that grows the root's box keeps the tracked SAH cost equal to the tree's") {
  const Scene base = tools::make_boxes_scene(20000, 43);
  Picker picker(base);
  // One object taken far outside the scene: the root's box grows, and with
  // it the root's own term of the SAH sum, not only its slots'.
  picker.set_matrix(7, glm::translate(glm::mat4{1.0f}, {5000.0f, 0.0f, 0.0f}) *
                           base.objects[7].matrix);
  const CommitStats st = picker.commit(CommitMode::kRefit);
  REQUIRE(st.refitted);
  REQUIRE_FALSE(st.rebuilt);
  CHECK(st.slots_updated < 100u);  // the path walk, not the sweep
  CHECK(st.sah_cost == doctest::Approx(picker.bvh_stats().sah_cost).epsilon(1e-9));
}

TEST_CASE("scattering objects far from where they were built triggers a rebuild") {
  const Scene base = tools::make_boxes_scene(5000, 51);
  Picker picker(base);
  std::mt19937_64 rng(52);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  // Swap objects across the scene: boxes of the tree's nodes balloon.
  for (std::uint32_t id = 0; id < 5000; id += 2) {
    picker.set_matrix(id, glm::translate(glm::mat4{1.0f}, {u(rng), u(rng), u(rng)}));
  }
  const CommitStats st = picker.commit();
  CHECK(st.refitted);
  CHECK(st.rebuilt);
  CHECK(st.sah_cost <= 1.5 * st.sah_cost_built + 1e-9);
  // Forcing a refit keeps the degraded tree: correct, only slower.
  for (std::uint32_t id = 1; id < 5000; id += 2) {
    picker.set_matrix(id, glm::translate(glm::mat4{1.0f}, {u(rng), u(rng), u(rng)}));
  }
  const CommitStats forced = picker.commit(CommitMode::kRefit);
  CHECK_FALSE(forced.rebuilt);
  CHECK(forced.sah_cost > 1.5 * forced.sah_cost_built);
}

TEST_CASE("single queries on a top level of four times batch_interleave_bytes or more fetch the nodes they push and give the same answers, at both top widths, after a rebuild too") {
  const Scene scene = tools::make_mesh_scene(3000, 71);
  const std::vector<Ray> rays = test::random_scene_rays(scene, 3000, 72, kDynamicMix);
  for (int width : {8, 16}) {
    CAPTURE(width);
    PickerConfig small;
    small.top_width = width;
    small.batch_interleave_bytes = SIZE_MAX;  // the tree counts as in cache
    PickerConfig large = small;
    large.batch_interleave_bytes = 0;  // as for a tree past the caches
    PickerCore plain(scene, small), fetching(scene, large);
    auto fetches = [](const PickerCore& p) {
      return p.with_top([](const auto& top) { return top.fetch_pushed(); });
    };
    CHECK_FALSE(fetches(plain));
    CHECK(fetches(fetching));
    // The bound: a tree of exactly four times it fetches, one byte short
    // of that does not.
    const std::size_t bytes = plain.with_top([&](const auto& top) { return plain.top_bytes(top); });
    REQUIRE(bytes % 4 == 0);
    PickerConfig at = small, above = small;
    at.batch_interleave_bytes = bytes / 4;
    above.batch_interleave_bytes = bytes / 4 + 1;
    CHECK(fetches(PickerCore(scene, at)));
    CHECK_FALSE(fetches(PickerCore(scene, above)));
    // Trees adopted from saved bytes decide alike.
    for (const bool fetch : {false, true}) {
      PickerCore opened(fetch ? large : small);
      opened.add_scene(scene);
      std::string why;
      REQUIRE_MESSAGE(opened.adopt_trees(plain.save_trees(), why), why);
      CHECK(fetches(opened) == fetch);
    }
    // A rebuild keeps the choice.
    fetching.remove_object(5);
    plain.remove_object(5);
    fetching.commit(CommitMode::kAuto);
    plain.commit(CommitMode::kAuto);
    CHECK(fetches(fetching));
    std::size_t hits = 0;
    for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
      const QueryOptions opt{mode};
      for (const Ray& ray : rays) {
        const PickResult a = plain.intersect(ray, opt), b = fetching.intersect(ray, opt);
        REQUIRE(b.hit.object == a.hit.object);
        REQUIRE(b.hit.t == a.hit.t);
        REQUIRE(b.hit.triangle == a.hit.triangle);
        REQUIRE(b.stats.nodes_visited == a.stats.nodes_visited);
        REQUIRE(fetching.occluded(ray, opt) == plain.occluded(ray, opt));
        hits += a.hit.hit();
      }
    }
    CHECK(hits > rays.size() / 5);
  }
}

TEST_CASE("batch queries equal single queries, in both modes, interleaved or not") {
  const Scene scene = tools::make_mesh_scene(3000, 61);
  const std::vector<Ray> rays = test::random_scene_rays(scene, 20000, 62, kDynamicMix);
  for (const bool interleave : {false, true}) {
    CAPTURE(interleave);
    PickerConfig config;
    config.batch_interleave_bytes = interleave ? 0 : SIZE_MAX;
    const Picker picker(scene, config);
    for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
      QueryOptions opt;
      opt.mode = mode;
      opt.filter = [](std::uint32_t id) { return id != 7; };
      const std::vector<Hit> batch = picker.intersect_batch(rays, opt);
      REQUIRE(batch.size() == rays.size());
      std::size_t hits = 0;
      for (std::size_t i = 0; i < rays.size(); ++i) {
        const Hit single = picker.intersect(rays[i], opt);
        REQUIRE(batch[i].object == single.object);
        REQUIRE(batch[i].t == single.t);
        REQUIRE(batch[i].triangle == single.triangle);
        hits += single.hit();
      }
      CHECK(hits > rays.size() / 10);
    }
  }
}

TEST_CASE("batch queries of every size, with masks and t ranges, equal single queries") {
  // Batches run 32 rays in flight per task: sizes around that and around a
  // task's 1024 rays exercise lanes that start late and finish early.
  Scene scene = tools::make_mesh_scene(1500, 63);
  for (std::size_t i = 0; i < scene.objects.size(); ++i) {
    scene.objects[i].mask = 1u << (i % 3);
  }
  PickerConfig interleaved;
  interleaved.batch_interleave_bytes = 0;  // this small scene too
  const Picker picker(scene, interleaved);
  std::vector<Ray> rays = test::random_scene_rays(scene, 2100, 64, kDynamicMix);
  for (std::size_t i = 0; i < rays.size(); ++i) {
    // Some rays start further along or stop short.
    if (i % 5 == 1) rays[i].tmin = 0.5f;
    if (i % 7 == 2) rays[i].tmax = 3.0f;
  }
  const QueryOptions options{PickMode::kObb, 0b101};
  for (std::size_t n : {0u, 1u, 31u, 32u, 33u, 1023u, 1025u, 2100u}) {
    CAPTURE(n);
    const std::span<const Ray> part = std::span<const Ray>(rays).first(n);
    const std::vector<Hit> batch = picker.intersect_batch(part, options);
    REQUIRE(batch.size() == n);
    for (std::size_t i = 0; i < n; ++i) {
      const Hit single = picker.intersect(part[i], options);
      REQUIRE(batch[i].object == single.object);
      REQUIRE(batch[i].t == single.t);
      if (single.hit()) REQUIRE((scene.objects[single.object].mask & 0b101u) != 0u);
    }
  }
}

TEST_CASE("concurrent queries from several threads give the single-thread answers") {
  const Scene scene = tools::make_mesh_scene(2000, 71);
  const Picker picker(scene);
  const std::vector<Ray> rays = test::random_scene_rays(scene, 4000, 72, kDynamicMix);
  std::vector<Hit> expected;
  for (const Ray& r : rays) expected.push_back(picker.intersect(r, PickMode::kMesh));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = static_cast<std::size_t>(t); i < rays.size(); i += 2) {
        const Hit h = picker.intersect(rays[i], PickMode::kMesh);
        if (h.object != expected[i].object || h.t != expected[i].t) ++wrong;
        if (picker.occluded(rays[i], PickMode::kObb) !=
            picker.intersect(rays[i], PickMode::kObb).hit()) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("borrowed meshes are used in place, user data and masks come back") {
  const Mesh cube = tools::unit_cube_mesh();
  Picker picker;
  const std::uint32_t mesh =
      picker.add_mesh(cube.positions, cube.triangles, Picker::Storage::kBorrow);
  int tag = 42;
  const std::uint32_t a = picker.add_object(mesh, glm::mat4{1.0f}, 0b01, &tag);
  const std::uint32_t b = picker.add_object(
      mesh, glm::translate(glm::mat4{1.0f}, {0, 0, 5}), 0b10);
  picker.commit();
  const Ray ray{{0, 0, -5}, {0, 0, 1}};
  CHECK(picker.intersect(ray).object == a);
  CHECK(picker.user_data(a) == &tag);
  QueryOptions only_b;
  only_b.mask = 0b10;
  CHECK(picker.intersect(ray, only_b).object == b);
  QueryOptions mesh_mode{PickMode::kMesh};
  const Hit h = picker.intersect(ray, mesh_mode);
  CHECK(h.object == a);
  CHECK(h.t == 4.5f);
  picker.remove_object(a);
  picker.commit();
  CHECK(picker.intersect(ray).object == b);
  CHECK_FALSE(picker.alive(a));
  CHECK(picker.world_box(a).empty());
}

TEST_CASE("validate against Embree still finds 0 mismatches after moves and removals") {
  const Scene base = tools::make_boxes_scene(2000, 81);
  Picker picker(base);
  Mirror m = make_mirror(base);
  Shifts shifts{std::mt19937_64(82), std::uniform_real_distribution<float>(-4.0f, 4.0f)};
  for (std::uint32_t id = 0; id < 2000; id += 3) {
    m.set_matrix(picker, id, shifts.next() * base.objects[id].matrix);
  }
  for (std::uint32_t id = 1; id < 2000; id += 50) m.remove(picker, id);
  picker.commit();
  const tools::EmbreeScene embree(m.scene, PickMode::kObb);
  const auto rays = tools::make_validation_rays(m.scene, picker, 20000, 83);
  const auto rep = tools::validate(m.scene, picker, embree, PickMode::kObb, rays);
  CHECK(rep.mismatches() == 0);
  CHECK(rep.count(tools::Verdict::kAgree) > rep.rays * 9 / 10);
}

TEST_CASE("the commit's world boxes equal padded_world_box bit for bit, extreme matrices included") {
  // bvh/src/picker.cpp computes a moved object's padded world box in SSE
  // lanes; it must be the scalar pad(transform_aabb) that padded_world_box
  // (and Embree's side of bench) uses, NaN and infinite boxes included.
  Scene scene = tools::make_boxes_scene(200, 71);
  // A second mesh with an off-centre, flat box.
  scene.meshes.push_back(Mesh{{{-3.0f, 0.25f, 2.0f}, {5.0f, 0.25f, 2.5f}, {-1.0f, 0.25f, 7.0f}},
                              {{0, 1, 2}}});
  for (Object& o : scene.objects) o.matrix[3] += glm::vec4{2e5f, -1e3f, 7.0f, 0.0f};
  const PickerCore impl(scene);
  std::mt19937_64 rng(72);
  int compared = 0;
  for (int i = 0; i < 60000; ++i) {
    std::remove_cvref_t<decltype(impl.objects_[0])> rec;
    rec.to_world = test::stress_matrix(rng, i % 6);
    rec.mesh = static_cast<std::uint32_t>(i % 2 == 0 ? 0 : scene.meshes.size() - 1);
    LocalFrame f;
    if (!make_local_frame(rec.to_world, f)) continue;  // never boxed
    // A third of them placed beyond float: a low part of up to half an
    // ulp of the translation (significant or not for the box's size).
    glm::vec3 low{0.0f};
    if (i % 3 == 0) {
      for (int a = 0; a < 3; ++a) {
        const float t = rec.to_world[3][a];
        low[a] = float(double(std::nextafter(t, kInfinity) - t) * (double(rng() % 1000) / 2000.0));
      }
    }
    const Aabb& bounds = impl.meshes_[rec.mesh].bounds;
    const Aabb got = impl.padded_box(rec, significant_low(rec.to_world, bounds, low));
    const Aabb want =
        padded_world_box(Obb::make(bounds, glm::mat4{rec.to_world}, low), impl.pad_centre_);
    REQUIRE(std::memcmp(&got, &want, sizeof got) == 0);
    ++compared;
  }
  CHECK(compared > 30000);
  // And the tree's own boxes after a commit of moves: every object's leaf
  // slot holds its world box.
  PickerCore moving(scene);
  std::vector<glm::mat4> moved(scene.objects.size());
  for (std::uint32_t id = 0; id < moved.size(); ++id) {
    moved[id] = glm::mat4{test::stress_matrix(rng, int(id % 4))};
    moving.set_matrix(id, moved[id]);
  }
  moving.commit(CommitMode::kRefit);
  const PickerCore& mi = moving;
  auto compare_entries = [&] {
    for (std::uint32_t e = 0; e < mi.leaf_.size(); ++e) {
      const std::uint32_t id = mi.leaf_[e].object;
      if (mi.leaf_[e].mesh == kInvalidId) continue;
      const Aabb got = mi.entry_box(e);
      const Aabb want = moving.world_box(id);
      REQUIRE(std::memcmp(&got, &want, sizeof want) == 0);
      // The leaf copy's frame: the one-object code's.
      LocalFrame frame;
      make_local_frame(mi.objects_[id].to_world, frame);
      REQUIRE(std::memcmp(&mi.leaf_[e].frame, &frame, sizeof frame) == 0);
    }
  };
  compare_entries();
  // Again with low parts (objects placed beyond float) on two thirds of
  // them: the commit's batch moves their boxes by them (shift_outward) as
  // world_box() does.
  std::uniform_real_distribution<float> part(-0.5f, 0.5f);
  int with_low = 0;
  for (std::uint32_t id = 0; id < moved.size(); ++id) {
    glm::vec3 low{0.0f};
    for (int a = 0; a < 3 && id % 3 != 0; ++a) {
      low[a] = part(rng) * 1e-4f * (1.0f + std::fabs(moved[id][3][a]));
    }
    moving.set_matrix(id, moved[id], low);
    with_low += mi.low(id) != glm::vec3{0.0f} ? 1 : 0;
  }
  moving.commit(CommitMode::kRefit);
  CHECK(with_low > 100);
  compare_entries();
}

TEST_CASE("a rebuild that leaves out removed and singular objects, on 4 threads, equals brute force") {
  // 20,000 objects: the rebuild's per-object loop runs in several parallel
  // chunks, and the objects left out make it close the gaps.
  const Scene base = tools::make_boxes_scene(20000, 91);
  Mirror m = make_mirror(base);
  const tbb::global_control cap(tbb::global_control::max_allowed_parallelism, 4);
  tbb::task_arena arena(4);
  arena.execute([&] {
    Picker picker(base);
    for (std::uint32_t id = 3; id < 20000; id += 7) {
      m.remove(picker, id);
    }
    for (std::uint32_t id = 5; id < 20000; id += 11) {
      if (m.scene.objects[id].mesh == m.empty_mesh) continue;
      m.set_matrix(picker, id, glm::scale(base.objects[id].matrix, {1.0f, 0.0f, 1.0f}));
    }
    REQUIRE(picker.commit(CommitMode::kRebuild).rebuilt);
    // 5,000 rays against a 20,000-object brute force; 1,000 under ASan,
    // where 5,000 took two minutes, most of that suite's time.
#if defined(__SANITIZE_ADDRESS__)
    constexpr std::size_t kRays = 1000;
#else
    constexpr std::size_t kRays = 5000;
#endif
    const auto rays = test::random_scene_rays(m.scene, kRays, 92, kDynamicMix);
    const QueryOptions opt;
    const Brute brute(m);
    int hits = 0;
    for (const Ray& ray : rays) {
      const Hit expected = brute(ray, opt);
      const Hit got = picker.intersect(ray, opt);
      REQUIRE(got.object == expected.object);
      REQUIRE(got.t == expected.t);
      hits += expected.hit() ? 1 : 0;
    }
    CHECK(hits > static_cast<int>(kRays / 10));
  });
}
