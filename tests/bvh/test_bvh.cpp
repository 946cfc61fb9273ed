// The BVHs themselves (bvh/src): the binary tree's structure invariants and
// depth bound, the wide tree collapsed from it, its refits, and its
// traversal loop against brute force over plain boxes.
#include "test_util.h"
#include "support/bvh_oracle.h"

#include "raypick/core/ray_box.h"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>

using namespace raypick;

namespace {

std::vector<Aabb> random_boxes(std::size_t n, std::uint64_t seed, float spread) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<Aabb> boxes(n);
  for (Aabb& b : boxes) {
    const glm::vec3 c{u(rng) * spread, u(rng) * spread, u(rng) * spread};
    const glm::vec3 e{0.05f + u(rng), 0.05f + u(rng), 0.05f + u(rng)};
    b = Aabb{c - e, c + e};
  }
  return boxes;
}

// Every primitive appears exactly once; every node's box holds its
// children's (or its primitives') boxes; siblings are adjacent and after
// their parent; depth within the bound.
void check_structure(const Bvh& bvh, const std::vector<Aabb>& boxes,
                     const BvhConfig& config) {
  REQUIRE(bvh.prim_ids.size() == boxes.size());
  std::vector<std::uint32_t> ids = bvh.prim_ids;
  std::sort(ids.begin(), ids.end());
  for (std::uint32_t i = 0; i < ids.size(); ++i) REQUIRE(ids[i] == i);
  if (boxes.empty()) {
    CHECK(bvh.nodes.empty());
    return;
  }
  std::size_t leaf_prims = 0;
  for (std::size_t i = 0; i < bvh.nodes.size(); ++i) {
    const BvhNode& n = bvh.nodes[i];
    Aabb inner;
    if (n.is_leaf()) {
      CHECK(n.count <= config.max_leaf_size);
      leaf_prims += n.count;
      for (std::uint32_t k = 0; k < n.count; ++k) {
        inner.extend(boxes[bvh.prim_ids[n.index + k]]);
      }
    } else {
      REQUIRE(n.index > i);
      REQUIRE(n.index + 1 < bvh.nodes.size());
      inner = bvh.nodes[n.index].bounds;
      inner.extend(bvh.nodes[n.index + 1].bounds);
    }
    CHECK(n.bounds == inner);  // exactly the union, no slack
  }
  CHECK(leaf_prims == boxes.size());
  const BvhStats s = test::binary_stats(bvh, config);
  CHECK(s.max_depth <= kBvhMaxDepth);
  CHECK(s.primitives == boxes.size());
  CHECK(s.nodes == bvh.nodes.size());
  CHECK(s.leaves * 2 == s.nodes + 1);  // a full binary tree
}

// Brute force: smallest entry, ties to the lower id.
std::pair<std::uint32_t, float> brute(const std::vector<Aabb>& boxes,
                                      const Ray& ray) {
  const RayInv inv(ray);
  std::pair<std::uint32_t, float> best{UINT32_MAX, kInfinity};
  for (std::uint32_t i = 0; i < boxes.size(); ++i) {
    const float t = slab_entry(inv, boxes[i]);
    if (t < best.second) best = {i, t};
  }
  return best;
}

// The nearest box (ties to the lower id) found by traversing `tree`, whose
// leaf callback's argument to_id maps to a box id.
template <class Tree, class ToId>
std::pair<std::uint32_t, float> closest_by(const Tree& tree,
                                           const std::vector<Aabb>& boxes,
                                           const Ray& ray, ToId to_id) {
  const RayInv inv(ray);
  std::pair<std::uint32_t, float> best{UINT32_MAX, kInfinity};
  tree.traverse(ray, [&](std::uint32_t leaf_arg, float& tmax) {
    const std::uint32_t id = to_id(leaf_arg);
    const float t = slab_entry(inv, boxes[id], tmax);
    if (t < best.second || (t == best.second && t != kInfinity && id < best.first)) {
      best = {id, t};
      tmax = t;
    }
    return false;
  });
  return best;
}

template <int W>
std::pair<std::uint32_t, float> closest_wide(const WideBvhOf<W>& w,
                                             const std::vector<Aabb>& boxes,
                                             const Ray& ray) {
  // WideBvhOf::traverse passes entries.
  return closest_by(w, boxes, ray, [&](std::uint32_t e) { return w.prim_id(e); });
}

// Refits every slot of `w` from `boxes` (indexed by primitive id) in one
// sweep; returns its result.
template <int W>
typename WideBvhOf<W>::SweepResult refit_all(WideBvhOf<W>& w, const std::vector<Aabb>& boxes,
                                             const BvhConfig& config = {}) {
  return w.refit_sweep([](std::uint32_t) { return true; },
                       [&](std::uint32_t e) { return boxes[w.prim_id(e)]; }, config);
}

// Every slot box is exactly the union of what is below it; every entry is
// in exactly one leaf slot, which entry_node / entry_slot name.
template <int W>
void check_wide(const WideBvhOf<W>& w, const std::vector<Aabb>& boxes) {
  REQUIRE(w.entry_count() == boxes.size());
  std::vector<int> seen(boxes.size(), 0);
  const auto nodes = w.nodes();
  for (std::uint32_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    for (int s = 0; s < W; ++s) {
      Aabb expect;
      if (n.is_leaf(s)) {
        for (std::uint32_t e = n.child[s]; e < n.child[s] + n.count[s]; ++e) {
          expect.extend(boxes[w.prim_id(e)]);
          ++seen[w.prim_id(e)];
          CHECK(WideBvhInternals::entry_node(w, e) == i);
          CHECK(WideBvhInternals::entry_slot(w, e) == s);
        }
      } else if (n.is_inner(s)) {
        REQUIRE(n.child[s] > i);
        expect = nodes[n.child[s]].box();
        CHECK(WideBvhInternals::parent(w, n.child[s]) == i);
        CHECK(WideBvhInternals::parent_slot(w, n.child[s]) == s);
      }
      CHECK(n.slot_box(s) == expect);
    }
  }
  for (int c : seen) REQUIRE(c == 1);
}

// The node tests a tree of this width can take on this CPU: SSE always,
// AVX2 where the CPU has it (a 16-wide node in two halves), AVX-512 where
// the CPU has it (16 slots per test; over 8-wide nodes the AVX2 test's
// operations with AVX-512VL's masks and compress).
template <class Tree>
std::vector<NodeTest> node_tests() {
  std::vector<NodeTest> tests{NodeTest::kSse};
  if (compiler::cpu_has_avx2()) tests.push_back(NodeTest::kAvx2);
  if (compiler::cpu_has_avx2() && compiler::cpu_has_avx512()) tests.push_back(NodeTest::kAvx512);
  return tests;
}

TEST_CASE("a wide tree takes the node test asked for, or the best the CPU allows") {
  const bool avx2 = compiler::cpu_has_avx2();
  const bool avx512 = avx2 && compiler::cpu_has_avx512();
  const NodeTest best8 = avx2 ? NodeTest::kAvx2 : NodeTest::kSse;
  WideBvh w8;
  WideBvh16 w16;
  CHECK(w8.node_test() == NodeTest::kSse);  // until set
  w8.set_node_test(NodeTest::kAvx512);      // 8 slots: AVX-512VL's walk
  CHECK(w8.node_test() == (avx512 ? NodeTest::kAvx512 : best8));
  w8.set_node_test(NodeTest::kAvx2);
  CHECK(w8.node_test() == best8);
  w8.set_node_test(NodeTest::kSse);
  CHECK(w8.node_test() == NodeTest::kSse);
  w16.set_node_test(NodeTest::kAvx512);
  CHECK(w16.node_test() == (avx512 ? NodeTest::kAvx512 : best8));
  w16.set_node_test(NodeTest::kAvx2);
  CHECK(w16.node_test() == best8);
  w16.set_node_test(NodeTest::kSse);
  CHECK(w16.node_test() == NodeTest::kSse);
}

Ray random_ray(std::mt19937_64& rng, float spread) {
  std::uniform_real_distribution<float> u(-0.2f * spread, 1.2f * spread);
  std::normal_distribution<float> g(0.0f, 1.0f);
  Ray r;
  r.org = {u(rng), u(rng), u(rng)};
  do {
    r.dir = {g(rng), g(rng), g(rng)};
  } while (r.dir == glm::vec3{0.0f});
  return r;
}

}  // namespace

TEST_CASE("BVH structure is sound for many sizes, including 0, 1 and 2 primitives") {
  for (std::size_t n : {0, 1, 2, 3, 5, 17, 100, 1000, 5000}) {
    CAPTURE(n);
    // Leaves of 16: binned ranges (more than 8 primitives) that end up as
    // leaves, read from the buffer the binning left as it was.
    for (std::uint32_t leaf : {1u, 4u, 16u}) {
      BvhConfig config;
      config.max_leaf_size = leaf;
      const auto boxes = random_boxes(n, 100 + n, 20.0f);
      const Bvh bvh = build_bvh(boxes, config);
      check_structure(bvh, boxes, config);
    }
  }
}

TEST_CASE("BVH over ranges with empty and infinite boxes keeps every primitive once") {
  // An empty box's center is NaN (inf + -inf), and so is the center of a
  // box reaching -inf and +inf on an axis: no rank among small ranges'
  // keys, no finite cost. The builder must still place every primitive
  // exactly once (a repeated rank once dropped one and duplicated another).
  const float inf = std::numeric_limits<float>::infinity();
  for (std::size_t n : {3, 4, 5, 6, 7, 8, 9, 12, 40, 300}) {
    CAPTURE(n);
    for (std::uint32_t leaf : {1u, 4u}) {
      for (int kind = 0; kind < 3; ++kind) {
        CAPTURE(kind);
        std::vector<Aabb> boxes = random_boxes(n, 7 * n + static_cast<std::size_t>(kind), 10.0f);
        for (std::size_t i = 0; i < n; i += 3) {
          if (kind == 0) boxes[i] = Aabb{};
          if (kind == 1) boxes[i] = Aabb{{-inf, 0, 0}, {inf, 1, 1}};
          if (kind == 2) boxes[i] = i % 2 == 0 ? Aabb{} : Aabb{{0, -inf, -inf}, {1, inf, inf}};
        }
        BvhConfig config;
        config.max_leaf_size = leaf;
        const Bvh bvh = build_bvh(boxes, config);
        std::vector<std::uint32_t> ids = bvh.prim_ids;
        std::sort(ids.begin(), ids.end());
        REQUIRE(ids.size() == n);
        for (std::uint32_t i = 0; i < n; ++i) REQUIRE(ids[i] == i);
        std::size_t leaf_prims = 0;
        for (const BvhNode& node : bvh.nodes) leaf_prims += node.count;
        CHECK(leaf_prims == n);
        CHECK(test::binary_stats(bvh, config).max_depth <= kBvhMaxDepth);
      }
    }
  }
}

TEST_CASE("BVH over coincident boxes splits by median and stays within the depth bound") {
  std::vector<Aabb> boxes(1000, Aabb{glm::vec3{0.0f}, glm::vec3{1.0f}});
  BvhConfig config;
  config.max_leaf_size = 1;
  const Bvh bvh = build_bvh(boxes, config);
  check_structure(bvh, boxes, config);
  CHECK(test::binary_stats(bvh, config).max_depth == 10);  // ceil(log2 1000)
}

TEST_CASE("BVH depth stays bounded on a scene that drives SAH into a chain") {
  // Boxes growing geometrically along x: the SAH peels one primitive off at
  // a time, which unchecked gives depth n - 1.
  std::vector<Aabb> boxes;
  for (int i = 0; i < 400; ++i) {
    const float x = std::ldexp(1.0f, i / 4) + static_cast<float>(i % 4);
    boxes.push_back(Aabb{{x, 0, 0}, {x + 0.5f, 1, 1}});
  }
  BvhConfig config;
  config.max_leaf_size = 1;
  const Bvh bvh = build_bvh(boxes, config);
  check_structure(bvh, boxes, config);
  CHECK(test::binary_stats(bvh, config).max_depth <= kBvhMaxDepth);
}

TEST_CASE_TEMPLATE("wide BVH closest hit equals brute force on random box sets, leaves of 1 and 4",
                   Tree, WideBvh, WideBvh16) {
  for (std::size_t n : {1, 2, 3, 10, 100, 2000}) {
    CAPTURE(n);
    for (std::uint32_t leaf : {1u, 4u}) {
      CAPTURE(leaf);
      BvhConfig config;
      config.max_leaf_size = leaf;
      const float spread = 4.0f * std::cbrt(static_cast<float>(n));
      const auto boxes = random_boxes(n, n, spread);
      Tree w = Tree::collapse(build_bvh(boxes, config), config);
      for (const NodeTest test : node_tests<Tree>()) {
        CAPTURE(int(test));
        w.set_node_test(test);
        REQUIRE(w.node_test() == test);
        std::mt19937_64 rng(n * 31);
        int hits = 0;
        for (int i = 0; i < 3000; ++i) {
          const Ray ray = random_ray(rng, spread);
          const auto expected = brute(boxes, ray);
          const auto got = closest_wide(w, boxes, ray);
          REQUIRE(got.first == expected.first);
          REQUIRE(got.second == expected.second);
          hits += expected.first != UINT32_MAX;
        }
        if (n >= 10) CHECK(hits > 100);
      }
    }
  }
}

TEST_CASE_TEMPLATE("a walk that fetches the nodes it pushes visits the same nodes and leaves, in the same order, as one that does not",
                   Tree, WideBvh, WideBvh16) {
  // set_fetch_pushed() only fetches ahead: the same answers as brute force,
  // and the same sequence of leaf entries and tmax and the same stats, on
  // every node test.
  const std::size_t n = 3000;
  const float spread = 4.0f * std::cbrt(static_cast<float>(n));
  const auto boxes = random_boxes(n, 17, spread);
  Tree w = Tree::collapse(build_bvh(boxes));
  CHECK(!w.fetch_pushed());  // until set
  struct Walk {
    std::vector<std::pair<std::uint32_t, float>> leaves;
    TraversalStats stats;
    std::pair<std::uint32_t, float> best{UINT32_MAX, kInfinity};
  };
  auto walk = [&](const Ray& ray) {
    Walk out;
    const RayInv inv(ray);
    out.stats = w.traverse(ray, [&](std::uint32_t e, float& tmax) {
      out.leaves.emplace_back(e, tmax);
      const std::uint32_t id = w.prim_id(e);
      const float t = slab_entry(inv, boxes[id], tmax);
      if (t < out.best.second || (t == out.best.second && t != kInfinity && id < out.best.first)) {
        out.best = {id, t};
        tmax = t;
      }
      return false;
    });
    return out;
  };
  for (const NodeTest test : node_tests<Tree>()) {
    CAPTURE(int(test));
    w.set_node_test(test);
    std::mt19937_64 rng(test == NodeTest::kSse ? 5 : 6);
    // A walk that opened more nodes than a path from the root holds
    // popped some that it had pushed.
    const int depth = w.stats(BvhConfig{}).max_depth;
    int popped = 0;
    for (int i = 0; i < 2000; ++i) {
      const Ray ray = random_ray(rng, spread);
      w.set_fetch_pushed(false);
      const Walk plain = walk(ray);
      w.set_fetch_pushed(true);
      REQUIRE(w.fetch_pushed());
      const Walk fetching = walk(ray);
      REQUIRE(fetching.best == brute(boxes, ray));
      REQUIRE(fetching.best == plain.best);
      REQUIRE(fetching.leaves == plain.leaves);
      REQUIRE(fetching.stats.nodes_visited == plain.stats.nodes_visited);
      REQUIRE(fetching.stats.leaves_visited == plain.stats.leaves_visited);
      popped += int(plain.stats.nodes_visited) > depth + 1 ? 1 : 0;
    }
    CHECK(popped > 100);
  }
}

TEST_CASE_TEMPLATE("wide BVH any-hit stop ends the traversal at the first accepted leaf primitive",
                   Tree, WideBvh, WideBvh16) {
  const auto boxes = random_boxes(500, 9, 20.0f);
  Tree w = Tree::collapse(build_bvh(boxes));
  w.set_node_test(node_tests<Tree>().back());
  std::mt19937_64 rng(5);
  int hits = 0;
  for (int i = 0; i < 1000; ++i) {
    const Ray ray = random_ray(rng, 20.0f);
    const RayInv inv(ray);
    int accepted = 0;
    w.traverse(ray, [&](std::uint32_t e, float& tmax) {
      if (slab_entry(inv, boxes[w.prim_id(e)], tmax) == kInfinity) return false;
      ++accepted;
      return true;
    });
    const bool expected = brute(boxes, ray).first != UINT32_MAX;
    CHECK(accepted == (expected ? 1 : 0));
    hits += expected;
  }
  CHECK(hits > 100);
}

TEST_CASE_TEMPLATE("wide BVH refit sweep after moving every box keeps closest hits equal to brute force",
                   Tree, WideBvh, WideBvh16) {
  auto boxes = random_boxes(800, 11, 20.0f);
  Tree w = Tree::collapse(build_bvh(boxes));
  w.set_node_test(node_tests<Tree>().back());
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<float> u(-5.0f, 5.0f);
  for (Aabb& b : boxes) {
    const glm::vec3 shift{u(rng), u(rng), u(rng)};
    b = Aabb{b.min + shift, b.max + shift};
  }
  const typename Tree::SweepResult r = refit_all(w, boxes);
  check_wide(w, boxes);
  CHECK(r.sah_sum == w.sah_sum());
  // Every leaf slot and every inner slot (one per node but the root).
  CHECK(r.slots == w.stats().leaves + w.nodes().size() - 1);
  for (int i = 0; i < 2000; ++i) {
    const Ray ray = random_ray(rng, 20.0f);
    const auto expected = brute(boxes, ray);
    const auto got = closest_wide(w, boxes, ray);
    REQUIRE(got.first == expected.first);
    REQUIRE(got.second == expected.second);
  }
}

// ---- the wide BVH --------------------------------------------------------

TEST_CASE_TEMPLATE("the wide BVH keeps every primitive once, with exact boxes, for many sizes",
                   Tree, WideBvh, WideBvh16) {
  for (std::size_t n : {1, 2, 3, 4, 5, 17, 100, 3000}) {
    CAPTURE(n);
    const auto boxes = random_boxes(n, 300 + n, 20.0f);
    const Bvh bvh = build_bvh(boxes);
    const Tree w = Tree::collapse(bvh);
    check_wide(w, boxes);
    const BvhStats s = w.stats();
    const BvhStats binary = test::binary_stats(bvh);
    CHECK(s.primitives == n);
    CHECK(s.max_depth <= binary.max_depth);
    CHECK(s.leaves == binary.leaves);
    if (n > 16) CHECK(s.nodes * 2 < binary.nodes);  // really wider
  }
}

TEST_CASE_TEMPLATE("wide BVH closest hit equals brute force, including zero direction components",
                   Tree, WideBvh, WideBvh16) {
  for (std::size_t n : {1, 2, 7, 200, 4000}) {
    CAPTURE(n);
    const float spread = 4.0f * std::cbrt(static_cast<float>(n));
    const auto boxes = random_boxes(n, 7 * n, spread);
    Tree w = Tree::collapse(build_bvh(boxes));
    w.set_node_test(node_tests<Tree>().back());
    std::mt19937_64 rng(n + 5);
    std::uniform_int_distribution<int> coin(0, 3);
    for (int i = 0; i < 3000; ++i) {
      Ray ray = random_ray(rng, spread);
      if (coin(rng) == 0) ray.dir.y = coin(rng) < 2 ? 0.0f : -0.0f;
      if (coin(rng) == 0) ray.org.x = boxes[i % n].min.x;  // on a slab plane
      if (ray.dir == glm::vec3{0.0f}) continue;
      const auto expected = brute(boxes, ray);
      const auto got = closest_wide(w, boxes, ray);
      REQUIRE(got.first == expected.first);
      REQUIRE(got.second == expected.second);
    }
  }
}

TEST_CASE_TEMPLATE("refitting a few entries of the wide BVH along their paths equals a full sweep",
                   Tree, WideBvh, WideBvh16) {
  auto boxes = random_boxes(2000, 17, 30.0f);
  Tree partial = Tree::collapse(build_bvh(boxes));
  Tree full = partial;
  Tree swept = partial;
  std::mt19937_64 rng(18);
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  std::vector<std::uint32_t> entries;
  std::vector<std::uint8_t> moved(2000, 0);
  for (std::uint32_t e = 0; e < 2000; e += 37) {
    const std::uint32_t id = partial.prim_id(e);
    const glm::vec3 shift{u(rng), u(rng), u(rng)};
    boxes[id] = Aabb{boxes[id].min + shift, boxes[id].max + shift};
    entries.push_back(e);
    moved[e] = 1;
  }
  const auto box = [&](std::uint32_t e) { return boxes[partial.prim_id(e)]; };
  int changes = 0;
  const std::size_t updated = partial.refit_path(
      entries, box, BvhConfig{}, [&](double, double, double) { ++changes; });
  refit_all(full, boxes);
  // The sweep over the moved entries only: their leaf slots, then every
  // inner slot.
  const typename Tree::SweepResult r =
      swept.refit_sweep([&](std::uint32_t e) { return moved[e] != 0; }, box, BvhConfig{});
  std::size_t moved_slots = 0;
  for (const auto& n : swept.nodes()) {
    for (int s = 0; s < Tree::kWidth; ++s) {
      bool any = false;
      for (std::uint32_t e = n.child[s]; n.is_leaf(s) && e < n.child[s] + n.count[s]; ++e) {
        any = any || moved[e] != 0;
      }
      moved_slots += any;
    }
  }
  CHECK(r.slots == moved_slots + swept.nodes().size() - 1);
  CHECK(updated > entries.size());
  CHECK(changes > 0);
  CHECK(r.sah_sum == full.sah_sum());
  for (std::size_t i = 0; i < full.nodes().size(); ++i) {
    for (int s = 0; s < Tree::kWidth; ++s) {
      REQUIRE(partial.nodes()[i].slot_box(s) == full.nodes()[i].slot_box(s));
      REQUIRE(swept.nodes()[i].slot_box(s) == full.nodes()[i].slot_box(s));
    }
  }
  check_wide(full, boxes);
}

TEST_CASE_TEMPLATE("a path refit of many entries, listed more than once, equals a full refit and tracks the SAH sum",
                   Tree, WideBvh, WideBvh16) {
  // A third of the entries moved, some listed twice and in no order: each
  // leaf slot and each inner slot is recomputed once, children before
  // parents, and the on_change calls add up to the change of sah_sum().
  auto boxes = random_boxes(3000, 23, 30.0f);
  Tree partial = Tree::collapse(build_bvh(boxes));
  Tree full = partial;
  std::mt19937_64 rng(24);
  std::uniform_real_distribution<float> u(-20.0f, 20.0f);
  std::vector<std::uint32_t> entries;
  for (std::uint32_t e = 0; e < 3000; e += 3) {
    const std::uint32_t id = partial.prim_id(e);
    const glm::vec3 shift{u(rng), u(rng), u(rng)};
    boxes[id] = Aabb{boxes[id].min + shift, boxes[id].max + shift};
    entries.push_back(e);
    if (e % 7 == 0) entries.push_back(e);
  }
  std::shuffle(entries.begin(), entries.end(), rng);
  const auto box = [&](std::uint32_t e) { return boxes[partial.prim_id(e)]; };
  const double before = partial.sah_sum();
  double delta = 0.0;
  const std::size_t updated = partial.refit_path(
      entries, box, BvhConfig{},
      [&](double weight, double old_area, double new_area) { delta += weight * (new_area - old_area); });
  refit_all(full, boxes);
  for (std::size_t i = 0; i < full.nodes().size(); ++i) {
    for (int s = 0; s < Tree::kWidth; ++s) {
      REQUIRE(partial.nodes()[i].slot_box(s) == full.nodes()[i].slot_box(s));
    }
  }
  CHECK(before + delta == doctest::Approx(partial.sah_sum()).epsilon(1e-9));
  // Each slot at most once: no more than the slots in use.
  const BvhStats st = full.stats();
  CHECK(updated <= st.leaves + full.nodes().size() - 1);
  CHECK(updated >= 1000);  // every moved entry's slot (distinct slots <= entries)
  // A second refit with nothing changed recomputes the leaf slots only.
  const std::size_t again = partial.refit_path(entries, box, BvhConfig{},
                                               [](double, double, double) {});
  CHECK(again <= 1000);
}

TEST_CASE_TEMPLATE("a path refit reads the moved entries' boxes from moved_box, never from entry_box, whole leaf slots and mixed nodes included",
                   Tree, WideBvh, WideBvh16) {
  // As the Picker's commit: the moved entries' new boxes made beforehand,
  // handed over by their index in the list, while entry_box still answers
  // the old box of a moved entry (so a slot that asked it would keep the
  // entry where it was). Whole leaf slots move, and a node whose moved
  // leaf slot sits beside an inner slot with a moved entry below it (the
  // pass recomputes both in one visit).
  auto boxes = random_boxes(3000, 29, 30.0f);
  Tree partial = Tree::collapse(build_bvh(boxes));
  Tree full = partial;
  const std::vector<Aabb> old_boxes = boxes;
  std::vector<std::uint8_t> moved(boxes.size(), 0);
  std::vector<std::uint32_t> entries;
  std::mt19937_64 rng(30);
  std::uniform_real_distribution<float> u(-15.0f, 15.0f);
  auto move = [&](std::uint32_t e) {
    if (moved[e] != 0) return;
    moved[e] = 1;
    const std::uint32_t id = partial.prim_id(e);
    const glm::vec3 shift{u(rng), u(rng), u(rng)};
    boxes[id] = Aabb{boxes[id].min + shift, boxes[id].max + shift};
    entries.push_back(e);
  };
  const auto& nodes = partial.nodes();
  // Every fifth leaf slot of two entries or more, whole.
  int multi = 0, whole = 0;
  for (const auto& n : nodes) {
    for (int s = 0; s < Tree::kWidth; ++s) {
      if (!n.is_leaf(s) || n.count[s] < 2) continue;
      if (multi++ % 5 != 0) continue;
      for (std::uint32_t e = n.child[s]; e < n.child[s] + n.count[s]; ++e) move(e);
      ++whole;
    }
  }
  REQUIRE(whole >= 10);
  // A node with leaf slots and inner slots: one entry of a leaf slot, and
  // the first entry below one of its inner slots.
  bool mixed = false;
  for (std::size_t i = 0; i < nodes.size() && !mixed; ++i) {
    int leaf = -1, inner = -1;
    for (int s = 0; s < Tree::kWidth; ++s) {
      if (nodes[i].is_leaf(s)) leaf = s;
      if (nodes[i].is_inner(s)) inner = s;
    }
    if (leaf < 0 || inner < 0) continue;
    move(nodes[i].child[leaf]);
    std::uint32_t c = nodes[i].child[inner];
    for (;;) {
      int s = 0;
      while (!nodes[c].is_leaf(s) && !nodes[c].is_inner(s)) ++s;
      if (nodes[c].is_leaf(s)) {
        move(nodes[c].child[s]);
        break;
      }
      c = nodes[c].child[s];
    }
    mixed = true;
  }
  REQUIRE(mixed);
  // And some entries on their own, one listed twice.
  for (std::uint32_t e = 1; e < boxes.size(); e += 97) move(e);
  entries.push_back(entries.front());
  std::shuffle(entries.begin(), entries.end(), rng);
  std::size_t moved_asked = 0;
  const auto entry_box = [&](std::uint32_t e) {
    moved_asked += moved[e];
    return old_boxes[partial.prim_id(e)];
  };
  const auto moved_box = [&](std::size_t i) { return boxes[partial.prim_id(entries[i])]; };
  // Stages 0 and 1 name moved entries; 2 and 3 the other entries of their
  // slots (each key's slot but its own entry: unmoved ones among them).
  std::size_t wrong_stage = 0, others = 0;
  const auto prefetch = [&](std::uint32_t e, int stage) {
    wrong_stage += stage < 2 && moved[e] == 0;
    others += stage >= 2 && moved[e] == 0;
  };
  const double before = partial.sah_sum();
  double delta = 0.0;
  partial.refit_path(
      entries, entry_box, moved_box, BvhConfig{},
      [&](double weight, double old_area, double new_area) { delta += weight * (new_area - old_area); },
      prefetch);
  CHECK(moved_asked == 0);
  CHECK(wrong_stage == 0);
  CHECK(others > 0);
  refit_all(full, boxes);
  for (std::size_t i = 0; i < full.nodes().size(); ++i) {
    for (int s = 0; s < Tree::kWidth; ++s) {
      REQUIRE(partial.nodes()[i].slot_box(s) == full.nodes()[i].slot_box(s));
    }
  }
  CHECK(before + delta == doctest::Approx(partial.sah_sum()).epsilon(1e-9));
}

TEST_CASE("a wide BVH numbered by entry reads primitive e as entry e") {
  // The Picker's top level renumbers its primitives so that primitive ==
  // entry and drops the id array; refits and stats must read it that way.
  auto boxes = random_boxes(3000, 19, 40.0f);
  WideBvh with_ids = WideBvh::collapse(build_bvh(boxes));
  WideBvh identity = with_ids;
  const std::size_t bytes_with_ids = identity.memory_bytes();
  identity.number_by_entry();
  CHECK(identity.prim_id(7) == 7u);
  // The id array's storage is freed, not only emptied: 4 bytes per entry.
  CHECK(identity.memory_bytes() + boxes.size() * sizeof(std::uint32_t) == bytes_with_ids);
  CHECK(with_ids.prim_id(7) != 7u);  // the builder's order is not the identity
  // Move every box, then refit both: the one by primitive id, the other
  // from the boxes listed in entry order.
  std::mt19937_64 rng(20);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  for (Aabb& b : boxes) {
    const glm::vec3 shift{u(rng), u(rng), u(rng)};
    b = Aabb{b.min + shift, b.max + shift};
  }
  std::vector<Aabb> by_entry(boxes.size());
  for (std::uint32_t e = 0; e < boxes.size(); ++e) by_entry[e] = boxes[with_ids.prim_id(e)];
  const double sah_ids = refit_all(with_ids, boxes).sah_sum;
  const double sah_identity = refit_all(identity, by_entry).sah_sum;
  CHECK(sah_identity == sah_ids);
  CHECK(identity.stats().primitives == boxes.size());
  CHECK(identity.stats().sah_cost == with_ids.stats().sah_cost);
  for (std::size_t i = 0; i < identity.nodes().size(); ++i) {
    for (int s = 0; s < WideNode::kWidth; ++s) {
      REQUIRE(identity.nodes()[i].slot_box(s) == with_ids.nodes()[i].slot_box(s));
    }
  }
}

namespace {

// The same binary tree, compared by shape (node numbers may differ with
// the thread count): boxes, leaf runs and children, recursively.
void require_same_shape(const Bvh& a, std::uint32_t na, const Bvh& b, std::uint32_t nb) {
  const BvhNode& x = a.nodes[na];
  const BvhNode& y = b.nodes[nb];
  REQUIRE(x.bounds == y.bounds);
  REQUIRE(x.count == y.count);
  if (x.is_leaf()) {
    REQUIRE(x.index == y.index);
    return;
  }
  require_same_shape(a, x.index, b, y.index);
  require_same_shape(a, x.index + 1, b, y.index + 1);
}

struct BuiltOn {
  Bvh binary;
  WideBvh wide;
  WideBvh16 wide16;
};

BuiltOn build_on(int threads, const std::vector<Aabb>& boxes) {
  const tbb::global_control cap(tbb::global_control::max_allowed_parallelism,
                                static_cast<std::size_t>(threads));
  tbb::task_arena arena(threads);
  BuiltOn out;
  arena.execute([&] {
    out.binary = build_bvh(boxes);
    out.wide = WideBvh::collapse(out.binary);
    out.wide16 = WideBvh16::collapse(out.binary);
  });
  return out;
}

}  // namespace

TEST_CASE("a tree binned and collapsed in parallel is the same on 1 and 4 threads, and exact") {
  // 40,000 boxes: the top ranges (8,192 primitives and more) are binned
  // in parallel chunks, and the tree (over 16,384 binary nodes) collapses
  // its subtrees as parallel tasks.
  const float spread = 4.0f * std::cbrt(40000.0f);
  const auto boxes = random_boxes(40000, 4040, spread);
  const BuiltOn one = build_on(1, boxes);
  REQUIRE(one.binary.nodes.size() > 16384);
  check_structure(one.binary, boxes, BvhConfig{});
  check_wide(one.wide, boxes);
  const BuiltOn four = build_on(4, boxes);
  CHECK(four.binary.prim_ids == one.binary.prim_ids);
  require_same_shape(one.binary, 0, four.binary, 0);
  // The wide tree is numbered the same on any thread count: byte for byte.
  const auto w1 = one.wide.nodes(), w4 = four.wide.nodes();
  REQUIRE(w1.size() == w4.size());
  CHECK(std::memcmp(w1.data(), w4.data(), w1.size_bytes()) == 0);
  const auto v1 = one.wide16.nodes(), v4 = four.wide16.nodes();
  REQUIRE(v1.size() == v4.size());
  CHECK(std::memcmp(v1.data(), v4.data(), v1.size_bytes()) == 0);
  for (std::uint32_t e = 0; e < boxes.size(); ++e) {
    REQUIRE(WideBvhInternals::entry_node(one.wide, e) == WideBvhInternals::entry_node(four.wide, e));
    REQUIRE(WideBvhInternals::entry_node(one.wide16, e) ==
            WideBvhInternals::entry_node(four.wide16, e));
  }
  check_wide(four.wide, boxes);
  check_wide(four.wide16, boxes);
  // And it answers as brute force does.
  std::mt19937_64 rng(4041);
  int hits = 0;
  for (int i = 0; i < 2000; ++i) {
    const Ray ray = random_ray(rng, spread);
    const auto expected = brute(boxes, ray);
    const auto got = closest_wide(four.wide, boxes, ray);
    REQUIRE(got.first == expected.first);
    REQUIRE(got.second == expected.second);
    const auto got16 = closest_wide(four.wide16, boxes, ray);
    REQUIRE(got16.first == expected.first);
    REQUIRE(got16.second == expected.second);
    hits += expected.first != UINT32_MAX;
  }
  CHECK(hits > 200);
}

TEST_CASE("the 16-wide collapse is the SAH's best cover of the binary tree's cuts") {
  // The 8-wide collapse covers each subtree by at most 8 of the binary
  // tree's nodes, which is one of the covers by at most 16 that the SAH
  // collapse chooses among: its SAH sum can be no larger (the same slot
  // costs: traversal_cost per inner slot, intersection_cost per entry of a
  // leaf slot, times the slot's area; float sums, so within 1e-5), and on
  // larger trees it is smaller. It is no deeper than the binary tree, and
  // a tree of at most 16 leaves is one node.
  for (const float traversal : {1.0f, 2.0f}) {
    CAPTURE(traversal);
    for (std::size_t n : {5, 40, 1000, 20000}) {
      CAPTURE(n);
      BvhConfig config;
      config.traversal_cost = traversal;
      const auto boxes = random_boxes(n, 900 + n, 4.0f * std::cbrt(static_cast<float>(n)));
      const Bvh bvh = build_bvh(boxes, config);
      const WideBvh w8 = WideBvh::collapse(bvh, config);
      const WideBvh16 w16 = WideBvh16::collapse(bvh, config);
      check_wide(w16, boxes);
      CHECK(w16.sah_sum(config) <= w8.sah_sum(config) * (1.0 + 1e-5));
      const BvhStats s16 = w16.stats(config), binary = test::binary_stats(bvh, config);
      CHECK(s16.leaves == binary.leaves);
      CHECK(s16.max_depth <= binary.max_depth);
      if (binary.leaves <= 16) CHECK(w16.nodes().size() == 1);
      if (n >= 1000) CHECK(w16.sah_sum(config) < w8.sah_sum(config));
    }
  }
}

TEST_CASE("the 16-wide collapse reaches the least SAH cost of a search over every cover") {
  // An independent search: cover(b, k), the least cost of binary subtree b
  // as at most k slots (b itself, or its children sharing the k slots in
  // every way), by plain recursion with a memo, in double; a slot costs
  // intersection_cost * count * area (a leaf) or traversal_cost * area plus
  // its own node's best cover by 16 (an inner node). The tree's SAH sum
  // (the root's visit plus every slot) must be that least cost: a wrong
  // split of the slots between two children (a share off by one) makes it
  // larger. (Which of equal least costs wins leaves the sum as it is: that
  // rule, the first share, is not checked here.)
  for (const float traversal : {1.0f, 2.5f}) {
    CAPTURE(traversal);
    for (std::size_t n : {3, 17, 60, 700, 2500}) {
      CAPTURE(n);
      BvhConfig config;
      config.traversal_cost = traversal;
      const auto boxes = random_boxes(n, 4100 + n, 3.0f * std::cbrt(static_cast<float>(n)));
      const Bvh bvh = build_bvh(boxes, config);
      std::vector<std::array<double, 17>> memo(bvh.nodes.size());
      for (auto& m : memo) m.fill(-1.0);
      std::function<double(std::uint32_t, int)> cover = [&](std::uint32_t b, int k) {
        double& got = memo[b][k];
        if (got >= 0.0) return got;
        const BvhNode& node = bvh.nodes[b];
        const double area = node.bounds.half_area();
        if (node.is_leaf()) return got = double(config.intersection_cost) * node.count * area;
        auto split = [&](int slots) {
          double best = std::numeric_limits<double>::infinity();
          for (int j = 1; j < slots; ++j) {
            best = std::min(best, cover(node.index, j) + cover(node.index + 1, slots - j));
          }
          return best;
        };
        const double slot = double(config.traversal_cost) * area + split(16);
        return got = k == 1 ? slot : std::min(slot, split(k));
      };
      // An inner root is a slot's cost (its visit and its best cover by
      // 16); a leaf root is visited, then tested.
      const BvhNode& root = bvh.nodes[0];
      const double least =
          root.is_leaf() ? double(config.traversal_cost) * root.bounds.half_area() + cover(0, 1)
                         : cover(0, 1);
      const WideBvh16 w16 = WideBvh16::collapse(bvh, config);
      CHECK(w16.sah_sum(config) == doctest::Approx(least).epsilon(1e-5));
    }
  }
}

TEST_CASE("sort_places_descending orders keys by their place, largest first, stably") {
  // The refit's key sort, against std::stable_sort: one pass (up to 11
  // place bits), two and three, with places drawn so that many repeat.
  std::mt19937_64 rng(77);
  std::vector<std::uint64_t> scratch;
  for (int bits : {1, 3, 11, 12, 22, 23, 32}) {
    CAPTURE(bits);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{3000}}) {
      CAPTURE(n);
      std::vector<std::uint64_t> keys(n);
      const std::uint64_t span = bits == 32 ? (std::uint64_t{1} << 32) : (std::uint64_t{1} << bits);
      for (std::uint64_t& k : keys) {
        // Half the keys from a few places, the rest anywhere below 2^bits.
        const std::uint64_t place = (rng() & 1) != 0 ? rng() % std::min<std::uint64_t>(span, 7)
                                                     : rng() % span;
        k = place << 32 | (rng() & 0xFFFFFFFFu);
      }
      std::vector<std::uint64_t> expected = keys;
      std::stable_sort(expected.begin(), expected.end(),
                       [](std::uint64_t a, std::uint64_t b) { return (a >> 32) > (b >> 32); });
      sort_places_descending(keys, scratch, bits);
      REQUIRE(keys == expected);
    }
  }
}

TEST_CASE("the top level's large arrays: mapped on their own from 32 MiB, aligned to 2 MiB") {
  // compiler::HugeAllocator: the nodes and leaf copies of a large top
  // level. An array of 32 MiB or more is its own mapping, starting on a
  // 2 MiB boundary (where huge pages can back it); a smaller one comes
  // from operator new. Either way the vector behaves as any vector.
  struct alignas(64) Line {
    std::uint32_t v[16];
  };
  constexpr std::size_t kBig = (std::size_t{32} << 20) / sizeof(Line) + 1000;
  compiler::HugeVector<Line> big(kBig);
  for (std::size_t i = 0; i < big.size(); i += 997) big[i].v[i % 16] = static_cast<std::uint32_t>(i);
  if (compiler::HugeAllocator<Line>::kMaps) {
    CHECK(reinterpret_cast<std::uintptr_t>(big.data()) % (std::size_t{2} << 20) == 0);
  }
  // Written lines keep their values through a copy, a move and growth.
  compiler::HugeVector<Line> copy = big;
  compiler::HugeVector<Line> moved = std::move(big);
  moved.resize(kBig + 100000);
  for (std::size_t i = 0; i < kBig; i += 997) {
    REQUIRE(copy[i].v[i % 16] == static_cast<std::uint32_t>(i));
    REQUIRE(moved[i].v[i % 16] == static_cast<std::uint32_t>(i));
  }
  compiler::HugeVector<Line> small(100);
  CHECK(reinterpret_cast<std::uintptr_t>(small.data()) % alignof(Line) == 0);
}
