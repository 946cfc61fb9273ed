// raypick bench: the command runs on tiny sizes with matching answers, its
// JSON rows carry the documented keys, the camera rays look into the scene,
// and Embree's user geometry (raypick's leaf test in the callback) picks
// exactly what raypick's Picker picks. No timings are checked.
#include "test_util.h"
#include "apps/cli_runner.h"

#include "bench_scenes.h"
#include "embree_bench.h"
#include "scene_gen.h"

#include "compiler.h"
#include "raypick/bvh/picker.h"

#include <glm/ext/matrix_transform.hpp>
#include <glm/geometric.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <sys/wait.h>
#include <unistd.h>

using namespace raypick;
namespace fs = std::filesystem;

namespace {

// Run, run_raypick, check_refused, slurp, temp_dir, write (apps/cli_runner.h).
using namespace raypick::test;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("raypick bench --quick exits 0 with both systems and matching answers") {
  const fs::path json = temp_dir() / "quick.json";
  const Run r = run_raypick("bench --quick --json '" + json.string() + "'");
  CHECK(r.status == 0);
  INFO(r.out);
  INFO(r.err);
  CHECK(contains(r.out, "Embree 3."));
  CHECK(!contains(r.out, "VOID"));
  // The rows, from --json rather than the table's columns: boxes-1000 in
  // obb mode and crowd-10 in mesh mode, incoherent and camera rays, each a
  // raypick row followed by its embree row with the same answers.
  const nlohmann::json all = nlohmann::json::parse(slurp(json));
  REQUIRE(all.is_array());
  // The dynamic frame rows ("row": "frame") follow the ray rows.
  // The closest-point rows ("row": "points") too: boxes-1000 in obb mode,
  // then crowd-10 in mesh mode (against Embree's instanced triangles).
  nlohmann::json rows = nlohmann::json::array(), frames = nlohmann::json::array(),
                 points = nlohmann::json::array();
  for (const auto& row : all) {
    const std::string kind = row.value("row", "rays");
    (kind == "rays" ? rows : kind == "frame" ? frames : points).push_back(row);
  }
  REQUIRE(rows.size() == 8);
  REQUIRE(frames.size() == 4);  // {boxes obb, crowd mesh} x {raypick, embree}
  REQUIRE(points.size() == 4);  // {boxes obb, crowd mesh} x {raypick, embree}
  for (std::size_t k = 0; k < 4; ++k) {
    CAPTURE(k);
    CHECK(points[k]["row"] == "points");
    CHECK(points[k]["scene"] == (k < 2 ? "boxes-1000" : "crowd-10"));
    CHECK(points[k]["mode"] == (k < 2 ? "obb" : "mesh"));
    CHECK(points[k]["system"] == (k % 2 == 0 ? "raypick" : "embree"));
    CHECK(points[k]["points"] == 2000);
    CHECK(points[k]["valid"] == true);
    CHECK(points[k]["mqps_single"].get<double>() > 0.0);
    CHECK(points[k]["mqps_batch"].get<double>() > 0.0);
  }
  for (std::size_t k = 0; k < frames.size(); ++k) {
    CAPTURE(k);
    const nlohmann::json& f = frames[k];
    CHECK(f["row"] == "frame");
    CHECK(f["scene"] == (k < 2 ? "boxes-1000" : "crowd-10"));
    CHECK(f["mode"] == (k < 2 ? "obb" : "mesh"));
    CHECK(f["system"] == (k % 2 == 0 ? "raypick" : "embree"));
    CHECK(f["valid"] == true);
    CHECK(f["moved_per_frame"] == (k < 2 ? 10 : 1));  // 1%, at least one
    CHECK(f["frame_ms"].get<double>() > 0.0);
    CHECK(f["frame_ms"].get<double>() >= f["frame_commit_ms"].get<double>());
  }
  const char* want[4][3] = {{"boxes", "obb", "incoherent"},
                            {"boxes", "obb", "camera"},
                            {"crowd", "mesh", "incoherent"},
                            {"crowd", "mesh", "camera"}};
  for (std::size_t k = 0; k < 4; ++k) {
    CAPTURE(k);
    const nlohmann::json& raypick_row = rows[2 * k];
    const nlohmann::json& embree_row = rows[2 * k + 1];
    for (const nlohmann::json* row : {&raypick_row, &embree_row}) {
      CHECK((*row)["scene"] == want[k][0]);
      CHECK((*row)["n"] == (k < 2 ? 1000 : 10));
      CHECK((*row)["mode"] == want[k][1]);
      CHECK((*row)["rays"] == want[k][2]);
      CHECK((*row)["valid"] == true);
      CHECK(!row->contains("void_reason"));
    }
    CHECK(raypick_row["system"] == "raypick");
    CHECK(embree_row["system"] == "embree");
    CHECK(raypick_row["hits"] == embree_row["hits"]);
    CHECK(raypick_row["mrays_packet"].get<double>() == 0.0);  // no packets
    CHECK(embree_row["mrays_packet"].get<double>() > 0.0);    // rtcIntersect16
  }
  // After the table, each checked ("; ok"): one select line (boxes-1000,
  // obb, with camera rays), one frame line and one points line per scene
  // and mode.
  const std::pair<const char*, std::size_t> kinds[] = {{"select ", 1}, {"frame ", 2}, {"points ", 2}};
  for (const auto& [prefix, count] : kinds) {
    CAPTURE(prefix);
    std::size_t lines = 0;
    for (const std::string& line : lines_of(r.out)) {
      if (line.rfind(prefix, 0) != 0) continue;
      ++lines;
      REQUIRE(line.size() >= 4);
      CHECK(line.substr(line.size() - 4) == "; ok");
    }
    CHECK(lines == count);
  }
}

TEST_CASE("raypick bench --offset says up front how mesh rows are judged and exits 0") {
  // Far out Embree's float instancing strays beyond the check's tolerance
  // (and the boundary limit): the reference judges those rays instead of
  // voiding the rows, and obb rows still agree bit for bit.
  const fs::path json = temp_dir() / "offset.json";
  const Run r =
      run_raypick("bench --quick --offset 1e5,-2e5,3e5 --json '" + json.string() + "'");
  INFO(r.out);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(contains(r.out, "offset, mesh rows: Embree carries rays into its instances in float"));
  CHECK(!contains(r.out, "VOID"));
  const nlohmann::json all = nlohmann::json::parse(slurp(json));
  std::size_t mesh_rows = 0, judged = 0;
  for (const auto& row : all) {
    if (row.value("row", "rays") != "rays") continue;
    CHECK(row["valid"] == true);
    if (row["mode"] == "obb") CHECK(row["judged_rays"] == 0);
    if (row["mode"] == "mesh") {
      ++mesh_rows;
      judged += row["judged_rays"].get<std::size_t>();
    }
  }
  CHECK(mesh_rows == 4);
  // Without the reference's judgement these rays would void the rows.
  CHECK(judged > 0);
}

TEST_CASE("raypick bench --json writes rows with the documented keys") {
  const fs::path json = temp_dir() / "bench.json";
  const Run r = run_raypick("bench --quick --scene boxes --n 500 --mode both --no-frames --no-points "
                            "--ray-kind incoherent --rays 3000 --json '" +
                            json.string() + "'");
  REQUIRE(r.status == 0);
  const nlohmann::json rows = nlohmann::json::parse(slurp(json));
  REQUIRE(rows.is_array());
  REQUIRE(rows.size() == 4);  // {obb, mesh} x {raypick, embree}
  for (const auto& row : rows) {
    for (const char* key : {"scene", "n", "mode", "rays", "system", "build_ms",
                            "update_ms", "mrays", "threads", "bytes"}) {
      CHECK_MESSAGE(row.contains(key), key);
    }
    CHECK(row["scene"] == "boxes");
    CHECK(row["n"] == 500);
    CHECK(row["rays"] == "incoherent");
    CHECK(row["threads"] == 1);
    CHECK(row["mrays"].get<double>() > 0.0);
    CHECK(row["build_ms"].get<double>() >= 0.0);
    CHECK(row["bytes"].is_number_unsigned());
    CHECK(row["valid"] == true);
    CHECK(row["ray_count"] == 3000);
  }
  CHECK(rows[0]["system"] == "raypick");
  CHECK(rows[1]["system"] == "embree");
  CHECK(rows[0]["mode"] == "obb");
  CHECK(rows[2]["mode"] == "mesh");
  CHECK(rows[0]["hits"] == rows[1]["hits"]);
  CHECK(rows[0]["sum_t"] == rows[1]["sum_t"]);  // obb mode: identical answers
  CHECK(rows[0]["array_bytes"].get<std::size_t>() > 0);
  // Embree's arrays outside Embree: per object the obb callbacks' 64-byte
  // record and padded world box, plus a local box per mesh (a handful).
  const auto embree_bytes = rows[1]["array_bytes"].get<std::size_t>();
  CHECK(embree_bytes >= 500 * (64 + sizeof(Aabb)));
  CHECK(embree_bytes <= 500 * (64 + sizeof(Aabb)) + 4 * sizeof(Aabb));
  CHECK(rows[3]["array_bytes"] == 0);
  // The tree's quality beside its build time: raypick's rows only.
  CHECK(rows[0]["sah_cost"].get<double>() > 1.0);
  CHECK_FALSE(rows[1].contains("sah_cost"));
  // The top level's width each picker ran (--isa auto: 16 wide where the
  // CPU has AVX-512, else 8).
  const int width = compiler::cpu_has_avx2() && compiler::cpu_has_avx512() ? 16 : 8;
  CHECK(rows[0]["top_width"] == width);
  CHECK(rows[2]["top_width"] == width);
  CHECK_FALSE(rows[1].contains("top_width"));
}

TEST_CASE("raypick bench --top-width 16 builds 16-wide top levels on any CPU") {
  const fs::path json = temp_dir() / "bench16.json";
  const Run r = run_raypick("bench --quick --scene boxes --n 500 --no-frames --no-points "
                            "--ray-kind incoherent --rays 2000 --top-width 16 --json '" +
                            json.string() + "'");
  REQUIRE(r.status == 0);
  const nlohmann::json rows = nlohmann::json::parse(slurp(json));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["system"] == "raypick");
  CHECK(rows[0]["top_width"] == 16);
  CHECK(rows[0]["valid"] == true);  // the same answers as Embree's
  CHECK(rows[0]["sum_t"] == rows[1]["sum_t"]);
  const Run bad = run_raypick("bench --quick --top-width 12");
  CHECK(bad.status != 0);
  CHECK(bad.err.find("--top-width: 12 not in {auto,8,16}") != std::string::npos);
}

TEST_CASE("apps/bench/bench_table.py writes the README's table from bench --json rows") {
  const fs::path dir = temp_dir();
  const fs::path json = dir / "bench_table.json";
  const fs::path readme = dir / "README.md";
  const Run r = run_raypick("bench --quick --scene boxes --n 400 --ray-kind both --rays 2000 "
                            "--camera 20x20 --json '" + json.string() + "'");
  REQUIRE(r.status == 0);
  nlohmann::json rows = nlohmann::json::parse(slurp(json));
  REQUIRE(rows.size() == 8);  // 2 ray kinds x 2 systems, then 2 frame and 2 point rows
  // A mesh-mode points row pair too, as a crowd scene would add (its
  // figures are the obb rows').
  for (std::size_t k = 6; k < 8; ++k) {
    nlohmann::json mesh_row = rows[k];
    mesh_row["scene"] = "crowd-10";
    mesh_row["mode"] = "mesh";
    rows.push_back(mesh_row);
  }
  {
    std::ofstream out(json);
    out << rows.dump(2);
  }
  {
    std::ofstream out(readme);
    out << "# before\n<!-- bench_table begin -->\nstale\n<!-- bench_table end -->\nafter\n";
  }
  const std::string script = std::string(RAYPICK_SOURCE_DIR) + "/apps/bench/bench_table.py";
  const std::string cmd = "python3 '" + script + "' '" + json.string() +
                          "' --commit abc1234 --readme '" + readme.string() + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string text = slurp(readme);
  INFO(text);
  CHECK(contains(text, "# before\n<!-- bench_table begin -->\nOne run of"));
  CHECK(contains(text, "<!-- bench_table end -->\nafter\n"));
  CHECK(!contains(text, "stale"));
  CHECK(contains(text, "commit `abc1234`"));
  // The closest-point rows: their table, and their goal lines.
  CHECK(contains(text, "| closest points (points near the surfaces; obb: boxes, mesh: triangles) |"));
  CHECK(contains(text, "| obb boxes-400, 2,000 points, batch 1 thr |"));
  CHECK(contains(text, "| mesh crowd-10, 2,000 points, batch 1 thr |"));
  CHECK(contains(text, "| closest points ≥ 1.5× (single) | obb boxes-400 |"));
  CHECK(contains(text, "| closest points ≥ 1.5× (batch) | mesh crowd-10 |"));
  CHECK(contains(text, rows[0]["cpu"].get<std::string>()));
  // The incoherent row carries the JSON's figures: raypick's and Embree's
  // single-ray Mrays/s, and Embree's packet figure, to 3 decimals.
  char want[160];
  std::snprintf(want, sizeof want, "| obb boxes-400 incoherent, 1 thr | %.3f | %.3f |",
                rows[0]["mrays"].get<double>(), rows[1]["mrays"].get<double>());
  CHECK(contains(text, want));
  std::snprintf(want, sizeof want, "| %.3f |", rows[1]["mrays_packet"].get<double>());
  CHECK(contains(text, want));
  CHECK(rows[1]["mrays_packet"].get<double>() > 0.0);
  CHECK(rows[0]["mrays_packet"].get<double>() == 0.0);
  // Each row against the speed issues' goal for it: the single-ray ratio,
  // met or not, the batches' (incoherent: Embree's best batch; camera: its
  // packets) and the build's (goal: at most 1x).
  const double single = rows[0]["mrays"].get<double>() / rows[1]["mrays"].get<double>();
  std::snprintf(want, sizeof want, "| single ray ≥ 1.5× | obb boxes-400 incoherent, 1 thr | %.2f× | %s |",
                single, single >= 1.5 ? "yes" : "**no**");
  CHECK(contains(text, want));
  const double incoherent_batch =
      rows[0]["mrays_batch"].get<double>() /
      std::max(rows[1]["mrays_batch"].get<double>(), rows[1]["mrays_packet"].get<double>());
  std::snprintf(want, sizeof want,
                "| batch ≥ 1.5× Embree's best batch | obb boxes-400 incoherent, 1 thr | %.2f× | %s |",
                incoherent_batch, incoherent_batch >= 1.5 ? "yes" : "**no**");
  CHECK(contains(text, want));
  const double camera_batch =
      rows[2]["mrays_batch"].get<double>() / rows[3]["mrays_packet"].get<double>();
  std::snprintf(want, sizeof want,
                "| camera batch ≥ 1.5× Embree's packets (16) | obb boxes-400 camera, 1 thr | %.2f× | %s |",
                camera_batch, camera_batch >= 1.5 ? "yes" : "**no**");
  CHECK(contains(text, want));
  const double build = rows[0]["build_ms"].get<double>() / rows[1]["build_ms"].get<double>();
  std::snprintf(want, sizeof want, "| build ≤ 1× | obb boxes-400, 1 thr | %.2f× | %s |", build,
                build <= 1.0 ? "yes" : "**no**");
  CHECK(contains(text, want));
  // The dynamic frame table: raypick's and Embree's ms per frame, to 3
  // decimals, and their ratio.
  REQUIRE(rows[4]["row"] == "frame");
  std::snprintf(want, sizeof want, "| obb boxes-400 | %.3f | %.3f (",
                rows[4]["frame_ms"].get<double>(), rows[5]["frame_ms"].get<double>());
  CHECK(contains(text, want));
  // A README without the markers is refused, untouched.
  { std::ofstream out(readme); out << "no markers\n"; }
  CHECK(std::system((cmd + " 2>/dev/null").c_str()) != 0);
  CHECK(slurp(readme) == "no markers\n");
}

TEST_CASE("raypick bench refuses a bad --camera and an unreadable scene") {
  Run r = run_raypick("bench --quick --camera 64by64");
  CHECK(r.status == 2);
  CHECK(contains(r.err, "--camera"));
  CHECK(r.out.empty());
  r = run_raypick("bench --quick '" + (temp_dir() / "missing.obj").string() + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.err, "missing.obj"));
}

TEST_CASE("camera rays: W*H rays from the eye, outside the scene, into its box") {
  const Aabb box{{-3, 0, 10}, {5, 2, 14}};
  const CameraSpec cam = tools::make_camera(box);
  const glm::vec3 eye(cam.eye);
  const glm::vec3 centre = box.center();
  CHECK(!box.contains(eye));
  CHECK(glm::vec3(cam.target) == centre);
  // The eye is outside the bounding sphere: the whole scene is in front.
  CHECK(glm::length(eye - centre) > 0.5f * glm::length(box.max - box.min));
  // The frame is core's Camera's.
  CameraSpec sized = cam;
  sized.width = 1;
  sized.height = 1000;
  const Camera core_camera(sized);
  const glm::vec3 forward(core_camera.forward());
  CHECK(test::near(forward, glm::normalize(centre - eye), 1e-5f));
  for (const auto& [w, h] : {std::pair{17, 9}, std::pair{1, 1}, std::pair{64, 48}}) {
    CAPTURE(w);
    CAPTURE(h);
    const std::vector<Ray> rays = tools::make_camera_rays(cam, w, h);
    REQUIRE(rays.size() == static_cast<std::size_t>(w * h));
    for (const Ray& ray : rays) {
      CHECK(ray.org == eye);
      CHECK(is_valid(ray));
      // Every ray points into the half space towards the scene's centre,
      // within the 60 degree field of view (and its corners).
      const glm::vec3 d = glm::normalize(ray.dir);
      CHECK(glm::dot(d, forward) > std::cos(glm::radians(60.0f)));
    }
    if (w % 2 == 1 && h % 2 == 1) {  // the middle pixel looks at the centre
      const Ray& mid = rays[static_cast<std::size_t>((h / 2) * w + w / 2)];
      CHECK(test::near(glm::normalize(mid.dir), forward, 1e-6f));
    }
  }
  // The top row's middle looks up by half the vertical field of view,
  // less half a pixel.
  const std::vector<Ray> rays = tools::make_camera_rays(cam, 1, 1000);
  const float up_angle =
      std::asin(glm::dot(glm::normalize(rays[0].dir), glm::vec3(core_camera.up())));
  CHECK(test::near(glm::degrees(up_angle), 30.0f, 0.1f));
}

TEST_CASE("incoherent rays start in the grown scene box with unit directions") {
  const Aabb box{{0, 0, 0}, {10, 20, 40}};
  const std::vector<Ray> rays = tools::make_incoherent_rays(box, 5000, 3);
  REQUIRE(rays.size() == 5000);
  const Aabb grown{{-1, -2, -4}, {11, 22, 44}};
  glm::vec3 mean_dir{0.0f};
  for (const Ray& r : rays) {
    CHECK(grown.contains(r.org));
    CHECK(test::near(glm::length(r.dir), 1.0f, 1e-5f));
    mean_dir += r.dir;
  }
  CHECK(glm::length(mean_dir / 5000.0f) < 0.05f);  // uniform on the sphere
  CHECK(tools::make_incoherent_rays(box, 10, 3)[7].dir == rays[7].dir);
}

TEST_CASE("Embree's user geometry picks exactly raypick's object and t") {
  // Mirrored, sheared, flat, axis-aligned and exactly coincident boxes (ties
  // that must go to the lower id), plus one singular object never hit.
  tools::BoxesOptions opt;
  opt.shear_fraction = 0.1;
  opt.mirror_fraction = 0.1;
  opt.flat_fraction = 0.05;
  opt.coincident_fraction = 0.05;
  opt.axis_aligned_fraction = 0.2;
  Scene scene = tools::make_boxes_scene(2000, 42, opt);
  Object singular;
  singular.matrix = glm::scale(glm::mat4{1.0f}, glm::vec3{1.0f, 0.0f, 1.0f});
  scene.objects.insert(scene.objects.begin() + 5, singular);
  const Aabb bounds = world_bounds(scene);
  std::vector<Ray> rays = tools::make_incoherent_rays(bounds, 3000, 9);
  const std::vector<Ray> cam =
      tools::make_camera_rays(tools::make_camera(bounds), 40, 40);
  rays.insert(rays.end(), cam.begin(), cam.end());
  // Axis-aligned rays with +-0.0 components, some starting on a face plane.
  for (std::size_t i = 0; i < 600; ++i) {
    Ray r = rays[i];
    const int axis = static_cast<int>(i % 3);
    r.dir = glm::vec3{(i & 4) ? -0.0f : 0.0f};
    r.dir[axis] = (i & 8) ? -1.0f : 1.0f;
    if (i % 2 == 0) {
      const Aabb b = world_bounds(Scene{scene.meshes, {scene.objects[i]}, {}});
      if (!b.empty()) r.org[(axis + 1) % 3] = b.min[(axis + 1) % 3];
    }
    rays.push_back(r);
  }

  PickerConfig config;
  config.mesh_mode = false;
  Picker picker(scene, config);
  const tools::EmbreeDevice device(1);
  tools::EmbreeBenchScene embree(device, scene, PickMode::kObb);
  auto compare = [&] {
    std::size_t hits = 0, mismatches = 0;
    for (std::size_t i = 0; i < rays.size(); ++i) {
      const Hit a = picker.intersect(rays[i], PickMode::kObb);
      const Hit b = embree.intersect(rays[i]);
      hits += a.hit();
      if (a.object != b.object || a.t != b.t) {
        if (++mismatches <= 5) {
          MESSAGE("ray " << i << ": raypick " << a.object << " t " << a.t
                         << ", embree " << b.object << " t " << b.t);
        }
      }
      CHECK(a.object != 5);  // the singular object
    }
    CHECK(mismatches == 0);
    CHECK(hits > rays.size() / 4);
    // The batch (TBB over rtcIntersect1) is the single-ray answer.
    const std::vector<Hit> batch = embree.intersect_batch(rays);
    for (std::size_t i = 0; i < rays.size(); ++i) {
      const Hit b = embree.intersect(rays[i]);
      if (batch[i].object != b.object || batch[i].t != b.t) {
        FAIL_CHECK("batch differs at ray " << i);
        break;
      }
    }
  };
  compare();
  // Move every object (raypick refits, Embree recommits): still identical.
  const std::vector<glm::mat4> moved = tools::moved_matrices(
      tools::object_matrices(scene), tools::move_amount(scene), 5);
  for (std::uint32_t i = 0; i < moved.size(); ++i) {
    picker.set_matrix(i, moved[i]);
    embree.set_matrix(i, moved[i]);
  }
  CHECK(picker.commit().refitted);
  embree.commit();
  compare();
}

TEST_CASE("packet lanes cover every ray once: 4x4 tiles of an odd image, 16-ray blocks") {
  const int w = 10, h = 7;  // 3 x 2 tiles, the last column and row partial
  const std::vector<std::uint32_t> tiles = tools::tile_lanes(w, h);
  REQUIRE(tiles.size() == 6 * 16);
  std::vector<int> seen(w * h, 0);
  for (std::uint32_t i : tiles) {
    if (i != tools::kNoRay) ++seen[i];
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == w * h);
  // Tile (1, 1)'s first lane is pixel (4, 4); its lane (dx 1, dy 2) is (5, 6).
  CHECK(tiles[4 * 16 + 0] == 4 * w + 4);
  CHECK(tiles[4 * 16 + 2 * 4 + 1] == 6 * w + 5);
  CHECK(tiles[2 * 16 + 2] == tools::kNoRay);  // pixel (10, 0): past the edge
  const std::vector<std::uint32_t> blocks = tools::block_lanes(35);
  REQUIRE(blocks.size() == 48);
  CHECK(blocks[34] == 34);
  CHECK(blocks[35] == tools::kNoRay);
}

TEST_CASE("Embree's rtcIntersect16 packets give exactly rtcIntersect1's answers") {
  // obb mode (the user geometry's callback sees 16 lanes) on camera tiles
  // and incoherent blocks, with ties from coincident boxes; mesh mode on a
  // small crowd, where Embree's packet and single-ray triangle tests must
  // agree too.
  tools::BoxesOptions opt;
  opt.coincident_fraction = 0.05;
  opt.axis_aligned_fraction = 0.2;
  const Scene boxes = tools::make_boxes_scene(1500, 7, opt);
  Mesh tri;
  tri.positions = {{-1, -1, 0}, {1, -1, 0}, {0, 1, 0}, {0, 0, 1}};
  tri.triangles = {{0, 1, 2}, {0, 1, 3}, {1, 2, 3}, {2, 0, 3}};
  const Scene crowd = tools::make_crowd_scene(tri, 200, 3);
  const tools::EmbreeDevice device(2);
  for (const Scene* scene : {&boxes, &crowd}) {
    const PickMode mode = scene == &boxes ? PickMode::kObb : PickMode::kMesh;
    const tools::EmbreeBenchScene embree(device, *scene, mode);
    const Aabb bounds = world_bounds(*scene);
    const int w = 45, h = 31;
    const std::vector<Ray> cam = tools::make_camera_rays(tools::make_camera(bounds), w, h);
    const std::vector<Ray> inc = tools::make_incoherent_rays(bounds, 2001, 5);
    for (const bool tiles : {true, false}) {
      const std::vector<Ray>& rays = tiles ? cam : inc;
      const std::vector<Hit> packets = embree.intersect_packets(
          rays, tiles ? tools::tile_lanes(w, h) : tools::block_lanes(rays.size()), tiles);
      REQUIRE(packets.size() == rays.size());
      std::size_t hits = 0, differ = 0;
      for (std::size_t i = 0; i < rays.size(); ++i) {
        const Hit single = embree.intersect(rays[i]);
        hits += single.hit();
        differ += single.object != packets[i].object || single.t != packets[i].t ||
                  single.triangle != packets[i].triangle;
      }
      INFO("mode " << std::string(mode == PickMode::kObb ? "obb" : "mesh") << ", tiles "
                   << tiles);
      CHECK(differ == 0);
      CHECK(hits > rays.size() / 50);  // the small crowd hits about 3 in 40
    }
  }
}

TEST_CASE("crowd scenes: N instances of one model spread over 4 N^(1/3) sizes") {
  const Mesh model = tools::unit_cube_mesh();
  const Scene a = tools::make_crowd_scene(model, 1000, 7);
  const Scene b = tools::make_crowd_scene(model, 1000, 7);
  REQUIRE(a.objects.size() == 1000);
  REQUIRE(a.meshes.size() == 1);
  for (std::size_t i = 0; i < a.objects.size(); ++i) {
    CHECK(a.objects[i].mesh == 0);
    CHECK(a.objects[i].matrix == b.objects[i].matrix);
    // Uniform scale in [0.5, 2]: every column of the 3x3 has that length.
    for (int c = 0; c < 3; ++c) {
      const float len = glm::length(glm::vec3(a.objects[i].matrix[c]));
      CHECK(len >= 0.5f - 1e-4f);
      CHECK(len <= 2.0f + 1e-4f);
    }
  }
  const Aabb box = world_bounds(a);
  // Translations fill [0, 40]^3 (L = 4 * 1000^(1/3) * 1), objects stick out
  // by at most sqrt(3) (a cube of side 2, rotated).
  CHECK(box.min.x > -2.0f);
  CHECK(box.max.x < 42.0f);
  CHECK(box.max.x - box.min.x > 35.0f);
}

TEST_CASE("parse_resolution reads WxH") {
  CHECK(tools::parse_resolution("1024x768") == std::pair{1024, 768});
  CHECK(tools::parse_resolution("1X1") == std::pair{1, 1});
  CHECK(!tools::parse_resolution("1024"));
  CHECK(!tools::parse_resolution("0x5"));
  CHECK(!tools::parse_resolution("5x"));
  CHECK(!tools::parse_resolution("-3x5"));
  CHECK(!tools::parse_resolution("3x5 "));
}

TEST_CASE("docs/performance.md's bench table is what apps/bench/bench_table.py makes of docs/bench.json") {
  // The table names its commit and command; regenerating it from the kept
  // JSON with those must give the page's text exactly, so the table cannot
  // drift from the run it claims to show.
  const std::string src = RAYPICK_SOURCE_DIR;
  const std::string readme = slurp(fs::path(src) / "docs" / "performance.md");
  const std::string begin = "<!-- bench_table begin -->\n", end = "<!-- bench_table end -->";
  const std::size_t b = readme.find(begin), e = readme.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  const std::string table = readme.substr(b + begin.size(), e - b - begin.size());
  const auto between = [&](const std::string& before, const std::string& after) {
    const std::size_t i = table.find(before);
    REQUIRE(i != std::string::npos);
    const std::size_t j = table.find(after, i + before.size());
    REQUIRE(j != std::string::npos);
    return table.substr(i + before.size(), j - i - before.size());
  };
  const std::string command = between("One run of `", "`");
  const std::string commit = between("at commit `", "`");
  const fs::path out = temp_dir() / "regenerated.md";
  const std::string cmd = "python3 '" + src + "/apps/bench/bench_table.py' '" + src +
                          "/docs/bench.json' --commit '" + commit + "' --command '" + command +
                          "' > '" + out.string() + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(slurp(out) == table);
}
