// Saved trees (Picker::save_trees, Picker::open): a picker opened from them
// holds the built picker's trees byte for byte and answers as it does;
// bytes that do not fit (another scene or mode, cut off, damaged, a tree
// too deep for the traversal's stack) are refused with a reason, and the
// picker builds its own.
#include "test_util.h"

#include "picker_impl.h"
#include "scene_gen.h"

#include "raypick/bvh/picker.h"

#include <glm/ext/matrix_transform.hpp>

#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

using namespace raypick;

namespace {

template <class Node>
bool same_bytes(std::span<const Node> a, std::span<const Node> b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}

// A mesh-mode scene with every kind of object, one removed-like object (an
// empty mesh) and one with a singular matrix: both are left out of the
// tree, so its entries are not the object ids.
Scene saved_mixed_scene(std::size_t n, std::uint64_t seed) {
  Scene s = tools::make_mesh_scene(n, seed, tools::mixed_options(2.0));
  s.meshes.emplace_back();
  s.objects[3].mesh = static_cast<std::uint32_t>(s.meshes.size() - 1);
  s.objects[5].matrix = glm::scale(glm::mat4{1.0f}, glm::vec3{1.0f, 0.0f, 1.0f});
  return s;
}

// In obb mode, and in mesh mode when the pickers have its trees.
void check_same_answers(const Picker& a, const Picker& b, const Scene& scene,
                        bool mesh_mode = true) {
  const std::vector<Ray> rays = test::random_scene_rays(scene, 400, 91);
  for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
    if (mode == PickMode::kMesh && !mesh_mode) continue;
    for (const Ray& ray : rays) {
      const Hit x = a.intersect(ray, mode), y = b.intersect(ray, mode);
      REQUIRE(x.object == y.object);
      REQUIRE(x.triangle == y.triangle);
      REQUIRE(x.t == y.t);
    }
    const std::vector<Hit> xs = a.intersect_batch(rays, QueryOptions{mode});
    const std::vector<Hit> ys = b.intersect_batch(rays, QueryOptions{mode});
    for (std::size_t i = 0; i < rays.size(); ++i) {
      REQUIRE(xs[i].object == ys[i].object);
      REQUIRE(xs[i].t == ys[i].t);
    }
    // Closest points from the rays' origins (mesh mode: through the mesh
    // trees and their triangles' keys).
    for (std::size_t i = 0; i < rays.size(); i += 4) {
      const glm::dvec3 p{rays[i].org};
      const PointHit x = a.closest_point(p, QueryOptions{mode});
      const PointHit y = b.closest_point(p, QueryOptions{mode});
      REQUIRE(x.object == y.object);
      REQUIRE(x.triangle == y.triangle);
      REQUIRE(x.distance == y.distance);
    }
  }
}

}  // namespace

TEST_CASE("a picker opened from saved trees has the built trees byte for byte") {
  // Every pair of widths, top level and meshes' trees: 8 and 8 (AVX2), 16
  // and 16 (the AVX-512 node test's; 8 and 8 again on a CPU without it),
  // and each forced to the other top-level width (top_width).
  for (const Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    for (const int top_width : {0, 8, 16}) {
    for (const bool mesh_mode : {false, true}) {
      CAPTURE(mesh_mode);
      CAPTURE(int(isa));
      CAPTURE(top_width);
      PickerConfig config;
      config.mesh_mode = mesh_mode;
      config.isa = isa;
      config.top_width = top_width;
      const Scene scene = saved_mixed_scene(3000, 17);
      const PickerCore built(scene, config);
      const std::string trees = built.save_trees();
      PickerCore opened(config);
      opened.add_scene(scene);
      std::string why;
      REQUIRE_MESSAGE(opened.adopt_trees(trees, why), why);
      REQUIRE(built.top_.index() == opened.top_.index());
      built.with_top([&](const auto& top) {
        using Tree = std::decay_t<decltype(top)>;
        CHECK(same_bytes(top.nodes(), std::get<Tree>(opened.top_).nodes()));
      });
      REQUIRE(built.leaf_.size() == opened.leaf_.size());
      CHECK(built.leaf_.size() == scene.objects.size() - 2);  // two left out
      CHECK(std::memcmp(built.leaf_.data(), opened.leaf_.data(),
                        built.leaf_.size() * sizeof built.leaf_[0]) == 0);
      const bool avx512 = compiler::cpu_has_avx2() && compiler::cpu_has_avx512();
      CHECK(built.top_.index() == (top_width == 16 || (top_width == 0 && avx512 &&
                                                       isa == Isa::kAvx512) ? 1u : 0u));
      // The version names both widths: 1 + (top 16) + 2 (meshes' trees 16,
      // mesh mode only).
      const bool mesh16 = mesh_mode && avx512 && isa == Isa::kAvx512;
      CHECK(std::uint8_t(trees[0]) == 1 + built.top_.index() + (mesh16 ? 2 : 0));
      for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
        CAPTURE(m);
        CHECK(built.meshes_[m].bvh_built == opened.meshes_[m].bvh_built);
        // The meshes' trees (mesh mode) are 16 wide under the AVX-512 node
        // test.
        if (mesh_mode) {
          CHECK(built.meshes_[m].bvh.index() == (avx512 && isa == Isa::kAvx512 ? 1u : 0u));
        }
        REQUIRE(built.meshes_[m].bvh.index() == opened.meshes_[m].bvh.index());
        built.meshes_[m].with_bvh([&](const auto& tree) {
          using Tree = std::decay_t<decltype(tree)>;
          CHECK(same_bytes(tree.nodes(), std::get<Tree>(opened.meshes_[m].bvh).nodes()));
        });
        CHECK(built.meshes_[m].tri_boxes.rows == opened.meshes_[m].tri_boxes.rows);
      }
      CHECK(opened.sah_cost() == built.sah_cost());
      CHECK(opened.save_trees() == trees);
      // Through the API: the same answers, and moves refit as usual.
      Picker a(scene, config);
      Picker b = Picker::open(scene, a.save_trees(), config, &why);
      CHECK(b.bvh_stats().sah_cost == a.bvh_stats().sah_cost);
      check_same_answers(a, b, scene, mesh_mode);
      for (std::uint32_t id = 0; id < scene.objects.size(); id += 7) {
        const glm::mat4 m = glm::translate(glm::mat4{1.0f}, glm::vec3{0.5f, -0.25f, 1.0f}) *
                            scene.objects[id].matrix;
        a.set_matrix(id, m);
        b.set_matrix(id, m);
      }
      a.commit(CommitMode::kRefit);
      b.commit(CommitMode::kRefit);
      check_same_answers(a, b, scene, mesh_mode);
    }
    }
  }
}

TEST_CASE("saved trees that do not fit are refused with a reason, and the picker builds") {
  const Scene scene = saved_mixed_scene(500, 23);
  PickerConfig mesh, obb;
  obb.mesh_mode = false;
  const Picker built(scene, mesh);
  const std::string trees = built.save_trees();
  struct Case {
    const char* name;
    std::string bytes;
    PickerConfig config;
    const char* reason;
  };
  Scene other = saved_mixed_scene(501, 23);
  const std::string other_trees = Picker(other, mesh).save_trees();
  std::string bad_version = trees;
  bad_version[0] = 9;
  // A top level of the width this picker takes (16), meshes' trees of 8
  // (the AVX2 test's): refused where the meshes' trees here are 16 wide
  // (the AVX-512 node test), adopted elsewhere.
  PickerConfig avx2_16 = mesh, auto_16 = mesh;
  avx2_16.isa = Isa::kAvx2;
  avx2_16.top_width = 16;
  auto_16.top_width = 16;
  const std::string narrow_meshes = Picker(scene, avx2_16).save_trees();
  const bool avx512 = compiler::cpu_has_avx2() && compiler::cpu_has_avx512();
  {
    std::string why;
    const Picker p = Picker::open(scene, narrow_meshes, auto_16, &why);
    CAPTURE(why);
    CHECK(why.empty() != avx512);
    if (avx512) CHECK(why.find("mesh trees of 8-wide nodes") != std::string::npos);
    check_same_answers(built, p, scene, true);
  }
  {
    // The other way, on any CPU: an AVX2 picker (its meshes' trees 8 wide)
    // given bytes whose version says 16 (3: top level 8, meshes 16).
    PickerConfig avx2 = mesh;
    avx2.isa = Isa::kAvx2;
    std::string forged = Picker(scene, avx2).save_trees();
    REQUIRE(forged[0] == 1);
    forged[0] = 3;
    std::string why;
    const Picker p = Picker::open(scene, forged, avx2, &why);
    CAPTURE(why);
    CHECK(why.find("mesh trees of 16-wide nodes") != std::string::npos);
    check_same_answers(built, p, scene, true);
  }
  const Case cases[] = {
      {"no trees", "", mesh, "no saved trees"},
      {"another mode", trees, obb, "another mode"},
      {"another scene", other_trees, mesh, "objects"},
      {"another version", bad_version, mesh, "another version"},
      {"cut short", trees.substr(0, trees.size() / 2), mesh, ""},
      {"a byte too many", trees + "x", mesh, "bytes after"},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.name));
    std::string why;
    const Picker p = Picker::open(scene, c.bytes, c.config, &why);
    CAPTURE(why);
    CHECK_FALSE(why.empty());
    CHECK(why.find(c.reason) != std::string::npos);
    check_same_answers(built, p, scene, c.config.mesh_mode);
  }
}

TEST_CASE("every cut and many damaged bytes of saved trees: refused or adopted, never wrong") {
  // Adopted damage can only change the trees' shape, and any tree over the
  // same entries gives the same answers: the boxes come from the scene.
  const Scene scene = saved_mixed_scene(200, 29);
  const Picker built(scene);
  const std::string trees = built.save_trees();
  for (std::size_t cut = 0; cut < trees.size(); cut += 1 + cut / 16) {
    std::string why;
    const Picker p = Picker::open(scene, std::string_view(trees).substr(0, cut), {}, &why);
    CHECK_FALSE(why.empty());
  }
  std::mt19937_64 rng(31);
  std::size_t adopted = 0;
  for (int i = 0; i < 300; ++i) {
    std::string damaged = trees;
    damaged[rng() % damaged.size()] ^= static_cast<char>(1u << (rng() % 8));
    std::string why;
    const Picker p = Picker::open(scene, damaged, {}, &why);
    adopted += why.empty();
    check_same_answers(built, p, scene);
  }
  // Some flips land in fields that still make a tree (or flip a leaf's
  // order): those pickers were checked too.
  CHECK(adopted < 300);
}

TEST_CASE("saved trees deeper than the traversal's stack allows are refused") {
  // A chain of `nodes` nodes: node i holds entry i in a leaf slot and node
  // i + 1 in an inner slot; the last node holds the last two entries.
  const auto chain = [](std::size_t nodes, Scene& scene) {
    scene = Scene{};
    scene.meshes.push_back(tools::make_boxes_scene(1, 1).meshes[0]);
    for (std::size_t i = 0; i <= nodes; ++i) {
      scene.objects.push_back(Object{
          0, glm::translate(glm::mat4{1.0f}, glm::vec3{float(i) * 3.0f, 0.0f, 0.0f}),
          "o" + std::to_string(i)});
    }
    std::string bytes;
    saved::append(bytes, std::uint32_t{1});  // version
    saved::append(bytes, std::uint8_t{0});   // obb mode
    saved::append(bytes, static_cast<std::uint64_t>(scene.objects.size()));
    saved::append(bytes, static_cast<std::uint64_t>(scene.objects.size()));  // entries
    saved::append(bytes, static_cast<std::uint64_t>(nodes));
    for (std::uint32_t i = 0; i < nodes; ++i) {
      std::uint32_t child[8], count[8];
      for (int s = 0; s < 8; ++s) {
        child[s] = WideNode::kInvalidSlot;
        count[s] = 0;
      }
      child[0] = i;
      count[0] = i + 1 == nodes ? 2 : 1;
      if (i + 1 < nodes) child[1] = i + 1;
      saved::append(bytes, child, 8);
      saved::append(bytes, count, 8);
    }
    saved::append(bytes, std::uint8_t{0});  // no prim ids
    for (std::uint32_t e = 0; e < scene.objects.size(); ++e) saved::append(bytes, e);
    saved::append(bytes, static_cast<std::uint64_t>(scene.meshes.size()));
    saved::append(bytes, std::uint8_t{0});  // no mesh tree in obb mode
    return bytes;
  };
  PickerConfig config;
  config.mesh_mode = false;
  config.top_width = 8;  // the width of the trees made above
  Scene scene;
  // Deepest node at depth kBvhMaxDepth + 1: refused.
  std::string bytes = chain(kBvhMaxDepth + 2, scene);
  std::string why;
  const Picker deep = Picker::open(scene, bytes, config, &why);
  CHECK(why.find("deeper than the traversal allows") != std::string::npos);
  check_same_answers(Picker(scene, config), deep, scene, false);
  // At depth kBvhMaxDepth: a tree the traversal can walk, adopted and right.
  bytes = chain(kBvhMaxDepth + 1, scene);
  why.clear();
  const Picker edge = Picker::open(scene, bytes, config, &why);
  CHECK(why.empty());
  CHECK(edge.bvh_stats().max_depth == kBvhMaxDepth);
  check_same_answers(Picker(scene, config), edge, scene, false);
}

TEST_CASE("a saved tree that fills every traversal stack to its bound is walked safely") {
  // kBvhMaxDepth + 1 nodes in a chain, each with seven one-object leaf
  // slots beside the next node (the last with eight), over 456 coincident
  // unit cubes: every box is hit by every ray through them, so each level
  // leaves seven siblings on the stacks, the most a tree within the depth
  // bound can. Every query path must walk it (ASan in CI checks the
  // stacks) and answer as the built picker: ties to the lowest id.
  const std::uint32_t levels = kBvhMaxDepth + 1;
  const std::uint32_t objects = (levels - 1) * 7 + 8;
  Scene scene;
  scene.meshes.push_back(tools::make_boxes_scene(1, 1).meshes[0]);
  for (std::uint32_t i = 0; i < objects; ++i) {
    scene.objects.push_back(Object{0, glm::mat4{1.0f}, "o" + std::to_string(i)});
  }
  std::string bytes;
  saved::append(bytes, std::uint32_t{1});  // version
  saved::append(bytes, std::uint8_t{0});   // obb mode
  saved::append(bytes, std::uint64_t{objects});
  saved::append(bytes, std::uint64_t{objects});  // entries
  saved::append(bytes, std::uint64_t{levels});   // nodes
  std::uint32_t entry = 0;
  for (std::uint32_t i = 0; i < levels; ++i) {
    std::uint32_t child[8], count[8];
    const bool last = i + 1 == levels;
    for (int s = 0; s < 8; ++s) {
      const bool inner = s == 0 && !last;
      child[s] = inner ? i + 1 : entry++;
      count[s] = inner ? 0 : 1;
    }
    saved::append(bytes, child, 8);
    saved::append(bytes, count, 8);
  }
  REQUIRE(entry == objects);
  saved::append(bytes, std::uint8_t{0});  // no prim ids
  for (std::uint32_t e = 0; e < objects; ++e) saved::append(bytes, e);
  saved::append(bytes, std::uint64_t{1});  // meshes
  saved::append(bytes, std::uint8_t{0});   // no mesh tree in obb mode
  PickerConfig config;
  config.mesh_mode = false;
  config.top.max_leaf_size = 1;
  config.top_width = 8;               // the tree's width above
  config.batch_interleave_bytes = 0;  // batches interleave
  std::string why;
  const Picker deep = Picker::open(scene, bytes, config, &why);
  REQUIRE(why.empty());
  CHECK(deep.bvh_stats().max_depth == kBvhMaxDepth);
  const Picker built(scene, config);
  // Rays through the cubes' middle (every box hit).
  const glm::vec3 mid = built.world_box(0).center();
  std::vector<Ray> rays;
  for (int i = 0; i < 32; ++i) {
    const glm::vec3 aim = mid + glm::vec3{0.0f, 0.005f * float(i), -0.004f * float(i)};
    rays.push_back(Ray{aim - glm::vec3{3.0f, 0.3f, 0.1f * float(i % 3)},
                       glm::vec3{3.0f, 0.3f, 0.1f * float(i % 3)}});
  }
  check_same_answers(built, deep, scene, false);
  for (const Ray& r : rays) {
    const Hit h = deep.intersect(r);
    CHECK(h.object == 0);  // all coincident: the lowest id
    CHECK(deep.intersect_all(r).size() == objects);
    CHECK(deep.occluded(r));
  }
  const std::vector<Hit> batch = deep.intersect_batch(rays);
  for (const Hit& h : batch) CHECK(h.object == 0);
  config.batch_interleave_bytes = std::size_t{1} << 40;  // packets instead
  const Picker packets = Picker::open(scene, bytes, config, &why);
  for (const Hit& h : packets.intersect_batch(rays)) CHECK(h.object == 0);
  CHECK(deep.closest_point(glm::dvec3(mid) + glm::dvec3(3.0, 0.0, 0.0)).object == 0);
  CHECK(deep.closest_point(glm::dvec3(mid)).object == 0);
  CameraSpec spec;
  spec.eye = glm::dvec3(mid) + glm::dvec3(0.0, 0.0, 5.0);
  spec.target = glm::dvec3(mid);
  spec.width = spec.height = 64;
  const Camera cam(spec);
  CHECK(deep.select(cam.frustum(0, 0, 64, 64), SelectRule::kTouch).size() == objects);
}
