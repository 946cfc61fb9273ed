// The compressed design's prototype (apps/bench/qbvh.h): quantized boxes
// contain the float boxes, and its obb-mode query answers as the Picker
// does, bit for bit, on every ISA policy this CPU runs.
#include "test_util.h"

#include "floor_qbvh.h"
#include "floor_wide16.h"
#include "qbvh.h"

#include "picker_impl.h"
#include "raypick/bvh/picker.h"

#include <algorithm>
#include <random>

namespace raypick {
namespace {

bool contains(const Aabb& outer, const Aabb& inner) {
  for (int a = 0; a < 3; ++a) {
    if (!(outer.min[a] <= inner.min[a]) || !(outer.max[a] >= inner.max[a])) return false;
  }
  return true;
}

bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
}

// The Picker's top level for `scene`, compressed, with its objects' OBBs
// in the blocks.
QBvh compressed_top(const Scene& scene, std::uint32_t max_leaf, WideBvh* wide_out = nullptr) {
  const glm::vec3 centre = padding_centre(scene.objects);
  std::vector<Aabb> boxes;
  std::vector<std::uint32_t> ids;
  for (std::uint32_t id = 0; id < scene.objects.size(); ++id) {
    const Object& o = scene.objects[id];
    const Aabb local = scene.meshes[o.mesh].triangle_bounds();
    const Aabb box = padded_world_box(Obb::make(local, o.matrix), centre);
    if (box.empty()) continue;
    boxes.push_back(box);
    ids.push_back(id);
  }
  BvhConfig config;
  config.max_leaf_size = max_leaf;
  config.intersection_cost = 0.25f;
  WideBvh wide = WideBvh::collapse(build_bvh(boxes, config));
  QBvh q = QBvh::from_wide(wide);
  for (std::uint32_t e = 0; e < wide.entry_count(); ++e) {
    const std::uint32_t id = ids[wide.prim_id(e)];
    const Object& o = scene.objects[id];
    LocalFrame frame;
    REQUIRE(make_local_frame(glm::mat4x3(o.matrix), frame));
    q.set_entry(e, frame, scene.meshes[o.mesh].triangle_bounds(), id);
  }
  if (wide_out) *wide_out = std::move(wide);
  return q;
}

Scene random_boxes(std::size_t n, std::uint64_t seed) {
  Scene scene;
  // A cube, a flat quad (zero extent on z) and a thin rod; every other
  // object sheared.
  scene.meshes.push_back(box_mesh(Aabb{glm::vec3{-0.5f}, glm::vec3{0.5f}}));
  scene.meshes.push_back(box_mesh(Aabb{{-1.0f, -1.0f, 0.0f}, {1.0f, 1.0f, 0.0f}}));
  scene.meshes.push_back(box_mesh(Aabb{{-0.05f, -2.0f, -0.05f}, {0.05f, 2.0f, 0.05f}}));
  std::mt19937_64 rng(seed);
  test::add_random_objects(scene, n, rng, [](std::size_t i) { return i % 2 == 0; });
  return scene;
}

TEST_CASE("a compressed node's dequantized slot boxes contain the float slot boxes") {
  const Scene scene = random_boxes(3000, 11);
  WideBvh wide;
  const QBvh q = compressed_top(scene, 8, &wide);
  REQUIRE(q.nodes.size() == wide.nodes().size());
  std::size_t slots = 0;
  for (std::size_t i = 0; i < q.nodes.size(); ++i) {
    const WideNode& w = wide.nodes()[i];
    const QNode& n = q.nodes[i];
    for (int s = 0; s < QNode::kWidth; ++s) {
      const bool used = w.child[s] != WideNode::kInvalidSlot;
      CHECK(((n.used >> s) & 1u) == (used ? 1u : 0u));
      if (!used) continue;
      ++slots;
      CHECK_MESSAGE(contains(n.slot_box(s), w.slot_box(s)), "node " << i << " slot " << s);
      CHECK(n.child[s] == w.child[s]);
      CHECK(n.count[s] == w.count[s]);
    }
  }
  CHECK(slots == q.nodes.size() - 1 + wide.stats().leaves);
}

TEST_CASE("a node whose box is flat on an axis quantizes that axis exactly") {
  // Boxes in the plane z = 2 (as flat quads' boxes are before padding).
  std::vector<Aabb> boxes;
  for (int i = 0; i < 20; ++i) {
    const glm::vec3 c{3.0f * float(i), 0.5f * float(i), 2.0f};
    boxes.push_back(Aabb{c - glm::vec3{1.0f, 1.0f, 0.0f}, c + glm::vec3{1.0f, 1.0f, 0.0f}});
  }
  BvhConfig config;
  config.max_leaf_size = 1;
  const QBvh q = QBvh::from_wide(WideBvh::collapse(build_bvh(boxes, config)));
  REQUIRE(q.nodes.size() > 1);
  for (const QNode& n : q.nodes) {
    CHECK(n.scale[2] == 0.0f);
    CHECK(n.origin[2] == 2.0f);
    for (int s = 0; s < QNode::kWidth; ++s) {
      if (!((n.used >> s) & 1u)) continue;
      CHECK(n.slot_box(s).min.z == 2.0f);
      CHECK(n.slot_box(s).max.z == 2.0f);
    }
  }
}

TEST_CASE("the compressed design's obb query answers as the Picker, on every ISA policy") {
  const bool avx2 = cpu_has_avx2();
  for (std::uint32_t leaf : {1u, 4u, 8u}) {
    CAPTURE(leaf);
    const Scene scene = random_boxes(2000, 7 + leaf);
    const Picker picker(scene);
    const QBvh q = compressed_top(scene, leaf);
    test::SceneRayMix mix;
    mix.zero_x = 0.2f;  // +-0.0 components: the NaN ordering of both tests
    const std::vector<Ray> rays = test::random_scene_rays(scene, 4000, 99 + leaf, mix);
    std::size_t hits = 0;
    for (std::size_t i = 0; i < rays.size(); ++i) {
      const Hit want = picker.intersect(rays[i], PickMode::kObb);
      const Hit got = floorq::intersect_scalar(q, rays[i], nullptr);
      CHECK_MESSAGE(got.object == want.object, "ray " << i);
      CHECK_MESSAGE(got.t == want.t, "ray " << i);
      if (avx2) {
        const Hit wide = floorq::intersect_avx2(q, rays[i], nullptr);
        CHECK_MESSAGE(wide.object == want.object, "ray " << i << " (AVX2)");
        CHECK_MESSAGE(wide.t == want.t, "ray " << i << " (AVX2)");
      }
      hits += want.hit();
    }
    // The rays must test something: most hit.
    CHECK(hits > rays.size() / 4);
  }
}

TEST_CASE("the compressed design: a ray starting inside a box hits at t = 0, a flat quad is hit") {
  Scene scene;
  scene.meshes.push_back(box_mesh(Aabb{glm::vec3{-1.0f}, glm::vec3{1.0f}}));
  scene.meshes.push_back(box_mesh(Aabb{{-1.0f, -1.0f, 0.0f}, {1.0f, 1.0f, 0.0f}}));
  Object inside;
  inside.mesh = 0;
  Object quad;
  quad.mesh = 1;
  quad.matrix = glm::translate(glm::mat4{1.0f}, glm::vec3{0.0f, 0.0f, 5.0f});
  scene.objects = {inside, quad};
  const QBvh q = compressed_top(scene, 8);
  const Hit h0 = floorq::intersect_scalar(q, Ray{{0.2f, 0.1f, 0.0f}, {0.0f, 0.0f, 1.0f}}, nullptr);
  CHECK(h0.object == 0);
  CHECK(h0.t == 0.0f);
  // From outside the cube, along -0.0 x and y: the quad at z = 5 is hit at t = 3.
  const Ray r{{0.5f, 0.5f, 2.0f}, {-0.0f, -0.0f, 1.0f}};
  const Hit h1 = floorq::intersect_scalar(q, r, nullptr);
  CHECK(h1.object == 1);
  CHECK(h1.t == 3.0f);
  if (cpu_has_avx2()) {
    const Hit a = floorq::intersect_avx2(q, r, nullptr);
    CHECK(a.object == 1);
    CHECK(a.t == 3.0f);
  }
}

// query(ray) equals the Picker's answer on 4,000 random rays of the scene
// (a fifth with a +-0.0 component: the NaN ordering of the node tests),
// most of which hit.
template <class Query>
void check_queries(const Scene& scene, const Picker& picker, std::uint64_t seed, Query&& query) {
  test::SceneRayMix mix;
  mix.zero_x = 0.2f;
  const std::vector<Ray> rays = test::random_scene_rays(scene, 4000, seed, mix);
  std::size_t hits = 0;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const Hit want = picker.intersect(rays[i], PickMode::kObb);
    const Hit got = query(rays[i]);
    CHECK_MESSAGE(got.object == want.object, "ray " << i);
    CHECK_MESSAGE(got.t == want.t, "ray " << i);
    hits += want.hit();
  }
  CHECK(hits > rays.size() / 4);
}

// The checks of one 16-wide tree over `leaves` and their padded world
// boxes `boxes` (both in its entry order): children after their parents
// and in range, depth within kBvhMaxDepth (the query stack's bound), each
// node reached once, each entry in exactly one leaf slot whose box holds
// the entry's box, every inner slot's box holding its node's slots; and
// its query answers as the Picker.
void check_wide16(const floorq::Wide16& wide, std::span<const PickerCore::LeafObb> leaves,
                  std::span<const Aabb> boxes, const Scene& scene, const Picker& picker,
                  const PickerCore& core) {
  REQUIRE(!wide.nodes.empty());
  std::vector<int> seen(leaves.size(), 0), reached(wide.nodes.size(), 0), depth(wide.nodes.size(), 0);
  auto slot_box = [](const floorq::Node16& n, int s) {
    return Aabb{{n.bounds[0][s], n.bounds[1][s], n.bounds[2][s]},
                {n.bounds[3][s], n.bounds[4][s], n.bounds[5][s]}};
  };
  for (std::size_t i = 0; i < wide.nodes.size(); ++i) {
    const floorq::Node16& n = wide.nodes[i];
    for (int s = 0; s < floorq::Node16::kWidth; ++s) {
      if (n.count[s] != 0) {
        REQUIRE(std::size_t{n.child[s]} + n.count[s] <= leaves.size());
        for (std::uint32_t k = 0; k < n.count[s]; ++k) {
          ++seen[n.child[s] + k];
          CHECK(contains(slot_box(n, s), boxes[n.child[s] + k]));
        }
      } else if (n.child[s] != WideNode::kInvalidSlot) {
        REQUIRE(n.child[s] > i);
        REQUIRE(n.child[s] < wide.nodes.size());
        ++reached[n.child[s]];
        depth[n.child[s]] = depth[i] + 1;
        const floorq::Node16& c = wide.nodes[n.child[s]];
        for (int cs = 0; cs < floorq::Node16::kWidth; ++cs) {
          if (c.count[cs] == 0 && c.child[cs] == WideNode::kInvalidSlot) continue;
          CHECK(contains(slot_box(n, s), slot_box(c, cs)));
        }
      }
    }
  }
  CHECK(std::count(reached.begin() + 1, reached.end(), 1) == static_cast<long>(reached.size() - 1));
  CHECK(*std::max_element(depth.begin(), depth.end()) <= kBvhMaxDepth);
  CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<long>(seen.size()));
  if (!floorq::cpu_has_avx512()) {
    MESSAGE("no AVX-512 on this CPU: the 16-wide query is not run");
    return;
  }
  std::vector<Aabb> mesh_bounds;
  for (const auto& m : core.meshes_) mesh_bounds.push_back(m.bounds);
  check_queries(scene, picker, 116, [&](const Ray& ray) {
    return floorq::intersect16(wide, leaves, mesh_bounds, ray, nullptr);
  });
}

TEST_CASE("the 16-wide prototype keeps every leaf slot and answers as the Picker (AVX-512)") {
  const Scene scene = random_boxes(3000, 16);
  // The 8-wide top level, which the prototype widens (kAuto would make it
  // 16 wide where the CPU has AVX-512).
  PickerConfig config;
  config.isa = Isa::kAvx2;
  const Picker picker(scene, config);
  const PickerCore core(scene, config);  // its tree and leaf copies (the same build)
  const WideBvh& top = std::get<WideBvh>(core.top_);
  std::vector<Aabb> boxes;  // by entry
  for (std::uint32_t e = 0; e < core.leaf_.size(); ++e) boxes.push_back(core.entry_box(e));
  // The binary tree collapsed by the SAH, its leaf copies in its order.
  const Bvh binary = build_bvh(boxes, core.config_.top);
  std::vector<PickerCore::LeafObb> by_binary;
  std::vector<Aabb> boxes_by_binary;
  for (std::uint32_t e : binary.prim_ids) {
    by_binary.push_back(core.leaf_[e]);
    boxes_by_binary.push_back(boxes[e]);
  }
  const floorq::Wide16 collapsed = floorq::collapse16(binary, 1.0f, 1.0f);
  check_wide16(collapsed, by_binary, boxes_by_binary, scene, picker, core);
  CHECK(collapsed.slots_used > 8.0);
  // The SAH collapse is the cheapest cover of the binary tree's cuts: no
  // dearer than the same tree collapsed 8-wide and widened (also such a
  // cover), under its own cost model.
  const floorq::Wide16 widened_same = floorq::widen16(WideBvh::collapse(binary));
  CHECK(floorq::sah_cost(collapsed, 1.0f, 1.0f) < floorq::sah_cost(widened_same, 1.0f, 1.0f));
  // Today's tree widened.
  const floorq::Wide16 wide = floorq::widen16(top);
  check_wide16(wide, core.leaf_, boxes, scene, picker, core);
  CHECK(wide.nodes.size() < top.nodes().size());
  std::size_t today_used = 0;
  for (const WideNode& n : top.nodes()) {
    for (int s = 0; s < WideNode::kWidth; ++s) today_used += n.is_leaf(s) || n.is_inner(s);
  }
  CHECK(wide.slots_used > 1.2 * double(today_used) / double(top.nodes().size()));
  if (!floorq::cpu_has_avx512()) return;
  // Today's nodes in the same AVX-512VL order.
  std::vector<Aabb> mesh_bounds;
  for (const auto& m : core.meshes_) mesh_bounds.push_back(m.bounds);
  check_queries(scene, picker, 117, [&](const Ray& ray) {
    return floorq::intersect8_compress512(top, core.leaf_, mesh_bounds, ray, nullptr);
  });
}

TEST_CASE("the quantized 16-wide prototype: each slot's box holds its float box, the query answers as the Picker (AVX-512)") {
  const Scene scene = random_boxes(3000, 18);
  PickerConfig config;
  config.isa = Isa::kAvx2;
  const Picker picker(scene, config);
  const PickerCore core(scene, config);
  std::vector<Aabb> boxes;
  for (std::uint32_t e = 0; e < core.leaf_.size(); ++e) boxes.push_back(core.entry_box(e));
  const Bvh binary = build_bvh(boxes, core.config_.top);
  std::vector<PickerCore::LeafObb> by_binary;
  for (std::uint32_t e : binary.prim_ids) by_binary.push_back(core.leaf_[e]);
  const floorq::Wide16 wide = floorq::collapse16(binary, 1.0f, 1.0f);
  const floorq::QWide16 q = floorq::quantize16(wide);
  REQUIRE(q.nodes.size() == wide.nodes.size());
  std::size_t slots = 0, tight = 0;
  for (std::size_t i = 0; i < wide.nodes.size(); ++i) {
    const floorq::Node16& n = wide.nodes[i];
    const floorq::QNode16& qn = q.nodes[i];
    CHECK(qn.used == n.used_slots());
    for (int s = 0; s < floorq::Node16::kWidth; ++s) {
      if ((qn.used >> s & 1u) == 0) continue;
      ++slots;
      // The dequantized box, as the test computes its planes' points.
      Aabb deq;
      for (int a = 0; a < 3; ++a) {
        deq.min[a] = qn.origin[a] + float(qn.q[a][s]) * qn.scale[a];
        deq.max[a] = qn.origin[a] + float(qn.q[3 + a][s]) * qn.scale[a];
      }
      CHECK(contains(deq, n.slot_box(s)));
      // Within a quantum of the float box on every side (not just any
      // box holding it).
      bool close = true;
      for (int a = 0; a < 3; ++a) {
        close = close && n.bounds[a][s] - deq.min[a] <= 1.001f * qn.scale[a] &&
                deq.max[a] - n.bounds[3 + a][s] <= 1.001f * qn.scale[a];
      }
      tight += close;
      const std::uint32_t count = qn.child[s] >> floorq::QNode16::kCountShift;
      CHECK(count == n.count[s]);
      CHECK((qn.child[s] & floorq::QNode16::kIndexMask) == n.child[s]);
    }
  }
  CHECK(slots > wide.nodes.size() * 8);
  CHECK(tight == slots);
  if (!floorq::cpu_has_avx512()) {
    MESSAGE("no AVX-512 on this CPU: the quantized query is not run");
    return;
  }
  std::vector<Aabb> mesh_bounds;
  for (const auto& m : core.meshes_) mesh_bounds.push_back(m.bounds);
  check_queries(scene, picker, 118, [&](const Ray& ray) {
    return floorq::intersectq16(q, by_binary, mesh_bounds, ray, nullptr);
  });
}

}  // namespace
}  // namespace raypick
