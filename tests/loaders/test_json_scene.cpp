// raypick's JSON scene format: meshes from OBJ, glTF and boxes, objects
// placed by matrix, translate / rotate (quaternion or Euler) / scale, and
// every refusal naming its key, path and line.
#include "gltf_builder.h"
#include "loader_test_util.h"

#include "raypick/loaders/load.h"

#include <doctest/doctest.h>
#include <glm/ext/matrix_transform.hpp>
#include <glm/geometric.hpp>
#include <glm/mat4x4.hpp>

#include <cmath>
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace raypick;
using namespace raypick::test;

namespace {

// Two groups, `seat` (a unit quad at y = 0) and `back` (a unit quad at
// z = 0, raised to y = 1..2).
constexpr std::string_view kChairObj =
    "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\n"
    "v 0 1 0\nv 1 1 0\nv 1 2 0\nv 0 2 0\n"
    "o seat\nf 1 2 3 4\n"
    "o back\nf 5 6 7 8\n";

// A glTF car: `body` (the triangle, translated by 0, 1, 0) with two
// `wheel` children at x = -1 and +1, and a `hidden` node scaled to 0.
std::string car_glb() {
  GltfBuilder b = triangle_builder();
  b.add_node({{"name", "body"}, {"mesh", 0}, {"translation", {0, 1, 0}},
              {"children", {1, 2, 3}}});
  b.add_node({{"name", "wheel"}, {"mesh", 0}, {"translation", {-1, 0, 0}}});
  b.add_node({{"name", "wheel"}, {"mesh", 0}, {"translation", {1, 0, 0}}});
  b.add_node({{"name", "hidden"}, {"mesh", 0}, {"scale", {0, 0, 0}}});
  b.doc["scenes"] = Json::array({Json{{"nodes", {0}}}});
  return b.glb();
}

// A scene using every feature, one key per line so that each error has a
// line of its own.
constexpr std::string_view kScene = R"({
  "raypick_scene": 1,
  "meshes": [
    {
      "name": "chair",
      "file": "models/chair.obj"
    },
    {
      "name": "crate",
      "box": {
        "min": [-1, -2, -3],
        "max": [1, 2, 3]
      }
    },
    {
      "name": "car",
      "file": "models/car.glb"
    },
    {
      "name": "car body",
      "file": "models/car.glb",
      "object": "body"
    },
    {
      "name": "chair back",
      "file": "models/chair.obj",
      "object": 1
    }
  ],
  "objects": [
    {
      "name": "chair_1",
      "mesh": "chair",
      "translate": [1, 0, 2],
      "rotate": {
        "euler_deg": [0, 90, 0]
      },
      "scale": [1, 1, 1],
      "layer": 2
    },
    {
      "name": "crate_1",
      "mesh": "crate",
      "matrix": [2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4, 0, 5, 6, 7, 1]
    },
    {
      "name": "turned",
      "mesh": "crate",
      "rotate": {
        "quat": [0, 0, 0.70710678, 0.70710678]
      }
    },
    {
      "name": "two turns",
      "mesh": "crate",
      "rotate": {
        "euler_deg": [90, 0, 90]
      },
      "scale": 2
    },
    {
      "mesh": "car",
      "translate": [0, 0, -10]
    },
    {
      "name": "body moved",
      "mesh": "car body",
      "translate": [0, 0, 5]
    },
    {
      "name": "back only",
      "mesh": "chair back"
    }
  ]
}
)";

// kScene with the first occurrence of `from` replaced by `to`.
std::string with(std::string_view from, std::string_view to,
                 std::string_view base = kScene) {
  std::string text(base);
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  return text;
}

// A directory holding models/chair.obj and models/car.glb.
class SceneDir : public TempDir {
 public:
  SceneDir() {
    std::filesystem::create_directories(path() / "models");
    write("models/chair.obj", kChairObj);
    write("models/car.glb", car_glb());
  }
};

glm::mat4 columns(glm::vec3 x, glm::vec3 y, glm::vec3 z, glm::vec3 t) {
  glm::mat4 m{1.0f};
  m[0] = glm::vec4{x, 0};
  m[1] = glm::vec4{y, 0};
  m[2] = glm::vec4{z, 0};
  m[3] = glm::vec4{t, 1};
  return m;
}

}  // namespace

TEST_CASE("a JSON scene places OBJ, glTF and box meshes by matrix, TRS, quaternion and Euler angles") {
  SceneDir dir;
  const LoadResult result = load_scene(dir.write("scene.json", kScene));
  INFO("load error: ", (!result.ok() ? result.error().to_string() : "none"));
  REQUIRE(result.ok());
  CHECK(result.warnings.empty());
  const Scene& scene = result.scene();

  // Mesh i is meshes[i].
  REQUIRE(scene.meshes.size() == 5);
  REQUIRE(scene.objects.size() == 7);
  const std::vector<std::uint32_t> mesh_ids = {0, 1, 1, 1, 2, 3, 4};
  const std::vector<std::string> names = {"chair_1", "crate_1", "turned",
                                          "two turns", "object4", "body moved",
                                          "back only"};
  for (std::size_t i = 0; i < scene.objects.size(); ++i) {
    CAPTURE(i);
    CHECK(scene.objects[i].mesh == mesh_ids[i]);
    CHECK(scene.objects[i].name == names[i]);
    // "layer": 2 on chair_1 is pick-mask bit 2; no layer is every bit.
    CHECK(scene.objects[i].mask == (i == 0 ? 4u : ~0u));
  }

  // chair_1: T(1, 0, 2) * Ry(90): x turns to -z, z to +x. Quarter turns are
  // exact.
  CHECK(scene.objects[0].matrix ==
        columns({0, 0, -1}, {0, 1, 0}, {1, 0, 0}, {1, 0, 2}));
  // crate_1: the matrix as given, column-major.
  CHECK(scene.objects[1].matrix ==
        columns({2, 0, 0}, {0, 3, 0}, {0, 0, 4}, {5, 6, 7}));
  // turned: 90 degrees about z (x -> y, y -> -x), the quaternion normalized.
  CHECK(near(scene.objects[2].matrix,
             columns({0, 1, 0}, {-1, 0, 0}, {0, 0, 1}, {0, 0, 0}), 1e-7f));
  // two turns: Rz(90) * Rx(90) * S(2): x -> y, y -> z, z -> x, doubled.
  CHECK(scene.objects[3].matrix ==
        columns({0, 2, 0}, {0, 0, 2}, {2, 0, 0}, {0, 0, 0}));
  // The union of the car: the body's and both wheels' triangles with their
  // matrices baked in; the hidden node (scale 0) adds nothing.
  CHECK(scene.objects[4].matrix == columns({1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, -10}));
  const Mesh& car = scene.meshes[2];
  CHECK(car.triangles.size() == 3);
  CHECK(car.positions ==
        std::vector<glm::vec3>{{0, 1, 0}, {1, 1, 0}, {0, 2, 0},
                               {-1, 1, 0}, {0, 1, 0}, {-1, 2, 0},
                               {1, 1, 0}, {2, 1, 0}, {1, 2, 0}});
  // The body alone: its own mesh, its matrix before the object's.
  CHECK(scene.meshes[3].positions ==
        std::vector<glm::vec3>{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  CHECK(scene.objects[5].matrix == columns({1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 1, 5}));
  // The chair: both groups; the back: object 1 of the OBJ file.
  CHECK(scene.meshes[0].triangles.size() == 4);
  CHECK(scene.meshes[4].triangles.size() == 2);
  CHECK(scene.meshes[4].triangle_bounds().min == glm::vec3{0, 1, 0});
  CHECK(scene.objects[6].matrix == glm::mat4{1.0f});
  // Boxes: 8 corners, 12 triangles.
  CHECK(scene.meshes[1].positions.size() == 8);
  CHECK(scene.meshes[1].triangles.size() == 12);
  CHECK(scene.meshes[1].triangle_bounds().min == glm::vec3{-1, -2, -3});
  CHECK(scene.meshes[1].triangle_bounds().max == glm::vec3{1, 2, 3});
}

TEST_CASE("a JSON scene keeps translations beyond float, from translate, matrix and a file's node") {
  SceneDir dir;
  const LoadResult result = load_scene(dir.write("far.json", R"({
  "raypick_scene": 1,
  "meshes": [
    {"name": "crate", "box": {"min": [-1, -1, -1], "max": [1, 1, 1]}},
    {"name": "body", "file": "models/car.glb", "object": "body"}
  ],
  "objects": [
    {"mesh": "crate", "translate": [300000.123, -200000.0004, 7.25]},
    {"mesh": "crate", "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1000000.1, 2, 3, 1]},
    {"mesh": "body", "translate": [300000.123, 0, 0]},
    {"mesh": "crate", "translate": [1.5, -2, 4096.25]}
  ]
})"));
  INFO("load error: ", (!result.ok() ? result.error().to_string() : "none"));
  REQUIRE(result.ok());
  const std::vector<Object>& o = result.scene().objects;
  REQUIRE(o.size() == 4);
  // The float parts as before (300000.123 rounds to 300000.125), the rest
  // in translation_low: the given translation to within 1e-9.
  CHECK(o[0].matrix[3] == glm::vec4{300000.125f, -200000.0f, 7.25f, 1.0f});
  CHECK(glm::length(o[0].translation() - glm::dvec3{300000.123, -200000.0004, 7.25}) < 1e-9);
  CHECK(o[0].translation_low.z == 0.0f);
  CHECK(glm::length(o[1].translation() - glm::dvec3{1000000.1, 2, 3}) < 1e-9);
  // The glTF body's own translation (0, 1, 0) comes first, in double.
  CHECK(glm::length(o[2].translation() - glm::dvec3{300000.123, 1, 0}) < 1e-9);
  // Floats stay floats.
  CHECK(o[3].translation_low == glm::vec3{0.0f});
}

TEST_CASE("a box mesh's triangles cover its six faces") {
  SceneDir dir;
  const Scene scene = require_load(dir.write(
      "box.json",
      R"({"raypick_scene": 1, "meshes": [{"name": "b", "box": {"min": [0, 0, 0], "max": [1, 1, 1]}}],
          "objects": [{"mesh": "b"}]})"));
  const Mesh& box = scene.meshes[0];
  // Each face: two triangles whose corners all lie on it, areas summing to
  // 1.
  for (int face = 0; face < 6; ++face) {
    const int axis = face / 2;
    const float value = face % 2 == 0 ? 0.0f : 1.0f;
    float area = 0.0f;
    for (int t = 2 * face; t < 2 * face + 2; ++t) {
      const glm::uvec3 tri = box.triangles[static_cast<std::size_t>(t)];
      for (int k = 0; k < 3; ++k) CHECK(box.positions[tri[k]][axis] == value);
      const glm::vec3 a = box.positions[tri[0]];
      const glm::vec3 b = box.positions[tri[1]];
      const glm::vec3 c = box.positions[tri[2]];
      area += 0.5f * glm::length(glm::cross(b - a, c - a));
    }
    CHECK(area == doctest::Approx(1.0));
  }
}

TEST_CASE("JSON scene mesh files are relative to the scene, and their warnings carried") {
  SceneDir dir;
  std::filesystem::create_directories(dir.path() / "scenes");
  dir.write("models/lamp.obj",
            "mtllib gone.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  const std::string path = dir.write(
      "scenes/s.json",
      R"({"raypick_scene": 1, "meshes": [{"name": "lamp", "file": "../models/lamp.obj"},
          {"name": "chair", "file": "../models/./chair.obj"}],
          "objects": [{"mesh": "lamp"}, {"mesh": "chair"}]})");
  // "../models" is outside the scene's folder: it takes a wider root.
  LoadOptions options;
  options.root = dir.path().string();
  const LoadResult result = load_scene(path, options);
  INFO((!result.ok() ? result.error().to_string() : std::string()));
  REQUIRE(result.ok());
  CHECK(result.scene().triangle_count() == 1 + 4);
  CHECK(result.warnings == std::vector<std::string>{
                               "meshes[0].file ('../models/lamp.obj'): material "
                               "library 'gone.mtl' not found; materials are ignored"});
}

TEST_CASE("JSON scene errors name the key, its path and its line") {
  SceneDir dir;
  struct Case {
    std::string what;
    std::string text;
    std::string message;
    std::string_view line_of;  // text on the expected line
    int offset = 0;            // ... or this many lines from it
  };
  const std::vector<Case> cases = {
      {"unknown top-level key", with("\"raypick_scene\": 1,", "\"raypick_scene\": 1,\n  \"extra\": true,"), "unknown key 'extra' (expected raypick_scene, meshes or objects)", "\"extra\""},
      {"unknown key in rotate", with("\"euler_deg\": [0, 90, 0]", "\"eulr\": [0, 90, 0]"), "objects[0].rotate: unknown key 'eulr' (expected quat or euler_deg)", "\"eulr\""},
      {"unknown key in an object", with("\"layer\": 2", "\"layers\": 2"), "objects[0]: unknown key 'layers' (expected name, mesh, matrix, translate, rotate, scale or layer)", "\"layers\""},
      {"unknown key in a mesh", with("\"file\": \"models/car.glb\"", "\"path\": \"models/car.glb\""), "meshes[2]: unknown key 'path' (expected name, file, object or box)", "\"path\""},
      {"translate of two numbers", with("[1, 0, 2]", "[1, 0]"), "objects[0].translate: expected an array of 3 numbers, got an array of 2", "[1, 0]"},
      {"translate of a string", with("[1, 0, 2]", "[1, \"0\", 2]"), "objects[0].translate[1]: expected a number, got the string \"0\"", "[1, \"0\", 2]"},
      {"scale of a string", with("\"scale\": [1, 1, 1]", "\"scale\": \"big\""), "objects[0].scale: expected a number or an array of 3 numbers, got the string \"big\"", "\"big\""},
      {"negative layer", with("\"layer\": 2", "\"layer\": -1"), "objects[0].layer: expected a non-negative integer, got -1", "\"layer\""},
      {"fractional layer", with("\"layer\": 2", "\"layer\": 1.5"), "objects[0].layer: expected a non-negative integer, got 1.5", "\"layer\""},
      {"layer beyond the 32 mask bits", with("\"layer\": 2", "\"layer\": 32"), "objects[0].layer: 32 is too large (at most 31)", "\"layer\""},
      {"a mesh that does not exist", with("\"mesh\": \"crate\"", "\"mesh\": \"sofa\""), "objects[1].mesh: no mesh named 'sofa' in 'meshes'", "\"sofa\""},
      {"no mesh", with("\"mesh\": \"crate\",", ""), "objects[1]: missing 'mesh'", "\"crate_1\"", -1},
      {"a name that is a number", with("\"name\": \"turned\"", "\"name\": 7"), "objects[2].name: expected a string, got 7", "\"name\": 7"},
      {"two meshes of one name", with("\"name\": \"crate\"", "\"name\": \"chair\""), "meshes[1].name: 'chair' is already the name of meshes[0]", "\"name\": \"chair\",\n      \"box\""},
      {"no version", with("\"raypick_scene\": 1,", ""), "missing 'raypick_scene' (the format version, 1)", "{"},
      {"version 2", with("\"raypick_scene\": 1", "\"raypick_scene\": 2"), "raypick_scene: format version 2 is not supported (this raypick reads version 1)", "\"raypick_scene\""},
      {"matrix and translate", with("\"matrix\"", "\"translate\": [0, 0, 0],\n      \"matrix\""), "objects[1]: has both 'matrix' and 'translate' (use one or the other)", "\"crate_1\"", -1},
      {"a matrix of 15 numbers", with("4, 0, 5, 6, 7, 1]", "4, 0, 5, 6, 7]"), "objects[1].matrix: expected an array of 16 numbers, got an array of 15", "\"matrix\""},
      {"a projective matrix", with("4, 0, 5, 6, 7, 1]", "4, 1, 5, 6, 7, 1]"), "objects[1].matrix: matrix is not affine (its last row, elements 3, 7, 11 and 15, must be 0 0 0 1)", "\"matrix\""},
      {"a box inside out", with("[-1, -2, -3]", "[-1, 5, -3]"), "meshes[1].box: min is above max on axis y", "\"box\""},
      {"a box without max", with(",\n        \"max\": [1, 2, 3]", ""), "meshes[1].box: missing 'max'", "\"box\""},
      {"file and box", with("\"name\": \"crate\",", "\"name\": \"crate\",\n      \"file\": \"x.obj\","), "meshes[1]: has both 'file' and 'box' (a mesh is one or the other)", "\"name\": \"crate\"", -1},
      {"neither file nor box", with(",\n      \"file\": \"models/car.glb\"\n", "\n"), "meshes[2]: needs 'file' or 'box'", "\"name\": \"car\"", -1},
      {"object without file", with("\"box\": {", "\"object\": 0,\n      \"box\": {"), "meshes[1].object: 'object' selects an object of a mesh file; it needs 'file'", "\"object\": 0"},
      {"a JSON mesh file", with("models/chair.obj", "other.JSON"), "meshes[0].file: 'other.JSON' is a JSON scene; a mesh file must be OBJ or glTF", "other.JSON"},
      {"an object name not in the file", with("\"object\": \"body\"", "\"object\": \"roof\""), "meshes[3].object: no object named 'roof' in 'models/car.glb'", "\"roof\""},
      {"an ambiguous object name", with("\"object\": \"body\"", "\"object\": \"wheel\""), "meshes[3].object: 'wheel' names 2 objects of 'models/car.glb'; select one by its id", "\"wheel\""},
      {"an object id out of range", with("\"object\": 1", "\"object\": 2"), "meshes[4].object: object id 2 is out of range ('models/chair.obj' has 2 objects)", "\"object\": 2"},
      {"an object selector of the wrong type", with("\"object\": 1", "\"object\": [1]"), "meshes[4].object: expected an object name or id, got an array", "\"object\": [1]"},
      {"a zero quaternion", with("[0, 0, 0.70710678, 0.70710678]", "[0, 0, 0, 0]"), "objects[2].rotate.quat: the quaternion is zero", "[0, 0, 0, 0]"},
      {"quat and euler", with("\"quat\"", "\"euler_deg\": [0, 0, 0],\n        \"quat\""), "objects[2].rotate: has both 'quat' and 'euler_deg' (use one or the other)", "\"rotate\": {\n        \"euler_deg\": [0, 0, 0]"},
      {"an empty rotate", with("\"quat\": [0, 0, 0.70710678, 0.70710678]", ""), "objects[2].rotate: needs 'quat' or 'euler_deg'", "\"rotate\": {\n        \n"},
      {"a translation beyond float", with("[1, 0, 2]", "[1, 0, 1e39]"), "objects[0].translate[2]: 1e+39 does not fit a float", "1e39"},
      {"meshes not an array", "{\"raypick_scene\": 1,\n\"meshes\": \"none\",\n\"objects\": []}", "meshes: expected an array, got the string \"none\"", "\"none\""},
      {"a duplicate key", with("\"layer\": 2", "\"layer\": 2,\n      \"mesh\": \"crate\""), "objects[0]: duplicate key 'mesh'", "\"mesh\": \"crate\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const std::string path = dir.write("bad.json", c.text);
    const LoadError error = require_error(path);
    CHECK(error.kind == LoadError::Kind::kMalformed);
    CHECK(error.message == c.message);
    CHECK(error.line == line_of(c.text, c.line_of) + c.offset);
  }
}

TEST_CASE("JSON scene errors from mesh files keep the inner file and line") {
  SceneDir dir;
  SUBCASE("a missing mesh file is an I/O error") {
    const std::string text = with("models/chair.obj", "models/missing.obj");
    const LoadError error = require_error(dir.write("s.json", text));
    CHECK(error.kind == LoadError::Kind::kIo);
    CHECK(error.line == line_of(text, "missing.obj"));
    CHECK(error.message == "meshes[0].file: cannot load 'models/missing.obj': " +
                               dir.path_of("models/missing.obj") +
                               ": cannot open file: No such file or directory");
  }
  SUBCASE("a broken OBJ names its own line") {
    dir.write("models/bad.obj", "v 0 0 0\nv 1 0 0\nf 1 2 9\n");
    const std::string text = with("models/chair.obj", "models/bad.obj");
    const LoadError error = require_error(dir.write("s.json", text));
    CHECK(error.kind == LoadError::Kind::kMalformed);
    CHECK(error.message == "meshes[0].file: cannot load 'models/bad.obj': " +
                               dir.path_of("models/bad.obj") +
                               ":3: face index 9 out of range (2 vertices)");
  }
  SUBCASE("an unsupported mesh extension is bad input, not bad usage") {
    const std::string text = with("models/chair.obj", "models/chair.ply");
    const LoadError error = require_error(dir.write("s.json", text));
    CHECK(error.kind == LoadError::Kind::kMalformed);
    CHECK(error.message.find("unsupported scene extension '.ply'") != std::string::npos);
  }
}

TEST_CASE("a JSON scene without objects, or not JSON, is refused with its line") {
  SceneDir dir;
  const LoadError none = require_error(
      dir.write("none.json", "{\"raypick_scene\": 1,\n \"meshes\": [],\n \"objects\": []}"));
  CHECK(none.message == "objects: no objects in scene");
  CHECK(none.line == 3);

  const LoadError parse = require_error(
      dir.write("parse.json", "{\n  \"raypick_scene\": 1,\n  \"meshes\": [\n    {\"name\": 'x'}\n  ]\n}"));
  CHECK(parse.line == 4);
  CHECK(parse.message.rfind("invalid JSON: syntax error while parsing value", 0) == 0);

  const LoadError array = require_error(dir.write("array.json", "[1, 2]"));
  CHECK(array.message == "expected an object, got an array");
  CHECK(array.line == 1);

  const LoadError empty = require_error(dir.write("empty.json", ""));
  CHECK(empty.message.rfind("invalid JSON: ", 0) == 0);
}

TEST_CASE("every truncated prefix of a JSON scene loads or fails cleanly") {
  SceneDir dir;
  // Compact, so that each prefix is a new case.
  const std::string whole = Json::parse(kScene).dump();
  std::size_t loaded = 0;
  for (std::size_t n = 0; n <= whole.size(); ++n) {
    CAPTURE(n);
    loaded += loads_or_fails_cleanly(dir.write("prefix.json", whole.substr(0, n))) ? 1 : 0;
  }
  CHECK(loaded == 1);
}

TEST_CASE("random JSON scenes never crash the loader") {
  // Token soup from the format's own vocabulary: most is refused, some
  // loads, none crashes.
  SceneDir dir;
  std::mt19937 rng(99);
  const auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  const std::vector<std::string> values = {
      "1", "0", "-1", "2.5", "1e39", "\"crate\"", "\"chair\"", "\"models/chair.obj\"",
      "\"models/car.glb\"", "[1, 2, 3]", "[0, 0, 0, 1]", "[]", "{}", "null", "true",
      "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]"};
  const std::vector<std::string> keys = {"name", "mesh", "file", "box", "min", "max",
                                         "object", "matrix", "translate", "rotate",
                                         "quat", "euler_deg", "scale", "layer", "junk"};
  std::size_t loaded = 0;
  for (int i = 0; i < 300; ++i) {
    std::string meshes = "[{\"name\": \"crate\", \"box\": {\"min\": [0, 0, 0], \"max\": [1, 1, 1]}}";
    std::string objects = "[";
    const std::size_t n = 1 + pick(4);
    for (std::size_t k = 0; k < n; ++k) {
      std::string object = "{\"mesh\": \"crate\"";
      const std::size_t fields = pick(4);
      for (std::size_t f = 0; f < fields; ++f) {
        const std::string& key = keys[pick(keys.size())];
        std::string value = values[pick(values.size())];
        if (key == "rotate" && pick(2) == 0) {
          value = "{\"" + std::string(pick(2) ? "quat" : "euler_deg") + "\": " +
                  values[pick(values.size())] + "}";
        }
        object += ", \"" + key + "\": " + value;
      }
      objects += (k ? ", " : "") + object + "}";
    }
    if (pick(3) == 0) {
      meshes += ", {\"name\": \"m\", \"file\": " + values[pick(values.size())] +
                (pick(2) ? ", \"object\": " + values[pick(values.size())] : "") + "}";
    }
    const std::string text = "{\"raypick_scene\": 1, \"meshes\": " + meshes +
                             "], \"objects\": " + objects + "]}";
    CAPTURE(text);
    loaded += loads_or_fails_cleanly(dir.write("random.json", text)) ? 1 : 0;
  }
  CHECK(loaded > 10);
  CHECK(loaded < 290);
}
