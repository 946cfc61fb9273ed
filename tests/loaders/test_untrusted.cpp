// Hostile scene files (issue 10): files a scene refers to stay inside the
// allowed root, loads stay within their budgets, deep or huge inputs are
// refused cleanly, and what the loaders cannot read correctly is refused.
// Every hostile file is written at test time.
#include "gltf_builder.h"
#include "loader_test_util.h"

#include "raypick/loaders/load.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

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
  REQUIRE(result.error.has_value());
  CHECK(result.error->kind == LoadError::Kind::kMalformed);
  CHECK(result.error->file == path);
  return result.error->message;
}

Scene loads(const std::string& path, const LoadOptions& options = {}) {
  LoadResult result = load_scene(path, options);
  INFO("load error: ",
       (result.error ? result.error->to_string() : std::string()));
  REQUIRE(result.ok());
  return std::move(*result.scene);
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
  for (const std::string file :
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
  for (const std::string lib :
       {std::string("../outside.mtl"), dir.path_of("outside.mtl"),
        std::string("/etc/passwd")}) {
    CAPTURE(lib);
    const std::string path = dir.write(
        "scenes/s.obj", std::string("# materials\nmtllib ") + lib + "\n" + kTriangleObj);
    const LoadResult result = load_scene(path);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error->kind == LoadError::Kind::kMalformed);
    CHECK(result.error->line == 2);
    CHECK(contains(result.error->message, "mtllib: '" + lib + "'"));
  }
  // Inside the root it is read (no warning); missing inside it is a warning.
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
  CHECK(contains(missing.warnings, "material library 'gone.mtl' not found"));
}
