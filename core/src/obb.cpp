#include "raypick/core/obb.h"

#include <glm/ext/matrix_double4x4.hpp>
#include <glm/gtc/matrix_inverse.hpp>
#include <glm/matrix.hpp>

#include <cmath>

namespace raypick {

Aabb transform_aabb(const glm::mat4& m, const Aabb& local) {
  if (local.empty()) return Aabb{};
  const glm::vec3 c = local.center();
  const glm::vec3 e = local.half_extent();
  // glm is column-major: m[col][row]. extent'_r = sum_c |m[c][r]| * e_c.
  glm::vec3 center{m[3]};
  glm::vec3 extent{0.0f};
  for (int col = 0; col < 3; ++col) {
    center += glm::vec3(m[col]) * c[col];
    extent += glm::abs(glm::vec3(m[col])) * e[col];
  }
  return Aabb::from_center_extent(center, extent);
}

Aabb transform_aabb_corners(const glm::mat4& m, const Aabb& local) {
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

Obb Obb::make(const Aabb& local, const glm::mat4& to_world) {
  Obb obb;
  obb.local = local;
  obb.to_world = to_world;
  const glm::dmat4 md{to_world};
  const double det = glm::determinant(glm::dmat3{md});
  obb.invertible = std::isfinite(det) && det != 0.0;
  if (obb.invertible) {
    // The inverse in double keeps the local-space ray as exact as float
    // allows; a float inverse of a badly scaled matrix loses digits.
    const glm::dmat4 inv = glm::affineInverse(md);
    obb.to_local = glm::mat4{inv};
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) {
        if (!std::isfinite(obb.to_local[c][r])) obb.invertible = false;
      }
    }
  }
  if (!obb.invertible) obb.to_local = glm::mat4{0.0f};
  return obb;
}

Aabb Obb::world_bounds() const {
  if (!invertible) return Aabb{};
  return transform_aabb(to_world, local);
}

}  // namespace raypick
