// Saved scenes (.rpscene): what is saved loads back the same, and every
// damaged, truncated, foreign or oversized file is refused, never crashes.
#include "test_util.h"
#include "temp_dir.h"

#include "raypick/loaders/load.h"
#include "scene_gen.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

namespace raypick {
namespace {

Scene sample_scene() {
  Scene scene = tools::make_mesh_scene(50, 3, tools::mixed_options());
  scene.objects[4].name = "crate \"4\"\t\x1b[31m";
  scene.objects[7].mask = 0x10;
  SceneCamera cam;
  cam.name = "node";
  cam.camera_name = "lens";
  cam.matrix = glm::dmat4(2.0);
  cam.matrix[3] = glm::dvec4(1.0, 2.0, 3.0, 1.0);
  cam.projection = Projection::kOrthographic;
  cam.ortho_height = 4.5;
  cam.aspect = 1.5;
  scene.cameras.push_back(cam);
  return scene;
}

// CHECKs that `a` and `b` hold as many items and that item i of each is
// equal in every one of `fields` (pointers to members).
template <class T, class... Fields>
void check_same_items(const std::vector<T>& a, const std::vector<T>& b, Fields... fields) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    ([&] { CHECK(a[i].*fields == b[i].*fields); }(), ...);
  }
}

void check_same(const Scene& a, const Scene& b) {
  check_same_items(a.meshes, b.meshes, &Mesh::positions, &Mesh::triangles);
  check_same_items(a.objects, b.objects, &Object::mesh, &Object::matrix, &Object::mask,
                   &Object::name, &Object::translation_low);
  check_same_items(a.cameras, b.cameras, &SceneCamera::name, &SceneCamera::camera_name,
                   &SceneCamera::matrix, &SceneCamera::projection, &SceneCamera::ortho_height,
                   &SceneCamera::aspect);
}

TEST_CASE("a saved scene loads back the same meshes, objects, names, masks and cameras") {
  test::TempDir dir;
  const Scene scene = sample_scene();
  const std::string path = (dir.path() / "s.RPSCENE").string();  // any case
  REQUIRE(save_scene(scene, path).empty());
  LoadResult r = load_scene(path);
  REQUIRE(r.ok());
  check_same(scene, r.scene());
  LoadResult m = decode_scene(encode_scene(scene), "memory");
  REQUIRE(m.ok());
  check_same(scene, m.scene());
  // A scene loaded from a file, saved and read back: the same again.
  LoadResult again = decode_scene(encode_scene(r.scene()), "again");
  REQUIRE(again.ok());
  check_same(scene, again.scene());
}

TEST_CASE("a saved form without objects is refused unless the reader allows it") {
  Scene scene = sample_scene();
  scene.objects.clear();
  const std::string bytes = encode_scene(scene);
  const LoadResult refused = decode_scene(bytes, "empty.rpscene");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "saved scene: the scene has no objects");
  LoadOptions options;
  options.require_objects = false;
  const LoadResult r = decode_scene(bytes, "empty.rpscene", options);
  REQUIRE(r.ok());
  check_same(scene, r.scene());
  CHECK(r.scene().meshes.size() == sample_scene().meshes.size());
}

TEST_CASE("placements beyond float are saved as version 3, others stay version 2") {
  Scene scene = sample_scene();
  auto version = [](const std::string& b) { return std::uint8_t(b[8]); };
  CHECK(version(encode_scene(scene)) == 2);
  // A translation of 300000.123 (float keeps 300000.125): the low part.
  glm::dmat4 m{glm::mat4(scene.objects[3].matrix)};
  m[3] = glm::dvec4(300000.123, -2e5 + 1e-3, 7.25, 1.0);
  scene.objects[3].place(m);
  REQUIRE(scene.objects[3].translation_low != glm::vec3{0.0f});
  CHECK(scene.objects[3].translation().x == doctest::Approx(300000.123).epsilon(1e-15));
  const std::string bytes = encode_scene(scene);
  CHECK(version(bytes) == 3);
  LoadResult r = decode_scene(bytes, "v3.rpscene");
  REQUIRE(r.ok());
  check_same(scene, r.scene());
  CHECK(r.scene().objects[3].translation() == scene.objects[3].translation());
}

TEST_CASE("a damaged saved scene is refused with a message, whatever byte is damaged") {
  const std::string bytes = encode_scene(sample_scene());
  auto error_of = [](const std::string& b) {
    LoadResult r = decode_scene(b, "x.rpscene");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().file == "x.rpscene");
    return r.error().message;
  };
  CHECK(error_of("RPSCENE").find("not a raypick saved scene") != std::string::npos);
  CHECK(error_of("{\"raypick_scene\": 1}").find("not a raypick saved scene") !=
        std::string::npos);
  std::string other = bytes;
  other[8] = 4;  // version 4
  CHECK(error_of(other).find("format version 4, this raypick reads versions 1 to 3") !=
        std::string::npos);
  // Truncated anywhere, or one bit flipped anywhere: the checksum says so.
  std::mt19937_64 rng(5);
  for (int k = 0; k < 200; ++k) {
    const std::size_t at = 12 + rng() % (bytes.size() - 12);
    CHECK(error_of(bytes.substr(0, at)).find("saved scene") != std::string::npos);
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ (1 << (rng() % 8)));
    CHECK(error_of(flipped).find("checksum") != std::string::npos);
  }
}

// A well-formed file (its checksum right) that lies: counts past the bytes,
// a mesh index out of range, a non-finite vertex, budgets exceeded.
std::string with_checksum(std::string body) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : body) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  body.append(reinterpret_cast<const char*>(&h), 8);
  return body;
}
template <class T>
void put(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}
std::string header() {
  std::string s = "RPSCENE\n";
  put<std::uint32_t>(s, 1);
  return s;
}

TEST_CASE("a saved scene whose counts lie is refused before anything is allocated") {
  std::string huge = header();
  put<std::uint64_t>(huge, std::uint64_t{1} << 60);  // meshes
  LoadResult r = decode_scene(with_checksum(huge), "huge.rpscene");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("mesh count 1152921504606846976 is more than the file holds") !=
        std::string::npos);
  // One mesh of one triangle, and an object naming mesh 5.
  std::string s = header();
  put<std::uint64_t>(s, 1);
  put<std::uint64_t>(s, 3);
  for (float v : {0.f, 0.f, 0.f, 1.f, 0.f, 0.f, 0.f, 1.f, 0.f}) put(s, v);
  put<std::uint64_t>(s, 1);
  for (std::uint32_t i : {0u, 1u, 2u}) put(s, i);
  std::string bad_mesh = s;
  put<std::uint64_t>(bad_mesh, 1);
  put<std::uint32_t>(bad_mesh, 5);
  r = decode_scene(with_checksum(bad_mesh + std::string(72, '\0')), "m.rpscene");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("names mesh 5 of 1") != std::string::npos);
  // A valid object whose vertex is NaN: validate_scene refuses it.
  std::string nan = header();
  put<std::uint64_t>(nan, 1);
  put<std::uint64_t>(nan, 3);
  for (float v : {0.f, 0.f, 0.f, 1.f, 0.f, 0.f, 0.f, NAN, 0.f}) put(nan, v);
  put<std::uint64_t>(nan, 1);
  for (std::uint32_t i : {0u, 1u, 2u}) put(nan, i);
  put<std::uint64_t>(nan, 1);
  put<std::uint32_t>(nan, 0);
  put(nan, glm::mat4(1.0f));
  put<std::uint32_t>(nan, ~0u);
  put<std::uint32_t>(nan, 1);
  nan += "n";
  put<std::uint64_t>(nan, 0);
  r = decode_scene(with_checksum(nan), "nan.rpscene");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("not finite") != std::string::npos);
  // The same file with a finite vertex loads; under a budget of 2 vertices
  // it is refused, naming the budget.
  std::string fine = nan;
  float one = 1.0f;
  std::memcpy(&fine[8 + 4 + 8 + 8 + 7 * 4], &one, 4);
  REQUIRE(decode_scene(with_checksum(fine), "ok.rpscene").ok());
  LoadOptions small;
  small.budget.max_vertices = 2;
  r = decode_scene(with_checksum(fine), "ok.rpscene", small);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("max_vertices") != std::string::npos);
}

}  // namespace
TEST_CASE("a saved scene carries a picker's trees as opaque bytes, version 1 files none") {
  const Scene scene = sample_scene();
  const std::string trees("trees \0 as the picker wrote them", 33);
  LoadResult r = decode_scene(encode_scene(scene, trees), "t.rpscene");
  REQUIRE(r.ok());
  CHECK(r.saved_trees == trees);
  check_same(scene, r.scene());
  // Version 1 is version 2 without the trees' length (here 0).
  const std::string v2 = encode_scene(scene);
  std::string v1 = v2.substr(0, v2.size() - 16);
  v1[8] = 1;
  r = decode_scene(with_checksum(v1), "v1.rpscene");
  REQUIRE(r.ok());
  CHECK(r.saved_trees.empty());
  check_same(scene, r.scene());
  // Trees longer than the file: refused before anything is allocated.
  std::string lie = v2.substr(0, v2.size() - 16);
  put<std::uint64_t>(lie, 1000);
  r = decode_scene(with_checksum(lie), "lie.rpscene");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("saved tree byte count 1000 is more than the file holds") !=
        std::string::npos);
}

}  // namespace raypick
