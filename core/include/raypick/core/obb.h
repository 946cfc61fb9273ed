// Oriented bounding boxes: a local axis-aligned box under an affine matrix.
#pragma once

#include "raypick/core/aabb.h"
#include "raypick/core/ray.h"
#include "raypick/core/ray_box.h"

#include <cmath>

#include <glm/mat3x3.hpp>
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
  // The translation is added last, once, so that a box far from the origin
  // is rounded to its coordinates only once.
  glm::vec3 offset{0.0f};
  glm::vec3 extent{0.0f};
  for (int col = 0; col < 3; ++col) {
    offset += m[col] * c[col];
    // std::fabs, a sign-bit mask; glm::abs compiles to a compare and a
    // branch per component.
    const glm::vec3 a{std::fabs(m[col].x), std::fabs(m[col].y), std::fabs(m[col].z)};
    extent += a * e[col];
  }
  return Aabb::from_center_extent(m[3] + offset, extent);
}
RAYPICK_GEOMETRY_INLINE Aabb transform_aabb(const glm::mat4& m,
                                            const Aabb& local) {
  return transform_aabb(glm::mat4x3(m), local);
}

// Whether the affine map whose top three rows are `m` is invertible: the
// determinant of its 3x3 part, computed in double from the float entries as
// dot(c0, cross(c1, c2)), is finite and non-zero. The one test of "singular"
// that raypick and its references share (make_local_frame and invert_affine
// start from it); an object whose matrix fails it can never be hit.
bool is_invertible(const glm::mat4x3& m);

// The inverse of the affine map whose top three rows are `m`, computed in
// double precision and rounded once to float, into `inverse` (top three
// rows). False, with `inverse` zero, when m is singular or the inverse is
// not finite. For Obb::to_local; rays are carried by a LocalFrame instead,
// which keeps their precision far from the origin.
bool invert_affine(const glm::mat4x3& m, glm::mat4x3& inverse);

// What carries a world point into an object's frame without losing precision
// to the object's distance from the world origin: the object's origin in
// world space (its matrix's translation, exactly) and the inverse of its
// matrix's 3x3 part. A point p maps to linear * (p - origin). The
// difference is taken first: for p near the object it is exact or rounded
// to its own size, and the 3x3 product rounds only what is left, so the
// local point is as precise as near the world origin. (The full inverse
// matrix would add its translation column -M^-1 t, of size |t| / scale, to
// M^-1 p of the same size: they cancel and leave ulp(|t| / scale), a tenth
// of a local unit at 1e6.) 48 bytes, the size of a 3x4 inverse.
struct LocalFrame {
  glm::mat3 linear{1.0f};  // inverse of the 3x3 part, in double, rounded once
  glm::vec3 origin{0.0f};  // the matrix's translation column
};

// The frame of the affine map whose top three rows are `m`, into `frame`.
// False, with `frame` all zero, when m is singular or its inverse is not
// finite: such an object can never be hit, and no ray may be carried by
// that frame (the Picker's leaves and obb_entry(ray, Obb) check first).
// Every frame raypick uses comes from here.
bool make_local_frame(const glm::mat4x3& m, LocalFrame& frame);

// A box in an object's local frame, placed in the world by an invertible
// affine matrix: rotation, non-uniform or negative scale and shear are all
// allowed. A singular matrix (determinant 0, or not finite) makes an OBB
// that is never hit.
struct Obb {
  Aabb local;
  glm::mat4 to_world{1.0f};
  // Inverse of to_world, computed in double precision and rounded once.
  // Loses precision far from the origin when applied to points there (see
  // LocalFrame); rays are carried by `frame`.
  glm::mat4 to_local{1.0f};
  LocalFrame frame;
  // What the translation holds beyond float (Object::translation_low): the
  // box sits at to_world's translation + origin_low, summed exactly. Rays
  // are carried by frame and origin_low; to_world and to_local leave it out.
  glm::vec3 origin_low{0.0f};
  bool invertible = true;

  // origin_low is taken through significant_low().
  static Obb make(const Aabb& local, const glm::mat4& to_world,
                  const glm::vec3& origin_low = glm::vec3{0.0f});

  // The world AABB by transform_aabb(), moved by origin_low when it is not
  // zero (shift_outward). Empty when the OBB cannot be hit (empty local box
  // or singular matrix).
  Aabb world_bounds() const;
};

namespace detail {
// transform_ray's 3x3 products on the origin's difference v.
RAYPICK_GEOMETRY_INLINE Ray carry_ray(const glm::mat3& m, const glm::vec3& v, const Ray& ray) {
  Ray out = ray;
  for (int r = 0; r < 3; ++r) {
    out.org[r] = m[0][r] * v.x + m[1][r] * v.y + m[2][r] * v.z;
    out.dir[r] = m[0][r] * ray.dir.x + m[1][r] * ray.dir.y + m[2][r] * ray.dir.z;
  }
  return out;
}
}  // namespace detail

// The part of a translation's low part (Object::translation_low) that can
// matter for the box `local` under the affine `m`: `low` itself, or zero
// when each of its components is within 2^-22 of the box's largest world
// extent (|m| applied to its size): a move the contract's tolerance, a few
// float ulps of the object's own size, already allows. So the decimals of
// placements near the origin (0.4 is not a float) keep objects on the
// float path, and only placements far from their size keep a low part.
// An empty box or a singular m: zero.
glm::vec3 significant_low(const glm::mat4x3& m, const Aabb& local, const glm::vec3& low);

// `box` moved by `offset` (a translation's low part), each bound rounded
// outward by an ulp so that the moved box holds the exactly moved one.
// Empty stays empty.
Aabb shift_outward(const Aabb& box, const glm::vec3& offset);

// Carries a world ray into an object's frame: the origin as a point
// (linear * (org - origin), the difference first), the direction as a
// vector, the t range unchanged. Since the map is affine, a point at
// parameter t maps to the point at the same t. Every path of raypick
// carries rays with these functions, so they round alike. Cost: three
// subtractions and two 3x3 products.
RAYPICK_GEOMETRY_INLINE Ray transform_ray(const LocalFrame& f, const Ray& ray) {
  return detail::carry_ray(f.linear, ray.org - f.origin, ray);
}

// The same for a double-precision origin: org - origin is taken in double
// and rounded once to float, so the local origin is within an ulp of its
// own size of the exact one, whatever |org|.
RAYPICK_GEOMETRY_INLINE Ray transform_ray(const LocalFrame& f, const RayD& ray) {
  return detail::carry_ray(f.linear, glm::vec3{ray.org - glm::dvec3{f.origin}}, to_float(ray));
}

// The same for an object whose translation is f.origin + low (a placement
// held beyond float, Object::translation_low): org - origin - low in
// double, rounded once, for a Ray as for a RayD, so that the two answer
// alike when their origins are equal. Only for low != 0: with low = 0 use
// the two above, which every path (the Picker's leaves, obb_entry of an
// Obb) does, so that they round alike.
RAYPICK_GEOMETRY_INLINE Ray transform_ray(const LocalFrame& f, const glm::vec3& low,
                                          const RayD& ray) {
  const glm::dvec3 v = (ray.org - glm::dvec3{f.origin}) - glm::dvec3{low};
  return detail::carry_ray(f.linear, glm::vec3{v}, to_float(ray));
}
RAYPICK_GEOMETRY_INLINE Ray transform_ray(const LocalFrame& f, const glm::vec3& low,
                                          const Ray& ray) {
  return transform_ray(f, low, to_double(ray));
}

// The entry t of `ray` into the box `local` of the frame `f`, within
// [ray.tmin, tmax_limit]; +inf on a miss. Origin inside: ray.tmin.
// Precondition: f comes from a successful make_local_frame. Cost: one transform_ray and
// one slab test.
RAYPICK_GEOMETRY_INLINE float obb_entry(const LocalFrame& f, const Aabb& local,
                                    const Ray& ray, float tmax_limit) {
  Ray r = transform_ray(f, ray);
  r.tmax = tmax_limit;
  return slab_entry(RayInv(r), local);
}

// The same for a double-precision origin (see transform_ray).
RAYPICK_GEOMETRY_INLINE float obb_entry(const LocalFrame& f, const Aabb& local,
                                    const RayD& ray, float tmax_limit) {
  Ray r = transform_ray(f, ray);
  r.tmax = tmax_limit;
  return slab_entry(RayInv(r), local);
}

// The same for an object placed beyond float (transform_ray with `low`).
template <class R>
RAYPICK_GEOMETRY_INLINE float obb_entry(const LocalFrame& f, const glm::vec3& low,
                                        const Aabb& local, const R& ray, float tmax_limit) {
  Ray r = transform_ray(f, low, ray);
  r.tmax = tmax_limit;
  return slab_entry(RayInv(r), local);
}

// The same for an Obb; +inf when the OBB is not invertible.
template <class R>
RAYPICK_GEOMETRY_INLINE float obb_entry(const R& ray, const Obb& obb, float tmax_limit) {
  if (!obb.invertible) return kInfinity;
  if (obb.origin_low == glm::vec3{0.0f}) return obb_entry(obb.frame, obb.local, ray, tmax_limit);
  return obb_entry(obb.frame, obb.origin_low, obb.local, ray, tmax_limit);
}

}  // namespace raypick
