// `raypick validate [SCENE | --boxes N]`: raypick against the Embree
// reference, in three ways: random rays (the default), the rays of a
// camera's pixels (--image FILE.png <camera>; every pixel where the two
// disagree is painted its verdict's colour) and random closest-point
// queries (--points N, against Embree's rtcPointQuery and a brute force in
// double). docs/validate.md.
#include "camera_options.h"
#include "command.h"
#include "common.h"

#include "embree_bench.h"
#include "embree_points.h"
#include "embree_scene.h"
#include "image.h"
#include "output_file.h"
#include "ray_io.h"
#include "scene_gen.h"
#include "validate.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace raypick::cli {
namespace {

using tools::Rgb;
using tools::Verdict;

// What `validate` parsed.
struct ValidateArgs {
  std::size_t boxes = 0;
  std::size_t rays = 100000;
  std::size_t points = 0;  // --points: closest points instead of rays
  std::uint64_t seed = 1;
  PickMode mode = PickMode::kObb;
  std::string dump;
  LoadOptions load;
  std::vector<double> offset;  // X, Y, Z, or empty
};

// The scene validate checks and the label that names it on stdout.
struct Subject {
  Loaded loaded;
  std::string label;
};

// The scene validate checks: SCENE loaded with a.load, or the generated
// boxes-N of a.seed (in a.mode's flavour); with `shifted`, every object
// then moved by --offset (when given), which the label says (validate
// --image leaves --offset aside). nullopt when the load failed (reported,
// `status` set).
std::optional<Subject> validation_scene(const ValidateArgs& a, const std::string& scene,
                                        bool shifted, int& status) {
  Subject s;
  if (a.boxes == 0) {
    std::optional<Loaded> loaded = load_or_report(scene, a.load, status);
    if (!loaded) return std::nullopt;
    s = {std::move(*loaded), printable(scene)};
  } else {
    const auto start = Clock::now();
    const tools::BoxesOptions opt = tools::mixed_options();
    s.loaded.scene = a.mode == PickMode::kMesh ? tools::make_mesh_scene(a.boxes, a.seed, opt)
                                               : tools::make_boxes_scene(a.boxes, a.seed, opt);
    s.loaded.load_ms = ms_since(start);
    s.label = "generated boxes-" + std::to_string(a.boxes) + " (seed " + std::to_string(a.seed) +
              ")";
  }
  if (shifted && !a.offset.empty()) {
    const glm::dvec3 offset{a.offset[0], a.offset[1], a.offset[2]};
    tools::shift_scene(s.loaded.scene, offset);
    s.label += " shifted by (" + tools::format_float(float(offset.x)) + ", " +
               tools::format_float(float(offset.y)) + ", " +
               tools::format_float(float(offset.z)) + ")";
  }
  return s;
}

// The Embree reference of `scene`; on an Embree error, prints it and sets
// `status` (exit 1) and returns null. Running out of memory is rethrown,
// for main to name the scene.
std::unique_ptr<tools::EmbreeScene> make_embree(const Scene& scene, PickMode mode,
                                                int& status) {
  try {
    return std::make_unique<tools::EmbreeScene>(scene, mode);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    status = fail(kExitBadInput, e.what());
    return nullptr;
  }
}

// Verdict colours (kAgree pixels keep the picture).
Rgb verdict_colour(Verdict v) {
  switch (v) {
    case Verdict::kAgree: return {0, 0, 0};
    case Verdict::kFloatNoise: return {120, 230, 120};   // light green
    case Verdict::kTie: return {60, 120, 255};           // blue
    case Verdict::kBoundary: return {255, 215, 0};       // yellow
    case Verdict::kOriginInside: return {235, 70, 235};  // magenta
    case Verdict::kMismatch: return {255, 20, 20};       // red
    case Verdict::kEmbreeWrong: return {0, 220, 220};    // cyan
  }
  return {255, 255, 255};
}

// The random rays: `dump`, open when --dump was given, gets the
// disagreeing rays.
int run_rays(const ValidateArgs& a, const Subject& subject, tools::OutputFile& dump) {
  const PickMode mode = a.mode;
  const Loaded& loaded = subject.loaded;
  const std::string& label = subject.label;
  const Scene& scene = loaded.scene;
  int status = 0;

  auto start = Clock::now();
  const Picker picker(scene);
  const double build_ms = ms_since(start);
  start = Clock::now();
  const std::unique_ptr<tools::EmbreeScene> embree =
      make_embree(scene, mode, status);
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
  std::printf("mode:           %s\n", mode_name(mode));
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

bool same(const PointHit& a, const PointHit& b) {
  return a.object == b.object && a.triangle == b.triangle && a.distance == b.distance &&
         a.point == b.point;
}

std::string describe(const PointHit& h) {
  if (!h.hit()) return "nothing";
  std::string s = "object " + std::to_string(h.object);
  if (h.triangle != kInvalidId) s += " triangle " + std::to_string(h.triangle);
  char d[64];
  std::snprintf(d, sizeof d, " at distance %.17g", h.distance);
  return s + d;
}

// The closest points (--points N).
int run_points(const ValidateArgs& a, const Subject& subject) {
  const PickMode mode = a.mode;
  const Scene& scene = subject.loaded.scene;
  auto start = Clock::now();
  const Picker picker(scene, picker_config(mode));
  const double build_ms = ms_since(start);
  start = Clock::now();
  const tools::EmbreeDevice device(1);
  // Embree's side: in mesh mode its instanced triangle geometries where
  // every matrix is a similarity (as the bench measures), else the flat
  // scene of world boxes, each object measured whole in its callback.
  const bool instanced = mode == PickMode::kMesh && tools::instanced_points_refusal(scene).empty();
  const tools::EmbreePointScene embree(
      device.get(), scene, mode, instanced ? tools::PointLayout::kInstanced : tools::PointLayout::kFlat);
  const double embree_ms = ms_since(start);

  const std::vector<glm::dvec3> points = tools::make_validation_points(scene, a.points, a.seed, mode);
  const bool tty = isatty(fileno(stderr));
  start = Clock::now();
  const std::vector<PointHit> mine = picker.closest_points(points, QueryOptions{mode});
  const double raypick_ms = ms_since(start);
  std::size_t agree = 0, embree_differs = 0, mismatches = 0, hits = 0, on_surface = 0;
  std::vector<std::string> lines;
  start = Clock::now();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const PointHit theirs = embree.closest_point(points[i], INFINITY);
    const PointHit want = tools::brute_closest_point(scene, points[i], mode, INFINITY);
    hits += want.hit();
    on_surface += want.hit() && want.distance == 0.0;
    if (same(mine[i], want) && same(theirs, want)) {
      ++agree;
    } else if (same(mine[i], want)) {
      ++embree_differs;
    } else {
      ++mismatches;
      if (lines.size() < 20) {
        lines.push_back("mismatch: point " + std::to_string(i) + ": raypick " +
                        describe(mine[i]) + ", brute force " + describe(want) + "\n");
      }
    }
    if (tty && (i % 256 == 255 || i + 1 == points.size())) {
      std::fprintf(stderr, "\rvalidate: %zu / %zu points", i + 1, points.size());
      if (i + 1 == points.size()) std::fputc('\n', stderr);
    }
  }
  const double check_ms = ms_since(start);
  std::printf("scene:          %s\n", subject.label.c_str());
  std::printf("objects:        %zu (%zu triangles)\n", scene.objects.size(),
              scene.triangle_count());
  std::printf("mode:           %s\n", mode_name(mode));
  std::printf("points:         %zu (seed %llu), %zu with a nearest object, %zu at distance 0\n",
              points.size(), static_cast<unsigned long long>(a.seed), hits, on_surface);
  std::printf("agree:          %zu (raypick, Embree's rtcPointQuery and brute force give the "
              "same object, triangle, distance and point, bit for bit)\n",
              agree);
  std::printf("embree differs: %zu (Embree's answer differs, raypick's is brute force's)\n",
              embree_differs);
  std::printf("real mismatches: %zu\n", mismatches);
  std::printf("time:           load %.1f ms, raypick build %.1f ms, embree build %.1f ms, "
              "raypick queries %.1f ms, checks %.1f ms\n",
              subject.loaded.load_ms, build_ms, embree_ms, raypick_ms, check_ms);
  for (const std::string& line : lines) std::fputs(line.c_str(), stdout);
  return finish_output(mismatches == 0 ? 0 : kExitBadInput);
}

class ValidateCommand final : public Command {
 public:
  explicit ValidateCommand(CLI::App& app);
  int run() const override;

 private:
  // --image: true when --image or a camera option was given.
  bool image_chosen() const { return image_opt_->count() > 0 || camera_.any_given(); }
  int run_image() const;

  ValidateArgs a_;
  CameraOptions camera_;
  std::string image_;
  CLI::Option* rays_opt_ = nullptr;
  CLI::Option* points_opt_ = nullptr;
  CLI::Option* image_opt_ = nullptr;
};

ValidateCommand::ValidateCommand(CLI::App& app)
    : Command(app.add_subcommand("validate",
                                 "Compare raypick with Embree on random rays; exits 1 on any "
                                 "real mismatch")) {
  ValidateArgs& val = a_;
  // A SCENE or --boxes, exactly one ("Exactly 1 option from
  // [SCENE,--boxes]", exit 2).
  CLI::Option_group* val_scene = cmd_->add_option_group(
      "scene", "What is validated: a scene file or a generated one");
  val_scene->add_option("SCENE", scene_, "Scene file (.obj, .gltf, .glb, .json)");
  val_scene->add_option("--boxes", val.boxes,
                        "Validate a generated scene of N boxes instead (with "
                        "mirrored, sheared, flat and coincident ones)")
      ->transform(whole_number(1, 10000000));
  val_scene->require_option(1);
  rays_opt_ = cmd_->add_option("--rays", val.rays, "Number of random rays")
                  ->capture_default_str()
                  ->transform(whole_number(1, 100000000));
  points_opt_ =
      cmd_->add_option("--points", val.points,
                       "Check N random closest-point queries instead of rays: raypick against "
                       "Embree's rtcPointQuery and brute force in double")
          ->transform(whole_number(1, 10000000));
  cmd_->add_option("--seed", val.seed, "Seed of the random rays (or points)")
      ->capture_default_str()
      ->transform(whole_number(0));
  add_enum_option(*cmd_, "--mode", val.mode, mode_names(),
                  "obb (default) or mesh: Embree instances the meshes' "
                  "triangles");
  cmd_->add_option("--dump", val.dump, "Write the disagreeing rays to FILE (a rays file)");
  add_load_options(*cmd_, val.load);
  cmd_->add_option("--offset", val.offset,
                   "X,Y,Z: move every object by this offset first (a scene "
                   "far from the origin)")
      ->delimiter(',')
      ->expected(3)
      ->check(CLI::Range(-1e30, 1e30));

  camera_.add_to(*cmd_);
  image_opt_ = add_text_option(
      *cmd_, "--image", image_,
      "Check the camera's view (one ray per pixel centre) instead of random rays and "
      "write it to FILE.png, each disagreeing pixel in its verdict's colour");
}

int ValidateCommand::run() const {
  const bool image = image_chosen();
  if (image && rays_opt_->count() > 0) {
    // An option that does not apply is an error, never silence.
    return fail(kExitUsage,
                "validate: --rays does not apply with --image (it casts one ray per pixel "
                "centre of the image)");
  }
  if (points_opt_->count() > 0) {
    if (image || rays_opt_->count() > 0 || !a_.dump.empty()) {
      return fail(kExitUsage,
                  std::string("validate: --points does not go with ") +
                      (image                      ? "--image"
                       : rays_opt_->count() > 0 ? "--rays"
                                                  : "--dump") +
                      " (it checks closest points, not rays)");
    }
  }
  if (image) return run_image();
  // The dump file is opened before any work, so a bad path fails at once.
  tools::OutputFile dump;
  if (!a_.dump.empty()) {
    const std::string error = dump.open(a_.dump, "dump");
    if (!error.empty()) return fail(kExitBadInput, error);
  }
  int status = 0;
  const std::optional<Subject> subject = validation_scene(a_, scene_, true, status);
  if (!subject) return status;
  return points_opt_->count() > 0 ? run_points(a_, *subject) : run_rays(a_, *subject, dump);
}

int ValidateCommand::run_image() const {
  const ValidateArgs& a = a_;
  if (image_opt_->count() == 0) {
    return fail(kExitUsage, "validate: a camera needs --image FILE.png");
  }
  int status = 0;
  camera_.check("validate", nullptr, status);
  if (status != 0) return status;
  // The picture's file is opened before any work, so a bad path fails at once.
  tools::OutputFile png;
  if (std::string e = png.open(image_, "PNG"); !e.empty()) return fail(kExitBadInput, e);
  const PickMode mode = a.mode;
  const std::optional<Subject> subject = validation_scene(a, scene_, false, status);
  if (!subject) return status;
  const std::string& label = subject->label;
  const Scene& scene = subject->loaded.scene;
  const std::optional<Camera> cam = camera_.make("validate", scene, status);
  if (!cam) return status;

  const Picker picker(scene, picker_config(mode));
  const std::unique_ptr<tools::EmbreeScene> embree =
      make_embree(scene, mode, status);
  if (!embree) return status;
  const int W = cam->width(), H = cam->height();
  std::vector<Ray> rays;
  rays.reserve(std::size_t(W) * H);
  for (int j = 0; j < H; ++j) {
    for (int i = 0; i < W; ++i) rays.push_back(cam->ray(i + 0.5, j + 0.5));
  }
  const bool tty = isatty(fileno(stderr));
  const tools::ValidateReport rep =
      tools::validate(scene, picker, *embree, mode, rays, [&](std::size_t done) {
        if (tty) {
          std::fprintf(stderr, "\rvalidate: %zu / %zu pixels", done, rays.size());
          if (done == rays.size()) std::fputc('\n', stderr);
        }
      });
  // The picture: raypick's answer as the palette colours' grey, dimmed,
  // so that the verdict colours stand out; then the disagreeing pixels.
  const std::vector<Hit> hits = picker.intersect_batch(rays, QueryOptions(mode));
  tools::Image img(W, H, Rgb{28, 30, 36});
  for (std::size_t k = 0; k < hits.size(); ++k) {
    if (!hits[k].hit()) continue;
    const Rgb c = tools::palette(hits[k].object);
    const auto g = std::uint8_t(std::lround(0.55 * (0.3 * c.r + 0.59 * c.g + 0.11 * c.b)));
    img.pixels[k] = {g, g, g};
  }
  for (const tools::Disagreement& d : rep.disagreements) {
    img.pixels[d.ray_index] = verdict_colour(d.verdict);
  }
  if (std::string e = tools::write_png(png, img); !e.empty()) return fail(kExitBadInput, e);
  std::printf("scene:          %s\n", label.c_str());
  std::printf("view:           %dx%d pixels, one ray per pixel centre, %s mode\n", W, H,
              mode_name(mode));
  std::printf("hits:           raypick %zu, embree %zu\n", rep.raypick_hits, rep.embree_hits);
  std::printf("agree:          %zu pixels (kept as the picture, in grey)\n",
              rep.count(Verdict::kAgree));
  std::printf("float noise:    %zu (light green)\n", rep.count(Verdict::kFloatNoise));
  std::printf("tie:            %zu (blue)\n", rep.count(Verdict::kTie));
  std::printf("boundary:       %zu (yellow)\n", rep.count(Verdict::kBoundary));
  std::printf("origin inside:  %zu (magenta)\n", rep.count(Verdict::kOriginInside));
  std::printf("embree wrong:   %zu (cyan: Embree refuted by the reference, raypick not)\n",
              rep.count(Verdict::kEmbreeWrong));
  std::printf("real mismatches: %zu (red)\n", rep.mismatches());
  std::printf("image:          %s\n", printable(image_).c_str());
  return finish_output(rep.mismatches() == 0 ? 0 : kExitBadInput);
}

}  // namespace

std::unique_ptr<Command> add_validate(CLI::App& app) {
  return std::make_unique<ValidateCommand>(app);
}

}  // namespace raypick::cli
