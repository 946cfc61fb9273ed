// glTF cameras (issue 12): the loader reads camera nodes, placed by their
// world matrices, in traversal order; --camera picks one by index or name.
#include "gltf_builder.h"
#include "loader_test_util.h"
#include "test_util.h"
#include "apps/cli_runner.h"

#include "raypick/core/camera.h"
#include "raypick/loaders/load.h"

#include <doctest/doctest.h>
#include <glm/geometric.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

using namespace raypick;
using namespace raypick::test;

namespace {

const std::string kCamerasModel = "/usr/share/assimp/models/glTF2/cameras/Cameras.gltf";

void require_model() { assimp_model("glTF2/cameras/Cameras.gltf"); }

}  // namespace

TEST_CASE("the cameras of the glTF sample model Cameras are read with their nodes' placement") {
  require_model();
  const Scene scene = require_load(kCamerasModel);
  REQUIRE(scene.cameras.size() == 2);
  const SceneCamera& p = scene.cameras[0];
  CHECK(p.projection == Projection::kPerspective);
  CHECK(p.fov_deg == doctest::Approx(0.7 * 180.0 / M_PI));
  CHECK(p.aspect == 1.0);
  CHECK(p.matrix[3] == glm::dvec4(0.5, 0.5, 3.0, 1.0));
  const SceneCamera& o = scene.cameras[1];
  CHECK(o.projection == Projection::kOrthographic);
  CHECK(o.ortho_height == 2.0);  // ymag 1 is half the height
  CHECK(o.matrix[3] == glm::dvec4(0.5, 0.5, 3.0, 1.0));
}

TEST_CASE("pick --camera on the Cameras model looks down the camera node's -Z") {
  require_model();
  // The square, turned -45 degrees about x, lies in the plane z = -y (about);
  // both cameras sit at (0.5, 0.5, 3): the centre ray meets it near z = -0.5.
  for (const char* cam : {"0", "1"}) {
    const Run r = run_raypick("pick '" + kCamerasModel + "' --camera " + cam +
                              " --size 100x100 --pixel 50,50 --format json");
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["object"] == 0);
    CHECK(j["t"].get<double>() == doctest::Approx(3.5).epsilon(1e-3));
    CHECK(j["point"][0].get<double>() == doctest::Approx(0.5));
  }
  // Orthographic, ymag 1: the view is 2 units high, so the top-left pixel's
  // ray starts 1 unit left of and above the camera, and misses the square.
  const Run r = run_raypick("pick '" + kCamerasModel +
                            "' --camera 1 --size 100x100 --pixel 0,0 --format json");
  CHECK(nlohmann::json::parse(r.out)["hit"] == false);
  const Run bad = run_raypick("pick '" + kCamerasModel + "' --camera 2 --size 10x10 --pixel 1,1");
  CHECK(bad.status == 1);
  CHECK(bad.err ==
        "raypick: pick: --camera '2': the scene has 2 camera(s) (0 unnamed, 1 unnamed) and "
        "none of that name or index\n");
}

TEST_CASE("glTF camera nodes get their world matrix and names, unusable cameras are left out") {
  TempDir dir;
  GltfBuilder b = triangle_builder();
  b.doc["cameras"] = Json::array(
      {Json{{"type", "perspective"}, {"name", "lens"}, {"perspective", {{"yfov", 0.5}, {"znear", 0.1}}}},
       Json{{"type", "perspective"}, {"perspective", {{"yfov", 0.0}, {"znear", 0.1}}}},  // unusable
       Json{{"type", "orthographic"}, {"orthographic", {{"xmag", 3}, {"ymag", 1.5}, {"znear", 0}, {"zfar", 9}}}}});
  b.add_node({{"name", "rig"}, {"translation", {0, 0, 10}}, {"children", {1, 2, 3}}});  // 0
  b.add_node({{"name", "main"}, {"camera", 0}, {"translation", {0.25, 0.25, 0}}});     // 1
  b.add_node({{"name", "broken"}, {"camera", 1}});                                       // 2
  b.add_node({{"name", "top"}, {"camera", 2}, {"rotation", {-std::sqrt(0.5), 0, 0, std::sqrt(0.5)}}});
  b.add_node({{"name", "tri"}, {"mesh", 0}, {"camera", 7}});  // a bad index: ignored
  b.doc["scenes"] = Json::array({Json{{"nodes", {0, 4}}}});
  const Scene scene = require_load(dir.write("cams.gltf", b.gltf_embedded()));
  REQUIRE(scene.objects.size() == 1);
  REQUIRE(scene.cameras.size() == 2);
  CHECK(scene.cameras[0].name == "main");
  CHECK(scene.cameras[0].camera_name == "lens");
  CHECK(scene.cameras[0].matrix[3] == glm::dvec4(0.25, 0.25, 10, 1));
  CHECK(scene.cameras[1].name == "top");
  CHECK(scene.cameras[1].ortho_height == 3.0);
  CHECK(scene.cameras[1].aspect == 2.0);
  // -90 degrees about x: the node's -Z is the world's -Y (looking down).
  const glm::dvec3 minus_z = -glm::dvec3(scene.cameras[1].matrix[2]);
  CHECK(minus_z.y == doctest::Approx(-1.0));
  // By node name, by camera name, by index: the camera at (0.25, 0.25, 10)
  // sees the triangle (z = 0) through its centre pixel, at t = 10.
  const std::string file = dir.path_of("cams.gltf");
  for (const char* name : {"main", "lens", "0"}) {
    const Run r = run_raypick("pick '" + file + "' --camera " + name +
                              " --size 64x64 --pixel 32,32 --mode mesh --format json");
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["hit"] == true);
    CHECK(j["t"] == 10.0);
    CHECK(j["point"] == nlohmann::json::array({0.25, 0.25, 0}));
  }
  // The top-left corner looks tan(0.25) * 10, about 2.6 units, off: a miss.
  const Run r = run_raypick("pick '" + file + "' --camera main --size 64x64 --pixel 0,0 --mode mesh --format json");
  CHECK(nlohmann::json::parse(r.out)["hit"] == false);
  CHECK(run_raypick("pick '" + file + "' --camera broken --size 8x8 --pixel 1,1").status == 1);
}
