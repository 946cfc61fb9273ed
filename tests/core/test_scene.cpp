// The scene helpers of core/scene.h: world_bounds against the 8 corners of
// every object's box, merge_into_one_mesh against each object's matrix
// applied by hand.
#include "test_util.h"
#include "support/box_oracle.h"

#include "raypick/core/scene.h"

#include <glm/ext/matrix_transform.hpp>

#include <cmath>
#include <random>

using namespace raypick;

namespace {

// A tetrahedron with one unused position (which no box may include).
Mesh tetrahedron() {
  Mesh m;
  m.positions = {{0, 0, 0}, {1, 0, 0}, {0, 2, 0}, {0, 0, 3}, {100, 100, 100}};
  m.triangles = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};
  return m;
}

}  // namespace

TEST_CASE("world_bounds is the box around every object's 8 world corners") {
  std::mt19937_64 rng(7);
  Scene scene;
  scene.meshes = {tetrahedron(), Mesh{}};
  Aabb want;
  for (int i = 0; i < 20; ++i) {
    Object o;
    o.mesh = 0;
    o.matrix = test::random_affine(rng);
    scene.objects.push_back(o);
    want.extend(test::transform_aabb_corners(o.matrix, scene.meshes[0].triangle_bounds()));
  }
  // Objects that can never be hit add nothing: a singular matrix (a glTF
  // node hidden by scale 0) far away, and an empty mesh.
  Object hidden;
  hidden.matrix = glm::scale(glm::translate(glm::mat4{1.0f}, {1e6f, 0, 0}), glm::vec3{0.0f});
  Object empty;
  empty.mesh = 1;
  empty.matrix = glm::translate(glm::mat4{1.0f}, {-1e6f, 0, 0});
  scene.objects.push_back(hidden);
  scene.objects.push_back(empty);
  const Aabb got = world_bounds(scene);
  CHECK_VEC_NEAR(got.min, want.min, 1e-4f);
  CHECK_VEC_NEAR(got.max, want.max, 1e-4f);
  CHECK(world_bounds(Scene{}).empty());
  CHECK(world_bounds(Scene{{Mesh{}, Mesh{}}, {empty, hidden}, {}}).empty());
}

TEST_CASE("merge_into_one_mesh bakes each object's matrix into one mesh") {
  Scene s;
  s.meshes = {tetrahedron()};
  Object a, b;
  b.matrix = glm::rotate(glm::translate(glm::mat4{1.0f}, {10, 0, 0}), 0.5f,
                         glm::vec3{0, 0, 1}) *
             glm::scale(glm::mat4{1.0f}, {2, 2, 2});
  s.objects = {a, b};
  const Mesh m = merge_into_one_mesh(s);
  const Mesh& t = s.meshes[0];
  REQUIRE(m.positions.size() == 2 * t.positions.size());
  REQUIRE(m.triangles.size() == 2 * t.triangles.size());
  for (std::size_t i = 0; i < t.positions.size(); ++i) {
    CHECK(m.positions[i] == t.positions[i]);  // identity: exact
    CHECK_VEC_NEAR(m.positions[t.positions.size() + i],
                   glm::vec3(b.matrix * glm::vec4(t.positions[i], 1.0f)), 1e-4f);
  }
  const auto base = static_cast<std::uint32_t>(t.positions.size());
  for (std::size_t i = 0; i < t.triangles.size(); ++i) {
    CHECK(m.triangles[i] == t.triangles[i]);
    CHECK(m.triangles[t.triangles.size() + i] == t.triangles[i] + glm::uvec3(base));
  }
  CHECK(merge_into_one_mesh(Scene{}).positions.empty());
}

TEST_CASE("translation_low holds what rounding to float loses, in every coordinate") {
  // GCC 12 at -O2 compiles the plain vector form t - dvec3(vec3(t)) into
  // t - t for x and y (its SLP vectorizer drops the round trip through
  // float): this case fails if the library's form ever goes back to that.
  std::mt19937 rng(25);
  std::uniform_real_distribution<double> coord(-1e6, 1e6);
  for (int i = 0; i < 1000; ++i) {
    const glm::dvec3 t{coord(rng), coord(rng), coord(rng)};
    const glm::vec3 low = translation_low(t);
    for (int a = 0; a < 3; ++a) {
      const double high = static_cast<double>(static_cast<float>(t[a]));
      // The low part is the float of the exact remainder t - high.
      REQUIRE(low[a] == static_cast<float>(t[a] - high));
      REQUIRE(std::fabs(t[a] - (high + low[a])) <= std::fabs(t[a]) * 0x1p-47);
    }
  }
  // Hand-computed: 300000.125 is a float (no low part); 300000.123 is not.
  CHECK(translation_low(glm::dvec3{300000.125, -0.5, 2.0}) == glm::vec3{0.0f});
  const glm::vec3 low = translation_low(glm::dvec3{300000.123, -200000.456, 100000.789});
  CHECK(low.x == static_cast<float>(300000.123 - 300000.125));
  CHECK(low.y == static_cast<float>(-200000.456 - -200000.453125));
  CHECK(low.z == static_cast<float>(100000.789 - 100000.7890625));
  CHECK(low.x != 0.0f);
  CHECK(low.y != 0.0f);
  CHECK(low.z != 0.0f);

  const glm::dvec3 t{300000.123, -200000.456, 100000.789};
  Object o;
  o.place(glm::translate(glm::dmat4{1.0}, t));
  CHECK(o.translation_low == low);
  for (int a = 0; a < 3; ++a) {
    CHECK(std::fabs(o.translation()[a] - t[a]) <= std::fabs(t[a]) * 0x1p-47);
    // Rounded to float alone it is off by 6e-5 to 3e-3.
    CHECK(std::fabs(double(o.matrix[3][a]) - t[a]) > 1e-5);
  }
}

TEST_CASE("validate_meshes and validate_objects find what validate_scene finds, range by range") {
  Scene scene;
  scene.meshes.push_back(tetrahedron());
  for (int i = 0; i < 6; ++i) {
    Object o;
    o.matrix = glm::translate(glm::mat4{1.0f}, glm::vec3{float(i), 0.0f, 0.0f});
    scene.objects.push_back(o);
  }
  std::vector<Aabb> bounds{scene.meshes[0].triangle_bounds()};
  CHECK(validate_scene(scene).empty());
  CHECK(validate_meshes(scene).empty());
  CHECK(validate_objects(scene, bounds, 0, 6).empty());

  // Object 2's box reaches past kMaxCoordinate (1e11): scaled by 6e10 and
  // moved by 6e10 on x, the mesh's x = 1 lands at 1.2e11. Object 4 names a
  // mesh that does not exist.
  scene.objects[2].matrix = glm::mat4{6e10f};
  scene.objects[2].matrix[3] = glm::vec4{6e10f, 0.0f, 0.0f, 1.0f};
  scene.objects[4].mesh = 3;
  const std::string first = validate_scene(scene);
  CHECK(first.find("object 2 ") == 0);
  CHECK(validate_objects(scene, bounds, 0, 6) == first);
  CHECK(validate_objects(scene, bounds, 0, 2).empty());
  CHECK(validate_objects(scene, bounds, 2, 3) == first);
  CHECK(validate_objects(scene, bounds, 3, 6).find("object 4 ") == 0);
  CHECK(validate_objects(scene, bounds, 3, 6).find("mesh 3 does not exist") != std::string::npos);
  CHECK(validate_objects(scene, bounds, 5, 6).empty());
  CHECK(validate_meshes(scene).empty());  // the meshes are sound

  // A triangle index out of range: the meshes' check reports it first.
  scene.meshes[0].triangles.push_back({0, 1, 9});
  CHECK(validate_meshes(scene).find("mesh 0: triangle 4 uses vertex 9 of 5") == 0);
  CHECK(validate_scene(scene) == validate_meshes(scene));
}
