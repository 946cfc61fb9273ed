#include "raypick/core/obb.h"

#include <glm/ext/vector_double3.hpp>
#include <glm/geometric.hpp>

#include <cmath>

namespace raypick {

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

bool invert_affine(const glm::mat4x3& m, glm::mat4x3& inverse) {
  // The inverse in double keeps the local-space ray as exact as float
  // allows (a float inverse of a badly scaled matrix loses digits). With
  // columns c0, c1, c2 the inverse's rows are cross(c1, c2), cross(c2, c0)
  // and cross(c0, c1) over det = dot(c0, cross(c1, c2)).
  const glm::dvec3 c0{m[0]}, c1{m[1]}, c2{m[2]};
  const glm::dvec3 t{m[3]};
  const glm::dvec3 rows[3] = {glm::cross(c1, c2), glm::cross(c2, c0),
                              glm::cross(c0, c1)};
  const double det = glm::dot(c0, rows[0]);
  bool ok = std::isfinite(det) && det != 0.0;
  if (ok) {
    const double inv_det = 1.0 / det;
    for (int r = 0; r < 3; ++r) {
      const glm::dvec3 row = rows[r] * inv_det;
      for (int c = 0; c < 3; ++c) inverse[c][r] = static_cast<float>(row[c]);
      inverse[3][r] = static_cast<float>(-glm::dot(row, t));
    }
    for (int c = 0; c < 4; ++c) {
      ok = ok && std::isfinite(inverse[c].x) && std::isfinite(inverse[c].y) &&
           std::isfinite(inverse[c].z);
    }
  }
  if (!ok) inverse = glm::mat4x3{0.0f};
  return ok;
}

bool make_local_frame(const glm::mat4x3& m, LocalFrame& frame) {
  // As invert_affine, without the translation column: the rows of the
  // inverse 3x3 are cross(c1, c2), cross(c2, c0), cross(c0, c1) over det.
  const glm::dvec3 c0{m[0]}, c1{m[1]}, c2{m[2]};
  const glm::dvec3 rows[3] = {glm::cross(c1, c2), glm::cross(c2, c0),
                              glm::cross(c0, c1)};
  const double det = glm::dot(c0, rows[0]);
  bool ok = std::isfinite(det) && det != 0.0;
  if (ok) {
    const double inv_det = 1.0 / det;
    for (int r = 0; r < 3; ++r) {
      const glm::dvec3 row = rows[r] * inv_det;
      for (int c = 0; c < 3; ++c) {
        frame.linear[c][r] = static_cast<float>(row[c]);
        ok = ok && std::isfinite(frame.linear[c][r]);
      }
    }
    frame.origin = m[3];
    ok = ok && std::isfinite(m[3].x) && std::isfinite(m[3].y) && std::isfinite(m[3].z);
  }
  if (!ok) frame = LocalFrame{glm::mat3{0.0f}, glm::vec3{0.0f}};
  return ok;
}

Obb Obb::make(const Aabb& local, const glm::mat4& to_world) {
  Obb obb;
  obb.local = local;
  obb.to_world = to_world;
  glm::mat4x3 inverse;
  // Hittable as the Picker's leaves decide it, by the frame.
  obb.invertible = make_local_frame(glm::mat4x3(to_world), obb.frame);
  invert_affine(glm::mat4x3(to_world), inverse);
  obb.to_local = glm::mat4(inverse);  // last row 0, 0, 0, 1
  if (!obb.invertible) {
    obb.to_local = glm::mat4{0.0f};
    obb.frame = LocalFrame{glm::mat3{0.0f}, glm::vec3{0.0f}};
  }
  return obb;
}

Aabb Obb::world_bounds() const {
  if (!invertible) return Aabb{};
  return transform_aabb(to_world, local);
}

}  // namespace raypick
