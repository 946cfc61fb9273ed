// `raypick render SCENE <camera> --out FILE.png [--mode obb|mesh]
//  [--color shade|id|ids|depth|normal] [--highlight ID,...] [--rect X0,Y0,X1,Y1]`.
#include "camera_options.h"
#include "common.h"

#include "image.h"
#include "output_file.h"
#include "screen_view.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"

#include <CLI/CLI.hpp>

#include <glm/geometric.hpp>

#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace raypick::cli {
namespace {

class RenderCommand final : public ScreenCommand {
 public:
  explicit RenderCommand(CLI::App& app);
  int run() const override;

 private:
  std::string out_;
  PickMode mode_ = PickMode::kObb;
  std::string color_ = "shade";
  std::vector<std::uint32_t> highlight_;
  std::string rect_;
  LoadOptions load_;
};

RenderCommand::RenderCommand(CLI::App& app)
    : ScreenCommand(app.add_subcommand("render",
                                       "Render the view to a PNG: one ray per pixel centre, "
                                       "coloured by object, id, depth or normal")) {
  add_text_option(*cmd_, "--out", out_, "The PNG file to write")->required();
  add_enum_option(*cmd_, "--mode", mode_, mode_names(),
                  "obb (default) or mesh: what a ray hits, as in pick");
  cmd_->add_option("--color", color_,
                   "shade (default): palette colour times a headlight; id: palette colour; "
                   "ids: the exact id buffer, RGB = object id + 1; depth: grey by t; "
                   "normal: the world normal")
      ->check(CLI::IsMember({"shade", "id", "ids", "depth", "normal"}));
  cmd_->add_option("--highlight", highlight_,
                   "Tint and outline these objects (ids, comma-separated; e.g. select's output)")
      ->delimiter(',')
      ->transform(whole_number(0, 0xFFFFFFFFu));
  add_text_option(*cmd_, "--rect", rect_, "Draw this marquee X0,Y0,X1,Y1 (image-plane pixels)");
  add_load_options(*cmd_, load_);
}

int RenderCommand::run() const {
  const auto start = Clock::now();
  int status = 0;
  const std::optional<std::array<double, 4>> rect =
      camera_.check("render", rect_.empty() ? nullptr : &rect_, status);
  if (status != 0) return status;
  if (color_ == "ids" && (rect || !highlight_.empty())) {
    return fail(kExitUsage,
                       "render: --color ids writes the exact id buffer; --highlight and "
                       "--rect do not apply to it");
  }
  // The picture's file is opened before any work, so a bad path fails at once.
  tools::OutputFile png;
  if (std::string e = png.open(out_, "PNG"); !e.empty()) return fail(kExitBadInput, e);
  const std::optional<CameraOptions::View> view =
      camera_.load_view("render", scene_, load_, status);
  if (!view) return status;
  const Scene& scene = view->loaded.scene;
  const Camera& cam = view->camera;
  std::vector<std::uint8_t> lit(scene.objects.size(), 0);
  for (std::uint32_t id : highlight_) {
    if (id >= scene.objects.size()) {
      return fail(kExitUsage, "render: --highlight " + std::to_string(id) +
                                               ": the scene has " +
                                               std::to_string(scene.objects.size()) +
                                               " objects (ids 0.." +
                                               std::to_string(scene.objects.size() - 1) + ")");
    }
    lit[id] = 1;
  }

  const PickMode mode = mode_;
  const Picker picker(scene, picker_config(mode));
  const bool tty = isatty(fileno(stderr));
  const int H = cam.height();
  tools::RenderedView picture = tools::render_view(
      picker, cam, mode, *tools::colouring_of(color_), lit, [&](int rows) {
        if (tty) std::fprintf(stderr, "\rrender: row %d / %d", rows, H);
      });
  if (tty) std::fputc('\n', stderr);
  if (!highlight_.empty()) tools::outline_lit(picture, lit);
  if (rect) tools::draw_marquee(picture.image, *rect);
  const tools::Image& img = picture.image;
  const std::size_t hit_count = picture.hits;
  const int W = cam.width();
  if (std::string e = tools::write_png(png, img); !e.empty()) return fail(kExitBadInput, e);
  const double ms = ms_since(start);
  std::fprintf(stderr, "render: %dx%d, %zu of %zu pixels hit, %.1f ms, wrote %s\n", W, H,
               hit_count, std::size_t(W) * H, ms, printable(out_).c_str());
  // obb is the default hit mode (the contract's), so a first picture of a
  // real model is its objects' boxes: say how to see the triangles.
  if (cmd_->count("--mode") == 0) {
    std::fprintf(stderr, "render: obb mode (the default) draws each object as its box; "
                         "--mode mesh draws its triangles\n");
  }
  return 0;
}

}  // namespace

std::unique_ptr<Command> add_render(CLI::App& app) { return std::make_unique<RenderCommand>(app); }

}  // namespace raypick::cli
