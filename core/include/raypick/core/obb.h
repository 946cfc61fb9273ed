// Oriented bounding boxes: a local axis-aligned box under an affine matrix.
#pragma once

#include "raypick/core/aabb.h"
#include "raypick/core/ray.h"
#include "raypick/core/ray_box.h"

#include <cmath>

#include <glm/mat4x3.hpp>
#include <glm/mat4x4.hpp>

namespace raypick {

// The world AABB of `local` under the affine matrix `m` (the last row of m is
// assumed to be 0,0,0,1), by the abs-matrix method: the center goes through
// m as a point and the half extent through |m| (element-wise absolute value
// of the upper 3x3) as a direction. Two small transforms instead of eight
// corners, and the same box as the min/max of the eight transformed corners
// up to rounding. An empty `local` gives an empty box.
RAYPICK_GEOMETRY_INLINE Aabb transform_aabb(const glm::mat4x3& m,
                                            const Aabb& local) {
  if (local.empty()) return Aabb{};
  const glm::vec3 c = local.center();
  const glm::vec3 e = local.half_extent();
  // glm is column-major: m[col][row]. extent'_r = sum_c |m[c][r]| * e_c.
  glm::vec3 center = m[3];
  glm::vec3 extent{0.0f};
  for (int col = 0; col < 3; ++col) {
    center += m[col] * c[col];
    // std::fabs, a sign-bit mask; glm::abs compiles to a compare and a
    // branch per component.
    const glm::vec3 a{std::fabs(m[col].x), std::fabs(m[col].y), std::fabs(m[col].z)};
    extent += a * e[col];
  }
  return Aabb::from_center_extent(center, extent);
}
RAYPICK_GEOMETRY_INLINE Aabb transform_aabb(const glm::mat4& m,
                                            const Aabb& local) {
  return transform_aabb(glm::mat4x3(m), local);
}

// The inverse of the affine map whose top three rows are `m`, computed in
// double precision and rounded once to float, into `inverse` (top three
// rows). False, with `inverse` zero, when m is singular or the inverse is
// not finite. Every inverse raypick uses comes from here.
bool invert_affine(const glm::mat4x3& m, glm::mat4x3& inverse);

// The same box by transforming all eight corners (pbrt's method); the
// reference that tests hold transform_aabb against.
Aabb transform_aabb_corners(const glm::mat4& m, const Aabb& local);

// A box in an object's local frame, placed in the world by an invertible
// affine matrix: rotation, non-uniform or negative scale and shear are all
// allowed. A singular matrix (determinant 0, or not finite) makes an OBB
// that is never hit.
struct Obb {
  Aabb local;
  glm::mat4 to_world{1.0f};
  // Inverse of to_world, computed in double precision and rounded once.
  glm::mat4 to_local{1.0f};
  bool invertible = true;

  static Obb make(const Aabb& local, const glm::mat4& to_world);

  // The world AABB by transform_aabb(). Empty when the OBB cannot be hit
  // (empty local box or singular matrix).
  Aabb world_bounds() const;
};

// Carries a world ray into the frame of an affine map given by its top
// three rows (glm::mat4x3: four columns of three): the origin as a point,
// the direction as a vector, the t range unchanged. Since the map is
// affine, a point at parameter t maps to the point at the same t. Every
// path of raypick carries rays with this one function, so they round alike.
RAYPICK_GEOMETRY_INLINE Ray transform_ray(const glm::mat4x3& m, const Ray& ray) {
  Ray out = ray;
  for (int r = 0; r < 3; ++r) {
    out.org[r] = m[0][r] * ray.org.x + m[1][r] * ray.org.y +
                 m[2][r] * ray.org.z + m[3][r];
    out.dir[r] = m[0][r] * ray.dir.x + m[1][r] * ray.dir.y +
                 m[2][r] * ray.dir.z;
  }
  return out;
}

RAYPICK_GEOMETRY_INLINE Ray transform_ray(const glm::mat4& m, const Ray& ray) {
  return transform_ray(glm::mat4x3(m), ray);
}

// The entry t of `ray` into the box `local` under the inverse map
// `to_local`, within [ray.tmin, tmax_limit]; +inf on a miss. Origin inside:
// ray.tmin. Cost: one 3x4 matrix-vector pair and one slab test.
RAYPICK_GEOMETRY_INLINE float obb_entry(const glm::mat4x3& to_local,
                                        const Aabb& local, const Ray& ray,
                                        float tmax_limit) {
  Ray r = transform_ray(to_local, ray);
  r.tmax = tmax_limit;
  return slab_entry(RayInv(r), local);
}

// The same for an Obb; +inf when the OBB is not invertible.
RAYPICK_GEOMETRY_INLINE float obb_entry(const Ray& ray, const Obb& obb,
                                        float tmax_limit) {
  if (!obb.invertible) return kInfinity;
  return obb_entry(glm::mat4x3(obb.to_local), obb.local, ray, tmax_limit);
}

}  // namespace raypick
