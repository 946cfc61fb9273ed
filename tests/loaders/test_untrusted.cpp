// Hostile scene files (issue 10): files a scene refers to stay inside the
// allowed root, loads stay within their budgets, deep or huge inputs are
// refused cleanly, and what the loaders cannot read correctly is refused.
// Every hostile file is written at test time.
#include "apps/cli_runner.h"
#include "gltf_builder.h"
#include "loader_test_util.h"
#include "test_util.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"
#include "raypick/loaders/load.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <thread>
#include <string>
#include <vector>

#include <sys/wait.h>

using namespace raypick;
using namespace raypick::test;

namespace {

namespace fs = std::filesystem;

// Loads `path` with `options`, requires a malformed-scene error for that
// file and returns its message.
std::string refusal(const std::string& path, const LoadOptions& options = {}) {
  const LoadResult result = load_scene(path, options);
  INFO("unexpectedly loaded: ", path);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().kind == LoadError::Kind::kMalformed);
  CHECK(result.error().file == path);
  return result.error().message;
}

Scene loads(const std::string& path, const LoadOptions& options = {}) {
  LoadResult result = load_scene(path, options);
  INFO("load error: ",
       (!result.ok() ? result.error().to_string() : std::string()));
  REQUIRE(result.ok());
  return std::move(result.scene());
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A .gltf at `name` in `dir` holding the unit triangle, its buffer in the
// file `uri` names; the buffer's bytes are returned for writing.
std::string write_gltf_with_buffer_uri(const TempDir& dir,
                                       const std::string& name,
                                       const std::string& uri) {
  const GltfBuilder b = triangle_builder();
  Json doc = Json::parse(b.gltf_external(uri));
  doc["nodes"] = Json::array({Json{{"mesh", 0}}});
  dir.write(name, doc.dump(2));
  return b.bin;
}

constexpr const char* kTriangleObj = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";

}  // namespace

// ---------------------------------------------------------------------------
// 1. Files a scene refers to

TEST_CASE("a glTF buffer uri that is an absolute path is refused, naming the uri") {
  TempDir dir;
  for (const std::string uri : {"/etc/passwd", "%2Fetc%2Fpasswd"}) {
    CAPTURE(uri);
    write_gltf_with_buffer_uri(dir, "s.gltf", uri);
    const std::string message = refusal(dir.path_of("s.gltf"));
    CHECK(contains(message, "buffers[0].uri"));
    CHECK(contains(message, "'/etc/passwd' is an absolute path"));
  }
}

TEST_CASE("a glTF buffer uri that climbs out of the scene's folder is refused") {
  TempDir dir;
  fs::create_directories(dir.path() / "scenes");
  const std::string bin = write_gltf_with_buffer_uri(
      dir, "scenes/s.gltf", "../../../../../../../../etc/passwd");
  std::string message = refusal(dir.path_of("scenes/s.gltf"));
  CHECK(contains(message, "'../../../../../../../../etc/passwd' resolves to "
                          "'/etc/passwd', outside the scene file's folder"));
  // Climbing out and back in is fine: only where it ends matters.
  dir.write("scenes/t.bin", bin);
  write_gltf_with_buffer_uri(dir, "scenes/t.gltf", "../scenes/./t.bin");
  CHECK(loads(dir.path_of("scenes/t.gltf")).objects.size() == 1);
  // A sibling folder is outside too.
  dir.write("t.bin", bin);
  write_gltf_with_buffer_uri(dir, "scenes/u.gltf", "../t.bin");
  message = refusal(dir.path_of("scenes/u.gltf"));
  CHECK(contains(message, "outside the scene file's folder"));
}

TEST_CASE("a symbolic link inside the scene's folder that points outside it is refused") {
  TempDir outside;
  TempDir dir;
  const std::string bin = write_gltf_with_buffer_uri(dir, "s.gltf", "link.bin");
  outside.write("real.bin", bin);
  fs::create_symlink(outside.path() / "real.bin", dir.path() / "link.bin");
  const std::string message = refusal(dir.path_of("s.gltf"));
  CHECK(contains(message, "'link.bin' resolves to '" +
                              fs::canonical(outside.path() / "real.bin").string() +
                              "', outside"));
  // A folder link out is the same.
  fs::create_directory_symlink(outside.path(), dir.path() / "out");
  write_gltf_with_buffer_uri(dir, "t.gltf", "out/real.bin");
  CHECK(contains(refusal(dir.path_of("t.gltf")), "outside"));
  // A link that stays inside is followed.
  dir.write("real.bin", bin);
  fs::remove(dir.path() / "link.bin");
  fs::create_symlink("real.bin", dir.path() / "link.bin");
  CHECK(loads(dir.path_of("s.gltf")).objects.size() == 1);
}

TEST_CASE("an explicit root lets a scene refer to files in a sibling folder, and no further") {
  TempDir dir;
  fs::create_directories(dir.path() / "scenes");
  fs::create_directories(dir.path() / "data");
  const std::string bin =
      write_gltf_with_buffer_uri(dir, "scenes/s.gltf", "../data/s.bin");
  dir.write("data/s.bin", bin);
  const std::string path = dir.path_of("scenes/s.gltf");
  CHECK(contains(refusal(path), "outside the scene file's folder"));
  LoadOptions options;
  options.root = dir.path().string();
  CHECK(loads(path, options).objects.size() == 1);
  // The root bounds it still.
  options.root = (dir.path() / "scenes").string();
  CHECK(contains(refusal(path, options), "outside the root folder"));
  // A root spelled with "..", relative parts or a trailing slash is the
  // same folder.
  options.root = (dir.path() / "scenes" / ".." / "").string();
  CHECK(loads(path, options).objects.size() == 1);
}

TEST_CASE("a JSON scene's mesh file outside its folder, or absolute, is refused") {
  TempDir dir;
  fs::create_directories(dir.path() / "scenes");
  dir.write("x.obj", kTriangleObj);
  for (const std::string& file :
       {std::string("../x.obj"), dir.path_of("x.obj"),
        std::string("sub/../../x.obj")}) {
    CAPTURE(file);
    const std::string path = dir.write(
        "scenes/s.json", R"({"raypick_scene": 1, "meshes": [{"name": "m", "file": ")" +
                             file + R"("}], "objects": [{"mesh": "m"}]})");
    const std::string message = refusal(path);
    CHECK(contains(message, "meshes[0].file"));
    CHECK(contains(message, "'" + file + "'"));
  }
  // With the parent as root it loads.
  LoadOptions options;
  options.root = dir.path().string();
  CHECK(loads(dir.path_of("scenes/s.json"), options).objects.size() == 1);
}

TEST_CASE("a JSON scene's mesh files may refer to files anywhere in the JSON scene's folder, not beyond") {
  TempDir dir;
  fs::create_directories(dir.path() / "top/models");
  fs::create_directories(dir.path() / "top/buffers");
  const std::string bin = write_gltf_with_buffer_uri(
      dir, "top/models/m.gltf", "../buffers/m.bin");
  dir.write("top/buffers/m.bin", bin);
  const std::string path = dir.write(
      "top/s.json", R"({"raypick_scene": 1, "meshes": [{"name": "m", "file": "models/m.gltf"}],
                        "objects": [{"mesh": "m"}]})");
  CHECK(loads(path).objects.size() == 1);
  // Loaded alone, the glTF may not leave its own folder.
  CHECK(contains(refusal(dir.path_of("top/models/m.gltf")), "outside"));
  // Past the JSON scene's folder is refused, naming both files.
  dir.write("m.bin", bin);
  write_gltf_with_buffer_uri(dir, "top/models/m.gltf", "../../m.bin");
  const std::string message = refusal(path);
  CHECK(contains(message, "meshes[0].file: cannot load 'models/m.gltf'"));
  CHECK(contains(message, "buffers[0].uri: '../../m.bin' resolves to"));
}

TEST_CASE("an OBJ material library outside the OBJ's folder is refused with its line") {
  TempDir dir;
  fs::create_directories(dir.path() / "scenes");
  dir.write("outside.mtl", "newmtl red\nKd 1 0 0\n");
  for (const std::string& lib :
       {std::string("../outside.mtl"), dir.path_of("outside.mtl"),
        std::string("/etc/passwd")}) {
    CAPTURE(lib);
    const std::string path = dir.write(
        "scenes/s.obj", std::string("# materials\nmtllib ") + lib + "\n" + kTriangleObj);
    const LoadResult result = load_scene(path);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().kind == LoadError::Kind::kMalformed);
    CHECK(result.error().line == 2);
    CHECK(contains(result.error().message, "mtllib: '" + lib + "'"));
  }
  // Inside the root it is found (no warning); missing inside it is a warning.
  const std::string path = dir.write(
      "scenes/s.obj", std::string("mtllib ../outside.mtl\nusemtl red\n") + kTriangleObj);
  LoadOptions options;
  options.root = dir.path().string();
  const LoadResult result = load_scene(path, options);
  REQUIRE(result.ok());
  CHECK(result.warnings.empty());
  dir.write("scenes/t.obj", std::string("mtllib gone.mtl\n") + kTriangleObj);
  const LoadResult missing = load_scene(dir.path_of("scenes/t.obj"));
  REQUIRE(missing.ok());
  REQUIRE(missing.warnings.size() == 1);
  CHECK(contains(missing.warnings[0], "material library 'gone.mtl' not found"));
}

// ---------------------------------------------------------------------------
// 2. Budgets

namespace {

LoadOptions with_budget(std::uint64_t bytes, std::uint64_t vertices,
                        std::uint64_t triangles, std::uint64_t objects) {
  LoadOptions options;
  options.budget = LoadBudget{bytes, vertices, triangles, objects};
  return options;
}

constexpr std::uint64_t kMany = std::uint64_t{1} << 40;

}  // namespace

TEST_CASE("glTF accessors without a buffer view are charged to the vertex budget before they are filled") {
  TempDir dir;
  GltfBuilder b;
  // 16 meshes, each on a zero-filled accessor of 2^24 - 1 vertices.
  for (int m = 0; m < 16; ++m) {
    const int a = b.add_accessor({{"componentType", 5126},
                                  {"count", (1 << 24) - 1},
                                  {"type", "VEC3"}});
    b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", a}}}}}));
    b.add_node({{"mesh", m}});
  }
  const std::string path = dir.write("zeros.gltf", b.gltf_embedded());
  const std::string message =
      refusal(path, with_budget(kMany, 1000, kMany, kMany));
  CHECK(message ==
        "accessors[0]: POSITION (meshes[0].primitives[0]): load budget "
        "max_vertices exceeded: the scene needs more than 1000 vertex "
        "positions in its meshes");
}

TEST_CASE("a glTF node DAG, a few hundred bytes for 2^k objects, is refused at once") {
  // k levels of two children pointing at the same next node: 2^k paths.
  // glTF 2.0 allows only strict trees, so no DAG is expanded: the file is
  // refused before any object is made, whatever k.
  TempDir dir;
  const auto dag = [&](int levels) {
    GltfBuilder b = triangle_builder();
    for (int i = 0; i < levels; ++i) b.add_node({{"children", {i + 1, i + 1}}});
    b.add_node({{"mesh", 0}});
    b.doc["scenes"] = Json::array({Json{{"nodes", {0}}}});
    return dir.write("dag" + std::to_string(levels) + ".gltf", b.gltf_embedded());
  };
  for (int levels : {1, 25, 60}) {
    CAPTURE(levels);
    CHECK(refusal(dag(levels)) ==
          "nodes[0].children[1]: node 1 is listed twice among node 0's children (glTF 2.0 "
          "requires the node hierarchy to be strict trees)");
  }
}

TEST_CASE("one glTF accessor reused by many primitives is charged once per primitive to the triangle budget") {
  TempDir dir;
  GltfBuilder b;
  const int a = b.add_accessor(
      {{"componentType", 5126}, {"count", 3000}, {"type", "VEC3"}});
  Json prims = Json::array();
  for (int k = 0; k < 2000; ++k) prims.push_back({{"attributes", {{"POSITION", a}}}});
  b.add_mesh(prims);
  b.add_node({{"mesh", 0}});
  const std::string path = dir.write("reuse.gltf", b.gltf_embedded(-1));
  // 2000 x 1000 triangles, all stored.
  const std::string message =
      refusal(path, with_budget(kMany, kMany, 1999 * 1000, kMany));
  CHECK(message ==
        "meshes[0].primitives[1999]: load budget max_triangles exceeded: the "
        "scene needs more than 1999000 triangles in its meshes");
  const Scene scene = loads(path, with_budget(kMany, kMany, 2000 * 1000, kMany));
  CHECK(scene.meshes[0].triangles.size() == 2000 * 1000);
  CHECK(scene.meshes[0].positions.size() == 3000);
}

TEST_CASE("the byte budget covers the scene file and the buffer files it reads") {
  TempDir dir;
  const std::string bin = write_gltf_with_buffer_uri(dir, "s.gltf", "s.bin");
  dir.write("s.bin", bin);
  const std::string path = dir.path_of("s.gltf");
  const auto gltf_size = fs::file_size(path);
  CHECK(loads(path, with_budget(gltf_size + bin.size(), kMany, kMany, kMany))
            .objects.size() == 1);
  CHECK(refusal(path, with_budget(gltf_size + bin.size() - 1, kMany, kMany,
                                  kMany)) ==
        "buffers[0].uri: load budget max_bytes exceeded: the scene needs more "
        "than " + std::to_string(gltf_size + bin.size() - 1) +
            " bytes of files read");
  CHECK(refusal(path, with_budget(gltf_size - 1, kMany, kMany, kMany)) ==
        "load budget max_bytes exceeded: the scene needs more than " +
            std::to_string(gltf_size - 1) + " bytes of files read");
}

TEST_CASE("OBJ loads are charged to the triangle, vertex and object budgets") {
  TempDir dir;
  // Two shapes sharing 4 vertices: each stores its own copy of the ones it
  // uses.
  const std::string path = dir.write(
      "s.obj",
      "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\no a\nf 1 2 3 4\no b\nf 1 2 3\n");
  CHECK(loads(path, with_budget(kMany, 7, 3, 2)).objects.size() == 2);
  CHECK(refusal(path, with_budget(kMany, kMany, 2, kMany)) ==
        "load budget max_triangles exceeded: the scene needs more than 2 "
        "triangles in its meshes");
  CHECK(refusal(path, with_budget(kMany, 6, kMany, kMany)) ==
        "load budget max_vertices exceeded: the scene needs more than 6 "
        "vertex positions in its meshes");
  CHECK(refusal(path, with_budget(kMany, kMany, kMany, 1)) ==
        "load budget max_objects exceeded: the scene needs more than 1 "
        "objects");
}

TEST_CASE("a JSON scene's objects, boxes, mesh files and mesh copies share one budget") {
  TempDir dir;
  dir.write("t.obj", kTriangleObj);
  std::string meshes;
  for (int i = 0; i < 100; ++i) {
    meshes += std::string(i ? "," : "") + R"({"name": "m)" + std::to_string(i) +
              R"(", "file": "t.obj"})";
  }
  const std::string path = dir.write(
      "s.json", R"({"raypick_scene": 1, "meshes": [)" + meshes +
                    R"(, {"name": "box", "box": {"min": [0,0,0], "max": [1,1,1]}}],
                    "objects": [{"mesh": "m0"}, {"mesh": "box"}, {"mesh": "box"}]})");
  // The file once (1 triangle, 3 vertices, 1 object), 100 copies of it, one
  // box (12 triangles, 8 vertices), 3 objects.
  CHECK(loads(path, with_budget(kMany, 3 + 300 + 8, 1 + 100 + 12, 1 + 3))
            .objects.size() == 3);
  CHECK(contains(refusal(path, with_budget(kMany, kMany, 1 + 100 + 11, kMany)),
                 "meshes[100].box: load budget max_triangles exceeded"));
  CHECK(contains(refusal(path, with_budget(kMany, kMany, 50, kMany)),
                 "meshes[49].file: load budget max_triangles exceeded"));
  CHECK(contains(refusal(path, with_budget(kMany, 3 + 299, kMany, kMany)),
                 "meshes[99].file: load budget max_vertices exceeded"));
  CHECK(contains(refusal(path, with_budget(kMany, kMany, kMany, 3)),
                 "objects: load budget max_objects exceeded"));
  // The mesh file's own load is charged too, and its refusal names it.
  CHECK(contains(refusal(path, with_budget(kMany, 2, kMany, kMany)),
                 "meshes[0].file: cannot load 't.obj': " + dir.path_of("t.obj") +
                     ": load budget max_vertices exceeded"));
}

// ---------------------------------------------------------------------------
// 3. Deep JSON, and running out of memory

TEST_CASE("a JSON scene of 16,000 nested arrays is refused for its depth, with its line") {
  TempDir dir;
  const std::string deep = std::string(16000, '[') + std::string(16000, ']');
  const std::string path = dir.write(
      "deep.json", "{\"raypick_scene\": 1,\n\"x\": " + deep + "}");
  const LoadResult result = load_scene(path);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().line == 2);
  CHECK(result.error().message ==
        "invalid JSON: arrays and objects nested more than 128 deep (raypick "
        "reads no deeper)");
  // Brackets inside strings are not nesting.
  const std::string in_string = dir.write(
      "s.json", R"({"raypick_scene": 1, "meshes": [{"name": ")" +
                    std::string(1000, '[') +
                    R"(", "box": {"min": [0,0,0], "max": [1,1,1]}}], "objects": [{"mesh": ")" +
                    std::string(1000, '[') + R"("}]})");
  CHECK(loads(in_string).objects.size() == 1);
}

TEST_CASE("glTF JSON nested up to 128 deep loads, one level more is refused") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  b.add_node({{"mesh", 0}});
  // "extras" is never read; the document is 1 level, extras 127 more.
  const auto with_extras = [&](int depth) {
    Json d = Json::parse(b.gltf_embedded(-1));
    d["extras"] = Json::parse(std::string(depth, '[') + std::string(depth, ']'));
    std::string name = std::to_string(depth);
    name += ".gltf";
    return dir.write(name, d.dump());
  };
  CHECK(loads(with_extras(127)).objects.size() == 1);
  CHECK(contains(refusal(with_extras(128)), "nested more than 128 deep"));
}

TEST_CASE("a duplicate key deep in a JSON scene is found with its full path") {
  TempDir dir;
  std::string doc = R"({"raypick_scene": 1, "meshes": [{"name": "m", "box": {"min": [0,0,0], "max": [1,1,1]}}],
                      "objects": [{"mesh": "m"}, {"mesh": "m", "mesh": "m"}]})";
  const std::string path = dir.write("dup.json", doc);
  CHECK(refusal(path) == "objects[1]: duplicate key 'mesh'");
  // Siblings after a closed container keep their own path.
  const std::string path2 = dir.write(
      "dup2.json",
      R"({"raypick_scene": 1, "meshes": [[[]], {"a": [1, {"b": 2}], "c": 3, "a": 4}], "objects": []})");
  CHECK(refusal(path2) == "meshes[1]: duplicate key 'a'");
}

TEST_CASE("a key repeated three times is reported on its last line, and a syntax error after it wins") {
  TempDir dir;
  const std::string head = "{\"raypick_scene\": 1, \"meshes\": [],\n\"objects\": [{\"mesh\": \"a\",\n"
                           "\"mesh\": \"b\",\n\"mesh\": \"c\"}]";
  const LoadResult dup = load_scene(dir.write("dup3.json", head + "}\n"));
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.error().message == "objects[0]: duplicate key 'mesh'");
  CHECK(dup.error().line == 4);  // the last "mesh", as the path finds it
  const LoadResult broken = load_scene(dir.write("broken.json", head + ",\n]"));
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().line == 5);
  CHECK(broken.error().message.rfind("invalid JSON: ", 0) == 0);
}

TEST_CASE("running out of memory on a million-node glTF chain is one error naming the file, exit 1") {
#if defined(__SANITIZE_ADDRESS__)
  // ASan reserves terabytes of address space: an address-space limit
  // stops it before main.
  MESSAGE("skipped under AddressSanitizer");
#else
  TempDir dir;
  const GltfBuilder b = triangle_builder();
  Json doc = Json::parse(b.gltf_embedded(-1));
  doc["scenes"] = Json::array({Json{{"nodes", {0}}}});
  doc.erase("nodes");
  std::string text = doc.dump();
  text.pop_back();  // the closing brace: the nodes follow
  constexpr int kNodes = 1000000;
  text += ",\"nodes\":[";
  for (int i = 0; i + 1 < kNodes; ++i) {
    text += "{\"children\":[" + std::to_string(i + 1) + "]},";
  }
  text += "{\"mesh\":0}]}";
  const std::string path = dir.write("chain.gltf", text);
  // 300 and 400 MB of address space: the parsed document and the checked
  // model of a 22 MB file need more (600 MB aborted inside tinygltf before
  // the loader stopped using it; the loader that checked a reduced copy of
  // the document still ran out at 600 MB).
  for (const char* limit : {"300000", "400000"}) {
    CAPTURE(limit);
    const fs::path out = dir.path() / "out.txt";
    const fs::path err = dir.path() / "err.txt";
    const std::string command =
        std::string("ulimit -v ") + limit + "; '" + RAYPICK_EXE + "' info '" +
        path + "' > '" + out.string() + "' 2> '" + err.string() + "'";
    const int raw = std::system(command.c_str());
    REQUIRE(WIFEXITED(raw));
    CHECK(WEXITSTATUS(raw) == 1);
    CHECK(slurp(err) ==
          "raypick: " + path + ": out of memory while loading the scene\n");
    CHECK(slurp(out).empty());
  }
#endif
}

// ---------------------------------------------------------------------------
// 4. OBJ faces, numbers and bytes

namespace {

// An OBJ of one polygon of `corners` corners on a circle.
std::string polygon_obj(int corners) {
  std::string text;
  for (int i = 0; i < corners; ++i) {
    const double a = 6.283185307179586 * i / corners;
    text += "v " + std::to_string(std::cos(a)) + " " + std::to_string(std::sin(a)) +
            " 0\n";
  }
  text += "f";
  for (int i = 1; i <= corners; ++i) {
    text += ' ';
    text += std::to_string(i);
  }
  return text + "\n";
}

}  // namespace

TEST_CASE("an OBJ face of more than 4096 corners is refused with its line, 4096 are triangulated") {
  TempDir dir;
  const Scene scene = loads(dir.write("4096.obj", polygon_obj(4096)));
  // Its triangles cover it: their areas add up to its own (corners rounded
  // to 6 decimals in the file, so a few are collinear and make none).
  const Mesh& m = scene.meshes[0];
  CHECK(m.triangles.size() <= 4094);
  CHECK(m.triangles.size() >= 4000);
  double area = 0.0, outline = 0.0;
  for (const glm::uvec3& t : m.triangles) {
    const glm::dvec3 a{m.positions[t.x]}, b{m.positions[t.y]}, c{m.positions[t.z]};
    area += 0.5 * std::abs((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x));
  }
  // The outline: the corners in the face's order, which is their angle's
  // (the mesh stores them in order of first use by a triangle).
  std::vector<glm::dvec3> ring(m.positions.begin(), m.positions.end());
  std::sort(ring.begin(), ring.end(), [](const glm::dvec3& a, const glm::dvec3& b) {
    return std::atan2(a.y, a.x) < std::atan2(b.y, b.x);
  });
  for (std::size_t i = 0; i < ring.size(); ++i) {
    const glm::dvec3 a = ring[i], b = ring[(i + 1) % ring.size()];
    outline += 0.5 * (a.x * b.y - b.x * a.y);
  }
  INFO("area " << std::setprecision(17) << area << " outline " << outline);
  CHECK(area == doctest::Approx(std::abs(outline)).epsilon(1e-9));
  const std::string path = dir.write("big.obj", polygon_obj(100000));
  const LoadResult result = load_scene(path);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().line == 100001);
  CHECK(result.error().message ==
        "face has more than 4096 corners (raypick triangulates at most 4096)");
}

TEST_CASE("an OBJ 'f' line without corners is refused with its line") {
  TempDir dir;
  for (const std::string f : {"f", "f ", "\tf\t"}) {
    CAPTURE(f);
    const LoadResult result =
        load_scene(dir.write("s.obj", std::string(kTriangleObj) + f + "\n"));
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().line == 5);
    CHECK(result.error().message == "face has 0 corners (expected at least 3)");
  }
}

TEST_CASE("an OBJ face corner with a slash but no index after it is named as malformed") {
  TempDir dir;
  const std::string valid = "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\n";
  for (const std::string corner : {"1//", "1/", "1/1/", "1/0", "1//x", "1/1/1/1"}) {
    CAPTURE(corner);
    const LoadResult result =
        load_scene(dir.write("s.obj", valid + "f " + corner + " 2 3\n"));
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().line == 6);
    CHECK(result.error().message ==
          "face corner '" + corner +
              "' is malformed (expected v, v/vt, v//vn or v/vt/vn with "
              "non-zero integer indices)");
  }
  for (const std::string face : {"1/1 2/1 3/1", "1//1 2//1 3//1", "1/1/1 2/1/1 3/1/1", "-3 -2 -1"}) {
    CAPTURE(face);
    CHECK(loads(dir.write("s.obj", valid + "f " + face + "\n")).meshes[0].triangles.size() == 1);
  }
}

TEST_CASE("an OBJ coordinate too small for a double is 0, too large for a float is refused") {
  TempDir dir;
  const Scene scene = loads(dir.write(
      "s.obj", "v 1e-5000 -1e-400 0.0000e-99999999999999999999\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"));
  CHECK(scene.meshes[0].positions[0] == glm::vec3(0.0f));
  for (const std::string x : {"1e39", "1e5000", "-0.1e400", "1e99999999999999999999"}) {
    CAPTURE(x);
    const LoadResult result =
        load_scene(dir.write("t.obj", "v " + x + " 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"));
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().line == 1);
    CHECK(result.error().message ==
          "vertex coordinate '" + x + "' is too large for a float");
  }
}

TEST_CASE("control bytes in OBJ messages and names are escaped, and long tokens cut") {
  TempDir dir;
  LoadResult result = load_scene(dir.write("s.obj", "v 1\x1b[2J 0 0\n"));
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message ==
        "vertex coordinate '1\\x1B[2J' is not a number");
  const std::string huge(1000000, '7');
  result = load_scene(dir.write("t.obj", "v " + huge + " 0 0\n"));
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message ==
        "vertex coordinate '" + std::string(40, '7') +
            "...' is too large for a float");
  const Scene scene = loads(
      dir.write("n.obj", std::string("o a\x1b]0;x\x07\x7f") + "b\n" + kTriangleObj));
  // Names are stored as the file holds them; outputs escape them.
  CHECK(scene.objects[0].name == std::string("a\x1b]0;x\x07\x7f") + "b");
}

TEST_CASE("a name's bytes that are not UTF-8 are stored as U+FFFD, one per byte") {
  TempDir dir;
  // \xC3 without its continuation, a lone continuation byte, an overlong
  // form (C0 AF), then valid UTF-8 (e-acute) and a tab, kept.
  const Scene scene = loads(dir.write(
      "u.obj", std::string("o a\xc3z\x80\xc0\xaf\xc3\xa9\tq\n") + kTriangleObj));
  CHECK(scene.objects[0].name ==
        "a\xEF\xBF\xBDz\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xC3\xA9\tq");
  CHECK(valid_utf8("plain") == "plain");
  CHECK(valid_utf8(std::string("\xf4\x90\x80\x80", 4)) ==
        "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // past U+10FFFF
}

TEST_CASE("names are kept exactly as glTF and JSON scene files hold them, control bytes included") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  b.add_node({{"mesh", 0}, {"name", "line\nbreak\r\x1b"}});
  const Scene gltf = loads(dir.write("s.gltf", b.gltf_embedded()));
  CHECK(gltf.objects[0].name == "line\nbreak\r\x1b");
  const Scene json = loads(dir.write(
      "s.json", R"({"raypick_scene": 1, "meshes": [{"name": "m", "box": {"min": [0,0,0], "max": [1,1,1]}}],
                  "objects": [{"mesh": "m", "name": "a\u001bb\u0000c"}]})"));
  CHECK(json.objects[0].name == std::string("a\x1b" "b\0c", 5));
  // Messages quote names printable too.
  const std::string message = refusal(dir.write(
      "t.json", R"({"raypick_scene": 1, "meshes": [], "objects": [{"mesh": "\u001b[31m"}]})"));
  CHECK(message == "objects[0].mesh: no mesh named '\\x1B[31m' in 'meshes'");
}

TEST_CASE("an OBJ file beginning with a UTF-8 byte order mark loads") {
  TempDir dir;
  const Scene scene = loads(dir.write("bom.obj", std::string("\xEF\xBB\xBF") + kTriangleObj));
  CHECK(scene.meshes[0].triangles.size() == 1);
}

// ---------------------------------------------------------------------------
// 5. glTF that glTF-Validator rejects and that would change the geometry

namespace {

std::string triangle_floats() {
  return bytes_of(std::vector<float>{0, 0, 0, 1, 0, 0, 0, 1, 0});
}

// A builder whose mesh 0 is a non-indexed triangle whose POSITION accessor
// reads the view `bytes` (with `stride`) from `accessor_offset`.
GltfBuilder positions_in(const std::string& bytes, int stride,
                         int accessor_offset) {
  GltfBuilder b;
  const int view = b.add_view(bytes, stride);
  const int a = b.add_accessor({{"bufferView", view},
                                {"byteOffset", accessor_offset},
                                {"componentType", 5126},
                                {"count", 3},
                                {"type", "VEC3"}});
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", a}}}}}));
  b.add_node({{"mesh", 0}});
  return b;
}

}  // namespace

TEST_CASE("a glTF byteStride smaller than the accessor's element is refused") {
  TempDir dir;
  // Stride 4 for VEC3 floats: elements would overlap.
  const GltfBuilder b = positions_in(triangle_floats() + std::string(8, '\0'), 4, 0);
  CHECK(refusal(dir.write("s.gltf", b.gltf_embedded())) ==
        "accessors[0]: bufferViews[0] has byteStride 4, less than the "
        "accessor's element (12 bytes): elements would overlap");
  // 12 is the element: fine.
  CHECK(loads(dir.write("t.gltf", positions_in(triangle_floats(), 12, 0).gltf_embedded()))
            .meshes[0]
            .positions[1] == glm::vec3(1, 0, 0));
}

TEST_CASE("a glTF float accessor at an offset that is not a multiple of 4 is refused") {
  TempDir dir;
  const std::string bytes = std::string(4, '\0') + triangle_floats();
  SUBCASE("accessor byteOffset 2") {
    const GltfBuilder b = positions_in(bytes, 0, 2);
    CHECK(refusal(dir.write("s.gltf", b.gltf_embedded())) ==
          "accessors[0].byteOffset: byteOffset 2 plus bufferViews[0].byteOffset "
          "0 is not a multiple of the component size (4 bytes)");
  }
  SUBCASE("buffer view byteOffset 2, accessor byteOffset 0") {
    GltfBuilder b = positions_in(bytes, 0, 0);
    b.doc["bufferViews"][0]["byteOffset"] = 2;
    b.doc["bufferViews"][0]["byteLength"] = bytes.size() - 2;
    CHECK(contains(refusal(dir.write("s.gltf", b.gltf_embedded())),
                   "byteOffset 0 plus bufferViews[0].byteOffset 2 is not a "
                   "multiple of the component size"));
  }
  SUBCASE("2 + 2 is aligned") {
    GltfBuilder b = positions_in(bytes, 0, 2);
    b.doc["bufferViews"][0]["byteOffset"] = 2;
    b.doc["bufferViews"][0]["byteLength"] = bytes.size() - 2;
    CHECK(loads(dir.write("s.gltf", b.gltf_embedded())).meshes[0].positions[2] ==
          glm::vec3(0, 1, 0));
  }
}

TEST_CASE("glTF normalized: true on float or unsigned int components is refused") {
  TempDir dir;
  GltfBuilder b = positions_in(triangle_floats(), 0, 0);
  b.doc["accessors"][0]["normalized"] = true;
  CHECK(refusal(dir.write("s.gltf", b.gltf_embedded())) ==
        "accessors[0].normalized: normalized is true on float components "
        "(glTF allows it on byte and short types only)");
  b.doc["accessors"][0]["normalized"] = false;
  CHECK(loads(dir.write("t.gltf", b.gltf_embedded())).objects.size() == 1);
  GltfBuilder c = triangle_builder();
  c.add_node({{"mesh", 0}});
  c.doc["accessors"][1]["componentType"] = 5125;
  c.doc["accessors"][1]["normalized"] = true;
  CHECK(contains(refusal(dir.write("u.gltf", c.gltf_embedded())),
                 "normalized is true on unsigned int components"));
}

// ---------------------------------------------------------------------------
// 6. Coordinates raypick cannot intersect correctly

TEST_CASE("a triangle at the edge of the supported range is hit in both modes, beyond it is refused") {
  TempDir dir;
  // The plane x = 1e11, the ray from x = -1e11: every coordinate difference
  // is as large as the range allows.
  const std::string b = "100000000000";
  const std::string path = dir.write(
      "edge.obj", "v " + b + " -" + b + " -" + b + "\nv " + b + " " + b + " -" +
                      b + "\nv " + b + " 0 " + b + "\nf 1 2 3\n");
  const Scene scene = loads(path);
  PickerConfig config;
  config.mesh_mode = true;
  const Picker picker(scene, config);
  const float k = kMaxCoordinate;
  for (const float length : {1.0f, 1e-3f}) {
    CAPTURE(length);
    Ray ray;
    ray.org = {-k, 0.25f * k, 0.25f * k};
    ray.dir = {length, 0.0f, 0.0f};
    for (const PickMode mode : {PickMode::kMesh, PickMode::kObb}) {
      const Hit hit = picker.intersect(ray, mode);
      REQUIRE(hit.hit());
      CHECK(hit.t == doctest::Approx(2.0 * k / length).epsilon(1e-6));
    }
  }
  // One float step beyond, in a file of any kind.
  const std::string over = "100000010000";
  const LoadResult result = load_scene(dir.write(
      "over.obj", "v " + over + " 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\n"));
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message ==
        "mesh 0: vertex 0 (1.00000006e+11, 0, 0) is outside the supported "
        "range: every coordinate must be within +-1e+11");
  GltfBuilder g;
  g.add_mesh(Json::array({Json{{"attributes",
                                {{"POSITION", g.add_positions({{1e12f, 0, 0},
                                                               {0, 1, 0},
                                                               {0, 0, 1}})}}}}}));
  g.add_node({{"mesh", 0}});
  CHECK(contains(refusal(dir.write("over.gltf", g.gltf_embedded())),
                 "is outside the supported range"));
}

TEST_CASE("an object whose matrix carries its box beyond the supported range is refused") {
  TempDir dir;
  const auto scene_with = [&](const std::string& transform) {
    return dir.write(
        "s.json", R"({"raypick_scene": 1, "meshes": [{"name": "m", "box": {"min": [-1,-1,-1], "max": [1,1,1]}}],
                    "objects": [{"mesh": "m"}, {"name": "far", "mesh": "m", )" +
                      transform + "}]}");
  };
  // Reach = |translation| + extent (floats are 8192 apart here).
  CHECK(loads(scene_with(R"("translate": [0, -99999900000, 0])")).objects.size() == 2);
  CHECK(refusal(scene_with(R"("translate": [0, -100000100000, 0])")) ==
        "object 1 ('far'): its box reaches 1.000001e+11 on the y axis in "
        "world space, outside the supported range: every coordinate must be "
        "within +-1e+11");
  // A scale does it as well as a translation; so does a glTF node chain.
  CHECK(contains(refusal(scene_with(R"("scale": [1, 1, 2e11])")),
                 "its box reaches 1.99999996e+11 on the z axis"));
  GltfBuilder g = triangle_builder();
  g.add_node({{"children", {1}}, {"scale", {1e6, 1e6, 1e6}}});
  g.add_node({{"mesh", 0}, {"scale", {1e6, 1e6, 1e6}}, {"name", "deep"}});
  g.doc["scenes"] = Json::array({Json{{"nodes", {0}}}});
  const std::string deep = refusal(dir.write("s.gltf", g.gltf_embedded()));
  CHECK(deep == "object 0 ('deep'): its box reaches 9.99999996e+11 on the x axis in "
                "world space, outside the supported range: every coordinate "
                "must be within +-1e+11");
}

TEST_CASE("an OBJ material library is only looked for, never read, so it costs no bytes of the budget") {
  TempDir dir;
  dir.write("m.mtl", "newmtl red\nKd 1 0 0\n" + std::string(1 << 16, '#'));
  const std::string obj = std::string("mtllib m.mtl\nusemtl red\n") + kTriangleObj;
  const std::string path = dir.write("s.obj", obj);
  const LoadResult result = load_scene(path, with_budget(obj.size(), kMany, kMany, kMany));
  REQUIRE(result.ok());
  CHECK(result.warnings.empty());
  const std::string message = refusal(path, with_budget(obj.size() - 1, kMany, kMany, kMany));
  CHECK(message == "load budget max_bytes exceeded: the scene needs more than " +
                       std::to_string(obj.size() - 1) + " bytes of files read");
}

TEST_CASE("concurrent loads of several scenes, each with its own budget, equal the loads one by one") {
  // Loaders keep no state between calls: four threads load four files at
  // once (one of them refused by its own small budget) and get what one
  // thread gets loading them in turn. "concurrent": the TSan step runs it.
  const std::string src = RAYPICK_SOURCE_DIR;
  struct Job {
    std::string path;
    LoadOptions options;
  };
  std::vector<Job> jobs = {
      {src + "/apps/examples/room.obj", {}},
      {src + "/apps/examples/shelf.json", {}},
      {test::assimp_model("glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb").string(), {}},
      {test::assimp_model("glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb").string(), {}},
  };
  jobs[3].options.budget.max_triangles = 1000;  // refused by its own budget
  auto summary = [](const LoadResult& r) {
    if (!r.ok()) return "error: " + r.error().to_string();
    std::string s = std::to_string(r.scene().objects.size()) + " objects:";
    for (const Object& o : r.scene().objects) {
      s += " " + o.name + "/" + std::to_string(o.mesh);
      for (int c = 0; c < 4; ++c) {
        for (int k = 0; k < 4; ++k) s += "," + std::to_string(o.matrix[c][k]);
      }
    }
    for (const Mesh& m : r.scene().meshes) {
      s += " mesh " + std::to_string(m.positions.size()) + "/" + std::to_string(m.triangles.size());
    }
    return s;
  };
  std::vector<std::string> one_by_one;
  for (const Job& j : jobs) one_by_one.push_back(summary(load_scene(j.path, j.options)));
  CHECK(one_by_one[3].rfind("error: ", 0) == 0);
  CHECK(one_by_one[3].find("max_triangles") != std::string::npos);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::string> together(jobs.size());
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      threads.emplace_back([&, k] { together[k] = summary(load_scene(jobs[k].path, jobs[k].options)); });
    }
    for (std::thread& t : threads) t.join();
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      CAPTURE(k);
      CHECK(together[k] == one_by_one[k]);
    }
  }
}

TEST_CASE("memory budget: a few hundred bytes of glTF asking for gigabytes is refused before allocating") {
  // An index accessor of 3 (2^26 - 1) zeros with no buffer view: within
  // the triangle count budget (2^26), but about 8 GiB to load and build.
  TempDir dir;
  GltfBuilder b;
  const int pos = b.add_positions({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  const int idx = b.add_accessor({{"componentType", 5125},
                                  {"count", 3 * ((std::int64_t{1} << 26) - 1)},
                                  {"type", "SCALAR"}});
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", pos}}}, {"indices", idx}}}));
  b.add_node({{"mesh", 0}});
  const std::string path = dir.write("zeros.gltf", b.gltf_embedded());
  CHECK(std::filesystem::file_size(path) < 1024);
  const std::string message = refusal(path);
  CHECK(contains(message, "load budget max_memory exceeded: loading and building the scene "
                          "needs an estimated 819"));
  CHECK(contains(message, " MiB, more than the 256 MiB allowed (256 MiB, or 64 times the "));
  CHECK(contains(message, "raise it with --max-memory"));
  // Raised explicitly past the estimate, the count budgets still hold.
  LoadOptions raised;
  raised.budget.max_memory = std::uint64_t{16} << 30;
  raised.budget.max_triangles = 1000;
  CHECK(contains(refusal(path, raised), "max_triangles exceeded"));
  // An explicit budget smaller than an ordinary file's needs refuses it.
  LoadOptions tiny;
  tiny.budget.max_memory = 1000;
  GltfBuilder one = triangle_builder();
  one.add_node({{"mesh", 0}});
  const std::string ordinary = dir.write("tri.gltf", one.gltf_embedded());
  CHECK(contains(refusal(ordinary, tiny), "max_memory exceeded"));
  CHECK(loads(ordinary).objects.size() == 1);  // the default allows it
}

TEST_CASE("memory budget: a legitimate instanced JSON scene (1M instances of one mesh) loads under the defaults") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr int kInstances = 100000;  // the sanitizer builds: the same path, smaller
#else
  constexpr int kInstances = 1000000;
#endif
  TempDir dir;
  std::string json = R"({"raypick_scene": 1, "meshes": [{"name": "m", "box": {"min": [0,0,0], "max": [1,1,1]}}], "objects": [)";
  json.reserve(std::size_t(kInstances) * 48);
  for (int i = 0; i < kInstances; ++i) {
    json += (i ? ",\n" : "") + std::string(R"({"mesh":"m","translate":[)") + std::to_string(i % 1000) +
            "," + std::to_string(i / 1000) + ",0]}";
  }
  json += "]}";
  const std::string path = dir.write("instances.json", json);
  const Scene scene = loads(path);
  CHECK(scene.objects.size() == std::size_t(kInstances));
}
