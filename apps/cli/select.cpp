// `raypick select SCENE <camera> --rect X0,Y0,X1,Y1 [--rule touch|contain]
//  [--mode obb|mesh] [--visible] [--mask M] [--format text|jsonl]`.
#include "camera_options.h"
#include "common.h"

#include "ray_io.h"
#include "screen_view.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace raypick::cli {
namespace {

class SelectCommand final : public ScreenCommand {
 public:
  explicit SelectCommand(CLI::App& app);
  int run() const override;

 private:
  std::string rect_;
  std::string rule_ = "touch";
  PickMode mode_ = PickMode::kObb;
  bool visible_ = false;
  std::uint32_t mask_ = ~0u;
  std::string format_ = "text";
  LoadOptions load_;
};

SelectCommand::SelectCommand(CLI::App& app)
    : ScreenCommand(app.add_subcommand("select",
                                       "Marquee selection: the objects in the region a "
                                       "rectangle of the view covers, one line per object by "
                                       "id")) {
  add_text_option(*cmd_, "--rect", rect_,
                  "The rectangle X0,Y0,X1,Y1 in image-plane pixels, corners in either "
                  "order, boundary included")
      ->required();
  cmd_->add_option("--rule", rule_,
                   "touch (default): the object meets the region; contain: it lies in it")
      ->check(CLI::IsMember({"touch", "contain"}));
  add_enum_option(*cmd_, "--mode", mode_, mode_names(),
                  "obb (default): by oriented bounding box; mesh: by triangles");
  cmd_->add_flag("--visible", visible_,
                 "Keep only objects that the pick hits at a pixel centre inside the "
                 "rectangle (not hidden behind others)");
  add_mask_option(*cmd_, mask_);
  cmd_->add_option("--format", format_, "text (default) or jsonl")
      ->check(CLI::IsMember({"text", "jsonl"}));
  add_load_options(*cmd_, load_);
}

int SelectCommand::run() const {
  int status = 0;
  const std::optional<std::array<double, 4>> rect = camera_.check("select", &rect_, status);
  if (status != 0) return status;
  const std::optional<CameraOptions::View> view =
      camera_.load_view("select", scene_, load_, status);
  if (!view) return status;
  const Scene& scene = view->loaded.scene;
  const Camera& cam = view->camera;

  const PickMode mode = mode_;
  const Picker picker(scene, picker_config(mode));
  const QueryOptions options(mode, mask_);
  const std::vector<std::uint32_t> ids = tools::select_in_view(
      picker, cam, *rect, rule_ == "contain" ? SelectRule::kContain : SelectRule::kTouch,
      visible_, options);
  std::string out;
  for (std::uint32_t id : ids) {
    const std::string& name = scene.objects[id].name;
    if (format_ == "jsonl") {
      out += "{\"object\":" + std::to_string(id) + ",\"name\":" +
             tools::json_string(name) +
             "}\n";
    } else {
      out += "object " + std::to_string(id) + " '" + printable(name) + "'\n";
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return finish_output(0);
}

}  // namespace

std::unique_ptr<Command> add_select(CLI::App& app) { return std::make_unique<SelectCommand>(app); }

}  // namespace raypick::cli
