// The glTF 2.0 loader on files written at test time: object order, world
// matrices, instancing, primitive modes, index types, strides, sparse
// accessors, names, scenes, every refusal with its message, truncated and
// random files.
#include "gltf_builder.h"
#include "loader_test_util.h"
#include "test_util.h"

#include "raypick/loaders/load.h"

#include <doctest/doctest.h>
#include <glm/ext/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <glm/mat4x4.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace raypick;
using namespace raypick::test;

namespace {

// Writes `b` three ways (base64 .gltf, .gltf + .bin, .glb) and loads each;
// all three must give the same scene, which is returned.
Scene load_all_ways(const TempDir& dir, const GltfBuilder& b) {
  const Scene embedded = require_load(dir.write("embedded.gltf", b.gltf_embedded()));
  dir.write("external.bin", b.bin);
  const Scene external =
      require_load(dir.write("external.gltf", b.gltf_external("external.bin")));
  const Scene binary = require_load(dir.write("binary.glb", b.glb()));
  for (const Scene* other : {&external, &binary}) {
    REQUIRE(other->objects.size() == embedded.objects.size());
    REQUIRE(other->meshes.size() == embedded.meshes.size());
    for (std::size_t i = 0; i < embedded.objects.size(); ++i) {
      CHECK(other->objects[i].name == embedded.objects[i].name);
      CHECK(other->objects[i].mesh == embedded.objects[i].mesh);
      CHECK(other->objects[i].matrix == embedded.objects[i].matrix);
    }
    for (std::size_t m = 0; m < embedded.meshes.size(); ++m) {
      CHECK(other->meshes[m].positions == embedded.meshes[m].positions);
      CHECK(other->meshes[m].triangles == embedded.meshes[m].triangles);
    }
  }
  return embedded;
}

// The error loading the embedded form of `b`, with `error.line` the line of
// the pretty-printed file.
LoadError embedded_error(const TempDir& dir, const GltfBuilder& b) {
  return require_error(dir.write("bad.gltf", b.gltf_embedded()));
}

glm::mat4 translation(float x, float y, float z) {
  return glm::translate(glm::mat4{1.0f}, glm::vec3{x, y, z});
}

glm::mat4 scaling(float x, float y, float z) {
  return glm::scale(glm::mat4{1.0f}, glm::vec3{x, y, z});
}

Json scene_of(std::initializer_list<int> roots) {
  return Json::array({Json{{"nodes", Json(roots)}}});
}

// An accessor's "sparse" object: `count` values from buffer view `values`
// replacing the elements listed in buffer view `indices` (of component
// type `index_type`).
Json sparse_of(int count, int indices, int index_type, int values) {
  return Json{{"count", count},
              {"indices", {{"bufferView", indices}, {"componentType", index_type}}},
              {"values", {{"bufferView", values}}}};
}

// triangle_builder()'s triangle placed by one node, the scene's one root.
GltfBuilder placed_triangle() {
  GltfBuilder b = triangle_builder();
  b.add_node({{"mesh", 0}});
  b.doc["scenes"] = scene_of({0});
  return b;
}

// A change to a glTF document: the value at a JSON pointer replaced, or
// erased when it is kErase.
struct Edit {
  const char* pointer;
  Json value;
};
const Json kErase(Json::value_t::discarded);

// A document `base` with `edits` made is refused with `expected`.
struct Refusal {
  const char* name;
  std::vector<Edit> edits;
  std::string expected;
};

// Loads each case's edited copy of `base` in embedded form and requires a
// malformed-file error with exactly its message (and a line, when
// `with_line`).
void check_refusals(const TempDir& dir, const GltfBuilder& base,
                    const std::vector<Refusal>& cases, bool with_line) {
  for (const Refusal& c : cases) {
    CAPTURE(c.name);
    GltfBuilder b = base;
    for (const Edit& e : c.edits) {
      const Json::json_pointer at(e.pointer);
      if (e.value.is_discarded()) {
        b.doc[at.parent_pointer()].erase(at.back());
      } else {
        b.doc[at] = e.value;
      }
    }
    const LoadError error = embedded_error(dir, b);
    CHECK(error.kind == LoadError::Kind::kMalformed);
    CHECK(error.message == c.expected);
    if (with_line) CHECK(error.line > 0);
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Objects, transforms, names, scenes

TEST_CASE("glTF nodes with a matrix and with T*R*S give their world matrices") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  // Column-major: scale 2, 3, 4 and translation 5, 6, 7.
  b.add_node({{"name", "by_matrix"},
              {"mesh", 0},
              {"matrix", {2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4, 0, 5, 6, 7, 1}}});
  // 90 degrees about z as a quaternion [x, y, z, w].
  const double h = std::sqrt(0.5);
  b.add_node({{"name", "by_trs"},
              {"mesh", 0},
              {"translation", {1, 2, 3}},
              {"rotation", {0, 0, h, h}},
              {"scale", {2, 1, 1}}});
  b.add_node({{"name", "translation_only"}, {"mesh", 0}, {"translation", {-1, 0.5, 8}}});
  b.add_node({{"name", "nothing"}, {"mesh", 0}});
  b.doc["scenes"] = scene_of({0, 1, 2, 3});
  const Scene scene = load_all_ways(dir, b);
  REQUIRE(scene.objects.size() == 4);

  CHECK(scene.objects[0].name == "by_matrix");
  CHECK(scene.objects[0].matrix == translation(5, 6, 7) * scaling(2, 3, 4));

  // T * R * S: x is scaled by 2, then turned onto +y; y turned onto -x.
  glm::mat4 expected{0.0f};
  expected[0] = {0, 2, 0, 0};
  expected[1] = {-1, 0, 0, 0};
  expected[2] = {0, 0, 1, 0};
  expected[3] = {1, 2, 3, 1};
  CHECK(scene.objects[1].name == "by_trs");
  CHECK(near(scene.objects[1].matrix, expected, 1e-6f));

  CHECK(scene.objects[2].matrix == translation(-1, 0.5f, 8));
  CHECK(scene.objects[3].matrix == glm::mat4{1.0f});
}

TEST_CASE("glTF world matrices are the product of the node chain") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  // root (T 10,0,0 * S 2) -> middle (T 1,0,0, no mesh) -> leaf (S 0.5 by
  // matrix) -> tip (T 0,0,4)
  b.add_node({{"name", "root"}, {"mesh", 0}, {"translation", {10, 0, 0}},
              {"scale", {2, 2, 2}}, {"children", {1}}});
  b.add_node({{"name", "middle"}, {"translation", {1, 0, 0}}, {"children", {2}}});
  b.add_node({{"name", "leaf"},
              {"mesh", 0},
              {"matrix", {0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1}},
              {"children", {3}}});
  b.add_node({{"name", "tip"}, {"mesh", 0}, {"translation", {0, 0, 4}}});
  b.doc["scenes"] = scene_of({0});
  const Scene scene = load_all_ways(dir, b);
  REQUIRE(scene.objects.size() == 3);
  const glm::mat4 root = translation(10, 0, 0) * scaling(2, 2, 2);
  const glm::mat4 leaf = root * translation(1, 0, 0) * scaling(0.5f, 0.5f, 0.5f);
  const glm::mat4 tip = leaf * translation(0, 0, 4);
  CHECK(scene.objects[0].name == "root");
  CHECK(scene.objects[0].matrix == root);
  CHECK(scene.objects[1].name == "leaf");
  CHECK(scene.objects[1].matrix == leaf);
  CHECK(scene.objects[2].name == "tip");
  CHECK(scene.objects[2].matrix == tip);
  // Spelled out: the tip sits at 10 + 2 * 1 = 12 on x, 2 * 0.5 * 4 = 4 on z,
  // with scale 1.
  CHECK(scene.objects[2].matrix == translation(12, 0, 4));
}

TEST_CASE("glTF node chains keep their world translation beyond float") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  // A survey origin far out, then a part of many digits under it.
  b.add_node({{"name", "site"}, {"translation", {612345.678, -4000000.25, 12.5}},
              {"children", {1}}});
  b.add_node({{"name", "part"}, {"mesh", 0}, {"translation", {0.001, 0.3, -0.7}}});
  b.doc["scenes"] = scene_of({0});
  const Scene scene = load_all_ways(dir, b);
  REQUIRE(scene.objects.size() == 1);
  const Object& o = scene.objects[0];
  CHECK(o.translation_low != glm::vec3{0.0f});
  CHECK(glm::length(o.translation() - glm::dvec3{612345.679, -3999999.95, 11.8}) < 1e-8);
  // Rounded to float alone, x would be 612345.6875: 0.0085 away.
  CHECK(std::abs(double(o.matrix[3].x) - 612345.679) > 1e-3);
}

TEST_CASE("glTF objects come in depth-first pre-order, children in listed order") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  // n0 (children n1, n4), n1 (children n3, n2, listed in that order),
  // n5, and n6 (no mesh) with child n7; the scene lists n5, n0, n6.
  b.add_node({{"name", "n0"}, {"mesh", 0}, {"children", {1, 4}}});
  b.add_node({{"name", "n1"}, {"mesh", 0}, {"children", {3, 2}}});
  b.add_node({{"name", "n2"}, {"mesh", 0}});
  b.add_node({{"name", "n3"}, {"mesh", 0}});
  b.add_node({{"name", "n4"}, {"mesh", 0}});
  b.add_node({{"name", "n5"}, {"mesh", 0}});
  b.add_node({{"name", "n6"}, {"children", {7}}});
  b.add_node({{"name", "n7"}, {"mesh", 0}});
  b.doc["scenes"] = scene_of({5, 0, 6});
  const Scene scene = load_all_ways(dir, b);
  std::vector<std::string> names;
  for (const Object& o : scene.objects) names.push_back(o.name);
  CHECK(names == std::vector<std::string>{"n5", "n0", "n1", "n3", "n2", "n4", "n7"});
}

TEST_CASE("a glTF node with two parents, or a root that is also a child, is refused") {
  // glTF 2.0: the node hierarchy is a set of disjoint strict trees, and a
  // scene lists root nodes only, once each.
  TempDir dir;
  GltfBuilder b = triangle_builder();
  b.add_node({{"name", "left"}, {"translation", {-5, 0, 0}}, {"children", {2}}});
  b.add_node({{"name", "right"}, {"translation", {5, 0, 0}}, {"children", {2}}});
  b.add_node({{"name", "wheel"}, {"mesh", 0}, {"translation", {0, 1, 0}}});

  SUBCASE("under two parents: both named") {
    b.doc["scenes"] = scene_of({0, 1});
    CHECK(embedded_error(dir, b).message ==
          "nodes[1].children[0]: node 2 has two parents, nodes 0 and 1 (glTF 2.0 requires the "
          "node hierarchy to be strict trees)");
  }
  SUBCASE("twice among one node's children") {
    b.doc["nodes"][1]["children"] = {2, 2};
    b.doc["nodes"][0].erase("children");
    b.doc["scenes"] = scene_of({1});
    CHECK(embedded_error(dir, b).message ==
          "nodes[1].children[1]: node 2 is listed twice among node 1's children (glTF 2.0 "
          "requires the node hierarchy to be strict trees)");
  }
  SUBCASE("listed as a root and as a child") {
    b.doc["nodes"][1].erase("children");
    b.doc["scenes"] = scene_of({2, 0});
    CHECK(embedded_error(dir, b).message ==
          "scenes[0].nodes[0]: node 2 is listed as a root but is a child of node 0 (glTF 2.0 "
          "requires a scene's nodes to be root nodes)");
  }
  SUBCASE("listed twice as a root") {
    b.doc["nodes"][0].erase("children");
    b.doc["nodes"][1].erase("children");
    b.doc["scenes"] = scene_of({2, 2});
    CHECK(embedded_error(dir, b).message == "scenes[0].nodes[1]: node 2 is listed twice");
  }
  SUBCASE("a strict tree loads: one object per node with a mesh") {
    b.doc["nodes"][1].erase("children");
    b.doc["scenes"] = scene_of({0, 1});
    const Scene scene = load_all_ways(dir, b);
    REQUIRE(object_names(scene) == std::vector<std::string>{"wheel"});
    CHECK(scene.objects[0].matrix == translation(-5, 1, 0));
  }
}

TEST_CASE("a glTF mesh shared by several nodes is converted once and instanced") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  // A second mesh no node of the scene uses, and one used by a node outside
  // it: neither is converted.
  const int pos = b.add_positions({{0, 0, 0}, {0, 0, 1}, {0, 1, 1}, {9, 9, 9}});
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", pos}}}}}));
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", pos}}},
                               {"mode", 6}}}));
  for (int i = 0; i < 4; ++i) {
    b.add_node({{"mesh", 0}, {"translation", {i, 0, 0}}});
  }
  b.add_node({{"mesh", 2}});  // node 4, not in the scene
  b.doc["scenes"] = scene_of({0, 1, 2, 3});
  const Scene scene = load_all_ways(dir, b);
  REQUIRE(scene.objects.size() == 4);
  REQUIRE(scene.meshes.size() == 1);
  for (const Object& o : scene.objects) CHECK(o.mesh == 0);
  CHECK(scene.meshes[0].triangles.size() == 1);
  CHECK(scene.triangle_count() == 4);
}

TEST_CASE("glTF meshes are numbered in order of first use") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  const int pos = b.add_positions({{0, 0, 0}, {0, 0, 1}, {0, 1, 1}});
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", pos}}}}}));
  b.add_node({{"mesh", 1}});
  b.add_node({{"mesh", 0}});
  b.add_node({{"mesh", 1}});
  b.doc["scenes"] = scene_of({0, 1, 2});
  const Scene scene = load_all_ways(dir, b);
  REQUIRE(scene.meshes.size() == 2);
  CHECK(scene.objects[0].mesh == 0);
  CHECK(scene.objects[1].mesh == 1);
  CHECK(scene.objects[2].mesh == 0);
  CHECK(scene.meshes[0].positions[1] == glm::vec3{0, 0, 1});
}

TEST_CASE("an unnamed or empty-named glTF node is called node<index>") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  b.add_node({{"children", {1, 2}}});  // no mesh: not an object
  b.add_node({{"mesh", 0}});
  b.add_node({{"mesh", 0}, {"name", ""}});
  b.add_node({{"mesh", 0}, {"name", "named \"quoted\" \xC3\xA9"}});
  b.doc["scenes"] = scene_of({0, 3});
  const Scene scene = load_all_ways(dir, b);
  REQUIRE(scene.objects.size() == 3);
  CHECK(scene.objects[0].name == "node1");
  CHECK(scene.objects[1].name == "node2");
  CHECK(scene.objects[2].name == "named \"quoted\" \xC3\xA9");
}

TEST_CASE("glTF picks the default scene, scene 0 when none is set, or the root nodes") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  b.add_node({{"name", "a"}, {"mesh", 0}});
  b.add_node({{"name", "b"}, {"mesh", 0}, {"children", {2}}});
  b.add_node({{"name", "c"}, {"mesh", 0}});
  b.add_node({{"name", "d"}, {"mesh", 0}});
  b.doc["scenes"] =
      Json::array({Json{{"nodes", {0}}}, Json{{"nodes", {3, 1}}}});

  std::vector<std::string> expected;
  SUBCASE("scene set") {
    b.doc["scene"] = 1;
    expected = {"d", "b", "c"};
  }
  SUBCASE("scene unset: scene 0") { expected = {"a"}; }
  SUBCASE("no scenes: nodes that are no node's child, in index order") {
    b.doc.erase("scenes");
    expected = {"a", "b", "c", "d"};
  }
  SUBCASE("an empty scenes array: likewise") {
    b.doc["scenes"] = Json::array();
    expected = {"a", "b", "c", "d"};
  }
  const Scene scene = load_all_ways(dir, b);
  std::vector<std::string> names;
  for (const Object& o : scene.objects) names.push_back(o.name);
  CHECK(names == expected);
}

// ---------------------------------------------------------------------------
// Primitives and accessors

TEST_CASE("glTF triangle lists, strips and fans become triangles, points and lines do not") {
  TempDir dir;
  GltfBuilder b;
  // A row of 5 points along x, and one above.
  const int pos = b.add_positions(
      {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}, {0, 1, 0}});
  const int five = b.add_indices({0, 1, 2, 3, 4}, 5125);
  const int six = b.add_indices({0, 1, 5, 1, 2, 5}, 5125);
  Json prims = Json::array();
  prims.push_back({{"attributes", {{"POSITION", pos}}}, {"indices", five}, {"mode", 0}});
  prims.push_back({{"attributes", {{"POSITION", pos}}}, {"indices", six}, {"mode", 4}});
  prims.push_back({{"attributes", {{"POSITION", pos}}}, {"indices", five}, {"mode", 1}});
  prims.push_back({{"attributes", {{"POSITION", pos}}}, {"indices", five}, {"mode", 5}});
  prims.push_back({{"attributes", {{"POSITION", pos}}}, {"indices", five}, {"mode", 6}});
  prims.push_back({{"attributes", {{"POSITION", pos}}}, {"indices", five}, {"mode", 2}});
  prims.push_back({{"attributes", {{"POSITION", pos}}}, {"indices", five}, {"mode", 3}});
  b.add_mesh(prims);
  b.add_node({{"mesh", 0}});
  b.doc["scenes"] = scene_of({0});
  const Scene scene = load_all_ways(dir, b);
  REQUIRE(scene.objects.size() == 1);
  const Mesh& mesh = mesh_of(scene, 0);
  // All primitives share one POSITION accessor, hence its six vertices.
  CHECK(mesh.positions.size() == 6);
  // Mode 4: 2 triangles; strip of 5: 3 (the middle one flipped, per glTF's
  // {v_i, v_{i+(1+i%2)}, v_{i+(2-i%2)}}); fan of 5: 3 ({v_{i+1}, v_{i+2},
  // v_0}). Collinear, hence degenerate, and kept.
  CHECK(mesh.triangles == std::vector<glm::uvec3>{{0, 1, 5}, {1, 2, 5},              // mode 4
                                                   {0, 1, 2}, {1, 3, 2}, {2, 3, 4},   // strip
                                                   {1, 2, 0}, {2, 3, 0}, {3, 4, 0}}); // fan
}

TEST_CASE("glTF index accessors of unsigned byte, short and int all load") {
  TempDir dir;
  int ctype = 0;
  SUBCASE("u8") { ctype = 5121; }
  SUBCASE("u16") { ctype = 5123; }
  SUBCASE("u32") { ctype = 5125; }
  CAPTURE(ctype);
  GltfBuilder b;
  const int pos = b.add_positions({{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}});
  // An odd count of u8 / u16 indices leaves the next view unaligned unless
  // the builder pads: 9 indices.
  const int idx = b.add_indices({0, 1, 2, 0, 2, 3, 3, 2, 1}, ctype);
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", pos}}}, {"indices", idx}}}));
  b.add_node({{"mesh", 0}});
  b.doc["scenes"] = scene_of({0});
  const Scene scene = load_all_ways(dir, b);
  CHECK(mesh_of(scene, 0).triangles ==
        std::vector<glm::uvec3>{{0, 1, 2}, {0, 2, 3}, {3, 2, 1}});
}

TEST_CASE("non-indexed glTF primitives take their vertices in order") {
  TempDir dir;
  GltfBuilder b;
  const int pos = b.add_positions(
      {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}});
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", pos}}}},
                          Json{{"attributes", {{"POSITION", pos}}}, {"mode", 5}}}));
  b.add_node({{"mesh", 0}});
  b.doc["scenes"] = scene_of({0});
  const Scene scene = load_all_ways(dir, b);
  const Mesh& mesh = mesh_of(scene, 0);
  CHECK(mesh.triangles.size() == 2 + 4);
  CHECK(mesh.triangles[0] == glm::uvec3{0, 1, 2});
  CHECK(mesh.triangles[1] == glm::uvec3{3, 4, 5});
  CHECK(mesh.triangles[2] == glm::uvec3{0, 1, 2});
  CHECK(mesh.triangles[3] == glm::uvec3{1, 3, 2});
}

TEST_CASE("glTF accessors with byte strides and offsets read the right bytes") {
  TempDir dir;
  GltfBuilder b;
  // Interleaved: position (12 bytes), a 4-byte pad, a normal (12 bytes):
  // stride 28. The position accessor starts 0 bytes in, a second accessor
  // (the normals, read as positions by another mesh) 16 bytes in.
  std::vector<float> interleaved;
  const std::vector<glm::vec3> points{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
  for (std::size_t i = 0; i < points.size(); ++i) {
    interleaved.insert(interleaved.end(), {points[i].x, points[i].y, points[i].z,
                                           -1.0f, 0.0f, 0.0f,
                                           static_cast<float>(i)});
  }
  const int view = b.add_view(bytes_of(interleaved), 28);
  const int pos = b.add_accessor(
      {{"bufferView", view}, {"componentType", 5126}, {"count", 3}, {"type", "VEC3"}});
  const int normals = b.add_accessor({{"bufferView", view},
                                      {"byteOffset", 16},
                                      {"componentType", 5126},
                                      {"count", 3},
                                      {"type", "VEC3"}});
  // Indices 6 bytes into their view.
  const int iview = b.add_view(bytes_of(std::vector<std::uint16_t>{9, 9, 9, 2, 1, 0}));
  const int idx = b.add_accessor({{"bufferView", iview},
                                  {"byteOffset", 6},
                                  {"componentType", 5123},
                                  {"count", 3},
                                  {"type", "SCALAR"}});
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", pos}}}, {"indices", idx}}}));
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", normals}}}}}));
  b.add_node({{"mesh", 0}});
  b.add_node({{"mesh", 1}});
  b.doc["scenes"] = scene_of({0, 1});
  const Scene scene = load_all_ways(dir, b);
  CHECK(test::triangle_corners(mesh_of(scene, 0)) ==
        std::vector<glm::vec3>{{7, 8, 9}, {4, 5, 6}, {1, 2, 3}});
  CHECK(mesh_of(scene, 1).positions ==
        std::vector<glm::vec3>{{0, 0, 0}, {0, 0, 1}, {0, 0, 2}});
}

TEST_CASE("glTF sparse accessors substitute their values") {
  TempDir dir;
  GltfBuilder b;
  const std::vector<glm::vec3> base{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {5, 5, 5}};
  const int base_view = b.add_view(bytes_of(std::vector<float>{
      0, 0, 0, 1, 0, 0, 0, 1, 0, 5, 5, 5}));
  // Sparse: element 3 becomes (1, 1, 0), element 0 becomes (0, 0, -1).
  int sparse_ctype = 0;
  SUBCASE("u8 sparse indices") { sparse_ctype = 5121; }
  SUBCASE("u16 sparse indices") { sparse_ctype = 5123; }
  SUBCASE("u32 sparse indices") { sparse_ctype = 5125; }
  CAPTURE(sparse_ctype);
  std::string sparse_indices;
  for (const std::uint32_t i : {3u, 0u}) {
    if (sparse_ctype == 5121) sparse_indices += static_cast<char>(i);
    if (sparse_ctype == 5123) sparse_indices += bytes_of(std::vector<std::uint16_t>{static_cast<std::uint16_t>(i)});
    if (sparse_ctype == 5125) sparse_indices += bytes_of(std::vector<std::uint32_t>{i});
  }
  const int si = b.add_view(sparse_indices);
  const int sv = b.add_view(bytes_of(std::vector<float>{1, 1, 0, 0, 0, -1}));
  const Json sparse = sparse_of(2, si, sparse_ctype, sv);
  const int dense = b.add_accessor({{"bufferView", base_view},
                                    {"componentType", 5126},
                                    {"count", 4},
                                    {"type", "VEC3"},
                                    {"sparse", sparse}});
  // Without a buffer view: zeros, then the sparse values.
  const int zeros = b.add_accessor(
      {{"componentType", 5126}, {"count", 4}, {"type", "VEC3"}, {"sparse", sparse}});
  // Sparse indices: 0 1 2 / 0 2 3 with element 5 replaced by 1.
  const int iview = b.add_view(bytes_of(std::vector<std::uint16_t>{0, 1, 2, 0, 2, 9}));
  const int ivals = b.add_view(bytes_of(std::vector<std::uint16_t>{3, 0}));
  const int iidx = b.add_view(bytes_of(std::vector<std::uint16_t>{5, 0}));
  const int idx = b.add_accessor({{"bufferView", iview}, {"componentType", 5123}, {"count", 6},
                                  {"type", "SCALAR"}, {"sparse", sparse_of(1, iidx, 5123, ivals)}});
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", dense}}}, {"indices", idx}}}));
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", zeros}}}, {"indices", idx}}}));
  b.add_node({{"mesh", 0}});
  b.add_node({{"mesh", 1}});
  b.doc["scenes"] = scene_of({0, 1});
  const Scene scene = load_all_ways(dir, b);
  CHECK(mesh_of(scene, 0).positions ==
        std::vector<glm::vec3>{{0, 0, -1}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}});
  CHECK(mesh_of(scene, 1).positions ==
        std::vector<glm::vec3>{{0, 0, -1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 0}});
  CHECK(mesh_of(scene, 0).triangles ==
        std::vector<glm::uvec3>{{0, 1, 2}, {0, 2, 3}});
}

TEST_CASE("glTF primitives without POSITION add nothing, a mesh of lines is an empty object") {
  TempDir dir;
  GltfBuilder b;
  const int pos = b.add_positions({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  const int normal = b.add_positions({{0, 0, 1}, {0, 0, 1}, {0, 0, 1}});
  b.add_mesh(Json::array({Json{{"attributes", {{"NORMAL", normal}}}},
                          Json{{"attributes", {{"POSITION", pos}}}}}));
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", pos}}}, {"mode", 1}}}));
  b.add_node({{"name", "tri"}, {"mesh", 0}});
  b.add_node({{"name", "wire"}, {"mesh", 1}});
  b.doc["scenes"] = scene_of({0, 1});
  const Scene scene = load_all_ways(dir, b);
  REQUIRE(scene.objects.size() == 2);
  CHECK(mesh_of(scene, 0).triangles == std::vector<glm::uvec3>{{0, 1, 2}});
  CHECK(mesh_of(scene, 1).triangles.empty());
}

TEST_CASE("glTF quantized positions load under KHR_mesh_quantization") {
  TempDir dir;
  GltfBuilder b;
  const int view = b.add_view(bytes_of(std::vector<std::uint16_t>{
      0, 0, 0, 0, 65535, 0, 0, 0, 65535, 0, 0, 0}));
  const int pos = b.add_accessor({{"bufferView", view},
                                  {"componentType", 5123},
                                  {"normalized", true},
                                  {"count", 3},
                                  {"type", "VEC3"}});
  const int sview = b.add_view(bytes_of(std::vector<std::int8_t>{
      -127, 0, 0, 0, 0, 127, 0, 0, 0, 0, 5, 0}), 4);
  const int spos = b.add_accessor({{"bufferView", sview},
                                   {"componentType", 5120},
                                   {"count", 3},
                                   {"type", "VEC3"}});
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", pos}}}},
                          Json{{"attributes", {{"POSITION", spos}}}}}));
  b.add_node({{"mesh", 0}});
  b.doc["scenes"] = scene_of({0});

  SUBCASE("with the extension") {
    b.doc["extensionsUsed"] = {"KHR_mesh_quantization"};
    b.doc["extensionsRequired"] = {"KHR_mesh_quantization"};
    const Scene scene = load_all_ways(dir, b);
    CHECK(mesh_of(scene, 0).positions ==
          std::vector<glm::vec3>{{0, 0, 0}, {0, 1, 0}, {0, 0, 1},
                                 {-127, 0, 0}, {0, 127, 0}, {0, 0, 5}});
  }
  SUBCASE("without it") {
    const LoadError error = embedded_error(dir, b);
    CHECK(error.message ==
          "accessors[0]: POSITION (meshes[0].primitives[0]) must have float "
          "components, not unsigned short (integer positions need "
          "KHR_mesh_quantization in extensionsUsed)");
  }
}

TEST_CASE("glTF buffers: data URIs and files with more bytes than byteLength load") {
  TempDir dir;
  GltfBuilder b = placed_triangle();
  for (std::size_t extra : {1, 2, 3, 4, 7}) {
    CAPTURE(extra);
    Json d = b.doc;
    const std::string longer = b.bin + std::string(extra, '\x7F');
    d["buffers"] = Json::array(
        {Json{{"byteLength", b.bin.size()},
              {"uri", "data:application/gltf-buffer;base64," + base64(longer)}}});
    CHECK(require_load(dir.write("long.gltf", d.dump())).triangle_count() == 1);
    dir.write("long.bin", longer);
    d["buffers"][0]["uri"] = "long.bin";
    CHECK(require_load(dir.write("long_file.gltf", d.dump())).triangle_count() == 1);
  }
}

TEST_CASE("glTF buffer file names are percent-decoded relative to the file") {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "sub dir");
  GltfBuilder b = placed_triangle();
  dir.write("sub dir/a+b c.bin", b.bin);
  const std::string path =
      dir.write("scene.gltf", b.gltf_external("sub%20dir/a+b%20c.bin"));
  CHECK(require_load(path).triangle_count() == 1);
}

TEST_CASE("a GLB with a second, external buffer and unknown chunks loads") {
  TempDir dir;
  GltfBuilder b = placed_triangle();
  // Move the index view to buffer 1, a file.
  const std::string indices = bytes_of(std::vector<std::uint16_t>{2, 1, 0, 0});
  dir.write("extra.bin", indices);
  Json d = b.doc;
  d["buffers"] = Json::array({Json{{"byteLength", b.bin.size()}},
                              Json{{"byteLength", 8}, {"uri", "extra.bin"}}});
  d["bufferViews"][1] = {{"buffer", 1}, {"byteLength", 6}};
  std::string glb = make_glb(d.dump(), b.bin);
  // An unknown chunk type after BIN is skipped, as the GLB layout asks.
  std::string chunk;
  put_u32(chunk, 4);
  put_u32(chunk, 0x12345678);
  chunk += "abcd";
  glb += chunk;
  glb[8] = static_cast<char>(glb.size() & 0xFF);
  glb[9] = static_cast<char>((glb.size() >> 8) & 0xFF);
  const Scene scene = require_load(dir.write("two.glb", glb));
  CHECK(test::triangle_corners(mesh_of(scene, 0)) ==
        std::vector<glm::vec3>{{0, 1, 0}, {1, 0, 0}, {0, 0, 0}});
}

TEST_CASE("glTF: images, materials and required material extensions do not matter") {
  TempDir dir;
  GltfBuilder b = placed_triangle();
  b.doc["images"] = Json::array({Json{{"uri", "missing.png"}},
                                 Json{{"uri", "data:image/png;base64,"}}});
  b.doc["materials"] = Json::array({Json{{"pbrMetallicRoughness", "not an object"}}});
  b.doc["extensionsRequired"] = {"KHR_materials_unlit", "KHR_texture_transform"};
  b.doc["meshes"][0]["primitives"][0]["material"] = 0;
  const LoadResult result = load_scene(dir.write("images.gltf", b.gltf_embedded()));
  REQUIRE(result.ok());
  CHECK(result.warnings.empty());
}

TEST_CASE("an unknown required glTF extension loads with a warning") {
  TempDir dir;
  GltfBuilder b = placed_triangle();
  b.doc["extensionsRequired"] = {"VENDOR_magic"};
  const LoadResult result = load_scene(dir.write("ext.gltf", b.gltf_embedded()));
  REQUIRE(result.ok());
  CHECK(result.warnings == std::vector<std::string>{
                                "the file requires extension 'VENDOR_magic', "
                                "unknown to raypick; geometry is read without it"});
}

// ---------------------------------------------------------------------------
// Refusals

TEST_CASE("glTF node cycles are refused") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  SUBCASE("two nodes") {
    b.add_node({{"mesh", 0}, {"children", {1}}});
    b.add_node({{"children", {0}}});
    b.doc["scenes"] = scene_of({0});
    const LoadError error = embedded_error(dir, b);
    CHECK(error.kind == LoadError::Kind::kMalformed);
    CHECK(error.message ==
          "nodes[1].children[0]: node 0 is its own ancestor (cycle 0 -> 1 -> 0)");
  }
  SUBCASE("a node its own child") {
    b.add_node({{"mesh", 0}});
    b.add_node({{"mesh", 0}, {"children", {0, 1}}});
    b.doc["scenes"] = scene_of({0});
    const LoadError error = embedded_error(dir, b);
    CHECK(error.message ==
          "nodes[1].children[1]: node 1 is its own ancestor (cycle 1 -> 1)");
  }
  SUBCASE("a cycle no scene reaches") {
    b.add_node({{"mesh", 0}});
    b.add_node({{"children", {2}}});
    b.add_node({{"children", {3}}});
    b.add_node({{"children", {1}}});
    b.doc["scenes"] = scene_of({0});
    const LoadError error = embedded_error(dir, b);
    CHECK(error.message ==
          "nodes[3].children[0]: node 1 is its own ancestor (cycle 1 -> 2 -> 3 "
          "-> 1)");
  }
}

TEST_CASE("a glTF node graph of 2^30 paths (a DAG) is refused as soon as a node has two parents") {
  // 30 levels of two nodes, each pointing to both nodes of the next level:
  // 2^30 paths to the last node, in a file of a few kilobytes.
  TempDir dir;
  GltfBuilder b = triangle_builder();
  for (int i = 0; i < 30; ++i) {
    b.add_node({{"children", {2 * i + 2, 2 * i + 3}}});
    b.add_node({{"children", {2 * i + 2, 2 * i + 3}}});
  }
  b.add_node({{"mesh", 0}});
  b.add_node({{"mesh", 0}});
  b.doc["scenes"] = scene_of({0, 1});
  const LoadError error = embedded_error(dir, b);
  CHECK(error.message ==
        "nodes[1].children[0]: node 2 has two parents, nodes 0 and 1 (glTF 2.0 requires the "
        "node hierarchy to be strict trees)");
}

TEST_CASE("glTF accessors and buffer views out of range are refused") {
  TempDir dir;
  GltfBuilder base = placed_triangle();
  check_refusals(dir, base, {
      {"accessor count past its view", {{"/accessors/0/count", 4}}, "accessors[0]: 4 elements from byte 0 end at byte 48, out of range of bufferViews[0] (36 bytes)"},
      {"accessor offset past its view", {{"/accessors/1/byteOffset", 2}}, "accessors[1]: 3 elements from byte 2 end at byte 8, out of range of bufferViews[1] (6 bytes)"},
      {"stride past the view", {{"/bufferViews/0/byteStride", 16}}, "accessors[0]: 3 elements from byte 0 end at byte 44, out of range of bufferViews[0] (36 bytes)"},
      {"view past its buffer", {{"/bufferViews/1/byteLength", 100}}, "bufferViews[1]: bytes 36..136 are out of range of buffers[0] (42 bytes)"},
      {"a huge count (2^53) does not wrap around", {{"/accessors/0/count", 9007199254740992ull}}, "accessors[0]: 9007199254740992 elements from byte 0 end at byte 108086391056891904, out of range of bufferViews[0] (36 bytes)"},
      {"an accessor naming a view that does not exist", {{"/accessors/1/bufferView", 7}}, "accessors[1].bufferView: bufferViews[7] does not exist (2 elements)"},
      {"a view naming a buffer that does not exist", {{"/bufferViews/0/buffer", 1}}, "bufferViews[0].buffer: buffers[1] does not exist (1 element)"},
      {"a bad byteStride", {{"/bufferViews/0/byteStride", 6}}, "bufferViews[0].byteStride: byteStride 6 is not a multiple of 4 in 4..252"},
      {"a sparse accessor past its views", {{"/accessors/0/sparse", sparse_of(3, 1, 5123, 1)}}, "accessors[0].sparse.values: 3 elements from byte 0 end at byte 36, out of range of bufferViews[1] (6 bytes)"},
  }, true);
  // A sparse index past the accessor's count: element 2 of the index view
  // (byte 36 + 4 of the buffer) becomes 7.
  base.bin[36 + 4] = 7;
  check_refusals(dir, base, {
      {"a sparse index past the accessor's count", {{"/accessors/0/sparse", sparse_of(1, 1, 5123, 0)}, {"/accessors/0/sparse/indices/byteOffset", 4}}, "accessors[0].sparse.indices: sparse index 7 (element 0) is past the accessor's 3 elements"},
  }, true);
}

TEST_CASE("glTF indices past the vertex count are refused") {
  TempDir dir;
  GltfBuilder b;
  const int pos = b.add_positions({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  int ctype = 0;
  SUBCASE("u8") { ctype = 5121; }
  SUBCASE("u16") { ctype = 5123; }
  SUBCASE("u32") { ctype = 5125; }
  const int idx = b.add_indices({0, 1, 2, 2, 1, 3}, ctype);
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", pos}}}, {"indices", idx}}}));
  b.add_node({{"mesh", 0}});
  b.doc["scenes"] = scene_of({0});
  const LoadError error = embedded_error(dir, b);
  CHECK(error.message ==
        "accessors[1]: index 3 (element 5) is past the 3 vertices of POSITION "
        "(meshes[0].primitives[0])");
  const std::string text = b.gltf_embedded();
  // The line of accessors[1]: the second '"bufferView": 1' starts inside it.
  CHECK(error.line == line_of(text, "\"bufferView\": 1,") - 1);
}

TEST_CASE("glTF index counts that do not fit the primitive mode are refused") {
  TempDir dir;
  GltfBuilder b;
  const int pos = b.add_positions({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}});
  std::string expected;
  Json prim{{"attributes", {{"POSITION", pos}}}};
  SUBCASE("mode 4, 4 indices") {
    prim["indices"] = b.add_indices({0, 1, 2, 3});
    expected = "meshes[0].primitives[0]: 4 indices do not make whole triangles "
               "(mode 4, triangles, needs a multiple of 3)";
  }
  SUBCASE("mode 4, 4 vertices, non-indexed") {
    expected = "meshes[0].primitives[0]: 4 vertices do not make whole "
               "triangles (mode 4, triangles, needs a multiple of 3)";
  }
  SUBCASE("mode 5, 2 indices") {
    prim["indices"] = b.add_indices({0, 1});
    prim["mode"] = 5;
    expected = "meshes[0].primitives[0]: mode 5 (triangle strip) needs at "
               "least 3 indices, got 2";
  }
  SUBCASE("mode 6, 1 index") {
    prim["indices"] = b.add_indices({0});
    prim["mode"] = 6;
    expected = "meshes[0].primitives[0]: mode 6 (triangle fan) needs at least "
               "3 indices, got 1";
  }
  SUBCASE("mode 7") {
    prim["mode"] = 7;
    expected = "meshes[0].primitives[0].mode: mode 7 is not a primitive mode (0..6)";
  }
  b.add_mesh(Json::array({prim}));
  b.add_node({{"mesh", 0}});
  b.doc["scenes"] = scene_of({0});
  CHECK(embedded_error(dir, b).message == expected);
}

TEST_CASE("non-finite glTF positions are refused") {
  TempDir dir;
  GltfBuilder b;
  float bad = 0.0f;
  std::string shown;
  SUBCASE("NaN") {
    bad = std::numeric_limits<float>::quiet_NaN();
    shown = "nan";
  }
  SUBCASE("inf") {
    bad = -std::numeric_limits<float>::infinity();
    shown = "-inf";
  }
  const int pos = b.add_positions({{0, 0, 0}, {1, bad, 0}, {0, 1, 0}});
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", pos}}}}}));
  b.add_node({{"mesh", 0}});
  b.doc["scenes"] = scene_of({0});
  CHECK(embedded_error(dir, b).message ==
        "accessors[0]: POSITION (meshes[0].primitives[0]): vertex 1 is not "
        "finite (1, " + shown + ", 0)");
}

TEST_CASE("glTF accessors of the wrong type for POSITION or indices are refused") {
  TempDir dir;
  GltfBuilder base = placed_triangle();
  check_refusals(dir, base, {
      {"POSITION as VEC4", {{"/accessors/0/type", "VEC4"}, {"/accessors/0/count", 2}}, "accessors[0]: POSITION (meshes[0].primitives[0]) must be a VEC3 accessor, not VEC4"},
      {"POSITION of unsigned int", {{"/accessors/0/componentType", 5125}}, "accessors[0]: POSITION (meshes[0].primitives[0]) must have float components, not unsigned int"},
      {"indices as VEC3", {{"/accessors/1/type", "VEC3"}, {"/accessors/1/count", 1}}, "accessors[1]: indices (meshes[0].primitives[0]) must be a SCALAR accessor of unsigned byte, short or int, not VEC3 of unsigned short"},
      {"signed indices", {{"/accessors/1/componentType", 5122}}, "accessors[1]: indices (meshes[0].primitives[0]) must be a SCALAR accessor of unsigned byte, short or int, not SCALAR of short"},
      {"float indices", {{"/accessors/1/componentType", 5126}, {"/accessors/1/count", 1}}, "accessors[1]: indices (meshes[0].primitives[0]) must be a SCALAR accessor of unsigned byte, short or int, not SCALAR of float"},
      {"component type 5124", {{"/accessors/1/componentType", 5124}}, "accessors[1].componentType: componentType 5124 is not one of 5120, 5121, 5122, 5123, 5125, 5126"},
      {"an unknown accessor type", {{"/accessors/1/type", "VEC5"}}, "accessors[1].type: unknown accessor type 'VEC5' (expected SCALAR, VEC2, VEC3, VEC4, MAT2, MAT3 or MAT4)"},
  }, false);
}

TEST_CASE("glTF fields picking reads must have their types") {
  TempDir dir;
  GltfBuilder base = triangle_builder();
  base.add_node({{"mesh", 0}, {"children", Json::array()}});
  base.doc["scenes"] = scene_of({0});
  check_refusals(dir, base, {
      {"scene", {{"/scene", "hello"}}, "scene: expected a non-negative integer, got the string \"hello\""},
      {"scene out of range", {{"/scene", 1}}, "scene: scenes[1] does not exist (1 element)"},
      {"primitives", {{"/meshes/0/primitives", Json::object()}}, "meshes[0].primitives: expected an array, got an object"},
      {"node mesh", {{"/nodes/0/mesh", -1}}, "nodes[0].mesh: expected a non-negative integer, got -1"},
      {"node mesh out of range", {{"/nodes/0/mesh", 3}}, "nodes[0].mesh: meshes[3] does not exist (1 element)"},
      {"children", {{"/nodes/0/children", Json::array({0.5})}}, "nodes[0].children[0]: expected a non-negative integer, got 0.5"},
      {"node name", {{"/nodes/0/name", 42}}, "nodes[0].name: expected a string, got 42"},
      {"matrix length", {{"/nodes/0/matrix", Json::array({1, 0, 0, 0})}}, "nodes[0].matrix: expected an array of 16 numbers, got an array of 4"},
      {"matrix and TRS", {{"/nodes/0/matrix", Json::array({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1})}, {"/nodes/0/scale", Json::array({1, 1, 1})}}, "nodes[0]: has both 'matrix' and translation/rotation/scale (glTF allows one or the other)"},
      {"projective matrix", {{"/nodes/0/matrix", Json::array({1, 0, 0, 0.5, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1})}}, "nodes[0].matrix: matrix is not affine (its last row, elements 3, 7, 11 and 15, must be 0 0 0 1)"},
      {"zero quaternion", {{"/nodes/0/rotation", Json::array({0, 0, 0, 0})}}, "nodes[0].rotation: rotation is a zero quaternion"},
      {"translation beyond float", {{"/nodes/0/translation", Json::array({0, 1e300, 0})}}, "nodes[0].translation[1]: 1e+300 does not fit a float"},
      {"a scene node out of range", {{"/scenes/0/nodes", Json::array({0, 5})}}, "scenes[0].nodes[1]: nodes[5] does not exist (1 element)"},
      {"missing accessor count", {{"/accessors/0/count", kErase}}, "accessors[0]: missing 'count'"},
      {"POSITION out of range", {{"/meshes/0/primitives/0/attributes/POSITION", 9}}, "meshes[0].primitives[0].attributes.POSITION: accessors[9] does not exist (2 elements)"},
      {"missing asset", {{"/asset", kErase}}, "missing 'asset' (not a glTF document?)"},
      {"glTF 1.0", {{"/asset/version", "1.0"}}, "asset.version: glTF version '1.0' (raypick reads glTF 2.0)"},
      {"a required extension raypick cannot read", {{"/extensionsRequired", Json::array({"KHR_draco_mesh_compression"})}}, "extensionsRequired[0]: the file requires KHR_draco_mesh_compression, which raypick cannot read"},
  }, false);
}

TEST_CASE("glTF errors in a .gltf name the line of the offending value") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  b.add_node({{"mesh", 0}, {"name", "first"}});
  b.add_node({{"mesh", 0}, {"name", "second"}, {"scale", {1, 1, "x"}}});
  b.doc["scenes"] = scene_of({0, 1});
  const std::string text = b.gltf_embedded();
  const LoadError error = require_error(dir.write("line.gltf", text));
  CHECK(error.message == "nodes[1].scale[2]: expected a number, got the string \"x\"");
  CHECK(error.line == line_of(text, "\"x\""));
  CHECK(error.to_string() == error.file + ":" + std::to_string(error.line) + ": " +
                                 error.message);
  // The same in a GLB: no line, the path says where.
  const LoadError glb = require_error(dir.write("line.glb", b.glb()));
  CHECK(glb.line == 0);
  CHECK(glb.message == error.message);
}

TEST_CASE("invalid JSON in a .gltf gives the parser's line") {
  TempDir dir;
  const std::string text =
      "{\n  \"asset\": {\"version\": \"2.0\"},\n  \"nodes\": [\n    {\"mesh\": 0,}\n  ]\n}\n";
  const LoadError error = require_error(dir.write("broken.gltf", text));
  CHECK(error.kind == LoadError::Kind::kMalformed);
  CHECK(error.line == 4);
  CHECK(error.message.rfind("invalid JSON: syntax error while parsing object key", 0) == 0);

  const LoadError overflow =
      require_error(dir.write("big.gltf", "{\n\"asset\": {\"version\": \"2.0\"},\n\"scene\": 1e999\n}"));
  CHECK(overflow.line == 3);
  CHECK(overflow.message == "invalid JSON: number 1e999 is too large for a double");

  const LoadError glb = require_error(dir.write("broken.glb", make_glb(text, "")));
  CHECK(glb.line == 0);
  CHECK(glb.message.rfind("JSON chunk, line 4: invalid JSON: ", 0) == 0);
}

TEST_CASE("glTF buffers that are missing or too short are refused") {
  TempDir dir;
  GltfBuilder b = placed_triangle();

  SUBCASE("a missing .bin is an I/O error") {
    const std::string path = dir.write("missing.gltf", b.gltf_external("nowhere.bin"));
    const LoadError error = require_error(path);
    CHECK(error.kind == LoadError::Kind::kIo);
    CHECK(error.message == "buffers[0].uri: cannot open buffer file '" +
                               dir.path_of("nowhere.bin") +
                               "': No such file or directory");
  }
  SUBCASE("a .bin shorter than byteLength") {
    dir.write("short.bin", b.bin.substr(0, 40));
    const LoadError error = require_error(dir.write("short.gltf", b.gltf_external("short.bin")));
    CHECK(error.message == "buffers[0]: buffer file '" + dir.path_of("short.bin") +
                               "' has 40 bytes, byteLength says 42");
  }
  SUBCASE("a data URI shorter than byteLength") {
    Json d = b.doc;
    d["buffers"] = Json::array(
        {Json{{"byteLength", 42},
              {"uri", "data:application/octet-stream;base64," +
                          base64(b.bin.substr(0, 41))}}});
    CHECK(require_error(dir.write("short.gltf", d.dump())).message ==
          "buffers[0].uri: the data URI holds 41 bytes, byteLength says 42");
  }
  SUBCASE("a data URI that is not base64") {
    Json d = b.doc;
    std::string uri = "data:application/octet-stream;base64," + base64(b.bin);
    uri[50] = '!';
    d["buffers"] = Json::array({Json{{"byteLength", 44}, {"uri", uri}}});
    CHECK(require_error(dir.write("bad64.gltf", d.dump())).message ==
          "buffers[0].uri: data URI has a character that is not base64 at "
          "position 50");
  }
  SUBCASE("a data URI of another type") {
    Json d = b.doc;
    d["buffers"] = Json::array(
        {Json{{"byteLength", 44}, {"uri", "data:text/plain;base64," + base64(b.bin)}}});
    CHECK(require_error(dir.write("text.gltf", d.dump())).message ==
          "buffers[0].uri: data URI of type 'text/plain' (expected "
          "application/octet-stream or application/gltf-buffer)");
  }
  SUBCASE("a remote URI") {
    const std::string path =
        dir.write("remote.gltf", b.gltf_external("https://example.com/a.bin"));
    CHECK(require_error(path).message ==
          "buffers[0].uri: 'https://example.com/a.bin' is not a relative file "
          "reference or a data: URI");
  }
  SUBCASE("no uri in a .gltf") {
    Json d = b.doc;
    d["buffers"] = Json::array({Json{{"byteLength", 44}}});
    CHECK(require_error(dir.write("nouri.gltf", d.dump())).message ==
          "buffers[0]: missing 'uri' (only the first buffer of a .glb may omit it)");
  }
  SUBCASE("a GLB without a BIN chunk") {
    Json d = b.doc;
    d["buffers"] = Json::array({Json{{"byteLength", 44}}});
    CHECK(require_error(dir.write("nobin.glb", make_glb(d.dump(), ""))).message ==
          "buffers[0]: refers to the GLB BIN chunk, but the file has none");
  }
  SUBCASE("a GLB buffer longer than its BIN chunk") {
    Json d = b.doc;
    d["buffers"] = Json::array({Json{{"byteLength", 48}}});
    CHECK(require_error(dir.write("long.glb", make_glb(d.dump(), b.bin))).message ==
          "buffers[0].byteLength: byteLength 48 is larger than the GLB BIN "
          "chunk (44 bytes)");
  }
}

TEST_CASE("broken GLB containers are refused") {
  TempDir dir;
  GltfBuilder b = placed_triangle();
  std::string glb = b.glb();
  std::string expected;
  SUBCASE("version 1") {
    glb[4] = 1;
    expected = "GLB version 1 (raypick reads version 2)";
  }
  SUBCASE("length past the end") {
    glb.resize(glb.size() - 4);
    expected = "GLB header says " + std::to_string(glb.size() + 4) +
               " bytes but the file has " + std::to_string(glb.size()) +
               " (truncated?)";
  }
  SUBCASE("a chunk past the end") {
    glb[15] = 0x7F;
    expected = "GLB chunk at byte 12 says";
  }
  SUBCASE("first chunk not JSON") {
    glb[16] = 'X';
    expected = "the first GLB chunk is not JSON";
  }
  SUBCASE("a header alone") {
    glb = glb.substr(0, 12);
    glb[8] = 12;
    glb[9] = 0;
    expected = "GLB has no JSON chunk";
  }
  SUBCASE("not a GLB at all") {
    glb = "{\"asset\": {\"version\": \"2.0\"}}";
    expected = "not a GLB file (it does not start with 'glTF')";
  }
  const LoadError error = require_error(dir.write("broken.glb", glb));
  CHECK(error.kind == LoadError::Kind::kMalformed);
  CHECK(error.line == 0);
  CHECK(error.message.rfind(expected, 0) == 0);
}

TEST_CASE("a glTF file without objects is refused") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  b.add_node({{"name", "empty"}});
  SUBCASE("a scene of a node without a mesh") { b.doc["scenes"] = scene_of({0}); }
  SUBCASE("an empty scene") { b.doc["scenes"] = Json::array({Json::object()}); }
  SUBCASE("no nodes at all") {
    b.doc.erase("nodes");
    b.doc["scenes"] = Json::array({Json::object()});
  }
  CHECK(embedded_error(dir, b).message == "no objects in scene (no node with a mesh)");
}

TEST_CASE("a GLB file that is actually in a .gltf loads") {
  TempDir dir;
  GltfBuilder b = placed_triangle();
  CHECK(require_load(dir.write("binary.gltf", b.glb())).triangle_count() == 1);
}

// ---------------------------------------------------------------------------
// Robustness

namespace {

// A scene using strides, sparse data, strips, fans, several index types and
// a node hierarchy: enough for truncations and mutations to reach every
// stage.
GltfBuilder rich_builder() {
  GltfBuilder b;
  const int pos = b.add_positions(
      {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}});
  const int i8 = b.add_indices({0, 1, 2, 3, 4, 5}, 5121);
  const int i16 = b.add_indices({0, 1, 2, 0, 2, 3}, 5123);
  const int i32 = b.add_indices({5, 4, 3, 2, 1}, 5125);
  const int sv = b.add_view(bytes_of(std::vector<float>{2, 2, 2}));
  const int si = b.add_view(std::string(1, '\x01'));
  const int sparse = b.add_accessor({{"bufferView", 0}, {"componentType", 5126}, {"count", 6},
                                     {"type", "VEC3"}, {"sparse", sparse_of(1, si, 5121, sv)}});
  Json prims = Json::array();
  prims.push_back({{"attributes", {{"POSITION", pos}}}, {"indices", i16}});
  prims.push_back({{"attributes", {{"POSITION", pos}}}, {"indices", i8}, {"mode", 5}});
  prims.push_back({{"attributes", {{"POSITION", sparse}}}, {"indices", i32}, {"mode", 6}});
  prims.push_back({{"attributes", {{"POSITION", pos}}}, {"mode", 1}});
  b.add_mesh(prims);
  b.add_node({{"name", "root"}, {"mesh", 0}, {"children", {1, 2}},
              {"rotation", {0, 0.6, 0, 0.8}}});
  b.add_node({{"mesh", 0}, {"translation", {1, 2, 3}}});
  b.add_node({{"name", "m"}, {"mesh", 0},
              {"matrix", {1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 4, 5, 6, 1}}});
  b.doc["scenes"] = scene_of({0});
  b.doc["scene"] = 0;
  return b;
}

}  // namespace

TEST_CASE("the rich glTF test scene loads as expected") {
  TempDir dir;
  const Scene scene = load_all_ways(dir, rich_builder());
  REQUIRE(object_names(scene) == std::vector<std::string>{"root", "node1", "m"});
  CHECK(scene.meshes.size() == 1);
  // 2 (list) + 4 (strip of 6) + 3 (fan of 5), lines ignored.
  CHECK(mesh_of(scene, 0).triangles.size() == 9);
  // Two POSITION accessors: 6 + 6 vertices.
  CHECK(mesh_of(scene, 0).positions.size() == 12);
  CHECK(mesh_of(scene, 0).positions[7] == glm::vec3{2, 2, 2});
}

TEST_CASE("every truncated prefix of a valid .gltf and .glb loads or fails cleanly") {
  TempDir dir;
  const GltfBuilder b = rich_builder();
  for (const bool binary : {false, true}) {
    // One line of JSON: white space would add files, not cases.
    const std::string whole = binary ? b.glb() : b.gltf_embedded(-1);
    CAPTURE(binary);
    std::size_t loaded = 0;
    for (std::size_t n = 0; n <= whole.size(); ++n) {
      CAPTURE(n);
      loaded += loads_or_fails_cleanly(
                    dir.write(binary ? "prefix.glb" : "prefix.gltf", whole.substr(0, n)))
                    ? 1
                    : 0;
    }
    // Only the whole file loads.
    CHECK(loaded == 1);
  }
}

TEST_CASE("random bytes and mutated glTF files never crash the loader") {
  TempDir dir;
  std::mt19937 rng(20240612);
  const auto pick = [&](std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
  };
  SUBCASE("random bytes under each extension") {
    for (const char* name : {"random.gltf", "random.glb", "random.json"}) {
      for (int i = 0; i < 200; ++i) {
        std::string bytes(pick(0, 400), '\0');
        for (char& c : bytes) c = static_cast<char>(pick(0, 255));
        // Half of the .glb files start with a plausible header.
        if (std::string_view(name) == "random.glb" && i % 2 == 1 && bytes.size() >= 20) {
          std::string header = "glTF";
          put_u32(header, 2);
          put_u32(header, static_cast<std::uint32_t>(bytes.size()));
          put_u32(header, static_cast<std::uint32_t>(pick(0, bytes.size())));
          put_u32(header, 0x4E4F534A);
          bytes.replace(0, 20, header);
        }
        CAPTURE(name);
        CAPTURE(i);
        loads_or_fails_cleanly(dir.write(name, bytes));
      }
    }
  }
  SUBCASE("byte flips in a GLB's binary and JSON") {
    const std::string glb = rich_builder().glb();
    std::size_t loaded = 0;
    for (int i = 0; i < 1500; ++i) {
      std::string bytes = glb;
      const std::size_t flips = pick(1, 4);
      for (std::size_t k = 0; k < flips; ++k) {
        bytes[pick(0, bytes.size() - 1)] = static_cast<char>(pick(0, 255));
      }
      CAPTURE(i);
      loaded += loads_or_fails_cleanly(dir.write("mutated.glb", bytes)) ? 1 : 0;
    }
    CHECK(loaded > 0);
  }
  SUBCASE("random numbers in the JSON's integer fields") {
    const GltfBuilder base = rich_builder();
    std::size_t loaded = 0;
    for (int i = 0; i < 600; ++i) {
      GltfBuilder b = base;
      // Replace one integer field somewhere with a random, often wrong, one.
      std::vector<Json*> fields;
      for (const char* array : {"accessors", "bufferViews", "meshes", "nodes"}) {
        for (Json& element : b.doc[array]) {
          for (auto& [key, value] : element.items()) {
            if (value.is_number_integer()) fields.push_back(&value);
            if (key == "primitives") {
              for (Json& p : value) {
                for (auto& [pk, pv] : p.items()) {
                  if (pv.is_number_integer()) fields.push_back(&pv);
                }
              }
            }
            if (key == "sparse") {
              for (const char* part : {"indices", "values"}) {
                for (auto& [sk, sval] : value[part].items()) {
                  if (sval.is_number_integer()) fields.push_back(&sval);
                }
              }
            }
          }
        }
      }
      REQUIRE(!fields.empty());
      Json& field = *fields[pick(0, fields.size() - 1)];
      const std::size_t choice = pick(0, 3);
      if (choice == 0) field = pick(0, 8);
      if (choice == 1) field = pick(0, 100);
      if (choice == 2) field = static_cast<std::uint64_t>(pick(0, 1)) << 31;
      if (choice == 3) field = field.get<std::uint64_t>() + 1;
      CAPTURE(i);
      loaded += loads_or_fails_cleanly(dir.write("numbers.gltf", b.gltf_embedded())) ? 1 : 0;
    }
    CHECK(loaded > 0);
  }
}
