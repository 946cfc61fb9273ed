// raypick: the command line. Parses, calls loaders and bvh, prints; the
// algorithms live in the libraries and in apps/tools.
#include "../tools/embree_scene.h"
#include "../tools/ray_io.h"
#include "../tools/scene_gen.h"
#include "../tools/validate.h"
#include "bench.h"
#include "screen.h"

#include "raypick/bvh/picker.h"
#include "raypick/loaders/load.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

using namespace raypick;
using Clock = std::chrono::steady_clock;

constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

// Every failure leaves through here: one line on stderr, then the status.
int fail(int status, const std::string& message) {
  std::fflush(stdout);
  std::cerr << "raypick: " << message << "\n";
  return status;
}

struct Loaded {
  Scene scene;
  double load_ms = 0.0;
};

// Loads a scene file, or reports why not (status 1 or 2 in `status`).
std::optional<Loaded> load_or_report(const std::string& path, int& status) {
  const auto start = Clock::now();
  LoadResult r = load_scene(path);
  if (!r.ok()) {
    const LoadError& err = *r.error;
    status = fail(err.kind == LoadError::Kind::kUnsupported ? kExitUsage
                                                             : kExitBadInput,
                  err.to_string());
    return std::nullopt;
  }
  // Warnings do not stop the job; each gets its own prefixed line.
  std::istringstream warnings(r.warnings);
  for (std::string line; std::getline(warnings, line);) {
    if (!line.empty()) {
      std::cerr << "raypick: warning: " << path << ": " << line << "\n";
    }
  }
  return Loaded{std::move(*r.scene), ms_since(start)};
}

PickMode parse_mode(const std::string& mode) {
  return mode == "mesh" ? PickMode::kMesh : PickMode::kObb;
}

// ---------------------------------------------------------------- pick ---

struct PickArgs {
  std::string scene;
  std::string ray;
  std::string rays;
  std::string mode = "obb";
  std::string format;
  bool all = false;
  std::size_t limit = 0;  // 0: no limit
  float max_t = kInfinity;
  std::uint32_t mask = ~0u;
};

int run_pick(const PickArgs& a) {
  int status = 0;
  if (a.ray.empty() == a.rays.empty()) {
    return fail(kExitUsage, "pick: give exactly one of --ray, --rays, --pixel and --pixels");
  }
  if (!(a.max_t >= 0.0f)) {
    return fail(kExitUsage, "pick: --max-t must be a number >= 0");
  }
  const PickMode mode = parse_mode(a.mode);
  const std::string format =
      !a.format.empty() ? a.format : (a.ray.empty() ? "jsonl" : "text");
  if (format == "json" && a.ray.empty()) {
    return fail(kExitUsage,
                "pick: --format json is for a single --ray; use --format "
                "jsonl with --rays");
  }
  // All rays are read and checked before anything is printed, so bad input
  // never leaves a partial answer on stdout.
  tools::RayList rays;
  if (!a.ray.empty()) {
    std::string error;
    std::optional<Ray> ray = tools::parse_ray(a.ray, error);
    if (!ray) return fail(kExitBadInput, "--ray '" + a.ray + "': " + error);
    rays.rays.push_back(*ray);
  } else if (a.rays == "-") {
    rays = tools::read_rays(std::cin, "<stdin>");
  } else {
    std::ifstream in(a.rays);
    if (!in) return fail(kExitBadInput, a.rays + ": cannot open rays file");
    rays = tools::read_rays(in, a.rays);
  }
  if (!rays.ok()) return fail(kExitBadInput, rays.error);
  for (Ray& ray : rays.rays) ray.tmax = a.max_t;

  std::optional<Loaded> loaded = load_or_report(a.scene, status);
  if (!loaded) return status;
  PickerConfig config;
  config.mesh_mode = mode == PickMode::kMesh;
  const Picker picker(loaded->scene, config);
  std::vector<std::string> names;
  names.reserve(loaded->scene.objects.size());
  for (const Object& o : loaded->scene.objects) names.push_back(o.name);

  const QueryOptions options(mode, a.mask);
  std::string out;
  for (std::size_t i = 0; i < rays.rays.size(); ++i) {
    const Ray& ray = rays.rays[i];
    if (a.all) {
      const std::vector<Hit> hits = picker.intersect_all(
          ray, options, a.limit == 0 ? SIZE_MAX : a.limit);
      if (format == "text") {
        if (hits.empty()) out += tools::hit_to_text(i, ray, Hit{}, "") + '\n';
        for (const Hit& h : hits) {
          out += tools::hit_to_text(i, ray, h, names[h.object]) + '\n';
        }
      } else {
        out += tools::hits_to_json(i, ray, hits, names) + '\n';
      }
    } else {
      const Hit hit = picker.intersect(ray, options);
      const std::string& name = hit.hit() ? names[hit.object] : std::string();
      out += format == "text" ? tools::hit_to_text(i, ray, hit, name)
                              : tools::hit_to_json(i, ray, hit, name);
      out += '\n';
    }
    if (out.size() > (1 << 16)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    return fail(kExitBadInput, "cannot write to standard output");
  }
  return 0;
}

// ------------------------------------------------------------ validate ---

struct ValidateArgs {
  std::string scene;
  std::size_t boxes = 0;
  std::size_t rays = 100000;
  std::uint64_t seed = 1;
  std::string mode = "obb";
  std::string dump;
};

int run_validate(const ValidateArgs& a) {
  int status = 0;
  if (a.scene.empty() == (a.boxes == 0)) {
    return fail(kExitUsage,
                "validate: give a SCENE file or --boxes N, not both");
  }
  const PickMode mode = parse_mode(a.mode);
  Loaded loaded;
  std::string label;
  if (a.boxes > 0) {
    const auto start = Clock::now();
    const tools::BoxesOptions opt = tools::mixed_options();
    loaded.scene = mode == PickMode::kMesh
                       ? tools::make_mesh_scene(a.boxes, a.seed, opt)
                       : tools::make_boxes_scene(a.boxes, a.seed, opt);
    loaded.load_ms = ms_since(start);
    label = "generated boxes-" + std::to_string(a.boxes) + " (seed " +
            std::to_string(a.seed) + ")";
  } else {
    std::optional<Loaded> l = load_or_report(a.scene, status);
    if (!l) return status;
    loaded = std::move(*l);
    label = a.scene;
  }
  const Scene& scene = loaded.scene;

  auto start = Clock::now();
  const Picker picker(scene);
  const double build_ms = ms_since(start);
  start = Clock::now();
  std::optional<tools::EmbreeScene> embree;
  try {
    embree.emplace(scene, mode);
  } catch (const std::exception& e) {
    return fail(kExitBadInput, e.what());
  }
  const double embree_ms = ms_since(start);

  const std::vector<Ray> rays =
      tools::make_validation_rays(scene, picker, a.rays, a.seed, mode);
  const bool tty = isatty(fileno(stderr));
  start = Clock::now();
  const tools::ValidateReport rep = tools::validate(
      scene, picker, *embree, mode, rays, [&](std::size_t done) {
        if (tty) {
          std::fprintf(stderr, "\rvalidate: %zu / %zu rays", done,
                       rays.size());
          if (done == rays.size()) std::fputc('\n', stderr);
        }
      });
  const double query_ms = ms_since(start);

  using tools::Verdict;
  std::printf("scene:          %s\n", label.c_str());
  std::printf("objects:        %zu (%zu triangles)\n", scene.objects.size(),
              scene.triangle_count());
  std::printf("mode:           %s\n", a.mode.c_str());
  std::printf("rays:           %zu (seed %llu)\n", rep.rays,
              static_cast<unsigned long long>(a.seed));
  std::printf("hits:           raypick %zu, embree %zu\n", rep.raypick_hits,
              rep.embree_hits);
  std::printf("agree:          %zu (max |dt| %.3g)\n",
              rep.count(Verdict::kAgree), rep.max_dt_agree);
  std::printf("float noise:    %zu (same object, |dt| <= %.0e * scale; max "
              "|dt| %.3g)\n",
              rep.count(Verdict::kFloatNoise), tools::kTol, rep.max_dt);
  std::printf("tie:            %zu\n", rep.count(Verdict::kTie));
  std::printf("boundary:       %zu (rays grazing a box or an edge, rounded "
              "differently)\n",
              rep.count(Verdict::kBoundary));
  if (mode == PickMode::kObb) {
    std::printf("origin inside:  %zu (raypick t = 0; Embree sees only "
                "surfaces)\n",
                rep.count(Verdict::kOriginInside));
  } else {
    std::printf("obb vs mesh:    %zu rays (%.1f%%) pick a different object "
                "(or hit / miss) in obb mode\n",
                rep.obb_mesh_differ,
                100.0 * double(rep.obb_mesh_differ) / double(rep.rays));
  }
  std::printf("real mismatches: %zu\n", rep.mismatches());
  std::printf("time:           load %.1f ms, raypick build %.1f ms, embree "
              "build %.1f ms, compare %.1f ms\n",
              loaded.load_ms, build_ms, embree_ms, query_ms);
  for (const tools::Disagreement& d : rep.disagreements) {
    if (d.verdict == Verdict::kMismatch) {
      std::printf("mismatch: ray %zu: %s\n", d.ray_index, d.detail.c_str());
    }
  }
  if (!a.dump.empty()) {
    std::ofstream out(a.dump);
    tools::write_dump(out, rep);
    if (!out) return fail(kExitBadInput, a.dump + ": cannot write dump file");
    std::printf("dump:           %zu rays written to %s\n",
                rep.disagreements.size(), a.dump.c_str());
  }
  std::fflush(stdout);
  return rep.mismatches() == 0 ? 0 : kExitBadInput;
}

// ---------------------------------------------------------------- info ---

int run_info(const std::string& path) {
  int status = 0;
  std::optional<Loaded> loaded = load_or_report(path, status);
  if (!loaded) return status;
  const Scene& scene = loaded->scene;
  const auto start = Clock::now();
  const Picker picker(scene);
  const double build_ms = ms_since(start);
  std::size_t hittable = 0;
  for (std::uint32_t i = 0; i < picker.object_count(); ++i) {
    hittable += !picker.world_box(i).empty();
  }
  const BvhStats s = picker.bvh_stats();
  Aabb b;  // the OBBs' world boxes, without the BVH's rounding margin
  for (std::uint32_t i = 0; i < picker.object_count(); ++i) {
    b.extend(picker.obb(i).world_bounds());
  }
  std::printf("scene:      %s\n", path.c_str());
  std::printf("objects:    %zu (%zu can be hit)\n", scene.objects.size(),
              hittable);
  std::printf("meshes:     %zu\n", scene.meshes.size());
  std::printf("triangles:  %zu\n", scene.triangle_count());
  if (b.empty()) {
    std::printf("bounds:     empty\n");
  } else {
    std::printf("bounds:     [%s, %s, %s] .. [%s, %s, %s]\n",
                tools::format_float(b.min.x).c_str(),
                tools::format_float(b.min.y).c_str(),
                tools::format_float(b.min.z).c_str(),
                tools::format_float(b.max.x).c_str(),
                tools::format_float(b.max.y).c_str(),
                tools::format_float(b.max.z).c_str());
  }
  std::printf("bvh:        %zu nodes, %zu leaves, depth %d, leaf size "
              "%u..%u (mean %.2f), SAH cost %.2f\n",
              s.nodes, s.leaves, s.max_depth, s.min_leaf_size,
              s.max_leaf_size, s.mean_leaf_size, s.sah_cost);
  std::printf("time:       load %.2f ms, build %.2f ms\n", loaded->load_ms,
              build_ms);
  for (std::size_t i = 0; i < scene.objects.size() && i < 20; ++i) {
    const Object& o = scene.objects[i];
    std::printf("  object %zu '%s': %zu triangles\n", i, o.name.c_str(),
                scene.meshes[o.mesh].triangles.size());
  }
  if (scene.objects.size() > 20) {
    std::printf("  ... %zu more objects\n", scene.objects.size() - 20);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"raypick: pick objects in 3D scenes by ray casting, checked "
               "against Embree"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "raypick 0.1.0");

  PickArgs pick;
  CLI::App* pick_cmd = app.add_subcommand(
      "pick", "Cast rays into a scene and print the nearest object hit");
  pick_cmd->add_option("SCENE", pick.scene, "Scene file (.obj, .gltf, .glb, .json)")
      ->required();
  CLI::Option* ray_opt = pick_cmd->add_option(
      "--ray", pick.ray, "One ray: ox,oy,oz,dx,dy,dz");
  CLI::Option* rays_opt = pick_cmd->add_option(
      "--rays", pick.rays,
      "Rays file, one 'ox oy oz dx dy dz' per line; '-' reads stdin");
  ray_opt->excludes(rays_opt);
  pick_cmd->add_option("--mode", pick.mode,
                       "obb: nearest oriented bounding box (default); mesh: "
                       "nearest triangle, exact")
      ->check(CLI::IsMember({"obb", "mesh"}));
  CLI::Option* all_opt = pick_cmd->add_flag(
      "--all", pick.all,
      "Every object along the ray, nearest first (one hit per object)");
  pick_cmd->add_option("--limit", pick.limit,
                       "With --all: at most K hits per ray")
      ->needs(all_opt)
      ->check(CLI::PositiveNumber);
  pick_cmd->add_option("--mask", pick.mask,
                       "Only objects whose pick mask shares a bit with M "
                       "(a JSON scene's \"layer\": k is bit k)");
  pick_cmd->add_option("--max-t", pick.max_t,
                       "Only hits with t <= T (in units of the direction)")
      ->check(CLI::NonNegativeNumber);
  pick_cmd->add_option("--format", pick.format,
                       "Output: text (default for --ray), json (one ray), "
                       "jsonl (default for --rays)")
      ->check(CLI::IsMember({"text", "json", "jsonl"}));

  raypick::cli::PixelPick pixel_pick(*pick_cmd);

  ValidateArgs val;
  CLI::App* val_cmd = app.add_subcommand(
      "validate",
      "Compare raypick with Embree on random rays; exits 1 on any real "
      "mismatch");
  val_cmd->add_option("SCENE", val.scene, "Scene file (.obj, .gltf, .glb, .json)");
  val_cmd->add_option("--boxes", val.boxes,
                      "Validate a generated scene of N boxes instead (with "
                      "mirrored, sheared, flat and coincident ones)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10000000}));
  val_cmd->add_option("--rays", val.rays, "Number of random rays")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000000}));
  val_cmd->add_option("--seed", val.seed, "Seed of the random rays")
      ->capture_default_str();
  val_cmd->add_option("--mode", val.mode,
                      "obb (default) or mesh: Embree instances the meshes' "
                      "triangles")
      ->check(CLI::IsMember({"obb", "mesh"}));
  val_cmd->add_option("--dump", val.dump,
                      "Write the disagreeing rays to FILE (a rays file)");

  raypick::cli::ValidateImage validate_image(*val_cmd);

  std::string info_scene;
  CLI::App* info_cmd = app.add_subcommand(
      "info", "Print a scene's objects, bounds, BVH statistics and timings");
  info_cmd->add_option("SCENE", info_scene, "Scene file (.obj, .gltf, .glb, .json)")->required();

  raypick::cli::BenchCommand bench(app);
  raypick::cli::SelectCommand select(app);
  raypick::cli::RenderCommand render(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other error (CLI11's own exit() adds a second).
    return fail(kExitUsage, std::string(e.what()) + " (see raypick --help)");
  }
  try {
    if (*pick_cmd && pixel_pick.chosen()) {
      return pixel_pick.run({pick.scene, pick.mode, pick.format, pick.all,
                             pick.limit, pick.max_t, pick.mask});
    }
    if (*pick_cmd) return run_pick(pick);
    if (*val_cmd && validate_image.chosen()) {
      return validate_image.run(val.scene, val.boxes, val.seed, val.mode);
    }
    if (*val_cmd) return run_validate(val);
    if (*info_cmd) return run_info(info_scene);
    if (bench) return bench.run();
    if (select) return select.run();
    if (render) return render.run();
  } catch (const std::bad_alloc&) {
    return fail(kExitBadInput, "out of memory");
  } catch (const std::exception& e) {
    return fail(kExitBadInput, e.what());
  }
  return kExitUsage;
}
