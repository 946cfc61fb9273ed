// `raypick select SCENE <camera> --rect X0,Y0,X1,Y1 [--rule touch|contain]
//  [--mode obb|mesh] [--visible] [--mask M] [--format text|jsonl]`.
#include "screen.h"
#include "../tools/ray_io.h"
#include "../tools/screen_view.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace raypick::cli {

struct SelectArgs {
  std::string scene;
  CameraOptions camera;
  std::string rect;
  std::string rule = "touch";
  PickMode mode = PickMode::kObb;
  bool visible = false;
  std::uint32_t mask = ~0u;
  std::string format = "text";
  LoadOptions load;
};

SelectCommand::SelectCommand(CLI::App& app) : args_(std::make_unique<SelectArgs>()) {
  SelectArgs& a = *args_;
  cmd_ = app.add_subcommand("select",
                            "Marquee selection: the objects in the region a rectangle of "
                            "the view covers, one line per object by id");
  cmd_->add_option("SCENE", a.scene, "Scene file (.obj, .gltf, .glb, .json)")->required();
  a.camera.add_to(*cmd_);
  cmd_->add_option("--rect", a.rect,
                   "The rectangle X0,Y0,X1,Y1 in image-plane pixels, corners in either "
                   "order, boundary included")
      ->required()
      ->check(not_an_option());
  cmd_->add_option("--rule", a.rule,
                   "touch (default): the object meets the region; contain: it lies in it")
      ->check(CLI::IsMember({"touch", "contain"}));
  add_enum_option(*cmd_, "--mode", a.mode, mode_names(),
                  "obb (default): by oriented bounding box; mesh: by triangles");
  cmd_->add_flag("--visible", a.visible,
                 "Keep only objects that the pick hits at a pixel centre inside the "
                 "rectangle (not hidden behind others)");
  cmd_->add_option("--mask", a.mask,
                   "Only objects whose pick mask shares a bit with M (decimal or 0x-hex)")
      ->transform(whole_number(0, 0xFFFFFFFFu));
  cmd_->add_option("--format", a.format, "text (default) or jsonl")
      ->check(CLI::IsMember({"text", "jsonl"}));
  add_load_options(*cmd_, a.load);
}

SelectCommand::~SelectCommand() = default;

SelectCommand::operator bool() const { return cmd_->parsed(); }

const std::string& SelectCommand::scene() const { return args_->scene; }

int SelectCommand::run() const {
  const SelectArgs& a = *args_;
  if (std::string e = a.camera.check(); !e.empty()) {
    return fail(kExitUsage, "select: " + e);
  }
  std::string error;
  const auto rect = parse_rect(a.rect, error);
  if (!rect) return fail(kExitUsage, "select: " + error);
  int status = 0;
  const std::optional<CameraOptions::View> view =
      a.camera.load_view("select", a.scene, a.load, status);
  if (!view) return status;
  const Scene& scene = view->loaded.scene;
  const Camera& cam = view->camera;

  const PickMode mode = a.mode;
  const Picker picker(scene, picker_config(mode));
  const QueryOptions options(mode, a.mask);
  const std::vector<std::uint32_t> ids = tools::select_in_view(
      picker, cam, *rect, a.rule == "contain" ? SelectRule::kContain : SelectRule::kTouch,
      a.visible, options);
  std::string out;
  for (std::uint32_t id : ids) {
    const std::string& name = scene.objects[id].name;
    if (a.format == "jsonl") {
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

}  // namespace raypick::cli
