// Cameras for the camera, frustum and select tests: random valid specs in
// general position, a loop over many of them for both projections, and
// simple axis-aligned ones.
#pragma once

#include "raypick/core/camera.h"

#include <doctest/doctest.h>

#include <glm/vec3.hpp>

#include <random>

namespace raypick::test {

inline glm::dvec3 random_vec(std::mt19937_64& rng, double s) {
  std::uniform_real_distribution<double> u(-s, s);
  return {u(rng), u(rng), u(rng)};
}

// A random valid camera: eye, target, up in general position.
inline CameraSpec random_spec(std::mt19937_64& rng, Projection p) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  CameraSpec s;
  for (;;) {
    s.eye = random_vec(rng, 20.0);
    s.target = random_vec(rng, 5.0);
    s.up = random_vec(rng, 1.0);
    s.projection = p;
    s.fov_deg = 10.0 + 150.0 * u(rng);
    s.ortho_height = 0.5 + 30.0 * u(rng);
    s.width = 1 + int(1000 * u(rng));
    s.height = 1 + int(1000 * u(rng));
    if (check_camera(s).empty()) return s;
  }
}

// Calls f(spec, camera) for `count` random cameras of each projection,
// perspective first, drawing each spec from `rng` just before its call (so
// f may go on drawing from rng).
template <class F>
void for_random_cameras(std::mt19937_64& rng, int count, F&& f) {
  for (Projection p : {Projection::kPerspective, Projection::kOrthographic}) {
    for (int c = 0; c < count; ++c) {
      CAPTURE(int(p));
      CAPTURE(c);
      const CameraSpec s = random_spec(rng, p);
      f(s, Camera(s));
    }
  }
}

// A camera at (0, 0, z) looking at the origin (down -z for z > 0), up +y,
// a square image of `side` pixels: perspective with the default fov, or
// orthographic with view height `h`.
inline CameraSpec camera_down_z(double z, int side) {
  CameraSpec s;
  s.eye = {0.0, 0.0, z};
  s.target = {0.0, 0.0, 0.0};
  s.width = s.height = side;
  return s;
}

inline CameraSpec ortho_down_z(double z, double h, int side) {
  CameraSpec s = camera_down_z(z, side);
  s.projection = Projection::kOrthographic;
  s.ortho_height = h;
  return s;
}

}  // namespace raypick::test
