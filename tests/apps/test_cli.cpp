// The raypick command line, run as a user runs it: output per the contract
// and every error case's message and exit status.
#include "test_util.h"
#include "apps/cli_runner.h"
#include "raypick/loaders/load.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

// Run, run_raypick, check_refused, slurp, temp_dir, write (apps/cli_runner.h).
using namespace raypick::test;

// Two unit cubes: "near" centred at z = 0, "far" at z = 10; and a quad.
const char* kScene =
    "o near\n"
    "v -0.5 -0.5 -0.5\nv 0.5 -0.5 -0.5\nv 0.5 0.5 -0.5\nv -0.5 0.5 -0.5\n"
    "v -0.5 -0.5 0.5\nv 0.5 -0.5 0.5\nv 0.5 0.5 0.5\nv -0.5 0.5 0.5\n"
    "f 1 2 3 4\nf 5 6 7 8\nf 1 2 6 5\nf 4 3 7 8\nf 1 4 8 5\nf 2 3 7 6\n"
    "o far\n"
    "v -0.5 -0.5 9.5\nv 0.5 -0.5 9.5\nv 0.5 0.5 9.5\nv -0.5 0.5 9.5\n"
    "v -0.5 -0.5 10.5\nv 0.5 -0.5 10.5\nv 0.5 0.5 10.5\nv -0.5 0.5 10.5\n"
    "f 9 10 11 12\nf 13 14 15 16\nf 9 10 14 13\nf 12 11 15 16\nf 9 12 16 13\nf 10 11 15 14\n"
    "o quad\n"
    "v 5 -1 -1\nv 5 1 -1\nv 5 1 1\nv 5 -1 1\n"
    "f 17 18 19 20\n";

// The JSON lines of `raypick nearest SCENE --points POINTS OPTIONS`, which
// must succeed.
std::vector<nlohmann::json> nearest_rows(const fs::path& scene, const fs::path& points,
                                         const std::string& options) {
  const Run r = run_raypick("nearest '" + scene.string() + "' --points '" + points.string() +
                            "' " + options);
  REQUIRE(r.status == 0);
  std::istringstream lines(r.out);
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

}  // namespace

TEST_CASE("pick --ray prints the nearest object as text and as JSON") {
  const fs::path scene = write("scene.obj", kScene);
  Run r = run_raypick("pick '" + scene.string() + "' --ray 0,0,-5,0,0,1");
  CHECK(r.status == 0);
  CHECK(r.out == "ray 0: object 0 'near' at t = 4.5, point (0, 0, -0.5)\n");
  CHECK(r.err.empty());
  r = run_raypick("pick '" + scene.string() + "' --ray '0 0 20 0 0 -2' --format json");
  CHECK(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["object"] == 1);
  CHECK(j["name"] == "far");
  CHECK(j["t"].get<double>() == 4.75);  // direction length 2: t in its units
  // Flat quad at x = 5, hit head-on with -0.0 components.
  r = run_raypick("pick '" + scene.string() + "' --ray 0,0.75,0.75,1,-0.0,-0.0 --format json");
  CHECK(nlohmann::json::parse(r.out)["name"] == "quad");
  CHECK(nlohmann::json::parse(r.out)["t"].get<double>() == 5.0);
}

TEST_CASE("pick --rays writes one JSON line per ray in input order") {
  const fs::path scene = write("scene.obj", kScene);
  const fs::path rays = write("rays.txt",
                              "# comment\n"
                              "0 0 -5 0 0 1\n"
                              "\n"
                              "0, 0, 20, 0, 0, -1\n"
                              "0 5 0 0 1 0\n"
                              "0 0 0 1 0 0\n");
  const Run r = run_raypick("pick '" + scene.string() + "' --rays '" + rays.string() + "'");
  CHECK(r.status == 0);
  CHECK(r.out ==
        "{\"ray\":0,\"hit\":true,\"object\":0,\"name\":\"near\",\"t\":4.5,\"point\":[0,0,-0.5]}\n"
        "{\"ray\":1,\"hit\":true,\"object\":1,\"name\":\"far\",\"t\":9.5,\"point\":[0,0,10.5]}\n"
        "{\"ray\":2,\"hit\":false}\n"
        "{\"ray\":3,\"hit\":true,\"object\":0,\"name\":\"near\",\"t\":0,\"point\":[0,0,0]}\n");
  // The same through standard input.
  const Run s = run_raypick("pick '" + scene.string() + "' --rays - --format jsonl",
                        slurp(rays));
  CHECK(s.status == 0);
  CHECK(s.out == r.out);
}

TEST_CASE("pick --mode mesh reports the triangle, and sees through gaps an OBB covers") {
  // A single slanted triangle: its OBB is the box [0,2] x [0,2] x [0,0].
  const fs::path tri = write("tri.obj", "o tri\nv 0 0 0\nv 2 0 0\nv 0 2 0\nf 1 2 3\n");
  Run r = run_raypick("pick '" + tri.string() + "' --ray 0.5,0.5,5,0,0,-1 --mode mesh --format json");
  CHECK(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["triangle"] == 0);
  CHECK(j["t"].get<double>() == 5.0);
  // (1.5, 1.5) is inside the OBB but beyond the hypotenuse.
  r = run_raypick("pick '" + tri.string() + "' --ray 1.5,1.5,5,0,0,-1 --mode mesh --format json");
  CHECK(nlohmann::json::parse(r.out)["hit"] == false);
  r = run_raypick("pick '" + tri.string() + "' --ray 1.5,1.5,5,0,0,-1 --format json");
  CHECK(nlohmann::json::parse(r.out)["hit"] == true);
  CHECK_FALSE(nlohmann::json::parse(r.out).contains("triangle"));
  // Text output names the triangle.
  r = run_raypick("pick '" + tri.string() + "' --ray 0.5,0.5,5,0,0,-1 --mode mesh");
  CHECK(r.out == "ray 0: object 0 'tri' triangle 0 at t = 5, point (0.5, 0.5, 0)\n");
}

TEST_CASE("pick --all lists every object along the ray, nearest first, --limit and --max-t cut it") {
  const fs::path scene = write("scene.obj", kScene);
  Run r = run_raypick("pick '" + scene.string() + "' --ray 0,0,-5,0,0,1 --all --format json");
  CHECK(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["object"] == 0);
  REQUIRE(j["hits"].size() == 2);
  CHECK(j["hits"][0]["name"] == "near");
  CHECK(j["hits"][1]["name"] == "far");
  CHECK(j["hits"][1]["t"].get<double>() == 14.5);
  r = run_raypick("pick '" + scene.string() + "' --ray 0,0,-5,0,0,1 --all --limit 1 --mode mesh --format json");
  j = nlohmann::json::parse(r.out);
  REQUIRE(j["hits"].size() == 1);
  CHECK(j["hits"][0].contains("triangle"));
  r = run_raypick("pick '" + scene.string() + "' --ray 0,0,-5,0,0,1 --max-t 10 --all --format json");
  CHECK(nlohmann::json::parse(r.out)["hits"].size() == 1);
  r = run_raypick("pick '" + scene.string() + "' --ray 0,0,-5,0,0,1 --max-t 4 --format json");
  CHECK(nlohmann::json::parse(r.out)["hit"] == false);
  r = run_raypick("pick '" + scene.string() + "' --ray 0,5,0,0,1,0 --all --format json");
  CHECK(r.out == "{\"ray\":0,\"hit\":false,\"hits\":[]}\n");
}

TEST_CASE("bad input: one message naming the file and line, exit 1, nothing on stdout") {
  const fs::path scene = write("scene.obj", kScene);
  SUBCASE("malformed ray in a rays file") {
    const fs::path rays = write("bad_rays.txt", "0 0 -5 0 0 1\n\n0,,0,1,0,0\n");
    const Run r = run_raypick("pick '" + scene.string() + "' --rays '" + rays.string() + "'");
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err.find(rays.string() + ":3: ") != std::string::npos);
  }
  SUBCASE("zero direction") {
    const Run r = run_raypick("pick '" + scene.string() + "' --ray 0,0,0,0,0,0");
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err.find("direction is zero") != std::string::npos);
  }
  SUBCASE("non-finite direction on stdin, line 2") {
    const Run r = run_raypick("pick '" + scene.string() + "' --rays -", "0 0 0 1 0 0\n0 0 0 nan 0 1\n");
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err.find("<stdin>:2: ") != std::string::npos);
  }
  SUBCASE("missing scene file") {
    const Run r = run_raypick("pick '" + (temp_dir() / "nope.obj").string() + "' --ray 0,0,0,1,0,0");
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err.find("nope.obj") != std::string::npos);
  }
  SUBCASE("missing rays file") {
    const Run r = run_raypick("pick '" + scene.string() + "' --rays '" + (temp_dir() / "none.txt").string() + "'");
    CHECK(r.status == 1);
    CHECK(r.err.find("none.txt") != std::string::npos);
  }
  SUBCASE("malformed OBJ: face index out of range, with its line") {
    const fs::path bad = write("bad.obj", "o a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n");
    const Run r = run_raypick("pick '" + bad.string() + "' --ray 0,0,0,1,0,0");
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err.find(bad.string() + ":5:") != std::string::npos);
  }
  SUBCASE("scene with no objects") {
    const fs::path empty = write("empty.obj", "# nothing\n");
    const Run r = run_raypick("pick '" + empty.string() + "' --ray 0,0,0,1,0,0");
    CHECK(r.status == 1);
    CHECK(r.err.find("empty.obj") != std::string::npos);
  }
  SUBCASE("each error is one line") {
    const Run r = run_raypick("pick '" + scene.string() + "' --ray 1,2,3");
    CHECK(r.status == 1);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("wrong usage exits 2") {
  const fs::path scene = write("scene.obj", kScene);
  CHECK(run_raypick("pick '" + scene.string() + "' --ray 0,0,0,1,0,0 --bogus").status == 2);
  CHECK(run_raypick("pick '" + scene.string() + "' --ray 0,0,0,1,0,0 --mode nope").status == 2);
  CHECK(run_raypick("pick '" + scene.string() + "'").status == 2);  // no ray
  CHECK(run_raypick("pick --ray 0,0,0,1,0,0").status == 2);         // no scene
  CHECK(run_raypick("pick '" + scene.string() + "' --ray 0,0,0,1,0,0 --rays x").status == 2);
  CHECK(run_raypick("").status == 2);
  CHECK(run_raypick("frobnicate").status == 2);
  const fs::path other = write("scene.xyz", kScene);
  const Run r = run_raypick("pick '" + other.string() + "' --ray 0,0,0,1,0,0");
  CHECK(r.status == 2);
  CHECK(r.err.find("scene.xyz") != std::string::npos);
  CHECK(run_raypick("pick '" + scene.string() + "' --ray 0,0,0,1,0,0 --limit 2").status == 2);  // needs --all
  CHECK(run_raypick("pick '" + scene.string() + "' --ray 0,0,0,1,0,0 --max-t -1").status == 2);
  CHECK(run_raypick("pick '" + scene.string() + "' --ray 0,0,0,1,0,0 --max-t nan").status == 2);
  CHECK(run_raypick("--help").status == 0);
  CHECK(run_raypick("pick --help").out.find("--rays") != std::string::npos);
}

TEST_CASE("validate and info run on a scene file and on a generated scene") {
  const fs::path scene = write("scene.obj", kScene);
  const fs::path dump = temp_dir() / "dump.txt";
  check_out_has(run_raypick("validate '" + scene.string() + "' --rays 3000 --seed 5 --dump '" +
                            dump.string() + "'"),
                0, {"real mismatches: 0", "rays:           3000 (seed 5)"});
  // The dump reads back as a rays file.
  CHECK(run_raypick("pick '" + scene.string() + "' --rays '" + dump.string() + "'").status == 0);
  check_out_has(run_raypick("validate --boxes 500 --rays 5000"), 0, {"real mismatches: 0"});
  check_out_has(run_raypick("validate --boxes 300 --rays 5000 --mode mesh"), 0,
                {"mode:           mesh", "real mismatches: 0", "obb vs mesh:"});
  check_out_has(run_raypick("info '" + scene.string() + "'"), 0,
                {"objects:    3 (3 can be hit)", "triangles:  26", "object 2 'quad': 2 triangles"});
}

TEST_CASE("pick --rays reads pipes and refuses devices, directories and a closed or directory stdin") {
  const fs::path scene = write("scene.obj", kScene);
  const std::string pick = "pick '" + scene.string() + "' ";
  SUBCASE("a pipe, named or as standard input") {
    Run r = run_raypick(pick + "--rays /dev/stdin", "", "", "printf '0 0 -5 0 0 1'");
    CHECK(r.status == 0);
    CHECK(r.out.find("\"object\":0") != std::string::npos);
    r = run_raypick(pick + "--rays -", "", "", "printf '0 0 -5 0 0 1'");
    CHECK(r.status == 0);
    CHECK(r.out.find("\"object\":0") != std::string::npos);
  }
  SUBCASE("refusals: one message each, exit 1, nothing on standard output") {
    const std::string dir = temp_dir().string(), gone = (temp_dir() / "gone.txt").string();
    struct Case {
      const char* name;
      std::string rays;       // the --rays argument
      const char* redirects;  // of standard input
      std::string err;
    };
    const Case cases[] = {
        {"a device is not a rays file", "/dev/zero", "",
         "raypick: /dev/zero: is not a regular file or a pipe\n"},
        {"endless bytes without a line break on stdin stop at the line bound", "-", "< /dev/zero",
         "raypick: <stdin>:1: line is longer than 4096 bytes (is this a text file?)\n"},
        {"a directory", "'" + dir + "'", "", "raypick: " + dir + ": is a directory\n"},
        {"standard input closed", "-", "<&-", "raypick: <stdin>: standard input is closed\n"},
        {"standard input a directory", "-", "< /", "raypick: <stdin>: is a directory\n"},
        {"a missing file", "'" + gone + "'", "",
         "raypick: " + gone + ": cannot open: No such file or directory\n"},
    };
    for (const Case& c : cases) {
      CAPTURE(c.name);
      check_refused(run_raypick(pick + "--rays " + c.rays, "", c.redirects), 1, c.err);
    }
  }
}

TEST_CASE("pick --rays skips a byte-order mark and reads an underflow as 0") {
  const fs::path scene = write("scene.obj", kScene);
  const fs::path rays = write("bom_rays.txt", "\xEF\xBB\xBF" "0 0 -5 1e-400 0 1\n");
  const Run r = run_raypick("pick '" + scene.string() + "' --rays '" + rays.string() + "'");
  CHECK(r.status == 0);
  CHECK(r.out == "{\"ray\":0,\"hit\":true,\"object\":0,\"name\":\"near\",\"t\":4.5,\"point\":[0,0,-0.5]}\n");
}

TEST_CASE("messages and text names never pass control bytes to the terminal, nor echo a huge token") {
  const fs::path scene = write("evil_names.obj",
                               "o a\x1B[31m\rb\n"  // tinyobjloader keeps the ESC and CR
                               "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  Run r = run_raypick("pick '" + scene.string() + "' --ray 0.2,0.2,1,0,0,-1");
  CHECK(r.status == 0);
  CHECK(r.out.find('\x1B') == std::string::npos);
  CHECK(r.out.find('\r') == std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  CHECK(r.out.find("'a\\x1B[31m") != std::string::npos);
  r = run_raypick("info '" + scene.string() + "'");
  CHECK(r.status == 0);
  CHECK(r.out.find('\x1B') == std::string::npos);
  CHECK(r.out.find("object 0 'a\\x1B[31m") != std::string::npos);
  // A long token in a rays file is quoted by its first 40 bytes.
  const fs::path rays = write("huge_token.txt", "0 0 0 1 0 " + std::string(1000, '9') + "\x1B" +
                                                    "\n");
  r = run_raypick("pick '" + scene.string() + "' --rays '" + rays.string() + "'");
  CHECK(r.status == 1);
  CHECK(r.err == "raypick: " + rays.string() + ":1: '" + std::string(40, '9') +
                     "...' is not a number\n");
  // A control byte in the file name itself.
  const fs::path odd = write("odd\x1B.txt", "0 0 0 1 0 x\n");
  r = run_raypick("pick '" + scene.string() + "' --rays '" + odd.string() + "'");
  CHECK(r.status == 1);
  CHECK(r.err.find('\x1B') == std::string::npos);
  CHECK(r.err.find("odd\\x1B.txt:1: 'x' is not a number") != std::string::npos);
}

TEST_CASE("every command checks its writes: a full standard output is exit 1 with a message") {
  const fs::path scene = write("scene.obj", kScene);
  const std::string s = "'" + scene.string() + "'";
  for (const std::string& args : std::vector<std::string>{
           "info " + s, "validate " + s + " --rays 100", "validate --boxes 20 --rays 100",
        "pick " + s + " --ray 0,0,-5,0,0,1", "pick " + s + " --rays -",
        "pick " + s + " --eye 0,0,-5 --target 0,0,0 --size 8x8 --pixel 4,4",
        "pick " + s + " --eye 0,0,-5 --target 0,0,0 --size 8x8 --pixels -",
        "select " + s + " --eye 0,0,-5 --target 0,0,0 --size 8x8 --rect 0,0,8,8",
        "validate --boxes 20 --eye 0,0,-5 --target 0,0,0 --size 8x8 --image '" +
            (temp_dir() / "full.png").string() + "'",
        "bench --quick " + s + " --ray-kind camera --camera 8x8", "--help", "pick --help",
        "--version"}) {
    CAPTURE(args);
    const Run r = run_raypick(args, args.find("--pixels") != std::string::npos ? "4 4\n" : "0 0 -5 0 0 1\n", "> /dev/full");
    CHECK(r.status == 1);
    CHECK(r.err.find("raypick: cannot write to standard output") != std::string::npos);
  }
  // The same commands succeed when the output has room.
  CHECK(run_raypick("info " + s).status == 0);
  CHECK(run_raypick("--help").status == 0);
}

TEST_CASE("usage errors say plainly what is wrong, exit 2") {
  const fs::path scene = write("scene.obj", kScene);
  const std::string pick = "pick '" + scene.string() + "' --ray 0,0,-5,0,0,1 ";
  const auto err = raypick::test::usage_error;
  // Enum options: CLI11 lists the spellings; the value reaches the command
  // as its enum (validate --mode mesh prints "mesh", below).
  const std::pair<std::string, std::string> cases[] = {
      {pick + "--mode MESH",
       "raypick: --mode: MESH not in {obb,mesh} (see raypick --help)\n"},
      {"bench --mode fast",
       "raypick: --mode: fast not in {obb,mesh,both,auto} (see raypick --help)\n"},
      {"bench --ray-kind 1",
       "raypick: --ray-kind: 1 not in {incoherent,camera,both} (see raypick --help)\n"},
      {"bench --profile perf",
       "raypick: --profile: perf not in {raypick,embree} (see raypick --help)\n"},
      {"render '" + scene.string() + "' --eye 0,0,5 --target 0,0,0 --size 4x4 --out x.png --mode 0",
       "raypick: --mode: 0 not in {obb,mesh} (see raypick --help)\n"},
      {pick + "--all --limit 0",
       "raypick: --limit: '0' is out of range: expected a whole number >= 1 (see raypick --help)\n"},
      {pick + "--max-t 1x",
       "raypick: --max-t: expected a number >= 0, got '1x' (see raypick --help)\n"},
      {pick + "--mask 4294967296",
       "raypick: --mask: '4294967296' is out of range: expected a whole number from 0 to 4294967295 (see raypick --help)\n"},
      {"validate --boxes 10 --seed 99999999999999999999",
       "raypick: --seed: '99999999999999999999' is out of range: expected a whole number >= 0 (see raypick --help)\n"},
      {"bench --threads 0",
       "raypick: --threads: '0' is out of range: expected a whole number from 1 to 1024 (see raypick --help)\n"},
      {"frob",
       "raypick: unknown command 'frob' (commands: pick, validate, info, bench, select, render, nearest; see raypick --help)\n"},
      {"",
       "raypick: no command given (commands: pick, validate, info, bench, select, render, nearest; see raypick --help)\n"},
  };
  for (const auto& [args, message] : cases) {
    CAPTURE(args);
    CHECK(err(args) == message);
  }
  // Exactly one source of rays, and a SCENE or --boxes: CLI11's option
  // groups say which options and how many.
  const std::string one_ray_source =
      "raypick: Exactly 1 option from [--ray,--rays,--pixel,--pixels] is required";
  CHECK(err("pick '" + scene.string() + "'") == one_ray_source + " (see raypick --help)\n");
  CHECK(err("pick '" + scene.string() + "' --ray 0,0,0,1,0,0 --rays -") ==
        one_ray_source + " and 2 were given (see raypick --help)\n");
  CHECK(err("pick '" + scene.string() + "' --rays ''") ==
        "raypick: pick: --rays needs a file name, or '-' for standard input\n");
  const std::string scene_or_boxes =
      "raypick: Exactly 1 option from [SCENE,--boxes] is required";
  CHECK(err("validate") == scene_or_boxes + " (see raypick --help)\n");
  CHECK(err("validate '" + scene.string() + "' --boxes 3") ==
        scene_or_boxes + " and 2 were given (see raypick --help)\n");
  // An empty ray is a malformed ray (bad input), not a missing option.
  const Run r = run_raypick("pick '" + scene.string() + "' --ray ''");
  CHECK(r.status == 1);
  CHECK(r.err == "raypick: --ray '': expected 6 numbers (ox oy oz dx dy dz), found 0\n");
  // Leading zeros are decimal, and --max-t beyond a float is no limit.
  const Run ok = run_raypick("pick '" + scene.string() +
                             "' --ray 0,0,-5,0,0,1 --all --limit 010 --max-t 1e39 --format json");
  CHECK(ok.status == 0);
  CHECK(nlohmann::json::parse(ok.out)["hits"].size() == 2);
}

TEST_CASE("bench and validate check their inputs and output paths before printing anything") {
  const fs::path scene = write("scene.obj", kScene);
  const std::string missing = (temp_dir() / "nope.obj").string();
  const std::string no_dir = (temp_dir() / "no_such_dir" / "x").string();
  SUBCASE("bench with a missing scene file, even after a good one") {
    const Run r = run_raypick("bench --quick '" + scene.string() + "' --scene '" + missing + "'");
    check_refused(r, 1, "raypick: " + missing + ": cannot open file: No such file or directory\n");
  }
  SUBCASE("bench with a JSON file that cannot be written") {
    const Run r = run_raypick("bench --quick --scene boxes --json '" + no_dir + ".json'");
    check_refused(r, 1, "raypick: " + no_dir + ".json: cannot write the JSON file: No such file or directory\n");
  }
  SUBCASE("bench and validate that fail leave their output files as they were") {
    // One that was there keeps its contents; one the command created is
    // removed again.
    const fs::path kept = write("kept.json", "old\n");
    const fs::path fresh = temp_dir() / "fresh.out";
    fs::remove(fresh);
    for (const fs::path& out : {kept, fresh}) {
      CAPTURE(out);
      Run r = run_raypick("bench --quick --json '" + out.string() + "' '" + missing + "'");
      CHECK(r.status == 1);
      r = run_raypick("validate '" + missing + "' --rays 100 --dump '" + out.string() + "'");
      CHECK(r.status == 1);
    }
    CHECK(raypick::test::slurp(kept) == "old\n");
    CHECK_FALSE(fs::exists(fresh));
  }
  SUBCASE("bench with a scene no ray can hit") {
    const fs::path flat = write("nothing.obj", "o empty\nv 0 0 0\n");
    const Run r = run_raypick("bench --quick '" + flat.string() + "'");
    CHECK(r.status == 1);
    CHECK(r.out.empty());
  }
  SUBCASE("validate with a dump file that cannot be written") {
    const Run r = run_raypick("validate '" + scene.string() + "' --rays 100 --dump '" + no_dir + "'");
    check_refused(r, 1, "raypick: " + no_dir + ": cannot write the dump file: No such file or directory\n");
  }
}

TEST_CASE("every command that loads a scene takes --root and the load budgets") {
  const fs::path scene = write("scene.obj", kScene);
  const std::string s = "'" + scene.string() + "'";
  const std::string opts = " --root '" + temp_dir().string() +
                           "' --max-bytes 100000 --max-vertices 1000 --max-triangles 1000 "
                           "--max-objects 100";
  CHECK(run_raypick("pick " + s + " --ray 0,0,-5,0,0,1" + opts).status == 0);
  CHECK(run_raypick("info " + s + opts).status == 0);
  CHECK(run_raypick("validate " + s + " --rays 100" + opts).status == 0);
  CHECK(run_raypick("bench --quick " + s + " --ray-kind camera --camera 8x8" + opts).status == 0);
  const std::string cam = " --eye 0,0,-5 --target 0,0,0 --size 8x8";
  CHECK(run_raypick("pick " + s + cam + " --pixel 4,4" + opts).status == 0);
  CHECK(run_raypick("select " + s + cam + " --rect 0,0,8,8" + opts).status == 0);
  CHECK(run_raypick("render " + s + cam + " --out '" + (temp_dir() / "root.png").string() +
                    "'" + opts)
            .status == 0);
  CHECK(run_raypick("validate " + s + cam + " --image '" + (temp_dir() / "root.png").string() +
                    "'" + opts)
            .status == 0);
  for (const char* command : {"pick", "info", "validate", "bench", "select", "render"}) {
    CAPTURE(command);
    const Run r = run_raypick(std::string(command) + " --help");
    CHECK(r.out.find("--root DIR") != std::string::npos);
    // The help shows the API's default, whatever it is.
    CHECK(r.out.find("--max-triangles N=" +
                     std::to_string(raypick::LoadBudget{}.max_triangles)) !=
          std::string::npos);
  }
  const Run r = run_raypick("info " + s + " --root '" + (temp_dir() / "none").string() + "'");
  CHECK(r.status == 2);
  CHECK(r.err == "raypick: --root: '" + (temp_dir() / "none").string() +
                     "': No such file or directory (see raypick --help)\n");
}

#ifndef RAYPICK_TEST_ASAN
TEST_CASE("running out of memory is one message naming the command (and scene), exit 1") {
  const fs::path scene = write("scene.obj", kScene);
  constexpr long kKib = 1000000;  // about 1 GB; 100,000,000 rays need 3.2 GB
  Run r = raypick::test::run_raypick_in_memory(
      "validate '" + scene.string() + "' --rays 100000000", kKib);
  check_refused(r, 1, "raypick: validate: out of memory (" + scene.string() + ")\n");
  r = raypick::test::run_raypick_in_memory(
      "bench --scene boxes --n 100 --rays 100000000 --ray-kind incoherent", kKib);
  CHECK(r.status == 1);
  CHECK(r.err.find("raypick: bench: out of memory\n") != std::string::npos);
  // The same commands with memory to spare run (so the cap is the cause).
  CHECK(raypick::test::run_raypick_in_memory("validate '" + scene.string() + "' --rays 1000",
                                            kKib)
            .status == 0);
}
#endif

TEST_CASE("names with quotes, backslashes, tabs and ESC reach a JSON reader exactly") {
  // Each format stores the name as its file holds it; only the output
  // escapes it: RFC 8259 escapes in JSON, \xNN in text.
  const std::string name = std::string("say \"hi\"\\ \t\x1B[31m") + "red \xC3\xA9";
  const nlohmann::json gltf_name = name;
  const fs::path gltf = write(
      "names.gltf",
      R"({"asset":{"version":"2.0"},"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0,"name":)" +
          gltf_name.dump() +
          R"(}],"meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],)"
          R"("accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3",)"
          R"("min":[0,0,0],"max":[1,1,0]}],"bufferViews":[{"buffer":0,"byteLength":36}],)"
          R"("buffers":[{"byteLength":36,"uri":"data:application/octet-stream;base64,)"
          R"(AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA"}]})");
  const fs::path obj = write("names.obj", "o " + name + "\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  for (const fs::path& scene : {gltf, obj}) {
    CAPTURE(scene);
    Run r = run_raypick("pick '" + scene.string() + "' --ray 0.2,0.2,1,0,0,-1 --format json");
    REQUIRE(r.status == 0);
    CHECK(nlohmann::json::parse(r.out)["name"] == name);
    CHECK(r.out.find('\x1B') == std::string::npos);
    CHECK(r.out.find('\t') == std::string::npos);
    const fs::path rays = write("names_rays.txt", "0.2 0.2 1 0 0 -1\n");
    r = run_raypick("pick '" + scene.string() + "' --rays '" + rays.string() + "'");
    REQUIRE(r.status == 0);
    CHECK(nlohmann::json::parse(r.out)["name"] == name);
    // Text output shows the controls visibly escaped, the rest as is.
    r = run_raypick("pick '" + scene.string() + "' --ray 0.2,0.2,1,0,0,-1");
    REQUIRE(r.status == 0);
    CHECK(r.out.find("'say \"hi\"\\ \\x09\\x1B[31mred \xC3\xA9'") != std::string::npos);
  }
}

TEST_CASE("nearest prints the nearest object, its nearest point and distance, as text and JSON") {
  const fs::path scene = write("scene.obj", kScene);
  // 2.5 above the near cube's top face (z = 0.5).
  Run r = run_raypick("nearest '" + scene.string() + "' --point 0,0,3");
  CHECK(r.status == 0);
  CHECK(r.out == "point 0: object 0 'near' at distance 2.5, closest (0, 0, 0.5)\n");
  r = run_raypick("nearest '" + scene.string() + "' --point 0.25,0.25,3 --mode mesh --format json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["point"] == 0);
  CHECK(j["hit"] == true);
  CHECK(j["object"] == 0);
  CHECK(j["name"] == "near");
  CHECK(j["distance"].get<double>() == 2.5);
  CHECK(j["closest"] == nlohmann::json::array({0.25, 0.25, 0.5}));
  CHECK(j.contains("triangle"));
  // Inside a box: distance 0 in obb mode; the nearest face in mesh mode.
  r = run_raypick("nearest '" + scene.string() + "' --point 0,0,10.25 --format json");
  CHECK(nlohmann::json::parse(r.out)["distance"].get<double>() == 0.0);
  CHECK(nlohmann::json::parse(r.out)["object"] == 1);
  r = run_raypick("nearest '" + scene.string() + "' --point 0,0,10.25 --mode mesh --format json");
  CHECK(nlohmann::json::parse(r.out)["distance"].get<double>() == 0.25);
}

TEST_CASE("nearest --points writes one JSON line per point, misses beyond --max-distance") {
  const fs::path scene = write("scene.obj", kScene);
  const fs::path points = write("points.txt", "# quad, nothing, far cube\n5.5 0 0\n\n0 40 0\n0,0,12\n");
  const std::vector<nlohmann::json> rows = nearest_rows(scene, points, "--max-distance 2");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["point"] == 0);
  CHECK(rows[0]["name"] == "quad");
  CHECK(rows[0]["distance"].get<double>() == 0.5);
  CHECK(rows[1] == nlohmann::json::parse(R"({"point":1,"hit":false})"));
  CHECK(rows[2]["name"] == "far");
  CHECK(rows[2]["distance"].get<double>() == 1.5);
  CHECK(rows[2]["closest"] == nlohmann::json::array({0, 0, 10.5}));
}

TEST_CASE("nearest --inside and --signed: inside the cubes, on a face, outside, and past --max-distance") {
  // Two closed, outward-wound cubes (JSON "box" meshes): [-0.5, 0.5]^3 and
  // the same at z = 10.
  const fs::path scene = write("cubes.json", R"({"raypick_scene": 1,
    "meshes": [{"name": "cube", "box": {"min": [-0.5, -0.5, -0.5], "max": [0.5, 0.5, 0.5]}}],
    "objects": [{"name": "near", "mesh": "cube"},
                {"name": "far", "mesh": "cube", "translate": [0, 0, 10]}]})");
  // Inside the far cube 0.25 below its top; on the near cube's top face;
  // 2.5 above it.
  const fs::path points = write("points.txt", "0 0 10.25\n0.1 0.2 0.5\n0 0 3\n");
  const std::vector<nlohmann::json> rows =
      nearest_rows(scene, points, "--mode mesh --inside --signed");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["name"] == "far");
  CHECK(rows[0]["inside"] == true);
  CHECK(rows[0]["distance"].get<double>() == -0.25);
  CHECK(rows[1]["name"] == "near");
  CHECK(rows[1]["inside"] == true);  // on the surface counts as inside
  CHECK(std::abs(rows[1]["distance"].get<double>()) < 1e-12);
  CHECK(rows[2]["inside"] == false);
  CHECK(rows[2]["distance"].get<double>() == 2.5);
  // Without --signed the distance stays positive; a miss still says inside.
  Run r = run_raypick("nearest '" + scene.string() +
                  "' --point 0,0,10.25 --mode mesh --inside --max-distance 0.2 --format json");
  CHECK(r.out == "{\"point\":0,\"hit\":false,\"inside\":true}\n");
  r = run_raypick("nearest '" + scene.string() + "' --point 0,0,10.25 --mode mesh --inside");
  CHECK(r.out ==
        "point 0: object 1 'far' triangle 10 at distance 0.25, closest (0, 0, 10.5) (inside)\n");
  // obb mode has no triangles to be inside of.
  r = run_raypick("nearest '" + scene.string() + "' --point 0,0,0 --inside");
  CHECK(r.status == 2);
  CHECK(r.err.find("--inside needs --mode mesh") != std::string::npos);
  r = run_raypick("nearest '" + scene.string() + "' --point 0,0,0 --signed");
  CHECK(r.status == 2);
}

TEST_CASE("validate --points checks closest points against Embree and brute force") {
  check_out_has(run_raypick("validate --boxes 300 --points 1500 --mode mesh"), 0,
                {"points:         1500 (seed 1)", "agree:          1500 ", "real mismatches: 0\n"});
  check_out_has(run_raypick("validate --boxes 300 --points 1500 --offset 1e5,-2e5,3e5"), 0,
                {"agree:          1500 "});
  Run r = run_raypick("validate --boxes 30 --points 10 --rays 5");
  CHECK(r.status == 2);
  CHECK(r.err.find("--points does not go with --rays") != std::string::npos);
  r = run_raypick("validate --boxes 30 --points 0");
  CHECK(r.status == 2);
}

TEST_CASE("nearest refuses bad points with file and line, and bad options with exit 2") {
  const fs::path scene = write("scene.obj", kScene);
  const fs::path points = write("bad_points.txt", "0 0 0\n\n1 2\n");
  Run r = run_raypick("nearest '" + scene.string() + "' --points '" + points.string() + "'");
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("bad_points.txt:3: expected 3 numbers") != std::string::npos);
  r = run_raypick("nearest '" + scene.string() + "' --point 0,nan,0");
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  // Beyond the scenes' range: its distance would print as a float "inf".
  const fs::path far = write("far_points.txt", "0 0 0\n1 2 3e38\n");
  r = run_raypick("nearest '" + scene.string() + "' --points '" + far.string() + "' --format jsonl");
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("far_points.txt:2: each coordinate must lie within +-1e+11") !=
        std::string::npos);
  r = run_raypick("nearest '" + scene.string() + "' --point 2e11,0,0");
  CHECK(r.status == 1);
  CHECK(r.err.find("--point '2e11,0,0': each coordinate must lie within +-1e+11") !=
        std::string::npos);
  r = run_raypick("nearest '" + scene.string() + "' --point 1e11,-1e11,0 --format jsonl");
  CHECK(r.status == 0);
  CHECK(r.out.find("inf") == std::string::npos);
  // The same bound for pixels, none for a camera's vectors.
  const std::string cam = " --eye 0,0,-5 --target 0,0,0 --size 8x8";
  r = run_raypick("pick '" + scene.string() + "'" + cam + " --pixel 4,2e11");
  CHECK(r.status != 0);
  CHECK(r.err.find("each coordinate must lie within +-1e+11") != std::string::npos);
  CHECK(run_raypick("pick '" + scene.string() + "'" + cam + " --up 0,1e12,0 --pixel 4,4").status == 0);
  r = run_raypick("nearest '" + scene.string() + "' --point 0,0,0 --max-distance -1");
  CHECK(r.status == 2);
  r = run_raypick("nearest '" + scene.string() + "' --points '" + points.string() + "' --format json");
  CHECK(r.status == 2);
  r = run_raypick("nearest '" + scene.string() + "'");
  CHECK(r.status == 2);
}
