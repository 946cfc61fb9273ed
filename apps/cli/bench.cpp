// `raypick bench [SCENE...] [--scene boxes,crowd,FILE] [--n N,...] ...`:
// the options, the plan they make (scenes, sizes, --quick's settings) and
// the call into the engine, apps/bench/bench_harness.h. docs/performance.md
// documents the command and its columns.
#include "command.h"
#include "common.h"

#include "bench_harness.h"
#include "bench_scenes.h"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace raypick::cli {
namespace {

using bench::ModeChoice;
using bench::Profile;
using bench::SceneKind;
using bench::SceneSpec;
using bench::Settings;

// --ray-kind: the ray sets.
enum class RayKinds { kIncoherent, kCamera, kBoth };

// The closest-point row's queries (--quick: 2000).
constexpr std::size_t kPointQueries = 20000;

// What the options say: the plan and settings are made from the first
// fields; the rest go to the bench as they are.
struct BenchArgs {
  std::vector<std::string> scenes;  // boxes, crowd or a scene file
  std::vector<std::string> files;   // positional SCENE files
  std::vector<std::size_t> n;
  RayKinds ray_kind = RayKinds::kBoth;
  std::size_t rays = 1000000;
  std::string camera = "1024x1024";
  int runs = 5;
  bool quick = false;
  bool no_frames = false;
  bool no_points = false;
  bench::Bench bench;  // mode, threads, seed, json, model, offset, profile, load
  // Which options were given, so that --quick only changes the others.
  CLI::Option* rays_opt = nullptr;
  CLI::Option* camera_opt = nullptr;
  CLI::Option* runs_opt = nullptr;
};

// Registers bench's options on its subcommand `cmd`, bound to `a`.
void add_bench_options(CLI::App& cmd, BenchArgs& a) {
  cmd.add_option("SCENE", a.files, "Scene files to bench (as --scene FILE)");
  cmd.add_option("--scene", a.scenes,
                 "boxes, crowd or a scene file; repeatable or a list "
                 "(default: boxes,crowd)")
      ->delimiter(',');
  cmd.add_option("--n", a.n,
                 "Objects in generated scenes; repeatable or a list "
                 "(default: boxes 10000,1000000; crowd 300,10000)")
      ->delimiter(',')
      ->transform(whole_number(1, 100000000));
  add_enum_option(cmd, "--mode", a.bench.mode,
                  EnumNames<ModeChoice>{{"obb", ModeChoice::kObb},
                                        {"mesh", ModeChoice::kMesh},
                                        {"both", ModeChoice::kBoth},
                                        {"auto", ModeChoice::kAuto}},
                  "obb, mesh, both, or auto (default): obb for boxes and "
                  "files, mesh for crowd");
  add_enum_option(cmd, "--ray-kind", a.ray_kind,
                  EnumNames<RayKinds>{{"incoherent", RayKinds::kIncoherent},
                                      {"camera", RayKinds::kCamera},
                                      {"both", RayKinds::kBoth}},
                  "incoherent, camera or both (default)");
  a.rays_opt = cmd.add_option("--rays", a.rays, "Incoherent rays")
                   ->capture_default_str()
                   ->transform(whole_number(1, 100000000));
  a.camera_opt = cmd.add_option("--camera", a.camera,
                                "Camera rays: WxH pixels, 60 degree field "
                                "of view")
                     ->capture_default_str();
  a.runs_opt = cmd.add_option("--runs", a.runs,
                              "Runs of every measurement; the median is "
                              "reported")
                   ->capture_default_str()
                   ->transform(whole_number(1, 1000));
  cmd.add_option("--threads", a.bench.threads,
                 "Threads (Embree device and TBB) for builds and batch "
                 "queries; a list runs each (default 1)")
      ->delimiter(',')
      ->transform(whole_number(1, 1024));
  cmd.add_option("--seed", a.bench.seed, "Seed of scenes and rays")
      ->capture_default_str()
      ->transform(whole_number(0));
  cmd.add_option("--json", a.bench.json, "Also write the rows to FILE as JSON");
  cmd.add_option("--model", a.bench.model, "The crowd scenes' model")
      ->capture_default_str();
  cmd.add_option("--offset", a.bench.offset,
                 "X,Y,Z: move every object of every scene by this offset "
                 "(a scene far from the origin)")
      ->delimiter(',')
      ->expected(3)
      ->check(CLI::Range(-1e30, 1e30));
  cmd.add_flag("--quick", a.quick,
               "Tiny sizes for CI: boxes 1000, crowd 10, 10000 rays, "
               "camera 64x64, 1 run (options given explicitly win)");
  cmd.add_flag("--no-frames", a.no_frames,
               "Leave out the dynamic frame row (1% of the objects moved, a commit "
               "and 1,000 camera rays per frame, against Embree's best dynamic build)");
  cmd.add_flag("--no-points", a.no_points,
               "Leave out the closest-point rows (one per mode: 20,000 points near the "
               "surfaces and in the scene's box, against Embree's rtcPointQuery)");
  add_enum_option(cmd, "--isa", a.bench.isa,
                  EnumNames<Isa>{{"auto", Isa::kAuto},
                                 {"sse2", Isa::kSse2},
                                 {"avx2", Isa::kAvx2},
                                 {"avx512", Isa::kAvx512}},
                  "raypick's node test (PickerConfig::isa): auto (the default: avx512, a "
                  "16-wide top level, where the CPU has AVX-512, else avx2, or sse2 without "
                  "AVX2), sse2, avx2 or "
                  "avx512; the JSON "
                  "rows name the one each picker ran (node_test)");
  add_enum_option(cmd, "--top-width", a.bench.top_width,
                  EnumNames<int>{{"auto", 0}, {"8", 8}, {"16", 16}},
                  "raypick's top-level nodes (PickerConfig::top_width): auto (the default: as "
                  "--isa decides), 8 or 16 slots on any CPU; the JSON rows name the width "
                  "each picker built (top_width)");
  add_enum_option(cmd, "--profile", a.bench.profile,
                  EnumNames<Profile>{{"raypick", Profile::kRaypick},
                                     {"embree", Profile::kEmbree}},
                  "raypick or embree: build and run only that system's "
                  "single-ray loop (no timing, no checks), for a profiler");
  cmd.add_option("--profile-passes", a.bench.profile_passes,
                 "With --profile: passes of the single-ray loop over the rays")
      ->capture_default_str()
      ->transform(whole_number(0, 1000));
  add_load_options(cmd, a.bench.load);
}

// --quick's sizes where the options were not given, and --camera read;
// nullopt, reported, when --camera is not WxH.
std::optional<Settings> settings_of(const BenchArgs& a) {
  Settings s;
  s.ray_count = a.rays;
  std::string camera_text = a.camera;
  s.runs = a.runs;
  if (a.quick) {
    if (a.rays_opt->count() == 0) s.ray_count = 10000;
    if (a.camera_opt->count() == 0) camera_text = "64x64";
    if (a.runs_opt->count() == 0) s.runs = 1;
  }
  const auto resolution = tools::parse_resolution(camera_text);
  if (!resolution) {
    fail(kExitUsage, "bench: --camera '" + camera_text + "': expected WxH, e.g. 1024x1024");
    return std::nullopt;
  }
  std::tie(s.width, s.height) = *resolution;
  s.incoherent = a.ray_kind != RayKinds::kCamera;
  s.camera = a.ray_kind != RayKinds::kIncoherent;
  s.frames = !a.no_frames;
  s.points = !a.no_points;
  s.point_count = a.quick ? 2000 : kPointQueries;
  return s;
}

// The plan: scenes in the order given, each with its sizes.
std::vector<SceneSpec> plan_of(const BenchArgs& a) {
  std::vector<std::string> names = a.scenes;
  names.insert(names.end(), a.files.begin(), a.files.end());
  if (names.empty()) names = {"boxes", "crowd"};
  std::vector<SceneSpec> specs;
  for (const std::string& name : names) {
    if (name != "boxes" && name != "crowd") {
      specs.push_back({SceneKind::kFile, name, 0});
      continue;
    }
    const bool boxes = name == "boxes";
    std::vector<std::size_t> sizes = a.n;
    if (sizes.empty() && a.quick) {
      sizes = {boxes ? std::size_t{1000} : std::size_t{10}};
    } else if (sizes.empty()) {
      sizes = boxes ? std::vector<std::size_t>{10000, 1000000}
                    : std::vector<std::size_t>{300, 10000};
    }
    for (std::size_t n : sizes) {
      specs.push_back({boxes ? SceneKind::kBoxes : SceneKind::kCrowd, "", n});
    }
  }
  return specs;
}

class BenchCommand final : public Command {
 public:
  explicit BenchCommand(CLI::App& app)
      : Command(app.add_subcommand(
            "bench",
            "Race raypick against Embree's best configuration on generated scenes "
            "(boxes-N, crowd-N) or scene files; answers checked, median of runs")) {
    add_bench_options(*cmd_, args_);
  }

  // Exit status: bench::run's, or 2 for a bad option value.
  int run() const override {
    const std::optional<Settings> settings = settings_of(args_);
    if (!settings) return kExitUsage;
    bench::Bench b = args_.bench;
    b.settings = *settings;
    b.specs = plan_of(args_);
    return bench::run(b);
  }

 private:
  BenchArgs args_;
};

}  // namespace

std::unique_ptr<Command> add_bench(CLI::App& app) { return std::make_unique<BenchCommand>(app); }

}  // namespace raypick::cli
