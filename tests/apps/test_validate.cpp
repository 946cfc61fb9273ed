// raypick validate's logic: 0 real mismatches against Embree on generated
// scenes and on real OBJ models, and a broken picker is caught.
#include "test_util.h"

#include "bench_scenes.h"
#include "embree_bench.h"
#include "embree_points.h"
#include "embree_scene.h"
#include "scene_gen.h"
#include "validate.h"

#include "raypick/loaders/load.h"

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <tuple>

using namespace raypick;
using tools::Verdict;

namespace {

tools::ValidateReport run(const Scene& scene, std::size_t rays,
                          std::uint64_t seed, PickMode mode = PickMode::kObb) {
  const Picker picker(scene);
  const tools::EmbreeScene embree(scene, mode);
  const auto r = tools::make_validation_rays(scene, picker, rays, seed, mode);
  return tools::validate(scene, picker, embree, mode, r);
}

void report_mismatches(const tools::ValidateReport& rep) {
  for (const auto& d : rep.disagreements) {
    if (d.verdict == Verdict::kMismatch) MESSAGE(d.detail);
  }
}

}  // namespace

TEST_CASE("validate finds 0 mismatches on random scenes of thousands of objects") {
  const tools::BoxesOptions opt = tools::mixed_options();
  for (std::size_t n : {1, 2, 100, 3000}) {
    CAPTURE(n);
    const Scene scene = tools::make_boxes_scene(n, 500 + n, opt);
    const auto rep = run(scene, 20000, n);
    report_mismatches(rep);
    CHECK(rep.mismatches() == 0);
    CHECK(rep.rays == 20000);
    // The sample must be meaningful: many hits, and nearly all agree
    // outright with Embree.
    CHECK(rep.raypick_hits > rep.rays / 4);
    CHECK(rep.count(Verdict::kAgree) > rep.rays * 9 / 10);
  }
}

TEST_CASE("validate --mode mesh finds 0 mismatches on random instanced scenes") {
  const tools::BoxesOptions opt = tools::mixed_options(2.0);
  for (std::size_t n : {1, 50, 2000}) {
    CAPTURE(n);
    const Scene scene = tools::make_mesh_scene(n, 900 + n, opt);
    const auto rep = run(scene, 20000, n, PickMode::kMesh);
    report_mismatches(rep);
    CHECK(rep.mismatches() == 0);
    CHECK(rep.raypick_hits > rep.rays / 5);
    CHECK(rep.count(Verdict::kAgree) > rep.rays * 9 / 10);
    if (n > 1) CHECK(rep.obb_mesh_differ > 0);
  }
}

TEST_CASE("validate finds 0 mismatches on the OBJ models of assimp-testmodels") {
  const std::filesystem::path dir = "/usr/share/assimp/models/OBJ";
  REQUIRE_MESSAGE(std::filesystem::exists(dir),
                  "assimp-testmodels is not installed (run ./setup.sh)");
  int validated = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".obj") continue;
    const LoadResult loaded = load_scene(entry.path().string());
    if (!loaded.ok()) continue;  // the loader tests judge the refusals
    CAPTURE(entry.path().string());
    for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
      const auto rep = run(loaded.scene(), 4000, 3, mode);
      report_mismatches(rep);
      CHECK(rep.mismatches() == 0);
    }
    ++validated;
  }
  CHECK(validated >= 10);
}

TEST_CASE("validate --mode mesh reports a real mismatch when a triangle is wrong") {
  const Scene truth = tools::make_mesh_scene(30, 6);
  Scene broken = truth;
  broken.meshes[2].positions[0] *= 0.5f;  // dent the sphere
  const Picker picker(broken);
  const tools::EmbreeScene embree(truth, PickMode::kMesh);
  const auto rays = tools::make_validation_rays(truth, picker, 20000, 7, PickMode::kMesh);
  const auto rep = tools::validate(truth, picker, embree, PickMode::kMesh, rays);
  CHECK(rep.mismatches() > 0);
}

TEST_CASE("validate reports a real mismatch when the picker's scene is wrong") {
  // The picker sees object 7 moved; Embree and the reference do not.
  const Scene truth = tools::make_boxes_scene(200, 4);
  Scene broken = truth;
  broken.objects[7].matrix[3] += glm::vec4(0.5f, 0, 0, 0);
  const Picker picker(broken);
  const tools::EmbreeScene embree(truth, PickMode::kObb);
  std::vector<Ray> rays;
  const glm::vec3 c{truth.objects[7].matrix[3]};
  for (int i = 0; i < 50; ++i) {
    rays.push_back(Ray{c + glm::vec3{0, -30, 0.01f * i}, {0, 1, 0}});
  }
  const auto rep = tools::validate(truth, picker, embree, PickMode::kObb, rays);
  CHECK(rep.mismatches() > 0);
  std::ostringstream dump;
  tools::write_dump(dump, rep);
  CHECK(dump.str().find("MISMATCH") != std::string::npos);
}

TEST_CASE("a ray starting inside a box is classified, not counted as a mismatch") {
  const Scene scene = tools::make_boxes_scene(1, 1);
  const Picker picker(scene);
  const tools::EmbreeScene embree(scene, PickMode::kObb);
  const glm::vec3 c{scene.objects[0].matrix[3]};
  const std::vector<Ray> rays{Ray{c, {1, 0.3f, 0.2f}}};
  const auto rep = tools::validate(scene, picker, embree, PickMode::kObb, rays);
  CHECK(rep.count(Verdict::kOriginInside) == 1);
  CHECK(rep.mismatches() == 0);
  CHECK(picker.intersect(rays[0]).t == 0.0f);
  CHECK(embree.intersect(rays[0]).t > 0.0f);  // Embree reports the exit face
}

TEST_CASE("the agreement rule of validate and bench: t within 1e-4 * scale from the box's centre") {
  auto hit_at = [](float t) {
    const Hit h{0, t};
    return h;
  };
  // Box [0, 10]^3: centre 5, half-size 5. The origin is 20 from the centre
  // along z, |d| = 2: scale = 2 * max(5, 20) / 2 = 20, tolerance 2e-3.
  const tools::Agreement rule(Aabb{glm::vec3{0.0f}, glm::vec3{10.0f}});
  Ray ray;
  ray.org = {5.0f, 5.0f, 25.0f};
  ray.dir = {0.0f, 0.0f, -2.0f};
  CHECK(rule.scale(ray) == doctest::Approx(20.0));
  CHECK(rule.tolerance(ray) == doctest::Approx(2e-3));
  CHECK(rule.same_t(hit_at(7.0f), hit_at(7.0019f), ray));
  CHECK(!rule.same_t(hit_at(7.0f), hit_at(7.0021f), ray));
  Hit other = hit_at(7.001f);
  other.object = 3;  // a tie: another object at the same t
  CHECK(rule.same_t(hit_at(7.0f), other, ray));
  CHECK(!rule.same_t(hit_at(7.0f), Hit{}, ray));
  CHECK(rule.same_t(Hit{}, Hit{}, ray));
  // An origin inside the box: the box's size decides (2 * 5 / 2 = 5).
  ray.org = {6.0f, 5.0f, 5.0f};
  CHECK(rule.scale(ray) == doctest::Approx(5.0));
  // Far from the world origin, the same sizes give the same scale.
  const tools::Agreement far(Aabb{glm::vec3{1e5f}, glm::vec3{1e5f + 10.0f}});
  ray.org = {1e5f + 5.0f, 1e5f + 5.0f, 1e5f + 25.0f};
  CHECK(far.scale(ray) == doctest::Approx(20.0));
  // No box: a unit box at the origin.
  const tools::Agreement none{Aabb{}};
  ray.org = {0.0f, 0.0f, 0.0f};
  ray.dir = {1.0f, 0.0f, 0.0f};
  CHECK(none.scale(ray) == doctest::Approx(1.0));
}

TEST_CASE("Embree's rtcPointQuery reference and brute force give raypick's closest points bit for bit") {
  const Scene scene = tools::make_mesh_scene(400, 77, tools::mixed_options(2.0));
  const tools::EmbreeDevice device(1);
  const Aabb bounds = world_bounds(scene);
  std::mt19937_64 rng(78);
  std::uniform_real_distribution<double> u(-0.1, 1.1);
  std::vector<glm::dvec3> points;
  for (int i = 0; i < 400; ++i) {
    glm::dvec3 p;
    for (int a = 0; a < 3; ++a) p[a] = bounds.min[a] + u(rng) * (bounds.max[a] - bounds.min[a]);
    points.push_back(p);
  }
  PickerConfig config;
  config.mesh_mode = true;
  const Picker picker(scene, config);
  for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
    CAPTURE(int(mode));
    const tools::EmbreePointScene embree(device.get(), scene, mode);
    const double reach = mode == PickMode::kObb ? INFINITY : 2.0;
    std::size_t hits = 0;
    for (const glm::dvec3& p : points) {
      const PointHit want = tools::brute_closest_point(scene, p, mode, reach);
      const PointHit em = embree.closest_point(p, reach);
      const PointHit rp = picker.closest_point(p, QueryOptions{mode}, reach);
      REQUIRE(em.object == want.object);
      REQUIRE(rp.object == want.object);
      CHECK(em.triangle == want.triangle);
      CHECK(rp.triangle == want.triangle);
      CHECK(em.distance == want.distance);
      CHECK(rp.distance == want.distance);
      CHECK(rp.point == want.point);
      hits += want.hit();
    }
    CHECK(hits > 100);
  }
}

TEST_CASE("Embree's instanced mesh point scene answers exactly as Picker::closest_point on a crowd") {
  // A crowd: one sphere model under T.R.S with a uniform scale, plus the
  // validation points (on corners and edges: ties between triangles and
  // objects) and points in the scene's box.
  const Scene scene = tools::make_crowd_scene(tools::sphere_mesh(2), 150, 91);
  REQUIRE(tools::instanced_points_refusal(scene).empty());
  const tools::EmbreeDevice device(1);
  const tools::EmbreePointScene embree(device.get(), scene, PickMode::kMesh,
                                       tools::PointLayout::kInstanced);
  PickerConfig config;
  config.mesh_mode = true;
  const Picker picker(scene, config);
  const QueryOptions mesh{PickMode::kMesh};
  const std::vector<glm::dvec3> points = tools::make_validation_points(scene, 3000, 92, PickMode::kMesh);
  std::size_t hits = 0, on_surface = 0;
  for (double reach : {double(INFINITY), 0.5}) {
    CAPTURE(reach);
    for (std::size_t i = 0; i < points.size(); ++i) {
      CAPTURE(i);
      const glm::dvec3& p = points[i];
      const PointHit rp = picker.closest_point(p, mesh, reach);
      const PointHit em = embree.closest_point(p, reach);
      INFO("raypick: object ", rp.object, " triangle ", rp.triangle, " at ", rp.distance);
      INFO("embree: object ", em.object, " triangle ", em.triangle, " at ", em.distance);
      CHECK(std::tie(em.object, em.triangle, em.distance, em.u, em.v) ==
            std::tie(rp.object, rp.triangle, rp.distance, rp.u, rp.v));
      CHECK(em.point == rp.point);
      hits += rp.hit();
      on_surface += rp.hit() && rp.distance == 0.0;
    }
  }
  CHECK(hits > 4000);
  CHECK(on_surface > 100);
  // Brute force agrees on a sample.
  for (std::size_t i = 0; i < points.size(); i += 50) {
    const PointHit want = tools::brute_closest_point(scene, points[i], PickMode::kMesh, INFINITY);
    const PointHit em = embree.closest_point(points[i], INFINITY);
    CHECK((em.object == want.object && em.triangle == want.triangle && em.distance == want.distance));
  }
}

TEST_CASE("Embree's instanced mesh point scene refuses a matrix that is not a similarity") {
  Scene scene = tools::make_crowd_scene(tools::sphere_mesh(1), 20, 5);
  REQUIRE(tools::instanced_points_refusal(scene).empty());
  const tools::EmbreeDevice device(1);
  SUBCASE("a non-uniform scale") {
    scene.objects[7].matrix = scene.objects[7].matrix * glm::mat4(glm::vec4(1.0f, 0, 0, 0),
                                                                  glm::vec4(0, 1.001f, 0, 0),
                                                                  glm::vec4(0, 0, 1.0f, 0),
                                                                  glm::vec4(0, 0, 0, 1.0f));
  }
  SUBCASE("a shear") {
    scene.objects[7].matrix[1][0] += 0.01f * glm::length(glm::vec3(scene.objects[7].matrix[0]));
  }
  const std::string why = tools::instanced_points_refusal(scene);
  CHECK(why.rfind("object 7's matrix is not a similarity", 0) == 0);
  CHECK_THROWS_WITH_AS(tools::EmbreePointScene(device.get(), scene, PickMode::kMesh,
                                                tools::PointLayout::kInstanced),
                       why.c_str(), std::invalid_argument);
  // The generated validation scenes (sheared, mirrored, non-uniform) too.
  CHECK(!tools::instanced_points_refusal(tools::make_mesh_scene(50, 3, tools::mixed_options())).empty());
}
