#include "raypick/core/camera.h"

#include "raypick/core/assert.h"

#include <glm/geometric.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

namespace raypick {
namespace {

bool finite(const glm::dvec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

std::string str(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

std::string str(const glm::dvec3& v) {
  return str(v.x) + "," + str(v.y) + "," + str(v.z);
}

}  // namespace

CameraSpec framing_camera(const Aabb& box, ViewDirection view, CameraSpec spec) {
  const Aabb b = box.empty() ? Aabb{glm::vec3(-0.5f), glm::vec3(0.5f)} : box;
  const glm::dvec3 lo(b.min), hi(b.max);
  const glm::dvec3 centre = 0.5 * (lo + hi);
  double radius = 0.5 * glm::length(hi - lo);
  if (!(radius > 0.0)) radius = 0.5;  // a point: a unit's worth around it
  glm::dvec3 from{0.0, 0.0, 1.0}, up{0.0, 1.0, 0.0};
  switch (view) {
    case ViewDirection::kIso: from = glm::normalize(glm::dvec3{1.0, 0.8, 1.4}); break;
    case ViewDirection::kFront: from = {0.0, 0.0, 1.0}; break;
    case ViewDirection::kBack: from = {0.0, 0.0, -1.0}; break;
    case ViewDirection::kRight: from = {1.0, 0.0, 0.0}; break;
    case ViewDirection::kLeft: from = {-1.0, 0.0, 0.0}; break;
    case ViewDirection::kTop: from = {0.0, 1.0, 0.0}, up = {0.0, 0.0, -1.0}; break;
    case ViewDirection::kBottom: from = {0.0, -1.0, 0.0}, up = {0.0, 0.0, 1.0}; break;
  }
  double distance = 2.0 * radius;
  if (spec.projection == Projection::kPerspective) {
    const double half_v = 0.5 * spec.fov_deg * std::numbers::pi / 180.0;
    const double aspect = spec.height > 0 ? double(spec.width) / spec.height : 1.0;
    const double half_h = std::atan(std::tan(half_v) * aspect);
    const double half = std::min(half_v, half_h);
    if (half > 0.0) distance = radius / std::sin(half) * 1.02;
  } else if (!(spec.ortho_height > 0.0)) {
    const double aspect = spec.height > 0 ? double(spec.width) / spec.height : 1.0;
    spec.ortho_height = 2.0 * radius * 1.02 * std::max(1.0, 1.0 / aspect);
  }
  spec.target = centre;
  spec.eye = centre + from * distance;
  spec.up = up;
  return spec;
}

std::string check_camera(const CameraSpec& s) {
  if (s.width < 1 || s.height < 1 || s.width > kMaxImageSide ||
      s.height > kMaxImageSide) {
    return "--size must be WxH with both sides in 1.." +
           std::to_string(kMaxImageSide) + ", got " + std::to_string(s.width) +
           "x" + std::to_string(s.height);
  }
  if (!finite(s.eye)) return "--eye must be finite, got " + str(s.eye);
  if (!finite(s.target)) return "--target must be finite, got " + str(s.target);
  if (!finite(s.up)) return "--up must be finite, got " + str(s.up);
  if (s.projection == Projection::kPerspective) {
    if (!(s.fov_deg > 0.0 && s.fov_deg < 180.0)) {
      return "--fov must be in (0, 180) degrees, got " + str(s.fov_deg);
    }
  } else if (!(s.ortho_height > 0.0 && std::isfinite(s.ortho_height))) {
    return "--ortho must be a finite view height > 0, got " + str(s.ortho_height);
  }
  const glm::dvec3 view = s.target - s.eye;
  if (view == glm::dvec3(0.0)) {
    return "--eye and --target must differ (both are " + str(s.eye) + ")";
  }
  if (!finite(view) || !finite(glm::normalize(view))) {
    return "--eye and --target are too far apart (the view direction overflows)";
  }
  if (s.up == glm::dvec3(0.0)) return "--up must not be zero";
  // Parallel within about 1e-9 radians: the right vector would be noise.
  const glm::dvec3 side = glm::cross(glm::normalize(view), glm::normalize(s.up));
  if (!(glm::length(side) > 1e-9)) {
    return "--up " + str(s.up) +
           " is parallel to the view direction (target - eye); give another --up";
  }
  return {};
}

Camera::Camera(const CameraSpec& spec) : spec_(spec) {
  RAYPICK_ASSERT(check_camera(spec).empty(), "camera spec is not valid");
  f_ = glm::normalize(spec.target - spec.eye);
  r_ = glm::normalize(glm::cross(f_, spec.up));
  u_ = glm::cross(r_, f_);
  const double aspect = double(spec.width) / double(spec.height);
  if (spec.projection == Projection::kPerspective) {
    sy_ = std::tan(spec.fov_deg * (std::numbers::pi / 360.0));
  } else {
    sy_ = spec.ortho_height / 2.0;
  }
  sx_ = sy_ * aspect;
}

Ray Camera::ray(double X, double Y) const {
  const double x = nx(X), y = ny(Y);
  Ray out;
  if (spec_.projection == Projection::kPerspective) {
    out.org = glm::vec3(spec_.eye);
    out.dir = glm::vec3(glm::normalize(f_ + (x * sx_) * r_ + (y * sy_) * u_));
  } else {
    out.org = glm::vec3(spec_.eye + (x * sx_) * r_ + (y * sy_) * u_);
    out.dir = glm::vec3(f_);
  }
  return out;
}

Frustum Camera::frustum(double X0, double Y0, double X1, double Y1) const {
  // Image y grows downwards: the larger Y is the lower edge.
  const double xlo = nx(std::min(X0, X1)), xhi = nx(std::max(X0, X1));
  const double ylo = ny(std::max(Y0, Y1)), yhi = ny(std::min(Y0, Y1));
  const glm::dvec3& e = spec_.eye;
  Frustum fr;
  fr.right = r_;
  fr.up = u_;
  const double xs[2] = {xlo * sx_, xhi * sx_};
  const double ys[2] = {ylo * sy_, yhi * sy_};
  auto through_eye = [&](const glm::dvec3& n) { return Plane{n, -glm::dot(n, e)}; };
  if (spec_.projection == Projection::kPerspective) {
    fr.perspective = true;
    // A point p = eye + v with dot(f, v) > 0 projects to
    // x = dot(r, v) / (dot(f, v) * sx); x >= xlo is dot(r - xlo*sx*f, v) >= 0.
    fr.planes[0] = through_eye(r_ - xs[0] * f_);
    fr.planes[1] = through_eye(xs[1] * f_ - r_);
    fr.planes[2] = through_eye(u_ - ys[0] * f_);
    fr.planes[3] = through_eye(ys[1] * f_ - u_);
    for (int k = 0; k < 4; ++k) {
      fr.vertex[k] = e;
      fr.edge_dir[k] = f_ + xs[k & 1] * r_ + ys[k >> 1] * u_;
    }
  } else {
    fr.perspective = false;
    fr.planes[0] = Plane{r_, -glm::dot(r_, e) - xs[0]};
    fr.planes[1] = Plane{-r_, glm::dot(r_, e) + xs[1]};
    fr.planes[2] = Plane{u_, -glm::dot(u_, e) - ys[0]};
    fr.planes[3] = Plane{-u_, glm::dot(u_, e) + ys[1]};
    for (int k = 0; k < 4; ++k) {
      fr.vertex[k] = e + xs[k & 1] * r_ + ys[k >> 1] * u_;
      fr.edge_dir[k] = f_;
    }
  }
  fr.planes[4] = through_eye(f_);
  return fr;
}

glm::dvec2 Camera::project(const glm::dvec3& p) const {
  const glm::dvec3 v = p - spec_.eye;
  double x = glm::dot(r_, v) / sx_, y = glm::dot(u_, v) / sy_;
  if (spec_.projection == Projection::kPerspective) {
    const double z = glm::dot(f_, v);
    x /= z;
    y /= z;
  }
  return {(x + 1.0) * spec_.width / 2.0, (1.0 - y) * spec_.height / 2.0};
}

double Camera::depth(const glm::dvec3& p) const {
  return glm::dot(f_, p - spec_.eye);
}

}  // namespace raypick
