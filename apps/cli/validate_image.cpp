// `raypick validate [SCENE | --boxes N] --image FILE.png <camera>`: the
// view, one ray per pixel centre, checked against Embree; every pixel where
// the two disagree is painted its verdict's colour.
#include "screen.h"

#include "../tools/embree_scene.h"
#include "../tools/image.h"
#include "../tools/scene_gen.h"
#include "../tools/validate.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace raypick::cli {
namespace {

using tools::Rgb;
using tools::Verdict;

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

}  // namespace

ValidateImage::ValidateImage(CLI::App& validate_cmd) {
  camera_.add_to(validate_cmd);
  image_opt_ = validate_cmd.add_option(
      "--image", image_,
      "Check the camera's view (one ray per pixel centre) instead of random rays and "
      "write it to FILE.png, each disagreeing pixel in its verdict's colour")
                   ->check(not_an_option());
}

bool ValidateImage::chosen() const { return image_opt_->count() > 0 || camera_.any_given(); }

std::optional<Loaded> validation_scene(const ValidateArgs& a, std::string& label,
                                       int& status) {
  if (a.boxes == 0) {
    std::optional<Loaded> loaded = load_or_report(a.scene, a.load, status);
    if (loaded) label = printable(a.scene);
    return loaded;
  }
  const auto start = Clock::now();
  const tools::BoxesOptions opt = tools::mixed_options();
  Loaded generated;
  generated.scene = a.mode == PickMode::kMesh
                        ? tools::make_mesh_scene(a.boxes, a.seed, opt)
                        : tools::make_boxes_scene(a.boxes, a.seed, opt);
  generated.load_ms = ms_since(start);
  label = "generated boxes-" + std::to_string(a.boxes) + " (seed " +
          std::to_string(a.seed) + ")";
  return generated;
}

int ValidateImage::run(const ValidateArgs& a) const {
  if (image_opt_->count() == 0) {
    return fail(kExitUsage, "validate: a camera needs --image FILE.png");
  }
  if (std::string e = camera_.check(); !e.empty()) {
    return fail(kExitUsage, "validate: " + e);
  }
  // The picture's file is opened before any work, so a bad path fails at once.
  tools::OutputFile png;
  if (std::string e = png.open(image_, "PNG"); !e.empty()) return fail(kExitBadInput, e);
  const PickMode mode = a.mode;
  std::string label;
  int status = 0;
  std::optional<Loaded> loaded = validation_scene(a, label, status);
  if (!loaded) return status;
  const Scene& scene = loaded->scene;
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

}  // namespace raypick::cli
