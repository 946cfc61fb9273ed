#include "raypick/core/obb.h"

#include <glm/ext/vector_double3.hpp>
#include <glm/geometric.hpp>

#include <cmath>

namespace raypick {

namespace {

// The 3x3 part's adjugate, in double: with columns c0, c1, c2 the inverse's
// rows are cross(c1, c2), cross(c2, c0) and cross(c0, c1) over
// det = dot(c0, cross(c1, c2)).
struct Adjugate {
  glm::dvec3 rows[3];
  double det;
  bool invertible() const { return std::isfinite(det) && det != 0.0; }
};

Adjugate adjugate(const glm::mat4x3& m) {
  const glm::dvec3 c0{m[0]}, c1{m[1]}, c2{m[2]};
  Adjugate a{{glm::cross(c1, c2), glm::cross(c2, c0), glm::cross(c0, c1)}, 0.0};
  a.det = glm::dot(c0, a.rows[0]);
  return a;
}

}  // namespace

bool is_invertible(const glm::mat4x3& m) { return adjugate(m).invertible(); }

bool invert_affine(const glm::mat4x3& m, glm::mat4x3& inverse) {
  // The inverse in double keeps the local-space ray as exact as float
  // allows (a float inverse of a badly scaled matrix loses digits).
  const Adjugate a = adjugate(m);
  const glm::dvec3 t{m[3]};
  bool ok = a.invertible();
  if (ok) {
    const double inv_det = 1.0 / a.det;
    for (int r = 0; r < 3; ++r) {
      const glm::dvec3 row = a.rows[r] * inv_det;
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
  // As invert_affine, without the translation column.
  const Adjugate a = adjugate(m);
  bool ok = a.invertible();
  if (ok) {
    const double inv_det = 1.0 / a.det;
    for (int r = 0; r < 3; ++r) {
      const glm::dvec3 row = a.rows[r] * inv_det;
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
