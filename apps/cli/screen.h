// The screen commands (issue 12): the camera options they share, `pick`
// by pixel, `select` (marquee selection) and `render` (pictures). Each
// registers its options on CLI11 and runs after app.parse(), like
// BenchCommand. See the contract's "Cameras and screen space".
#pragma once

#include "common.h"

#include "raypick/core/camera.h"
#include "raypick/core/scene.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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
  // Checks everything that does not need the scene; "" when fine, else the
  // message of a malformed option (exit 2).
  std::string check() const;
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

// Parses "X0,Y0,X1,Y1" (finite numbers); nullopt with `error` set.
std::optional<std::array<double, 4>> parse_rect(const std::string& text,
                                                std::string& error);

// What `pick` parsed: a pixel pick uses it too.
struct PickArgs {
  std::string scene;
  std::optional<std::string> ray;  // set when --ray is given, even empty
  std::optional<std::string> rays;
  PickMode mode = PickMode::kObb;
  std::string format;
  bool all = false;
  std::size_t limit = 0;  // 0: no limit
  float max_t = kInfinity;
  std::uint32_t mask = ~0u;
  LoadOptions load;
};

// The scene's object names, by id.
std::vector<std::string> object_names(const Scene& scene);

// pick's answer for ray `i` in `format` (text, json or jsonl), each line
// ended by '\n'. With `all`: `hits` are every hit, nearest first, as one
// text line each (one miss line when there is none) or one JSON line;
// without: `hits` holds the nearest hit, or nothing for a miss. With
// `pixel`, each line also names the image-plane point the ray goes through.
std::string pick_answer(std::size_t i, const RayD& ray, std::span<const Hit> hits,
                        bool all, const std::string& format,
                        const std::vector<std::string>& names,
                        const glm::dvec2* pixel = nullptr);

// Appends `text` to `out`, writing `out` to stdout once it passes 64 KiB
// (finish_output() checks that it all arrived).
void write_buffered(std::string& out, const std::string& text);

// What `validate` parsed: validate --image uses it too.
struct ValidateArgs {
  std::string scene;
  std::size_t boxes = 0;
  std::size_t rays = 100000;
  std::size_t points = 0;  // --points: closest points instead of rays
  std::uint64_t seed = 1;
  PickMode mode = PickMode::kObb;
  std::string dump;
  LoadOptions load;
  std::vector<double> offset;  // X, Y, Z, or empty
};

// `validate --points N`: closest points against Embree's rtcPointQuery and
// brute force (validate_points.cpp). The exit status.
int run_validate_points(const ValidateArgs& a);

// The scene validate checks: SCENE loaded with a.load, or the generated
// boxes-N of a.seed (in a.mode's flavour), with `label` naming it for
// stdout; nullopt when the load failed (reported, `status` set).
std::optional<Loaded> validation_scene(const ValidateArgs& a,
                                       std::string& label, int& status);

// `raypick pick SCENE <camera> --pixel X,Y | --pixels FILE|- [--radius R]
// [--snap vertex|edge]`: registers the camera options, --radius and --snap
// on the `pick` subcommand, and --pixel and --pixels in its group of ray
// sources (exactly one of which is given).
class PixelPick {
 public:
  PixelPick(CLI::App& pick_cmd, CLI::Option_group& ray_source);
  // True when the command line asks for a pixel pick (--pixel, --pixels,
  // --radius, --snap or a camera option given).
  bool chosen() const;
  int run(const PickArgs& pick) const;

 private:
  CameraOptions camera_;
  std::string pixel_, pixels_;
  double radius_ = 0.0;
  std::string snap_;  // "vertex", "edge", or "" when --snap is not given
  CLI::Option* pixel_opt_ = nullptr;
  CLI::Option* pixels_opt_ = nullptr;
  CLI::Option* radius_opt_ = nullptr;
  CLI::Option* snap_opt_ = nullptr;
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
  int run(const ValidateArgs& validate) const;

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
  const std::string& scene() const;
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
  const std::string& scene() const;
  int run() const;

 private:
  CLI::App* cmd_;
  std::unique_ptr<RenderArgs> args_;
};

}  // namespace raypick::cli
