// `raypick render SCENE <camera> --out FILE.png [--mode obb|mesh]
//  [--color shade|id|ids|depth|normal] [--highlight ID,...] [--rect X0,Y0,X1,Y1]`.
#include "screen.h"

#include "../tools/image.h"
#include "../tools/screen_view.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"

#include <CLI/CLI.hpp>

#include <glm/geometric.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace raypick::cli {

struct RenderArgs {
  std::string scene;
  CameraOptions camera;
  std::string out;
  PickMode mode = PickMode::kObb;
  std::string color = "shade";
  std::vector<std::uint32_t> highlight;
  std::string rect;
  LoadOptions load;
};

RenderCommand::RenderCommand(CLI::App& app) : args_(std::make_unique<RenderArgs>()) {
  RenderArgs& a = *args_;
  cmd_ = app.add_subcommand("render",
                            "Render the view to a PNG: one ray per pixel centre, coloured "
                            "by object, id, depth or normal");
  cmd_->add_option("SCENE", a.scene, "Scene file (.obj, .gltf, .glb, .json)")->required();
  a.camera.add_to(*cmd_);
  cmd_->add_option("--out", a.out, "The PNG file to write")->required()->check(not_an_option());
  add_enum_option(*cmd_, "--mode", a.mode, mode_names(),
                  "obb (default) or mesh: what a ray hits, as in pick");
  cmd_->add_option("--color", a.color,
                   "shade (default): palette colour times a headlight; id: palette colour; "
                   "ids: the exact id buffer, RGB = object id + 1; depth: grey by t; "
                   "normal: the world normal")
      ->check(CLI::IsMember({"shade", "id", "ids", "depth", "normal"}));
  cmd_->add_option("--highlight", a.highlight,
                   "Tint and outline these objects (ids, comma-separated; e.g. select's output)")
      ->delimiter(',')
      ->transform(whole_number(0, 0xFFFFFFFFu));
  cmd_->add_option("--rect", a.rect, "Draw this marquee X0,Y0,X1,Y1 (image-plane pixels)")
      ->check(not_an_option());
  add_load_options(*cmd_, a.load);
}

RenderCommand::~RenderCommand() = default;

RenderCommand::operator bool() const { return cmd_->parsed(); }

const std::string& RenderCommand::scene() const { return args_->scene; }

int RenderCommand::run() const {
  const RenderArgs& a = *args_;
  const auto start = Clock::now();
  if (std::string e = a.camera.check(); !e.empty()) {
    return fail(kExitUsage, "render: " + e);
  }
  std::string error;
  std::optional<std::array<double, 4>> rect;
  if (!a.rect.empty()) {
    rect = parse_rect(a.rect, error);
    if (!rect) return fail(kExitUsage, "render: " + error);
  }
  if (a.color == "ids" && (rect || !a.highlight.empty())) {
    return fail(kExitUsage,
                       "render: --color ids writes the exact id buffer; --highlight and "
                       "--rect do not apply to it");
  }
  // The picture's file is opened before any work, so a bad path fails at once.
  tools::OutputFile png;
  if (std::string e = png.open(a.out, "PNG"); !e.empty()) return fail(kExitBadInput, e);
  int status = 0;
  const std::optional<CameraOptions::View> view =
      a.camera.load_view("render", a.scene, a.load, status);
  if (!view) return status;
  const Scene& scene = view->loaded.scene;
  const Camera& cam = view->camera;
  std::vector<std::uint8_t> lit(scene.objects.size(), 0);
  for (std::uint32_t id : a.highlight) {
    if (id >= scene.objects.size()) {
      return fail(kExitUsage, "render: --highlight " + std::to_string(id) +
                                               ": the scene has " +
                                               std::to_string(scene.objects.size()) +
                                               " objects (ids 0.." +
                                               std::to_string(scene.objects.size() - 1) + ")");
    }
    lit[id] = 1;
  }

  const PickMode mode = a.mode;
  const Picker picker(scene, picker_config(mode));
  const bool tty = isatty(fileno(stderr));
  const int H = cam.height();
  tools::RenderedView picture = tools::render_view(
      picker, cam, mode, *tools::colouring_of(a.color), lit, [&](int rows) {
        if (tty) std::fprintf(stderr, "\rrender: row %d / %d", rows, H);
      });
  if (tty) std::fputc('\n', stderr);
  if (!a.highlight.empty()) tools::outline_lit(picture, lit);
  if (rect) tools::draw_marquee(picture.image, *rect);
  const tools::Image& img = picture.image;
  const std::size_t hit_count = picture.hits;
  const int W = cam.width();
  if (std::string e = tools::write_png(png, img); !e.empty()) return fail(kExitBadInput, e);
  const double ms = ms_since(start);
  std::fprintf(stderr, "render: %dx%d, %zu of %zu pixels hit, %.1f ms, wrote %s\n", W, H,
               hit_count, std::size_t(W) * H, ms, printable(a.out).c_str());
  return 0;
}

}  // namespace raypick::cli
