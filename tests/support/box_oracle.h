// Slow, obvious references for core's box arithmetic, used only by tests.
#pragma once

#include "raypick/core/aabb.h"

#include <glm/mat4x4.hpp>
#include <glm/vec4.hpp>

namespace raypick::test {

// The world box of `local` under `m` by transforming all eight corners
// (pbrt's method): what transform_aabb's abs-matrix method must match up to
// rounding. Empty for an empty `local`.
inline Aabb transform_aabb_corners(const glm::mat4& m, const Aabb& local) {
  Aabb out;
  if (local.empty()) return out;
  for (int i = 0; i < 8; ++i) {
    const glm::vec3 p{(i & 1) ? local.max.x : local.min.x,
                      (i & 2) ? local.max.y : local.min.y,
                      (i & 4) ? local.max.z : local.min.z};
    out.extend(glm::vec3(m * glm::vec4(p, 1.0f)));
  }
  return out;
}

}  // namespace raypick::test
