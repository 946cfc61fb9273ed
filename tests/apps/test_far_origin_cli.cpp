// Far from the origin in the tools (issue 14): validate's tolerances follow
// sizes and distances, not coordinates; validate --offset, bench --offset;
// decimal rays keep their origin in double until each object's subtraction.
#include "test_util.h"
#include "apps/cli_runner.h"

#include "embree_scene.h"
#include "scene_gen.h"
#include "validate.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace raypick;
namespace fs = std::filesystem;
using test::run_raypick;

namespace {

const glm::dvec3 kOffset{1e5, -2e5, 3e5};

tools::ValidateReport run(const Scene& scene, const Picker& picker, PickMode mode,
                          std::size_t rays, std::uint64_t seed) {
  const tools::EmbreeScene embree(scene, mode);
  const auto r = tools::make_validation_rays(scene, picker, rays, seed, mode);
  return tools::validate(scene, picker, embree, mode, r);
}

}  // namespace

TEST_CASE("validate finds no real mismatch on generated scenes far from the origin in both modes") {
  for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
    Scene scene = mode == PickMode::kObb
                      ? tools::make_boxes_scene(800, 3, tools::mixed_options())
                      : tools::make_mesh_scene(800, 3, tools::mixed_options());
    tools::shift_scene(scene, kOffset);
    const Picker picker(scene);
    const tools::ValidateReport rep = run(scene, picker, mode, 4000, 5);
    for (const auto& d : rep.disagreements) {
      if (d.verdict == tools::Verdict::kMismatch) MESSAGE(d.detail);
    }
    CHECK(rep.mismatches() == 0);
    // Aimed and random rays hit, and almost all agree with Embree.
    CHECK(rep.raypick_hits > 1000);
  }
}

TEST_CASE("validate far from the origin catches an object moved by a twentieth of a unit") {
  // Tolerances relative to the world coordinates (1e-4 of 3e5 = 30 units)
  // would excuse this; relative to sizes and distances they do not.
  Scene truth = tools::make_boxes_scene(200, 4);
  tools::shift_scene(truth, kOffset);
  Scene broken = truth;
  broken.objects[7].matrix[3] += glm::vec4(0.0625f, 0, 0, 0);
  const Picker picker(broken);
  const tools::EmbreeScene embree(truth, PickMode::kObb);
  // Rays along +y through object 7's centre, at z offsets across it.
  const glm::vec3 c{truth.objects[7].matrix[3]};
  std::vector<Ray> rays;
  for (int i = 0; i < 40; ++i) {
    rays.push_back(Ray{c + glm::vec3{0.0625f * float(i % 3) - 0.0625f, -30, 0.01f * i},
                       {1e-3f, 1, 0}});
  }
  const tools::ValidateReport rep = tools::validate(truth, picker, embree, PickMode::kObb, rays);
  CHECK(rep.mismatches() > 0);
}

TEST_CASE("validate --offset and bench --offset move the generated scene and report 0 real mismatches") {
  test::check_out_has(run_raypick("validate --boxes 300 --rays 2000 --offset 1e5,-2e5,3e5"), 0,
                      {"shifted by (100000, -200000, 300000)", "real mismatches: 0\n"});
  test::check_out_has(
      run_raypick("validate --boxes 300 --rays 2000 --mode mesh --offset -1e6,1e6,-1e6"), 0,
      {"real mismatches: 0\n"});
  test::Run r = run_raypick("validate --boxes 10 --offset 1,2");
  CHECK(r.status == 2);
  CHECK(r.err.find("--offset") != std::string::npos);
  r = run_raypick("bench --quick --scene boxes --ray-kind incoherent --offset 1e5,-2e5,3e5");
  test::check_out_has(r, 0, {"offset: every object moved by (100000, -200000, 300000)"});
  CHECK(r.out.find("VOID") == std::string::npos);
}

TEST_CASE("pick keeps a decimal ray origin in double: a box 0.04 wide at x = 600000 is hit or missed as the decimals say") {
  // Float spacing at 6e5 is 0.0625: both origins below round to 600000,
  // which is inside the box; only the double origin tells them apart.
  const fs::path scene = test::temp_dir() / "gis.json";
  std::ofstream(scene) << R"({"raypick_scene": 1,
    "meshes": [{"name": "post", "box": {"min": [-0.02, -0.02, -0.02], "max": [0.02, 0.02, 0.02]}}],
    "objects": [{"name": "post", "mesh": "post", "translate": [600000, 0, 0]}]})";
  test::Run r = run_raypick("pick '" + scene.string() +
                            "' --ray 600000.01,0,-10,0,0,1 --format json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["hit"] == true);
  CHECK(std::abs(j["t"].get<double>() - 9.98) < 1e-5);
  r = run_raypick("pick '" + scene.string() + "' --ray 600000.03,0,-10,0,0,1 --format json");
  REQUIRE(r.status == 0);
  CHECK(nlohmann::json::parse(r.out)["hit"] == false);
  // The same from a rays file, in mesh mode.
  r = run_raypick("pick '" + scene.string() + "' --rays - --mode mesh",
                  "600000.01 0 -10 0 0 1\n600000.03 0 -10 0 0 1\n-600000.01 0 -10 0 0 1\n");
  REQUIRE(r.status == 0);
  std::istringstream lines(r.out);
  std::string line;
  std::vector<bool> hits;
  while (std::getline(lines, line)) hits.push_back(nlohmann::json::parse(line)["hit"]);
  CHECK(hits == std::vector<bool>{true, false, false});
}

TEST_CASE("a Picker query with a RayD origin off the float grid sees the exact origin") {
  // The embedding API's counterpart of the test above.
  const Scene scene = [] {
    Scene s;
    s.meshes.push_back(tools::unit_cube_mesh());
    Object o;
    o.matrix = glm::translate(glm::mat4{1.0f}, glm::vec3{600000, 0, 0}) *
               glm::scale(glm::mat4{1.0f}, glm::vec3{0.04f});
    s.objects.push_back(o);
    return s;
  }();
  const Picker picker(scene);
  for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
    const RayD in{{600000.01, 0.0, -10.0}, {0, 0, 1}};
    const RayD out{{600000.03, 0.0, -10.0}, {0, 0, 1}};
    CHECK(picker.intersect(in, mode).hit());
    CHECK_FALSE(picker.intersect(out, mode).hit());
    CHECK(picker.occluded(in, mode));
    CHECK_FALSE(picker.occluded(out, mode));
    CHECK(picker.intersect_all(in, mode).size() == 1);
    CHECK(picker.intersect_all(out, mode).empty());
    const std::vector<RayD> both{in, out};
    const std::vector<Hit> batch = picker.intersect_batch(std::span<const RayD>(both), QueryOptions{mode});
    CHECK(batch[0].hit());
    CHECK_FALSE(batch[1].hit());
    // Rounded to float, both origins are 600000, inside the box's x range.
    CHECK(picker.intersect(to_float(out), mode).hit());
  }
}
