// Cameras: the contract's screen space ("Cameras and screen space"). A
// camera turns an image-plane point into a ray, and a rectangle of the
// image into the region a marquee selects (a Frustum).
//
//   raypick::CameraSpec spec;
//   spec.eye = {0, 2, 8}; spec.target = {0, 0, 0};
//   spec.width = 800; spec.height = 600;          // perspective, fov 60
//   if (std::string e = raypick::check_camera(spec); !e.empty()) ...;
//   raypick::Camera cam(spec);
//   raypick::Ray ray = cam.ray(400.5, 300.5);     // pixel (400, 300)
//   raypick::Frustum region = cam.frustum(100, 100, 300, 250);
#pragma once

#include "raypick/core/aabb.h"
#include "raypick/core/frustum.h"  // Camera::frustum returns one
#include "raypick/core/ray.h"

#include <glm/vec2.hpp>
#include <glm/vec3.hpp>

#include <string>

namespace raypick {

enum class Projection { kPerspective, kOrthographic };

// What a camera is made of, as the command line's options give it.
struct CameraSpec {
  glm::dvec3 eye{0.0};
  glm::dvec3 target{0.0, 0.0, -1.0};
  glm::dvec3 up{0.0, 1.0, 0.0};
  Projection projection = Projection::kPerspective;
  double fov_deg = 60.0;     // vertical field of view, perspective
  double ortho_height = 1.0; // view height in world units, orthographic
  int width = 0;             // image size in pixels
  int height = 0;
};

// Where a framing camera looks from (framing_camera): iso is from the
// front, right and above (+z, +x, +y of the box's centre), the others
// straight along one axis (front looks down -z from +z, top down -y from
// +y with -z up on the image, and so on).
enum class ViewDirection { kIso, kFront, kBack, kLeft, kRight, kTop, kBottom };

// A camera that frames `box` for a quick look: it looks at the box's
// centre from `view`, with spec.projection, fov_deg and ortho_height
// taken from `spec` (the rest of `spec` is replaced but width and height).
// Perspective: far enough that the box's bounding sphere fits both the
// vertical and the horizontal field of view. Orthographic: the eye just
// outside the sphere; ortho_height <= 0 means "fit the sphere". An empty
// box is framed as the unit box at the origin.
CameraSpec framing_camera(const Aabb& box, ViewDirection view, CameraSpec spec);

// The largest image side a camera accepts.
inline constexpr int kMaxImageSide = 16384;

// Checks a spec: finite vectors, image sides in [1, kMaxImageSide], fov in
// (0, 180), ortho height > 0 and finite, eye != target, up not parallel to
// the view direction. Returns an empty string when the spec is usable, else
// one sentence saying what is wrong ("--fov must be in (0, 180) degrees,
// got 180"), worded with the command line's option names.
std::string check_camera(const CameraSpec& spec);

// A camera per the contract's formulas, computed in double precision.
class Camera {
 public:
  // Precondition: check_camera(spec) is empty.
  explicit Camera(const CameraSpec& spec);

  const CameraSpec& spec() const { return spec_; }
  int width() const { return spec_.width; }
  int height() const { return spec_.height; }
  Projection projection() const { return spec_.projection; }
  // The orthonormal frame: forward f, right r, true up u = r x f.
  const glm::dvec3& forward() const { return f_; }
  const glm::dvec3& right() const { return r_; }
  const glm::dvec3& up() const { return u_; }
  const glm::dvec3& eye() const { return spec_.eye; }

  // The ray through image-plane point (X, Y) (pixel units, (0, 0) the
  // top-left corner, pixel (i, j)'s centre at (i + 0.5, j + 0.5)); any
  // finite X, Y, also outside the image. Perspective: origin eye, unit
  // direction, so t is the distance from the eye. Orthographic: origin on
  // the eye's plane, direction f. Computed in double, rounded once to float.
  Ray ray(double X, double Y) const;

  // The region selected by the rectangle with corners (X0, Y0) and
  // (X1, Y1), in either order.
  Frustum frustum(double X0, double Y0, double X1, double Y1) const;

  // The image-plane point of a world point in front of the camera (the
  // inverse of ray()); meaningless for a point on or behind the eye's plane
  // in perspective.
  glm::dvec2 project(const glm::dvec3& p) const;

  // The depth of world point p along the view direction: dot(f, p - eye).
  double depth(const glm::dvec3& p) const;

 private:
  // Normalized image coordinates of X, Y: x = 2X/W - 1, y = 1 - 2Y/H.
  double nx(double X) const { return 2.0 * X / spec_.width - 1.0; }
  double ny(double Y) const { return 1.0 - 2.0 * Y / spec_.height; }

  CameraSpec spec_;
  glm::dvec3 f_, r_, u_;
  // Half-extents of the image plane: perspective, at distance 1 from the
  // eye (tan(fov/2) * W/H, tan(fov/2)); orthographic, in world units.
  double sx_ = 1.0, sy_ = 1.0;
};

}  // namespace raypick
