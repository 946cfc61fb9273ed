// The screen commands (issue 12): the camera options they share, `pick`
// by pixel, `select` (marquee selection) and `render` (pictures). Each
// registers its options on CLI11 and runs after app.parse(), like
// BenchCommand. See the contract's "Cameras and screen space".
#pragma once

#include "raypick/core/camera.h"
#include "raypick/core/scene.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace raypick::cli {

inline constexpr int kScreenExitBadInput = 1;
inline constexpr int kScreenExitUsage = 2;

// One line "raypick: message" on stderr (stdout flushed first); returns
// `status`.
int screen_fail(int status, const std::string& message);

// Loads a scene, printing warnings; on failure reports and sets `status`
// (2 for an unsupported extension, 1 for bad input).
std::optional<Scene> load_scene_reporting(const std::string& path, int& status);

// `s` with control characters and DEL written as \xNN, for terminals.
std::string terminal_safe(std::string_view s);

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
  // Checks everything that does not need the scene; "" when fine, else the
  // message of a malformed option (exit 2).
  std::string check() const;
  // The camera. --camera looks the name (node name, then camera name) or
  // index up in scene.cameras; nullopt with `error` and `status` set (1 when
  // the scene has no such camera or its node matrix cannot place one, 2 for
  // a malformed option).
  std::optional<Camera> make(const Scene& scene, int& status,
                             std::string& error) const;

 private:
  std::optional<CameraSpec> spec_without_scene(std::string& error) const;

  std::string eye_, target_, up_ = "0,1,0", size_, camera_;
  double fov_ = 60.0, ortho_ = 0.0;
  CLI::Option* eye_opt_ = nullptr;
  CLI::Option* target_opt_ = nullptr;
  CLI::Option* up_opt_ = nullptr;
  CLI::Option* fov_opt_ = nullptr;
  CLI::Option* ortho_opt_ = nullptr;
  CLI::Option* size_opt_ = nullptr;
  CLI::Option* camera_opt_ = nullptr;
};

// Parses "X0,Y0,X1,Y1" (finite numbers); nullopt with `error` set.
std::optional<std::array<double, 4>> parse_rect(const std::string& text,
                                                std::string& error);

// What `pick` parsed that a pixel pick uses too.
struct PickCommon {
  std::string scene;
  std::string mode;
  std::string format;
  bool all = false;
  std::size_t limit = 0;  // 0: no limit
  float max_t = 0.0f;
  std::uint32_t mask = ~0u;
};

// `raypick pick SCENE <camera> --pixel X,Y | --pixels FILE|- [--radius R]`:
// registers the camera options and --pixel, --pixels, --radius on the
// `pick` subcommand.
class PixelPick {
 public:
  explicit PixelPick(CLI::App& pick_cmd);
  // True when the command line asks for a pixel pick (--pixel, --pixels,
  // --radius or a camera option given).
  bool chosen() const;
  int run(const PickCommon& common) const;

 private:
  CameraOptions camera_;
  std::string pixel_, pixels_;
  double radius_ = 0.0;
  CLI::Option* pixel_opt_ = nullptr;
  CLI::Option* pixels_opt_ = nullptr;
  CLI::Option* radius_opt_ = nullptr;
};

// `raypick validate [SCENE | --boxes N] --image FILE.png <camera>`:
// registers --image and the camera options on the `validate` subcommand.
class ValidateImage {
 public:
  explicit ValidateImage(CLI::App& validate_cmd);
  // True when --image or a camera option was given.
  bool chosen() const;
  // Exit status: 0 when no pixel is a real mismatch, 1 otherwise or for
  // bad input, 2 for bad options.
  int run(const std::string& scene, std::size_t boxes, std::uint64_t seed,
          const std::string& mode) const;

 private:
  CameraOptions camera_;
  std::string image_;
  CLI::Option* image_opt_ = nullptr;
};

struct SelectArgs;
struct RenderArgs;

// `raypick select SCENE <camera> --rect X0,Y0,X1,Y1 ...`
class SelectCommand {
 public:
  explicit SelectCommand(CLI::App& app);
  ~SelectCommand();
  explicit operator bool() const;
  int run() const;

 private:
  CLI::App* cmd_;
  std::unique_ptr<SelectArgs> args_;
};

// `raypick render SCENE <camera> --out FILE.png ...`
class RenderCommand {
 public:
  explicit RenderCommand(CLI::App& app);
  ~RenderCommand();
  explicit operator bool() const;
  int run() const;

 private:
  CLI::App* cmd_;
  std::unique_ptr<RenderArgs> args_;
};

}  // namespace raypick::cli
