// The camera options shared by the screen commands, and their helpers.
#include "camera_options.h"

#include "ray_io.h"

#include "raypick/core/text.h"

#include <CLI/CLI.hpp>

#include <glm/geometric.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace raypick::cli {

std::string format_coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

namespace {

// "X,Y,Z" (or white space) to a finite vector; nullopt with a message
// naming the option.
std::optional<glm::dvec3> parse_vec3(const char* option, const std::string& text,
                                     std::string& error) {
  std::string why;
  const std::optional<glm::dvec3> p = tools::parse_point<3>(text, why, "X,Y,Z");
  if (!p) error = std::string(option) + " " + in_quotes(text) + ": " + why;
  return p;
}

// "WxH" with decimal sides; sides out of range are left to check_camera.
bool parse_size(const std::string& text, int& w, int& h) {
  const std::size_t x = text.find_first_of("xX");
  if (x == std::string::npos) return false;
  auto side = [](std::string_view s, int& out) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) {
      return false;
    }
    // Too many digits for an int: too large a side, which check_camera says.
    if (s.size() > 9) {
      out = std::numeric_limits<int>::max();
      return true;
    }
    std::from_chars(s.data(), s.data() + s.size(), out);
    return true;
  };
  const std::string_view t = text;
  return side(t.substr(0, x), w) && side(t.substr(x + 1), h);
}

// Parses "X0,Y0,X1,Y1" (finite numbers); nullopt with `error` set.
std::optional<std::array<double, 4>> parse_rect(const std::string& text,
                                                std::string& error) {
  std::string why;
  const auto v = tools::parse_numbers(text, 4, "X0,Y0,X1,Y1", why);
  if (!v) {
    error = "--rect " + in_quotes(text) + ": " + why;
    return std::nullopt;
  }
  std::array<double, 4> r{(*v)[0], (*v)[1], (*v)[2], (*v)[3]};
  for (double c : r) {
    if (!std::isfinite(c)) {
      error = "--rect " + in_quotes(text) + ": not finite";
      return std::nullopt;
    }
  }
  return r;
}

}  // namespace

void CameraOptions::add_to(CLI::App& cmd) {
  eye_opt_ = add_text_option(cmd, "--eye", eye_, "Camera position X,Y,Z");
  target_opt_ = add_text_option(cmd, "--target", target_, "Point the camera looks at, X,Y,Z");
  up_opt_ = add_text_option(cmd, "--up", up_, "Up direction X,Y,Z (default 0,1,0)");
  fov_opt_ = cmd.add_option("--fov", fov_,
                            "Perspective: vertical field of view in degrees, in (0, 180) "
                            "(default 60)")
                 ->transform(a_number());
  ortho_opt_ = cmd.add_option("--ortho", ortho_,
                              "Orthographic instead: the view height in world units")
                   ->transform(a_number());
  size_opt_ = add_text_option(cmd, "--size", size_, "Image size WxH in pixels (sides 1..16384)");
  view_opt_ = cmd.add_option("--view", view_,
                             "Without --eye/--target/--camera: frame the whole scene, seen "
                             "from iso (front, right and above; the default), front, back, "
                             "left, right, top or bottom")
                  ->check(CLI::IsMember({"iso", "front", "back", "left", "right", "top",
                                         "bottom"}));
  camera_opt_ = add_text_option(cmd, "--camera", camera_,
                                "A camera of a glTF scene, by node name, camera name or "
                                "index (instead of --eye/--target/--up/--fov/--ortho)");
  fov_opt_->excludes(ortho_opt_);
  for (CLI::Option* o : {eye_opt_, target_opt_, up_opt_, fov_opt_, ortho_opt_, view_opt_}) {
    camera_opt_->excludes(o);
  }
  view_opt_->excludes(eye_opt_);
  view_opt_->excludes(target_opt_);
  view_opt_->excludes(up_opt_);
}

bool CameraOptions::any_given() const {
  for (CLI::Option* o : {eye_opt_, target_opt_, up_opt_, fov_opt_, ortho_opt_,
                         size_opt_, camera_opt_, view_opt_}) {
    if (o->count() > 0) return true;
  }
  return false;
}

std::optional<CameraSpec> CameraOptions::spec_without_scene(std::string& error) const {
  // `s` with --ortho or --fov, checked.
  const auto with_projection = [&](CameraSpec s) -> std::optional<CameraSpec> {
    if (ortho_opt_->count() > 0) {
      s.projection = Projection::kOrthographic;
      s.ortho_height = ortho_;
    } else {
      s.fov_deg = fov_;
    }
    if (std::string e = check_camera(s); !e.empty()) {
      error = e;
      return std::nullopt;
    }
    return s;
  };
  if (size_opt_->count() == 0) {
    error = "a camera needs --size WxH";
    return std::nullopt;
  }
  CameraSpec s;
  if (!parse_size(size_, s.width, s.height)) {
    error = "--size must be WxH (for example 640x480), got " + in_quotes(size_);
    return std::nullopt;
  }
  if (camera_opt_->count() > 0) {
    if (camera_.empty()) {
      error = "--camera needs a camera's name or index";
      return std::nullopt;
    }
    // The rest comes from the scene; check the size alone.
    s.eye = {0, 0, 0};
    s.target = {0, 0, -1};
    if (std::string e = check_camera(s); !e.empty()) {
      error = e;
      return std::nullopt;
    }
    return s;
  }
  if (eye_opt_->count() == 0 && target_opt_->count() == 0) {
    // Framed when the scene is known (make_or_explain); check the rest now
    // with a stand-in eye and target.
    s.eye = {0, 0, 1};
    s.target = {0, 0, 0};
    return with_projection(s);
  }
  if (eye_opt_->count() == 0 || target_opt_->count() == 0) {
    error = std::string(eye_opt_->count() == 0 ? "--target" : "--eye") + " needs " +
            (eye_opt_->count() == 0 ? "--eye X,Y,Z" : "--target X,Y,Z") +
            " too (or neither, and the scene is framed; see --view)";
    return std::nullopt;
  }
  const auto eye = parse_vec3("--eye", eye_, error);
  if (!eye) return std::nullopt;
  const auto target = parse_vec3("--target", target_, error);
  if (!target) return std::nullopt;
  const auto up = parse_vec3("--up", up_, error);
  if (!up) return std::nullopt;
  s.eye = *eye;
  s.target = *target;
  s.up = *up;
  return with_projection(s);
}

std::optional<std::array<double, 4>> CameraOptions::check(const char* command,
                                                         const std::string* rect,
                                                         int& status) const {
  std::string error;
  spec_without_scene(error);
  std::optional<std::array<double, 4>> r;
  if (error.empty() && rect) r = parse_rect(*rect, error);
  if (!error.empty()) status = fail(kExitUsage, std::string(command) + ": " + error);
  return r;
}

std::optional<CameraOptions::View> CameraOptions::load_view(const char* command,
                                                            const std::string& scene,
                                                            const LoadOptions& options,
                                                            int& status) const {
  std::optional<Loaded> loaded = load_or_report(scene, options, status);
  if (!loaded) return std::nullopt;
  std::optional<Camera> camera = make(command, loaded->scene, status);
  if (!camera) return std::nullopt;
  return View{std::move(*loaded), *camera};
}

std::optional<Camera> CameraOptions::make(const char* command, const Scene& scene,
                                          int& status) const {
  std::string error;
  std::optional<Camera> camera = make_or_explain(scene, status, error);
  if (!camera) status = fail(status, std::string(command) + ": " + error);
  return camera;
}

std::optional<Camera> CameraOptions::make_or_explain(const Scene& scene, int& status,
                                                     std::string& error) const {
  std::optional<CameraSpec> s = spec_without_scene(error);
  if (!s) {
    status = kExitUsage;
    return std::nullopt;
  }
  if (camera_opt_->count() == 0 && eye_opt_->count() == 0) {
    // No camera given: frame the scene.
    static const std::pair<const char*, ViewDirection> kViews[] = {
        {"iso", ViewDirection::kIso},   {"front", ViewDirection::kFront},
        {"back", ViewDirection::kBack}, {"left", ViewDirection::kLeft},
        {"right", ViewDirection::kRight}, {"top", ViewDirection::kTop},
        {"bottom", ViewDirection::kBottom}};
    ViewDirection view = ViewDirection::kIso;
    for (const auto& [name, v] : kViews) {
      if (view_ == name) view = v;
    }
    if (ortho_opt_->count() == 0) s->ortho_height = 0.0;
    const CameraSpec framed = framing_camera(world_bounds(scene), view, *s);
    if (std::string e = check_camera(framed); !e.empty()) {
      status = kExitBadInput;
      error = "the scene cannot be framed: " + e;
      return std::nullopt;
    }
    return Camera(framed);
  }
  if (camera_opt_->count() == 0) return Camera(*s);
  status = kExitBadInput;
  // An index when all digits, else a node name, else a camera name.
  const SceneCamera* found = nullptr;
  std::size_t index = 0;
  if (camera_.find_first_not_of("0123456789") == std::string::npos) {
    const auto [p, ec] = std::from_chars(camera_.data(), camera_.data() + camera_.size(), index);
    if (ec == std::errc() && index < scene.cameras.size()) found = &scene.cameras[index];
  } else {
    for (const SceneCamera& c : scene.cameras) {
      if (c.name == camera_) {
        found = &c;
        break;
      }
    }
    for (std::size_t k = 0; !found && k < scene.cameras.size(); ++k) {
      if (scene.cameras[k].camera_name == camera_) found = &scene.cameras[k];
    }
  }
  if (!found) {
    error = "--camera " + in_quotes(camera_) + ": the scene has ";
    if (scene.cameras.empty()) {
      error += "no cameras";
    } else {
      error += std::to_string(scene.cameras.size()) + " camera(s) (";
      for (std::size_t k = 0; k < scene.cameras.size() && k < 8; ++k) {
        const SceneCamera& c = scene.cameras[k];
        const std::string& name = c.name.empty() ? c.camera_name : c.name;
        error += (k ? ", " : "") + std::to_string(k) +
                 (name.empty() ? std::string(" unnamed") : " " + in_quotes(name));
      }
      error += scene.cameras.size() > 8 ? ", ...)" : ")";
      error += " and none of that name or index";
    }
    return std::nullopt;
  }
  s = camera_spec(*found, s->width, s->height);
  if (std::string e = check_camera(*s); !e.empty()) {
    error = "--camera " + in_quotes(camera_) + ": the camera cannot be used (its node matrix or "
            "projection is degenerate: " + e + ")";
    return std::nullopt;
  }
  return Camera(*s);
}

}  // namespace raypick::cli
