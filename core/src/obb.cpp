#include "raypick/core/obb.h"

#include <glm/ext/vector_double3.hpp>
#include <glm/geometric.hpp>

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
  // The inverse in double keeps the local-space ray as exact as float
  // allows (a float inverse of a badly scaled matrix loses digits). With
  // columns c0, c1, c2 the inverse's rows are cross(c1, c2), cross(c2, c0)
  // and cross(c0, c1) over det = dot(c0, cross(c1, c2)).
  const glm::dvec3 c0{to_world[0]}, c1{to_world[1]}, c2{to_world[2]};
  const glm::dvec3 t{to_world[3]};
  const glm::dvec3 rows[3] = {glm::cross(c1, c2), glm::cross(c2, c0),
                              glm::cross(c0, c1)};
  const double det = glm::dot(c0, rows[0]);
  obb.invertible = std::isfinite(det) && det != 0.0;
  if (obb.invertible) {
    const double inv_det = 1.0 / det;
    for (int r = 0; r < 3; ++r) {
      const glm::dvec3 row = rows[r] * inv_det;
      for (int c = 0; c < 3; ++c) obb.to_local[c][r] = static_cast<float>(row[c]);
      obb.to_local[3][r] = static_cast<float>(-glm::dot(row, t));
      obb.to_local[r][3] = 0.0f;
    }
    obb.to_local[3][3] = 1.0f;
    for (int c = 0; c < 4 && obb.invertible; ++c) {
      for (int r = 0; r < 3; ++r) {
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
