// The screen commands from the command line: pick by pixel and by radius,
// the camera options' checks, select and render.
#include "test_util.h"
#include "apps/cli_runner.h"

#include "raypick/core/camera.h"
#include "image.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

namespace fs = std::filesystem;

namespace {

// Run, run_raypick, check_refused, slurp, temp_dir, write (apps/cli_runner.h).
using namespace raypick::test;

// An OBJ box from min to max, its vertices numbered from `base` (1-based).
std::string obj_box(const std::string& name, glm::vec3 a, glm::vec3 b, int base) {
  std::string s = "o " + name + "\n";
  for (int k = 0; k < 8; ++k) {
    char line[128];
    std::snprintf(line, sizeof line, "v %.9g %.9g %.9g\n", (k & 1) ? b.x : a.x,
                  (k & 2) ? b.y : a.y, (k & 4) ? b.z : a.z);
    s += line;
  }
  const int f[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                       {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (const auto& q : f) {
    s += "f " + std::to_string(base + q[0]) + " " + std::to_string(base + q[1]) + " " +
         std::to_string(base + q[2]) + " " + std::to_string(base + q[3]) + "\n";
  }
  return s;
}

// A thin pole at the origin, a thin post nearer the eye and to the right,
// and a wall behind; the camera at z = 10 looks down -z.
std::string poles_scene() {
  return obj_box("pole", {-0.01f, -2, -0.01f}, {0.01f, 2, 0.01f}, 1) +
         obj_box("post", {0.09f, -2, 4.99f}, {0.11f, 2, 5.01f}, 9) +
         obj_box("wall", {-50, -50, -5.1f}, {50, 50, -5}, 17);
}

const std::string kCam = " --eye 0,0,10 --target 0,0,0 --size 200x200";

std::string fmt(float v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", double(v));
  return b;
}

}  // namespace

TEST_CASE("pick --pixel answers as pick --ray with the camera's ray, plus the pixel") {
  const fs::path scene = write("poles.obj", poles_scene());
  raypick::CameraSpec spec;
  spec.eye = {0, 0, 10};
  spec.target = {0, 0, 0};
  spec.width = spec.height = 200;
  const raypick::Camera cam(spec);
  for (const auto& [X, Y] : {std::pair{100.0, 100.0}, {103.5, 100.0}, {30.25, 170.5}, {0.0, 0.0}}) {
    for (const char* mode : {"obb", "mesh"}) {
      const raypick::Ray r = cam.ray(X, Y);
      const std::string ray = fmt(r.org.x) + "," + fmt(r.org.y) + "," + fmt(r.org.z) + "," +
                              fmt(r.dir.x) + "," + fmt(r.dir.y) + "," + fmt(r.dir.z);
      const Run a = run_raypick("pick '" + scene.string() + "' --ray " + ray +
                                " --format json --mode " + mode);
      const Run b = run_raypick("pick '" + scene.string() + "'" + kCam + " --pixel " +
                                std::to_string(X) + "," + std::to_string(Y) +
                                " --format json --mode " + mode);
      REQUIRE(a.status == 0);
      REQUIRE(b.status == 0);
      auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
      CHECK(jb["pixel"] == nlohmann::json::array({X, Y}));
      jb.erase("pixel");
      CHECK(ja == jb);
    }
  }
}

TEST_CASE("pick --pixels reads one point a line, 'X Y' or 'X,Y', from a file or stdin") {
  const fs::path scene = write("poles.obj", poles_scene());
  const fs::path pts = write("pts.txt", "# on the pole, then off it\n100.1 100\n\n 110,100 \n");
  const Run r = run_raypick("pick '" + scene.string() + "'" + kCam + " --pixels '" + pts.string() + "'");
  REQUIRE(r.status == 0);
  std::istringstream lines(r.out);
  std::string l0, l1, extra;
  std::getline(lines, l0);
  std::getline(lines, l1);
  CHECK_FALSE(std::getline(lines, extra));
  CHECK(nlohmann::json::parse(l0)["name"] == "pole");
  CHECK(nlohmann::json::parse(l0)["pixel"] == nlohmann::json::array({100.1, 100}));
  CHECK(nlohmann::json::parse(l1)["name"] == "wall");
  CHECK(nlohmann::json::parse(l1)["ray"] == 1);
  const Run s = run_raypick("pick '" + scene.string() + "'" + kCam + " --pixels -", "100 100\n");
  CHECK(nlohmann::json::parse(s.out)["name"] == "pole");
  const Run bad = run_raypick("pick '" + scene.string() + "'" + kCam + " --pixels -", "1 2\n3 x\n");
  check_refused(bad, 1, "raypick: <stdin>:2: 'x' is not a number\n");
}

TEST_CASE("pick --radius picks the object nearest in depth among those hit within R pixels") {
  const fs::path scene = write("poles.obj", poles_scene());
  auto pick = [&](const std::string& extra) {
    const Run r = run_raypick("pick '" + scene.string() + "'" + kCam + " --format json " + extra);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out);
  };
  // 3 pixels right of the pole: the ray alone sees the wall.
  CHECK(pick("--pixel 97,100")["name"] == "wall");
  CHECK(pick("--pixel 97,100 --radius 3")["name"] == "pole");
  CHECK(pick("--pixel 97,100 --radius 3")["pixel"] == nlohmann::json::array({97, 100}));
  // The post (depth 5, about 3.5 pixels right of the centre) is nearer in
  // depth than the pole (depth 10), though farther on screen from 101.5.
  CHECK(pick("--pixel 101.5,100 --radius 1.5")["name"] == "pole");
  CHECK(pick("--pixel 101.5,100 --radius 2.5")["name"] == "post");
  // Nothing within the radius: a miss.
  CHECK(pick("--pixel 100,100 --radius 2 --max-t 5")["hit"] == false);
}

TEST_CASE("bad camera options each get one message and exit 2, an unknown --camera exits 1") {
  const fs::path scene = write("poles.obj", poles_scene());
  const std::string pick = "pick '" + scene.string() + "' --pixel 1,1 ";
  // Each: one line on standard error, nothing on standard output; the
  // message whole, or a part of it that names the option.
  enum Match { kWhole, kPart };
  struct Case {
    const char* args;
    int status;
    const char* message;
    Match match;
  };
  const Case cases[] = {
      {"--eye 0,0,1 --target 0,0,0 --size 0x10", 2,
       "raypick: pick: --size must be WxH with both sides in 1..16384, got 0x10\n", kWhole},
      {"--eye 0,0,1 --target 0,0,0 --size 16385x10", 2,
       "--size", kPart},
      {"--eye 0,0,1 --target 0,0,0 --size 10", 2,
       "raypick: pick: --size must be WxH (for example 640x480), got '10'\n", kWhole},
      {"--eye 0,0,1 --target 0,0,0 --size 10x10 --fov 0", 2,
       "raypick: pick: --fov must be in (0, 180) degrees, got 0\n", kWhole},
      {"--eye 0,0,1 --target 0,0,0 --size 10x10 --fov 180", 2,
       "--fov", kPart},
      {"--eye 0,0,1 --target 0,0,0 --size 10x10 --ortho -2", 2,
       "raypick: pick: --ortho must be a finite view height > 0, got -2\n", kWhole},
      {"--eye 1,2,3 --target 1,2,3 --size 10x10", 2,
       "raypick: pick: --eye and --target must differ (both are 1,2,3)\n", kWhole},
      {"--eye 0,5,0 --target 0,0,0 --size 10x10", 2,
       "raypick: pick: --up 0,1,0 is parallel to the view direction (target - eye); give another --up\n", kWhole},
      {"--eye 0,0,1 --target 0,0 --size 10x10", 2,
       "raypick: pick: --target '0,0': expected 3 numbers (X,Y,Z), found 2\n", kWhole},
      {"--eye 0,0,1 --size 10x10", 2,
       "--target", kPart},
      {"--eye 0,0,1 --target 0,0,0 --fov 30 --ortho 2 --size 10x10", 2,
       "--ortho", kPart},
      {"--camera 0 --eye 0,0,1 --size 10x10", 2,
       "--camera", kPart},
      {"--eye 0,0,1 --target 0,0,0 --size 10x10 --radius 300", 2,
       "raypick: pick: --radius must be in 0..256 pixels, got 300\n", kWhole},
      {"--camera main --size 10x10", 1,
       "raypick: pick: --camera 'main': the scene has no cameras\n", kWhole},
      {"--camera 3 --size 10x10", 1,
       "no cameras", kPart},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const Run r = run_raypick(pick + c.args);
    CHECK(r.status == c.status);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    if (c.match == kWhole) CHECK(r.err == c.message);
    if (c.match == kPart) CHECK(r.err.find(c.message) != std::string::npos);
  }
  const Run r = run_raypick("pick '" + scene.string() + "'" + kCam + " --pixel 1,x");
  CHECK(r.status == 2);
  CHECK(r.err == "raypick: pick: --pixel '1,x': 'x' is not a number\n");
  CHECK(run_raypick("pick '" + scene.string() + "'" + kCam).status == 2);  // no --pixel
  CHECK(run_raypick("pick '" + scene.string() + "'" + kCam + " --pixel 1,1 --ray 0,0,0,1,0,0").status == 2);
}

TEST_CASE("select prints the objects in the rectangle's region by id, --visible drops hidden ones") {
  // "front" hides "hidden" from the eye at z = 10; "aside" is off to the left.
  const fs::path scene = write(
      "hide.obj", obj_box("hidden", {-0.5f, -0.5f, -3}, {0.5f, 0.5f, -2}, 1) +
                      obj_box("front", {-1, -1, 0}, {1, 1, 1}, 9) +
                      obj_box("aside", {-6, -1, 0}, {-5, 1, 1}, 17));
  const std::string base = "select '" + scene.string() + "'" + kCam;
  Run r = run_raypick(base + " --rect 50,50,150,150");
  CHECK(r.status == 0);
  CHECK(r.out == "object 0 'hidden'\nobject 1 'front'\n");
  r = run_raypick(base + " --rect 150,150,50,50 --visible --format jsonl");
  CHECK(r.out == "{\"object\":1,\"name\":\"front\"}\n");
  // contain: the front box's near face spans x in [-1, 1] at depth 9,
  // about 19 pixels either side of the centre; the hidden one about 7.
  CHECK(run_raypick(base + " --rect 90,90,110,110 --rule contain").out == "object 0 'hidden'\n");
  CHECK(run_raypick(base + " --rect 70,70,130,130 --rule contain").out ==
        "object 0 'hidden'\nobject 1 'front'\n");
  // Nothing there: exit 0, no lines.
  r = run_raypick(base + " --rect 0,0,5,5");
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  // The mesh mode and the mask are the pick's.
  CHECK(run_raypick(base + " --rect 0,90,60,110 --mode mesh").out == "object 2 'aside'\n");
  CHECK(run_raypick(base + " --rect 0,0,200,200 --mask 0").out.empty());
  r = run_raypick(base + " --rect 0,0,200");
  CHECK(r.status == 2);
  CHECK(r.err == "raypick: select: --rect '0,0,200': expected 4 numbers (X0,Y0,X1,Y1), found 3\n");
  CHECK(run_raypick(base + " --rect 0,0,1,1 --rule nope").status == 2);
  CHECK(run_raypick("select '" + scene.string() + "' --eye 0,0,1 --target 0,0,0 --size 10x0 --rect 0,0,1,1").status == 2);
}

TEST_CASE("render --color ids read back agrees with pick --pixel at every pixel centre") {
  const fs::path scene =
      write("ids.obj", obj_box("cube", {-1, -1, -1}, {1, 1, 1}, 1) +
                           obj_box("slab", {-3, -3, 1}, {-1.5f, 3, 2}, 9) +
                           obj_box("pole", {1.5f, -2, -0.1f}, {1.9f, 2, 0.1f}, 17));
  for (const std::string& cam : {std::string(" --eye 2,1,9 --target 0,0,0 --size 32x24"),
                                std::string(" --eye 2,1,9 --target 0,0,0 --ortho 6 --size 32x24")}) {
    for (const char* mode : {"obb", "mesh"}) {
      const fs::path png = temp_dir() / "ids.png";
      const Run r = run_raypick("render '" + scene.string() + "'" + cam + " --color ids --mode " +
                                mode + " --out '" + png.string() + "'");
      REQUIRE(r.status == 0);
      std::string error;
      const raypick::tools::Image img = raypick::tools::read_png(png.string(), error);
      REQUIRE(error.empty());
      REQUIRE(img.width == 32);
      REQUIRE(img.height == 24);
      std::string points;
      for (int j = 0; j < 24; ++j) {
        for (int i = 0; i < 32; ++i) points += std::to_string(i) + ".5 " + std::to_string(j) + ".5\n";
      }
      const Run p = run_raypick("pick '" + scene.string() + "'" + cam + " --pixels - --mode " + mode, points);
      REQUIRE(p.status == 0);
      std::istringstream lines(p.out);
      std::string line;
      int n = 0, hits = 0;
      std::set<std::uint32_t> seen;
      for (int j = 0; j < 24; ++j) {
        for (int i = 0; i < 32; ++i) {
          REQUIRE(std::getline(lines, line));
          const auto ans = nlohmann::json::parse(line);
          const std::uint32_t want =
              ans["hit"] == true ? ans["object"].get<std::uint32_t>() : 0xFFFFFFFFu;
          CHECK_MESSAGE(raypick::tools::id_from_colour(img.at(i, j)) == want,
                        "pixel " << i << "," << j << " " << mode);
          ++n;
          hits += want != 0xFFFFFFFFu;
          seen.insert(want);
        }
      }
      CHECK(n == 32 * 24);
      CHECK(hits > 100);
      CHECK(seen.size() == 4);  // every object and the background
    }
  }
}

TEST_CASE("render writes a PNG of the given size in every colour mode, with overlays") {
  const fs::path scene = write("poles.obj", poles_scene());
  for (const char* color : {"shade", "id", "depth", "normal"}) {
    const fs::path png = temp_dir() / "c.png";
    const Run r = run_raypick("render '" + scene.string() + "'" + kCam + " --color " + color +
                              " --highlight 0,2 --rect 10,10,60,50 --out '" + png.string() + "'");
    REQUIRE(r.status == 0);
    std::string error;
    const raypick::tools::Image img = raypick::tools::read_png(png.string(), error);
    CHECK(img.width == 200);
    CHECK(img.height == 200);
    // The marquee's edge is drawn at its first pixel row.
    CHECK(img.at(30, 10) == raypick::tools::Rgb{70, 150, 255});
  }
  const std::string base = "render '" + scene.string() + "'" + kCam + " --out '" +
                           (temp_dir() / "x.png").string() + "'";
  Run r = run_raypick(base + " --highlight 7");
  CHECK(r.status == 2);
  CHECK(r.err == "raypick: render: --highlight 7: the scene has 3 objects (ids 0..2)\n");
  CHECK(run_raypick(base + " --color ids --rect 0,0,1,1").status == 2);
  CHECK(run_raypick(base + " --color rainbow").status == 2);
}

TEST_CASE("render says how to see triangles when obb mode was not asked for") {
  // obb is the default (the contract's); without --mode, one line says how
  // to draw the triangles.
  const fs::path model = fs::path(RAYPICK_SOURCE_DIR) / "apps" / "examples" / "room.obj";
  const std::string png = (temp_dir() / "hint.png").string();
  const std::string hint = "render: obb mode (the default) draws each object as its box; "
                           "--mode mesh draws its triangles\n";
  const Run plain = run_raypick("render '" + model.string() + "' --size 64x48 --out '" + png + "'");
  REQUIRE(plain.status == 0);
  CHECK(plain.err.find(hint) != std::string::npos);
  for (const char* mode : {"obb", "mesh"}) {
    const Run chosen = run_raypick("render '" + model.string() + "' --size 64x48 --mode " + mode +
                                   " --out '" + png + "'");
    REQUIRE(chosen.status == 0);
    CHECK(chosen.err.find(hint) == std::string::npos);
  }
}

TEST_CASE("render and validate --image check the PNG's path before any work, and leave no file on failure") {
  const fs::path scene = write("poles.obj", poles_scene());
  const std::string missing = (temp_dir() / "missing.obj").string();
  const std::string no_dir = (temp_dir() / "no_such_dir" / "x.png").string();
  // With both the scene and the output path bad, the output path is
  // reported: it is checked first, before the scene is read.
  for (const std::string& args :
       {"render '" + missing + "'" + kCam + " --out '" + no_dir + "'",
        "validate '" + missing + "'" + kCam + " --image '" + no_dir + "'"}) {
    CAPTURE(args);
    const Run r = run_raypick(args);
    check_refused(r, 1, "raypick: " + no_dir + ": cannot write the PNG file: No such file or directory\n");
  }
  // A PNG that is opened but then never written (the scene fails to load,
  // or the camera is refused) is removed again.
  const fs::path png = temp_dir() / "never.png";
  fs::remove(png);
  Run r = run_raypick("render '" + missing + "'" + kCam + " --out '" + png.string() + "'");
  CHECK(r.status == 1);
  CHECK(r.err == "raypick: " + missing + ": cannot open file: No such file or directory\n");
  CHECK_FALSE(fs::exists(png));
  r = run_raypick("validate '" + scene.string() + "' --camera main --size 8x8 --image '" +
                  png.string() + "'");
  CHECK(r.status == 1);
  CHECK_FALSE(fs::exists(png));
  // --rays does not apply to --image: a usage error, not silence.
  r = run_raypick("validate '" + scene.string() + "' --camera main --size 8x8 --rays 5 --image '" +
                  png.string() + "'");
  CHECK(r.status == 2);
  CHECK(r.err.find("--rays does not apply with --image") != std::string::npos);
  CHECK_FALSE(fs::exists(png));
  // One that was there is left as it was: here, the scene file itself.
  r = run_raypick("render '" + scene.string() + "' --camera main --size 8x8 --out '" +
                  scene.string() + "'");
  CHECK(r.status == 1);
  CHECK(raypick::test::slurp(scene) == poles_scene());
  // A PNG that cannot be written whole is an error naming the file.
  r = run_raypick("render '" + scene.string() + "'" + kCam + " --out /dev/full");
  CHECK(r.status == 1);
  CHECK(r.err.find("raypick: /dev/full: cannot write the PNG file") != std::string::npos);
}

TEST_CASE("screen commands' number options get plain messages, and an option is no value") {
  const fs::path scene = write("poles.obj", poles_scene());
  const std::string s = "'" + scene.string() + "'";
  const auto err = raypick::test::usage_error;
  const std::string cam = " --eye 0,0,10 --target 0,0,0 --size 20x20";
  CHECK(err("pick " + s + cam + " --pixel 1,1 --fov 1x") ==
        "raypick: --fov: expected a number, got '1x' (see raypick --help)\n");
  CHECK(err("select " + s + " --eye 0,0,10 --target 0,0,0 --size 20x20 --ortho x --rect 0,0,5,5") ==
        "raypick: --ortho: expected a number, got 'x' (see raypick --help)\n");
  CHECK(err("pick " + s + cam + " --pixel 1,1 --radius two") ==
        "raypick: --radius: expected a number, got 'two' (see raypick --help)\n");
  CHECK(err("select " + s + cam + " --rect 0,0,5,5 --mask 4294967296") ==
        "raypick: --mask: '4294967296' is out of range: expected a whole number from 0 to 4294967295 "
        "(see raypick --help)\n");
  CHECK(err("render " + s + cam + " --out x.png --highlight 1,-2") ==
        "raypick: --highlight: expected a whole number from 0 to 4294967295, got '-2' "
        "(see raypick --help)\n");
  CHECK(err("select " + s + cam + " --rect 0,0,5,x") ==
        "raypick: select: --rect '0,0,5,x': 'x' is not a number\n");
  CHECK(err("select " + s + " --eye 0,0,10 --target 0,0,0 --size 20y20 --rect 0,0,5,5") ==
        "raypick: select: --size must be WxH (for example 640x480), got '20y20'\n");
  // A long value is quoted cut short.
  CHECK(err("pick " + s + cam + " --pixel 1," + std::string(100, 'x')) ==
        "raypick: pick: --pixel '1," + std::string(38, 'x') + "...': '" +
            std::string(40, 'x') + "...' is not a number\n");
  // A value left out does not swallow the next option.
  CHECK(err("pick " + s + " --camera --size 20x20 --pixel 1,1") ==
        "raypick: --camera: needs a value, got the option '--size' (see raypick --help)\n");
  CHECK(err("render " + s + cam + " --out --color id") ==
        "raypick: --out: needs a value, got the option '--color' (see raypick --help)\n");
  // The same options well formed are accepted.
  CHECK(run_raypick("select " + s + cam + " --fov 1e1 --rect 0,0,5,5 --mask 0x1").status == 0);
}

TEST_CASE("validate --image checks one ray per pixel and paints each disagreement by verdict") {
  const fs::path png = temp_dir() / "val.png";
  const Run r = run_raypick("validate --boxes 300 --image '" + png.string() +
                            "' --eye 35,30,45 --target 13,13,13 --size 96x64");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("view:           96x64 pixels, one ray per pixel centre, obb mode") !=
        std::string::npos);
  CHECK(r.out.find("real mismatches: 0 (red)") != std::string::npos);
  // The verdict counts printed add up to the painted pixels: only verdict
  // colours have a channel above the dimmed palette's 0.55 * 255.
  std::size_t painted_expected = 0;
  for (const char* key : {"float noise:", "tie:", "boundary:", "origin inside:"}) {
    const std::size_t at = r.out.find(key);
    REQUIRE(at != std::string::npos);
    painted_expected += std::stoul(r.out.substr(at + std::string(key).size()));
  }
  std::string error;
  const raypick::tools::Image img = raypick::tools::read_png(png.string(), error);
  REQUIRE(img.width == 96);
  REQUIRE(img.height == 64);
  std::size_t painted = 0, hit = 0;
  for (const raypick::tools::Rgb& c : img.pixels) {
    painted += std::max({c.r, c.g, c.b}) > 150;
    hit += !(c == raypick::tools::Rgb{28, 30, 36});
  }
  CHECK(painted == painted_expected);
  CHECK(hit > 500);
  CHECK(run_raypick("validate --boxes 10 --eye 0,0,1 --target 0,0,0 --size 4x4").status == 2);
  CHECK(run_raypick("validate --boxes 10 --image x.png --eye 0,0,1 --target 0,0,0 --size 4x4 --fov 0").status == 2);
}

TEST_CASE("pick --pixel, select and render read files outside the scene's folder only under --root, and keep to the budgets") {
  // scene/s.json uses meshes/box.obj, a sibling folder: outside the scene's.
  const fs::path top = temp_dir() / "rooted";
  fs::create_directories(top / "scene");
  fs::create_directories(top / "meshes");
  std::ofstream(top / "meshes" / "box.obj") << obj_box("box", {-1, -1, -1}, {1, 1, 1}, 1);
  std::ofstream(top / "scene" / "s.json")
      << R"({"raypick_scene": 1, "meshes": [{"name": "box", "file": "../meshes/box.obj"}],
            "objects": [{"name": "crate", "mesh": "box"}]})";
  const std::string s = "'" + (top / "scene" / "s.json").string() + "'";
  const std::string root = " --root '" + top.string() + "'";
  const std::string png = " --out '" + (temp_dir() / "rooted.png").string() + "'";
  for (const std::string& args :
       {"pick " + s + kCam + " --pixel 100,100 --format json", "select " + s + kCam + " --rect 0,0,200,200",
        "render " + s + kCam + png}) {
    CAPTURE(args);
    Run r = run_raypick(args);
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err.find("outside the root folder") != std::string::npos);
    r = run_raypick(args + root);
    CHECK(r.status == 0);
    // The budgets reach the loader: 7 vertices are too few for the box's 8.
    r = run_raypick(args + root + " --max-vertices 7");
    CHECK(r.status == 1);
    CHECK(r.out.empty());
  }
  const Run picked = run_raypick("pick " + s + kCam + " --pixel 100,100 --format json" + root);
  CHECK(nlohmann::json::parse(picked.out)["name"] == "crate");
  CHECK(run_raypick("select " + s + kCam + " --rect 0,0,200,200" + root).out ==
        "object 0 'crate'\n");
}

#ifndef RAYPICK_TEST_ASAN
TEST_CASE("render out of memory is one message naming the command and scene, and leaves no file") {
  const fs::path scene = write("poles.obj", poles_scene());
  const fs::path png = temp_dir() / "huge.png";
  fs::remove(png);
  // 16384 x 16384 pixels need about 1.9 GB of buffers; the cap is 1 GB.
  const Run r = raypick::test::run_raypick_in_memory(
      "render '" + scene.string() + "' --eye 0,0,10 --target 0,0,0 --size 16384x16384 --out '" +
          png.string() + "'",
      1000000);
  CHECK(r.status == 1);
  CHECK(r.err == "raypick: render: out of memory (" + scene.string() + ")\n");
  CHECK_FALSE(fs::exists(png));
}
#endif

TEST_CASE("info lists a glTF file's cameras: index, name, kind, field of view or view height") {
  const std::string model = raypick::test::assimp_model("glTF2/cameras/Cameras.gltf").string();
  const Run r = run_raypick("info '" + model + "'");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("cameras:    2\n") != std::string::npos);
  // yfov 0.7 radians is 40.1070457 degrees; ymag 1 is a view height of 2.
  CHECK(r.out.find("  camera 0 (no name): perspective") != std::string::npos);
  CHECK(r.out.find("perspective, vertical fov 40.1070") != std::string::npos);
  CHECK(r.out.find("orthographic, view height 2\n") != std::string::npos);
  // A scene without cameras prints no camera line.
  const Run none = run_raypick("info '" + std::string(RAYPICK_SOURCE_DIR) + "/apps/examples/room.obj'");
  CHECK(none.out.find("camera") == std::string::npos);
}

TEST_CASE("a pixel point outside the image gets one warning naming it, and is still answered") {
  const fs::path scene = write("poles_outside.obj", poles_scene());
  Run r = run_raypick("pick '" + scene.string() + "'" + kCam + " --pixel 500,500 --format json");
  CHECK(r.status == 0);
  CHECK(r.err == "raypick: warning: 1 pixel point lies outside the 200x200 image (the first: "
                 "500,500); answered as the camera's rays through them\n");
  CHECK(nlohmann::json::parse(r.out)["pixel"] == nlohmann::json::array({500, 500}));
  const fs::path pixels = write("pixels_outside.txt", "10 10\n-1 5\n200,200\n3 400\n");
  r = run_raypick("pick '" + scene.string() + "'" + kCam + " --pixels '" + pixels.string() + "'");
  CHECK(r.status == 0);
  CHECK(r.err.find("2 pixel points lie outside the 200x200 image (the first: -1,5, line 2)") !=
        std::string::npos);
  // Inside, the image's edges included: no warning.
  r = run_raypick("pick '" + scene.string() + "'" + kCam + " --pixel 200,0");
  CHECK(r.err.empty());
}

TEST_CASE("no camera given: the scene is framed (--view), as the same camera given by --eye/--target") {
  const fs::path dir = temp_dir();
  const fs::path scene = write("framed.obj", obj_box("a", {0, 0, 0}, {1, 1, 1}, 1) +
                                                 obj_box("b", {3, 0, -2}, {4, 2, -1}, 9));
  for (const char* view : {"iso", "top", "left"}) {
    CAPTURE(view);
    const fs::path framed = dir / "framed.png", given = dir / "given.png";
    Run r = run_raypick("render '" + scene.string() + "' --size 48x32 --mode mesh --view " +
                        view + " --out '" + framed.string() + "'");
    REQUIRE(r.status == 0);
    // The same camera, computed by core's framing_camera and given by hand.
    raypick::CameraSpec spec;
    spec.width = 48;
    spec.height = 32;
    const raypick::ViewDirection v = std::string(view) == "iso"   ? raypick::ViewDirection::kIso
                                     : std::string(view) == "top" ? raypick::ViewDirection::kTop
                                                                  : raypick::ViewDirection::kLeft;
    const raypick::CameraSpec c =
        raypick::framing_camera(raypick::Aabb{{0, 0, -2}, {4, 2, 1}}, v, spec);
    char cam[256];
    std::snprintf(cam, sizeof cam, "--eye %.17g,%.17g,%.17g --target %.17g,%.17g,%.17g --up %g,%g,%g",
                  c.eye.x, c.eye.y, c.eye.z, c.target.x, c.target.y, c.target.z, c.up.x, c.up.y,
                  c.up.z);
    r = run_raypick("render '" + scene.string() + "' --size 48x32 --mode mesh " + cam +
                    " --out '" + given.string() + "'");
    REQUIRE(r.status == 0);
    std::string e1, e2;
    const raypick::tools::Image a = raypick::tools::read_png(framed.string(), e1);
    const raypick::tools::Image b = raypick::tools::read_png(given.string(), e2);
    REQUIRE(a.width == 48);
    CHECK(a.pixels == b.pixels);
    std::set<std::tuple<int, int, int>> colours;
    for (const auto& p : a.pixels) colours.insert({p.r, p.g, p.b});
    CHECK(colours.size() > 3);  // both boxes and the background at least
  }
  // Both objects in view: a framed select of the whole image takes both.
  Run r = run_raypick("select '" + scene.string() + "' --size 48x32 --rect 0,0,48,32");
  CHECK(r.status == 0);
  CHECK(r.out == "object 0 'a'\nobject 1 'b'\n");
  // Half a camera is an error; --view does not go with --eye or --camera.
  r = run_raypick("render '" + scene.string() + "' --size 48x32 --eye 0,0,5 --out x.png");
  CHECK(r.status == 2);
  CHECK(r.err.find("--eye needs --target X,Y,Z too") != std::string::npos);
  r = run_raypick("pick '" + scene.string() + "' --size 48x32 --view top --eye 0,0,5 "
                  "--target 0,0,0 --pixel 1,1");
  CHECK(r.status == 2);
  r = run_raypick("pick '" + scene.string() + "' --size 48x32 --view sideways --pixel 1,1");
  CHECK(r.status == 2);
}

TEST_CASE("render: a highlight changes every pixel of its objects, and depth stays clear of the background") {
  const fs::path scene = write("poles_hl.obj", poles_scene());
  const fs::path plain = temp_dir() / "plain.png", lit = temp_dir() / "lit.png";
  for (const char* color : {"shade", "id", "depth", "normal"}) {
    CAPTURE(color);
    REQUIRE(run_raypick("render '" + scene.string() + "'" + kCam + " --color " + color +
                        " --out '" + plain.string() + "'").status == 0);
    REQUIRE(run_raypick("render '" + scene.string() + "'" + kCam + " --color " + color +
                        " --highlight 0,1,2 --out '" + lit.string() + "'").status == 0);
    std::string e1, e2;
    const raypick::tools::Image a = raypick::tools::read_png(plain.string(), e1);
    const raypick::tools::Image b = raypick::tools::read_png(lit.string(), e2);
    REQUIRE(a.pixels.size() == b.pixels.size());
    const raypick::tools::Rgb background{28, 30, 36};
    std::size_t hit = 0;
    for (std::size_t k = 0; k < a.pixels.size(); ++k) {
      if (a.pixels[k] == background) {
        CHECK(b.pixels[k] == background);
        continue;
      }
      ++hit;
      CHECK(b.pixels[k] != a.pixels[k]);  // every object is highlighted
      if (std::string(color) == "depth") {
        CHECK(a.pixels[k].r >= 80);  // the farthest grey is 80
      }
    }
    CHECK(hit > 500);
  }
}

namespace {

// The cube [-1, 1]^3 as a JSON "box" mesh: vertex k is core's box corner k
// (x max when bit 0 of k is set, y bit 1, z bit 2), so (1,1,1) is 7 and
// (-1,1,1) is 6. Seen from kCam (eye at z = 10, fov 60, 200x200) a point at
// depth D = 10 - z lies at X = 100 + c·x/D, Y = 100 - c·y/D, c = 100/tan 30°.
const char* const kCubeScene = R"({"raypick_scene": 1,
  "meshes": [{"name": "cube", "box": {"min": [-1, -1, -1], "max": [1, 1, 1]}}],
  "objects": [{"name": "cube", "mesh": "cube"}]})";
const double kC = 100.0 / std::tan(30.0 * 3.14159265358979323846 / 180.0);

nlohmann::json pick_json(const fs::path& scene, const std::string& args) {
  const Run r = run_raypick("pick '" + scene.string() + "'" + kCam + " --format json " + args);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("pick --snap vertex snaps to the picked object's nearest vertex on screen, hidden ones left out") {
  const fs::path scene = write("snap_cube.json", kCubeScene);
  for (const char* mode : {"mesh", "obb"}) {
    CAPTURE(mode);
    const std::string m = std::string(" --mode ") + mode;
    // Near the front corner (1,1,1), at (100 + c/9, 100 - c/9).
    nlohmann::json j = pick_json(scene, "--pixel 118,82 --snap vertex" + m);
    REQUIRE(j["hit"] == true);
    const nlohmann::json& s = j["snap"];
    CHECK(s["kind"] == "vertex");
    CHECK(s["vertex"] == 7);
    CHECK(s["point"] == nlohmann::json::array({1, 1, 1}));
    CHECK(s["pixel"][0].get<double>() == doctest::Approx(100 + kC / 9).epsilon(1e-9));
    CHECK(s["pixel"][1].get<double>() == doctest::Approx(100 - kC / 9).epsilon(1e-9));
    CHECK(s["distance_px"].get<double>() ==
          doctest::Approx(std::sqrt(2.0) * (kC / 9 - 18)).epsilon(1e-8));
    CHECK(!s.contains("edge"));
    // The snap comes after the hit's fields.
    const std::string line = j.dump();
    CHECK(line.find("\"snap\"") > line.find("\"point\""));
    // On the back corner (1,1,-1)'s projection, (100 + c/11, 100 - c/11):
    // it lies behind the front face, so the front corner 5.3 px away wins,
    // and with only 4 px there is no snap at all.
    const std::string back = "--pixel 115.5,84.5 --snap vertex" + m;
    CHECK(pick_json(scene, back)["snap"]["vertex"] == 7);
    CHECK(pick_json(scene, back + " --radius 4")["snap"].is_null());
    // The middle of the front face: every corner is 27 px away.
    j = pick_json(scene, "--pixel 100,100 --snap vertex" + m);
    CHECK(j["hit"] == true);
    CHECK(j["snap"].is_null());
    // Up and left of it, with a wider radius: the top-left front corner
    // (-1,1,1), 25.8 px away (the top-right one is 27.2 px away).
    CHECK(pick_json(scene, "--pixel 99,99 --snap vertex --radius 28" + m)["snap"]["vertex"] == 6);
  }
  // An orthographic view puts the front and back corners on one point:
  // the nearer in depth wins (and the back one is hidden anyway).
  const Run r = run_raypick("pick '" + scene.string() +
                            "' --eye 0,0,10 --target 0,0,0 --ortho 4 --size 200x200 "
                            "--pixel 149,51 --snap vertex --format json");
  REQUIRE(r.status == 0);
  const nlohmann::json s = nlohmann::json::parse(r.out)["snap"];
  CHECK(s["vertex"] == 7);
  CHECK(s["pixel"] == nlohmann::json::array({150, 50}));
  CHECK(s["distance_px"].get<double>() == doctest::Approx(std::sqrt(2.0)).epsilon(1e-9));
}

TEST_CASE("pick --snap edge snaps to the point of the nearest edge nearest the pixel's ray") {
  const fs::path scene = write("snap_cube.json", kCubeScene);
  for (const char* mode : {"mesh", "obb"}) {
    CAPTURE(mode);
    // Just below the top front edge (-1,1,1)-(1,1,1), on the symmetry
    // plane x = 0: its point (0,1,1), at (100, 100 - c/9).
    const nlohmann::json j =
        pick_json(scene, std::string("--pixel 100,81 --snap edge --mode ") + mode);
    const nlohmann::json& s = j["snap"];
    CHECK(s["kind"] == "edge");
    CHECK(s["edge"] == nlohmann::json::array({6, 7}));
    CHECK(s["point"] == nlohmann::json::array({0, 1, 1}));
    CHECK(s["pixel"][0].get<double>() == doctest::Approx(100).epsilon(1e-9));
    CHECK(s["distance_px"].get<double>() == doctest::Approx(kC / 9 - 19).epsilon(1e-8));
    CHECK(!s.contains("vertex"));
    // The middle of the front face: the edges are 19 px away, and the
    // diagonal that cuts the face into two triangles is no edge to snap to.
    CHECK(pick_json(scene, std::string("--pixel 100,100 --snap edge --mode ") + mode)["snap"]
              .is_null());
  }
  // Orthographic: the front and back top edges project onto one line; the
  // front one (nearer in depth) is taken, at the pixel's x.
  const Run r = run_raypick("pick '" + scene.string() +
                            "' --eye 0,0,10 --target 0,0,0 --ortho 4 --size 200x200 "
                            "--pixel 120,51 --snap edge --format json");
  REQUIRE(r.status == 0);
  const nlohmann::json s = nlohmann::json::parse(r.out)["snap"];
  CHECK(s["edge"] == nlohmann::json::array({6, 7}));
  CHECK(s["point"][0].get<double>() == doctest::Approx(0.4).epsilon(1e-6));
  CHECK(s["point"][1] == 1);
  CHECK(s["point"][2] == 1);
  CHECK(s["distance_px"].get<double>() == doctest::Approx(1.0).epsilon(1e-6));
}

TEST_CASE("pick --snap in obb mode snaps to the OBB's corners, in mesh mode to the mesh's vertices") {
  // A tetrahedron whose OBB is [-1, 1]^3: its apex (0,0,1) is vertex 3, the
  // OBB's corner (1,1,1) (corner 7) is no vertex of it.
  const fs::path scene = write("snap_tetra.obj",
                               "o tetra\nv -1 -1 -1\nv 1 -1 -1\nv 0 1 -1\nv 0 0 1\n"
                               "f 1 3 2\nf 1 2 4\nf 2 3 4\nf 3 1 4\n");
  nlohmann::json j = pick_json(scene, "--pixel 118,82 --snap vertex --mode obb");
  CHECK(j["snap"]["vertex"] == 7);
  CHECK(j["snap"]["point"] == nlohmann::json::array({1, 1, 1}));
  j = pick_json(scene, "--pixel 100,81 --snap edge --mode obb");
  CHECK(j["snap"]["edge"] == nlohmann::json::array({6, 7}));
  // The apex at the image centre, in mesh mode.
  j = pick_json(scene, "--pixel 101,101 --snap vertex --mode mesh");
  REQUIRE(j["hit"] == true);
  CHECK(j["snap"]["vertex"] == 3);
  CHECK(j["snap"]["point"] == nlohmann::json::array({0, 0, 1}));
  CHECK(j["snap"]["pixel"] == nlohmann::json::array({100, 100}));
  CHECK(j["snap"]["distance_px"].get<double>() == doctest::Approx(std::sqrt(2.0)).epsilon(1e-9));
  // The mesh mode's ray there misses the tetrahedron: no hit, no snap.
  j = pick_json(scene, "--pixel 118,82 --snap vertex --mode mesh");
  CHECK(j["hit"] == false);
  CHECK(!j.contains("snap"));
}

TEST_CASE("pick --snap in text and jsonl, and its usage errors") {
  const fs::path scene = write("snap_cube.json", kCubeScene);
  const std::string pick = "pick '" + scene.string() + "'";
  Run r = run_raypick(pick + kCam + " --pixel 118,82 --snap vertex --mode mesh");
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("ray 0, pixel (118, 82): object 0 'cube' triangle ", 0) == 0);
  CHECK(r.out.find(", snapped to vertex 7 at (1, 1, 1), 1.76") != std::string::npos);
  CHECK(r.out.substr(r.out.size() - 4) == " px\n");
  r = run_raypick(pick + kCam + " --pixel 100,81 --snap edge");
  CHECK(r.out.find(", snapped to edge 6-7 at (0, 1, 1), ") != std::string::npos);
  r = run_raypick(pick + kCam + " --pixel 100,100 --snap edge --radius 3");
  CHECK(r.out.substr(r.out.size() - 22) == ", no snap within 3 px\n");
  // jsonl: a snap, none within the radius, a miss (no snap field).
  r = run_raypick(pick + kCam + " --pixels - --snap vertex", "118 82\n100 100\n5 5\n");
  REQUIRE(r.status == 0);
  std::istringstream lines(r.out);
  std::string l0, l1, l2;
  std::getline(lines, l0);
  std::getline(lines, l1);
  std::getline(lines, l2);
  CHECK(nlohmann::json::parse(l0)["snap"]["vertex"] == 7);
  CHECK(l1.substr(l1.size() - 13) == ",\"snap\":null}");
  CHECK(l2 == "{\"ray\":2,\"pixel\":[5,5],\"hit\":false}");

  auto err = [&](const std::string& args) { return usage_error(pick + args); };
  CHECK(err(kCam + " --pixel 118,82 --snap vertex --all") ==
        "raypick: pick: --snap snaps to the one object a point picks; it does not combine "
        "with --all\n");
  CHECK(err(" --ray 0,0,10,0,0,-1 --snap edge") ==
        "raypick: pick: --snap snaps on the screen: it needs --pixel X,Y or --pixels FILE, "
        "not --ray or --rays\n");
  CHECK(err(kCam + " --ray 0,0,10,0,0,-1 --snap edge").find("--snap") != std::string::npos);
  CHECK(err(kCam + " --pixel 118,82 --snap face").find("--snap") != std::string::npos);
  CHECK(err(kCam + " --pixel 118,82 --snap").find("--snap") != std::string::npos);
}

TEST_CASE("pick --snap places the mesh by its object's matrix, and another object in front hides a vertex") {
  // The unit box scaled by 2 is the cube [-1, 1]^3 again; "shield" (depth
  // 5, layer 1) covers the ray to the corner (1,1,1) (x = y = 5/9 there)
  // but not the ray of pixel (118, 82) (x = y = 0.52 to 0.53 there).
  const fs::path scene = write("snap_shield.json", R"({"raypick_scene": 1,
    "meshes": [{"name": "unit", "box": {"min": [-0.5, -0.5, -0.5], "max": [0.5, 0.5, 0.5]}},
               {"name": "plate", "box": {"min": [0.54, 0.54, 4.9], "max": [2, 2, 5]}}],
    "objects": [{"name": "cube", "mesh": "unit", "scale": 2},
                {"name": "shield", "mesh": "plate", "layer": 1}]})");
  for (const char* mode : {"mesh", "obb"}) {
    CAPTURE(mode);
    const std::string m = std::string(" --mode ") + mode;
    nlohmann::json j = pick_json(scene, "--pixel 118,82 --snap vertex" + m);
    CHECK(j["name"] == "cube");
    CHECK(j["snap"].is_null());
    // The same mask for the snap's rays: with layer 0 only, the shield is
    // not there, and the corner is seen.
    j = pick_json(scene, "--pixel 118,82 --snap vertex --mask 1" + m);
    CHECK(j["snap"]["vertex"] == 7);
    CHECK(j["snap"]["point"] == nlohmann::json::array({1, 1, 1}));
  }
}
