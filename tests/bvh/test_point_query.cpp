// Picker::closest_point against brute force in double.
#include "test_util.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/closest_point.h"
#include "scene_gen.h"

#include <glm/geometric.hpp>
#include <glm/mat3x3.hpp>

#include <random>

namespace raypick {
namespace {

// Every object, every triangle (mesh mode) or the box's inside and its 12
// faces (obb mode), in double; ties to the lower object, then triangle.
PointHit brute(const Scene& scene, const glm::dvec3& p, PickMode mode, double max_distance) {
  PointHit best;
  double best_d2 = max_distance * max_distance;
  auto offer = [&](double d2, std::uint32_t object, std::uint32_t tri, const glm::dvec3& q) {
    if (d2 > best_d2) return;
    if (d2 == best_d2 && (object > best.object || (object == best.object && tri >= best.triangle))) {
      return;
    }
    best_d2 = d2;
    best.object = object;
    best.triangle = tri;
    best.point = q;
  };
  for (std::uint32_t id = 0; id < scene.objects.size(); ++id) {
    const Object& o = scene.objects[id];
    const Mesh& mesh = scene.meshes[o.mesh];
    const glm::dmat3 lin{glm::dvec3(o.matrix[0]), glm::dvec3(o.matrix[1]), glm::dvec3(o.matrix[2])};
    const glm::dvec3 t{o.matrix[3]};
    if (glm::determinant(lin) == 0.0 || mesh.triangles.empty()) continue;
    auto place = [&](const glm::vec3& v) { return lin * glm::dvec3(v) + t; };
    if (mode == PickMode::kMesh) {
      for (std::uint32_t k = 0; k < mesh.triangles.size(); ++k) {
        const glm::uvec3& tr = mesh.triangles[k];
        const TrianglePoint tp = closest_point_on_triangle(
            p, place(mesh.positions[tr.x]), place(mesh.positions[tr.y]), place(mesh.positions[tr.z]));
        offer(tp.distance2, id, k, tp.point);
      }
      continue;
    }
    const Aabb local = mesh.triangle_bounds();
    const glm::dvec3 x = glm::inverse(lin) * (p - t);
    bool in = true;
    for (int a = 0; a < 3; ++a) in = in && x[a] >= local.min[a] && x[a] <= local.max[a];
    if (in) {
      offer(0.0, id, kInvalidId, p);
      continue;
    }
    const Mesh box = box_mesh(local);
    for (const glm::uvec3& tr : box.triangles) {
      const TrianglePoint tp = closest_point_on_triangle(
          p, place(box.positions[tr.x]), place(box.positions[tr.y]), place(box.positions[tr.z]));
      offer(tp.distance2, id, kInvalidId, tp.point);
    }
  }
  if (best.hit()) best.distance = std::sqrt(best_d2);
  return best;
}

Scene mixed_scene(std::uint64_t seed, std::size_t n) {
  Scene scene = tools::make_boxes_scene(n, seed, tools::mixed_options());
  scene.meshes.push_back(tools::sphere_mesh(2));
  const auto sphere = static_cast<std::uint32_t>(scene.meshes.size() - 1);
  std::mt19937_64 rng(seed + 1);
  for (std::size_t i = 0; i < scene.objects.size(); i += 3) {
    scene.objects[i].mesh = sphere;
    // Mirrored, sheared, non-uniformly scaled.
    scene.objects[i].matrix = test::random_affine(rng, true);
  }
  return scene;
}

TEST_CASE("closest_point equals brute force in double, both modes, random scenes and points") {
  for (std::uint64_t seed : {1u, 2u}) {
    const Scene scene = mixed_scene(seed, 300);
    PickerConfig config;
    config.mesh_mode = true;
    const Picker picker(scene, config);
    const Aabb bounds = world_bounds(scene);
    std::mt19937_64 rng(seed + 10);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
      std::size_t inside = 0;
      for (int i = 0; i < 600; ++i) {
        glm::dvec3 p;
        for (int a = 0; a < 3; ++a) {
          const double lo = bounds.min[a], hi = bounds.max[a], pad = 0.2 * (hi - lo);
          p[a] = lo - pad + u(rng) * (hi - lo + 2 * pad);
        }
        if (i % 5 == 0) {
          // Exactly on a triangle's corner or edge midpoint of object k.
          const Object& o = scene.objects[i % scene.objects.size()];
          const Mesh& m = scene.meshes[o.mesh];
          const glm::uvec3 tr = m.triangles[i % m.triangles.size()];
          const glm::vec3 v = i % 2 ? m.positions[tr.x] : 0.5f * (m.positions[tr.x] + m.positions[tr.y]);
          p = glm::dvec3(glm::dmat4(o.matrix) * glm::dvec4(glm::dvec3(v), 1.0));
        }
        const double max_d = i % 7 == 0 ? 0.5 : std::numeric_limits<double>::infinity();
        const PointHit got = picker.closest_point(p, QueryOptions{mode}, max_d);
        const PointHit want = brute(scene, p, mode, max_d);
        CAPTURE(seed);
        CAPTURE(int(mode));
        CAPTURE(i);
        REQUIRE(got.hit() == want.hit());
        if (!want.hit()) continue;
        CHECK(got.object == want.object);
        CHECK(got.triangle == want.triangle);
        CHECK(got.distance == want.distance);
        CHECK(got.point == want.point);
        inside += want.distance == 0.0;
      }
      if (mode == PickMode::kObb) CHECK(inside > 20);  // points inside boxes were tested
    }
  }
}

TEST_CASE("closest_point: batch equals single; masks; a bad point or distance is a miss") {
  const Scene scene = mixed_scene(3, 200);
  const Picker picker(scene);
  std::mt19937_64 rng(4);
  std::normal_distribution<double> g(0.0, 20.0);
  std::vector<glm::dvec3> points;
  for (int i = 0; i < 2000; ++i) points.push_back({g(rng), g(rng), g(rng)});
  for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
    const std::vector<PointHit> batch = picker.closest_points(points, QueryOptions{mode}, 5.0);
    std::size_t hits = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const PointHit one = picker.closest_point(points[i], QueryOptions{mode}, 5.0);
      REQUIRE(batch[i].object == one.object);
      REQUIRE(batch[i].distance == one.distance);
      REQUIRE(batch[i].point == one.point);
      hits += one.hit();
    }
    CHECK(hits > 100);
    CHECK(hits < points.size());
  }
  QueryOptions none{PickMode::kObb, 0u};
  CHECK_FALSE(picker.closest_point({0, 0, 0}, none).hit());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(picker.closest_point({nan, 0, 0}).hit());
  CHECK_FALSE(picker.closest_point({0, 0, 0}, {}, -1.0).hit());
  CHECK_FALSE(picker.closest_point({0, 0, 0}, {}, nan).hit());
}

TEST_CASE("closest_point measures in world space under non-uniform scale and far from the origin") {
  // A unit cube scaled 10x along x, at x = 1e6: the point 7 units above its
  // top face's middle is 7 away, though the cube's own frame says 7/1.
  Scene scene;
  scene.meshes.push_back(box_mesh(Aabb{glm::vec3{-0.5f}, glm::vec3{0.5f}}));
  Object o;
  o.matrix = glm::translate(glm::mat4{1.0f}, glm::vec3{1e6f, 0.0f, 0.0f}) *
             glm::scale(glm::mat4{1.0f}, glm::vec3{10.0f, 1.0f, 1.0f});
  scene.objects = {o};
  PickerConfig config;
  config.mesh_mode = true;
  const Picker picker(scene, config);
  for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
    const PointHit h = picker.closest_point({1e6 + 3.0, 7.5, 0.25}, QueryOptions{mode});
    REQUIRE(h.hit());
    CHECK(h.distance == 7.0);
    CHECK(h.point == glm::dvec3{1e6 + 3.0, 0.5, 0.25});
    CHECK((mode == PickMode::kMesh) == (h.triangle != kInvalidId));
  }
  // Inside the box: distance 0 in obb mode, the nearest face in mesh mode.
  CHECK(picker.closest_point({1e6 + 4.0, 0.0, 0.0}, QueryOptions{PickMode::kObb}).distance == 0.0);
  CHECK(picker.closest_point({1e6 + 4.0, 0.0, 0.0}, QueryOptions{PickMode::kMesh}).distance == 0.5);
}

}  // namespace
}  // namespace raypick
