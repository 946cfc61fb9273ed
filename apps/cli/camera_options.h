// The camera options of the screen commands (issue 12): `pick` by pixel,
// `select` (marquee selection), `render` (pictures) and `validate --image`.
// See the contract's "Cameras and screen space".
#pragma once

#include "command.h"
#include "common.h"

#include "raypick/core/camera.h"
#include "raypick/core/scene.h"

#include <array>
#include <optional>
#include <string>

namespace raypick::cli {

// A number as the image-plane coordinates are printed: %.10g.
std::string format_coord(double v);

// The camera options every screen command takes:
//   --eye X,Y,Z --target X,Y,Z [--up X,Y,Z] [--fov DEG | --ortho HEIGHT]
//   --size WxH,   or   --camera NAME|INDEX --size WxH
class CameraOptions {
 public:
  // Registers the options on `cmd`.
  void add_to(CLI::App& cmd);
  // True when any camera option was given.
  bool any_given() const;
  // A screen command's first step, before any file is opened: checks
  // everything that does not need the scene and, when `rect` is not null,
  // parses it as --rect X0,Y0,X1,Y1. Returns the rectangle (nullopt without
  // one). A malformed option is reported through fail() as "COMMAND: ..."
  // and sets `status` to 2; `status` is left alone otherwise.
  std::optional<std::array<double, 4>> check(const char* command, const std::string* rect,
                                             int& status) const;
  // The camera. --camera looks the name (node name, then camera name) or
  // index up in scene.cameras. nullopt when it cannot, reported through
  // fail() as "COMMAND: ..." with `status` set (1 when the scene has no such
  // camera or its node matrix cannot place one, 2 for a malformed option).
  std::optional<Camera> make(const char* command, const Scene& scene, int& status) const;

  // A screen command's scene and camera: the scene file loaded
  // (load_or_report) and the camera made for it; nullopt when either fails,
  // reported, with `status` set.
  struct View {
    Loaded loaded;
    Camera camera;
  };
  std::optional<View> load_view(const char* command, const std::string& scene,
                                const LoadOptions& options, int& status) const;
 private:
  std::optional<CameraSpec> spec_without_scene(std::string& error) const;
  std::optional<Camera> make_or_explain(const Scene& scene, int& status,
                                        std::string& error) const;

  std::string eye_, target_, up_ = "0,1,0", size_, camera_, view_ = "iso";
  double fov_ = 60.0, ortho_ = 0.0;
  CLI::Option* eye_opt_ = nullptr;
  CLI::Option* target_opt_ = nullptr;
  CLI::Option* up_opt_ = nullptr;
  CLI::Option* fov_opt_ = nullptr;
  CLI::Option* ortho_opt_ = nullptr;
  CLI::Option* size_opt_ = nullptr;
  CLI::Option* camera_opt_ = nullptr;
  CLI::Option* view_opt_ = nullptr;
};

// A command that shows the scene through a camera (select, render): SCENE
// and the camera options come first on its command line.
class ScreenCommand : public Command {
 protected:
  explicit ScreenCommand(CLI::App* cmd) : Command(cmd) {
    add_scene_argument(*cmd_, scene_);
    camera_.add_to(*cmd_);
  }
  CameraOptions camera_;
};

}  // namespace raypick::cli
