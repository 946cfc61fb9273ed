// raypick: the command line. Parses, calls loaders and bvh, prints; the
// algorithms live in the libraries and in apps/tools.
#include "../tools/embree_scene.h"
#include "../tools/output_file.h"
#include "../tools/ray_io.h"
#include "../tools/scene_gen.h"
#include "../tools/validate.h"
#include "bench.h"
#include "common.h"
#include "screen.h"
#include "nearest.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"
#include "raypick/loaders/load.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <sstream>
#include <iostream>
#include <optional>
#include <string>
#include <unistd.h>

namespace {

using namespace raypick;
using cli::fail;
using cli::finish_output;
using cli::kExitBadInput;
using cli::kExitUsage;
using cli::Loaded;
using cli::load_or_report;
using cli::Clock;
using cli::ms_since;
using cli::PickArgs;
using cli::ValidateArgs;

// ---------------------------------------------------------------- pick ---

int run_pick(const PickArgs& a) {
  int status = 0;
  if (a.rays && a.rays->empty()) {
    return fail(kExitUsage,
                "pick: --rays needs a file name, or '-' for standard input");
  }
  if (!(a.max_t >= 0.0f)) {
    return fail(kExitUsage, "pick: --max-t must be a number >= 0");
  }
  const PickMode mode = a.mode;
  const std::string format =
      !a.format.empty() ? a.format : (a.ray ? "text" : "jsonl");
  if (format == "json" && !a.ray) {
    return fail(kExitUsage,
                "pick: --format json is for a single --ray; use --format "
                "jsonl with --rays");
  }
  // All rays are read and checked before anything is printed, so bad input
  // never leaves a partial answer on stdout.
  tools::RayList rays;
  if (a.ray) {
    std::string error;
    std::optional<RayD> ray = tools::parse_ray(*a.ray, error);
    if (!ray) {
      return fail(kExitBadInput,
                  "--ray '" + printable(*a.ray, 80) + "': " + error);
    }
    rays.rays.push_back(*ray);
  } else {
    rays = tools::read_rays(*a.rays);
  }
  if (!rays.ok()) return fail(kExitBadInput, rays.error);
  for (RayD& ray : rays.rays) ray.tmax = a.max_t;

  std::optional<Loaded> loaded = load_or_report(a.scene, a.load, status);
  if (!loaded) return status;
  const Picker picker(loaded->scene, cli::picker_config(mode));
  const std::vector<std::string> names = cli::object_names(loaded->scene);
  const QueryOptions options(mode, a.mask);
  std::string out;
  for (std::size_t i = 0; i < rays.rays.size(); ++i) {
    const RayD& ray = rays.rays[i];
    if (a.all) {
      const std::vector<Hit> hits = picker.intersect_all(
          ray, options, a.limit == 0 ? SIZE_MAX : a.limit);
      cli::write_buffered(out, cli::pick_answer(i, ray, hits, true, format, names));
    } else {
      const Hit hit = picker.intersect(ray, options);
      cli::write_buffered(
          out, cli::pick_answer(i, ray, {&hit, hit.hit() ? 1u : 0u}, false, format, names));
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return finish_output(0);
}

// ------------------------------------------------------------ validate ---

int run_validate(const ValidateArgs& a) {
  const PickMode mode = a.mode;
  // The dump file is opened before any work, so a bad path fails at once.
  tools::OutputFile dump;
  if (!a.dump.empty()) {
    const std::string error = dump.open(a.dump, "dump");
    if (!error.empty()) return fail(kExitBadInput, error);
  }
  std::string label;
  int status = 0;
  std::optional<Loaded> generated_or_loaded = cli::validation_scene(a, label, status);
  if (!generated_or_loaded) return status;
  Loaded& loaded = *generated_or_loaded;
  if (!a.offset.empty()) {
    const glm::dvec3 offset{a.offset[0], a.offset[1], a.offset[2]};
    tools::shift_scene(loaded.scene, offset);
    label += " shifted by (" + tools::format_float(float(offset.x)) + ", " +
             tools::format_float(float(offset.y)) + ", " +
             tools::format_float(float(offset.z)) + ")";
  }
  const Scene& scene = loaded.scene;

  auto start = Clock::now();
  const Picker picker(scene);
  const double build_ms = ms_since(start);
  start = Clock::now();
  const std::unique_ptr<tools::EmbreeScene> embree =
      cli::make_embree(scene, mode, status);
  if (!embree) return status;
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
  std::printf("mode:           %s\n", cli::mode_name(mode));
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
  if (mode == PickMode::kMesh && rep.count(Verdict::kBoundary) > 0) {
    const auto& h = rep.boundary_hint;
    std::printf("                %zu of them through a mesh vertex (%zu distinct), %zu along an "
                "edge",
                h.at_vertex, h.vertices, h.at_edge);
    if (h.top_count > 0) {
      std::printf("; the most, %zu, through object %u's vertex %u at (%s, %s, %s)", h.top_count,
                  h.top_object, h.top_vertex, tools::format_float(float(h.top_point.x)).c_str(),
                  tools::format_float(float(h.top_point.y)).c_str(),
                  tools::format_float(float(h.top_point.z)).c_str());
    }
    std::printf("\n");
  }
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
  std::printf("embree wrong:   %zu (Embree's answer refuted by the reference, "
              "raypick's right)\n",
              rep.count(Verdict::kEmbreeWrong));
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
    std::ostringstream text;
    tools::write_dump(text, rep);
    if (std::string e = dump.write(text.str()); !e.empty()) return fail(kExitBadInput, e);
    std::printf("dump:           %zu rays written to %s\n",
                rep.disagreements.size(), printable(a.dump).c_str());
  }
  return finish_output(rep.mismatches() == 0 ? 0 : kExitBadInput);
}

// ---------------------------------------------------------------- info ---

int run_info(const std::string& path, const LoadOptions& options) {
  int status = 0;
  std::optional<Loaded> loaded = load_or_report(path, options, status);
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
  const Aabb b = world_bounds(scene);  // without the BVH's rounding margin
  std::printf("scene:      %s\n", printable(path).c_str());
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
    std::printf("  object %zu '%s': %zu triangles\n", i,
                printable(o.name).c_str(),
                scene.meshes[o.mesh].triangles.size());
  }
  if (scene.objects.size() > 20) {
    std::printf("  ... %zu more objects\n", scene.objects.size() - 20);
  }
  // A glTF file's cameras, by the index and name --camera takes.
  if (!scene.cameras.empty()) std::printf("cameras:    %zu\n", scene.cameras.size());
  for (std::size_t i = 0; i < scene.cameras.size(); ++i) {
    const SceneCamera& c = scene.cameras[i];
    const std::string name = !c.name.empty() ? c.name : c.camera_name;
    std::printf("  camera %zu %s: %s\n", i,
                name.empty() ? "(no name)" : ("'" + printable(name) + "'").c_str(),
                c.projection == Projection::kPerspective
                    ? ("perspective, vertical fov " +
                       tools::format_float(static_cast<float>(c.fov_deg)) + " degrees").c_str()
                    : ("orthographic, view height " +
                       tools::format_float(static_cast<float>(c.ortho_height))).c_str());
  }
  return finish_output(0);
}

// CLI11 writes help and version to std::cout: checked like any output.
int help_written(int status) {
  if (!std::cout.flush()) {
    return fail(kExitBadInput, "cannot write to standard output");
  }
  return finish_output(status);
}

// "raypick: COMMAND: out of memory (SCENE)", exit 1. Building that line
// allocates; should that fail too, a fixed line is written instead.
int out_of_memory(const char* command, const std::string& scene) noexcept {
  try {
    std::string message = command;
    if (!message.empty()) message += ": ";
    message += "out of memory";
    if (!scene.empty()) message += " (" + scene + ")";
    return fail(kExitBadInput, message);
  } catch (...) {
    std::fputs("raypick: out of memory\n", stderr);
    return kExitBadInput;
  }
}

int run_main(int argc, char** argv) {
  CLI::App app{"raypick: pick objects in 3D scenes by ray casting, checked "
               "against Embree"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "raypick 0.1.0");

  PickArgs pick;
  CLI::App* pick_cmd = app.add_subcommand(
      "pick", "Cast rays into a scene and print the nearest object hit");
  pick_cmd->add_option("SCENE", pick.scene, "Scene file (.obj, .gltf, .glb, .json)")
      ->required();
  // Exactly one source of rays: CLI11 refuses none or two ("Exactly 1
  // option from [--ray,--rays,--pixel,--pixels]", exit 2).
  CLI::Option_group* ray_source = pick_cmd->add_option_group(
      "rays", "Where the rays come from: one ray, a rays file, or a camera's points");
  ray_source->add_option("--ray", pick.ray, "One ray: ox,oy,oz,dx,dy,dz");
  ray_source->add_option(
      "--rays", pick.rays,
      "Rays file, one 'ox oy oz dx dy dz' per line; '-' reads stdin");
  cli::add_enum_option(*pick_cmd, "--mode", pick.mode, cli::mode_names(),
                       "obb: nearest oriented bounding box (default); mesh: "
                       "nearest triangle, exact");
  CLI::Option* all_opt = pick_cmd->add_flag(
      "--all", pick.all,
      "Every object along the ray, nearest first (one hit per object)");
  pick_cmd->add_option("--limit", pick.limit,
                       "With --all: at most K hits per ray")
      ->needs(all_opt)
      ->transform(cli::whole_number(1));
  pick_cmd->add_option("--mask", pick.mask,
                       "Only objects whose pick mask shares a bit with M "
                       "(a JSON scene's \"layer\": k is bit k; decimal or "
                       "0x-hex)")
      ->transform(cli::whole_number(0, 0xFFFFFFFFu));
  pick_cmd->add_option("--max-t", pick.max_t,
                       "Only hits with t <= T (in units of the direction)")
      ->transform(cli::float_at_least(0.0));
  pick_cmd->add_option("--format", pick.format,
                       "Output: text (default for --ray), json (one ray), "
                       "jsonl (default for --rays)")
      ->check(CLI::IsMember({"text", "json", "jsonl"}));
  cli::add_load_options(*pick_cmd, pick.load);

  raypick::cli::PixelPick pixel_pick(*pick_cmd, *ray_source);
  ray_source->require_option(1);

  ValidateArgs val;
  CLI::App* val_cmd = app.add_subcommand(
      "validate",
      "Compare raypick with Embree on random rays; exits 1 on any real "
      "mismatch");
  // A SCENE or --boxes, exactly one ("Exactly 1 option from
  // [SCENE,--boxes]", exit 2).
  CLI::Option_group* val_scene = val_cmd->add_option_group(
      "scene", "What is validated: a scene file or a generated one");
  val_scene->add_option("SCENE", val.scene, "Scene file (.obj, .gltf, .glb, .json)");
  val_scene->add_option("--boxes", val.boxes,
                        "Validate a generated scene of N boxes instead (with "
                        "mirrored, sheared, flat and coincident ones)")
      ->transform(cli::whole_number(1, 10000000));
  val_scene->require_option(1);
  CLI::Option* val_rays = val_cmd->add_option("--rays", val.rays, "Number of random rays")
      ->capture_default_str()
      ->transform(cli::whole_number(1, 100000000));
  CLI::Option* val_points =
      val_cmd
          ->add_option("--points", val.points,
                       "Check N random closest-point queries instead of rays: raypick against "
                       "Embree's rtcPointQuery and brute force in double")
          ->transform(cli::whole_number(1, 10000000));
  val_cmd->add_option("--seed", val.seed, "Seed of the random rays (or points)")
      ->capture_default_str()
      ->transform(cli::whole_number(0));
  cli::add_enum_option(*val_cmd, "--mode", val.mode, cli::mode_names(),
                      "obb (default) or mesh: Embree instances the meshes' "
                      "triangles");
  val_cmd->add_option("--dump", val.dump,
                      "Write the disagreeing rays to FILE (a rays file)");
  cli::add_load_options(*val_cmd, val.load);
  val_cmd->add_option("--offset", val.offset,
                      "X,Y,Z: move every object by this offset first (a scene "
                      "far from the origin)")
      ->delimiter(',')
      ->expected(3)
      ->check(CLI::Range(-1e30, 1e30));

  raypick::cli::ValidateImage validate_image(*val_cmd);

  std::string info_scene;
  CLI::App* info_cmd = app.add_subcommand(
      "info", "Print a scene's objects, bounds, BVH statistics and timings");
  info_cmd->add_option("SCENE", info_scene, "Scene file (.obj, .gltf, .glb, .json)")->required();
  LoadOptions info_load;
  cli::add_load_options(*info_cmd, info_load);

  raypick::cli::BenchCommand bench(app);
  raypick::cli::SelectCommand select(app);
  raypick::cli::RenderCommand render(app);
  raypick::cli::NearestCommand nearest(app);

  // CLI11 says "A subcommand is required" both when none is given and when
  // the first word is no command at all.
  if (argc < 2 || argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || (argc >= 2 && sub->get_name() == argv[1]);
    }
    if (!known) {
      return fail(kExitUsage,
                  (argc < 2 ? std::string("no command given")
                            : "unknown command '" + printable(argv[1], 40) +
                                  "'") +
                      " (commands: " + names + "; see raypick --help)");
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return help_written(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return help_written(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return help_written(app.exit(e));
  } catch (const CLI::ParseError& e) {
    // One line, like every other error (CLI11's own exit() adds a second).
    return fail(kExitUsage, std::string(e.what()) + " (see raypick --help)");
  }
  // Whatever a command throws ends as one message, exit 1.
  const auto guarded = [](const char* command, const std::string& scene,
                          auto&& run) -> int {
    try {
      return run();
    } catch (const std::bad_alloc&) {
      return out_of_memory(command, scene);
    } catch (const std::exception& e) {
      return fail(kExitBadInput, std::string(command) + ": " + e.what());
    }
  };
  if (*pick_cmd && pixel_pick.chosen()) {
    return guarded("pick", pick.scene, [&] {
      return pixel_pick.run(pick);
    });
  }
  if (*pick_cmd) {
    return guarded("pick", pick.scene, [&] { return run_pick(pick); });
  }
  if (*val_cmd && validate_image.chosen() && val_rays->count() > 0) {
    // An option that does not apply is an error, never silence.
    return fail(kExitUsage,
                "validate: --rays does not apply with --image (it casts one ray per pixel "
                "centre of the image)");
  }
  if (*val_cmd && val_points->count() > 0) {
    if (validate_image.chosen() || val_rays->count() > 0 || !val.dump.empty()) {
      return fail(kExitUsage,
                  std::string("validate: --points does not go with ") +
                      (validate_image.chosen() ? "--image"
                       : val_rays->count() > 0 ? "--rays"
                                               : "--dump") +
                      " (it checks closest points, not rays)");
    }
    return guarded("validate", val.scene, [&] { return cli::run_validate_points(val); });
  }
  if (*val_cmd && validate_image.chosen()) {
    return guarded("validate", val.scene, [&] {
      return validate_image.run(val);
    });
  }
  if (*val_cmd) {
    return guarded("validate", val.scene, [&] { return run_validate(val); });
  }
  if (*info_cmd) {
    return guarded("info", info_scene,
                   [&] { return run_info(info_scene, info_load); });
  }
  if (bench) return guarded("bench", "", [&] { return bench.run(); });
  if (select) {
    return guarded("select", select.scene(), [&] { return select.run(); });
  }
  if (render) {
    return guarded("render", render.scene(), [&] { return render.run(); });
  }
  if (nearest) {
    return guarded("nearest", nearest.scene(), [&] { return nearest.run(); });
  }
  return kExitUsage;
}

}  // namespace

// Nothing may leave main as an exception (that would be std::terminate and
// SIGABRT): an allocation failure while the command line itself is set up or
// parsed, or while an error is reported, still ends in one line and exit 1.
int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::bad_alloc&) {
    return out_of_memory("", "");
  } catch (...) {
    std::fputs("raypick: unexpected error\n", stderr);
    return kExitBadInput;
  }
}
