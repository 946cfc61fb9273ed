// Scenes, rays and moves for `raypick bench` (fixed seeds): boxes-N and
// crowd-N, incoherent and camera rays, and the update row's random moves,
// shared by the CLI and the tests (docs/performance.md).
#pragma once

#include "raypick/core/aabb.h"
#include "raypick/core/camera.h"
#include "raypick/core/ray.h"
#include "raypick/core/scene.h"

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace raypick::tools {

// The model of the crowd scenes: Debian's assimp-testmodels Wuson (3,732
// triangles).
inline constexpr const char* kCrowdModel =
    "/usr/share/assimp/models/OBJ/WusonOBJ.obj";

// crowd-N: N instances of `model` (mesh 0; a model file that the loader
// splits into several objects becomes one mesh by merge_into_one_mesh), object i under T * R * S * C,
// where C moves the model's box centre to the origin, S is a uniform scale
// in [0.5, 2], R a uniformly random rotation and T uniform in [0, L]^3 with
// L = 4 * N^(1/3) * E, E the largest side of the model's box (for a unit
// cube this is boxes-N's spacing). Objects are named "crowd<i>".
// Deterministic for a given (model, n, seed).
Scene make_crowd_scene(const Mesh& model, std::size_t n, std::uint64_t seed);

// `count` incoherent rays: origin uniform in `bounds` grown on each side by
// 10% of its size on that axis (as validate's random rays), direction
// uniform on the unit sphere (a normalized 3D Gaussian). Deterministic for
// a given (bounds, count, seed). Precondition: bounds is not empty.
std::vector<Ray> make_incoherent_rays(const Aabb& bounds, std::size_t count,
                                      std::uint64_t seed);

// The bench's camera, as core's CameraSpec (core/camera.h): a perspective
// camera outside `bounds` looking at its centre (`target`), up +y, vertical
// field of view `fov_degrees`. The eye sits on the fixed oblique direction
// kCameraView from the centre, at the distance where the bounding sphere of
// `bounds` just fills the vertical field of view (2 radii for 60 degrees),
// so it is outside the sphere and the box. Eye and target are floats, so
// make_camera_rays works on them exactly. The image size is left 0: the
// caller sets width and height (make_camera_rays takes them).
inline constexpr glm::vec3 kCameraView{0.35f, 0.5f, 1.0f};
CameraSpec make_camera(const Aabb& bounds, float fov_degrees = 60.0f);

// width * height rays from camera.eye through the pixel centres, row by
// row from the top-left, in float: with Camera's frame (forward f towards
// the target, right r = normalize(f x up), true up u = r x f), dir = f +
// sx * r + sy * u with sx in (-tan * aspect, tan * aspect) and sy in (-tan,
// tan), tan = tan(fov / 2). Directions are not normalized (t is in units of
// dir), unlike Camera::ray's. camera.width and height are not read.
// Preconditions: a perspective camera, width, height >= 1.
std::vector<Ray> make_camera_rays(const CameraSpec& camera, int width, int height);

// The object matrices of `scene`, in id order.
std::vector<glm::mat4> object_matrices(const Scene& scene);

// `matrices`, each moved by its own random translation uniform in
// [-amount, amount]^3 (applied in world space). Deterministic for a given
// (matrices, amount, seed).
std::vector<glm::mat4> moved_matrices(const std::vector<glm::mat4>& matrices,
                                      float amount, std::uint64_t seed);

// The bench's "small random translation" for `scene`: 2% of the diagonal
// of world_bounds (core/scene.h) divided by N^(1/3), i.e. about 0.14 of an object's size
// in boxes-N and crowd-N, whose objects are spread over L = 4 N^(1/3) sizes.
float move_amount(const Scene& scene);

// Parses "WxH" (e.g. "1024x1024"); nullopt unless both are integers in
// [1, 65536].
std::optional<std::pair<int, int>> parse_resolution(const std::string& text);

// Bytes resident in this process now (from /proc/self/statm); 0 when it
// cannot be read.
std::size_t resident_bytes();

}  // namespace raypick::tools
