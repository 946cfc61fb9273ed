// Rays and their per-query precomputation.
#pragma once

#include <glm/ext/vector_double3.hpp>
#include <glm/vec3.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

// Marks the geometric predicates that core's headers define (ray carried
// into an object's frame, world boxes, the triangle test): they are always
// inlined, so raypick's own code runs them as compiled with raypick's flags
// (no floating-point contraction), never an out-of-line copy that another
// translation unit, compiled with other flags, lent to the linker. A
// program that calls them itself compiles them with its own flags; see the
// README, "Compile flags". The traversal loops' per-node and per-object
// steps use it too, so that the compiler's size heuristics (which change
// with everything else in the translation unit) never outline them.
#if defined(__GNUC__) || defined(__clang__)
#define RAYPICK_GEOMETRY_INLINE [[gnu::always_inline]] inline
#else
#define RAYPICK_GEOMETRY_INLINE inline
#endif

namespace raypick {

inline constexpr float kInfinity = std::numeric_limits<float>::infinity();

// The points org + t * dir for tmin <= t <= tmax. dir is never normalized:
// every t is in units of the given dir, so a t found after carrying the ray
// into an object's frame by an affine map is the same t in world space.
// Valid rays have finite org, finite non-zero dir and 0 <= tmin <= tmax.
// `Origin` is glm::vec3 (Ray) or glm::dvec3 (RayD, below); everything else
// is float in both.
template <class Origin>
struct BasicRay {
  Origin org = Origin(0);
  glm::vec3 dir{0.0f, 0.0f, 1.0f};
  float tmin = 0.0f;
  float tmax = kInfinity;
};

using Ray = BasicRay<glm::vec3>;

// True when org and dir are finite, dir is non-zero and the t range is
// ordered; the precondition of every query.
inline bool is_valid(const Ray& ray) {
  for (int a = 0; a < 3; ++a) {
    if (!std::isfinite(ray.org[a]) || !std::isfinite(ray.dir[a])) return false;
  }
  const bool nonzero = ray.dir.x != 0.0f || ray.dir.y != 0.0f ||
                       ray.dir.z != 0.0f;
  // tmin must be a real number; tmax may be +inf.
  return nonzero && std::isfinite(ray.tmin) && ray.tmin >= 0.0f &&
         !std::isnan(ray.tmax) && ray.tmin <= ray.tmax;
}

// A ray whose origin is given in double precision, for worlds with large
// coordinates (GIS and CAD models placed in metres from a survey origin,
// open worlds of 1e5 units and more), where rounding the origin to float
// would already cost ulp(|org|) / 2: 3 cm at 6e5. Every query takes it as it
// takes a Ray. The contract is the same as for a Ray whose origin is the
// exact `org`: each object sees `org - (its matrix's translation)`, taken in
// double and rounded once to float, so answers are within a few float ulps
// of the object's size and of its distance from `org`, however large
// `org` is. (The top level's box tests use `org` rounded to float; the
// world boxes are padded by more than that rounding, or it is an ulp or two
// of the distance; see padded_world_box().) Valid: |org| within the float range (so that the
// rounded origin is finite), dir finite and non-zero, 0 <= tmin <= tmax.
using RayD = BasicRay<glm::dvec3>;

// The Ray nearest to `ray`: its origin rounded to the nearest float.
inline Ray to_float(const RayD& ray) {
  return Ray{glm::vec3(ray.org), ray.dir, ray.tmin, ray.tmax};
}

// The same ray with its origin as a double (exact).
inline RayD to_double(const Ray& ray) {
  return RayD{glm::dvec3(ray.org), ray.dir, ray.tmin, ray.tmax};
}

// is_valid(to_float(ray)): the rounded origin must be finite too.
inline bool is_valid(const RayD& ray) { return is_valid(to_float(ray)); }

// What every ray/box test of one query needs, computed once per query (as
// Embree's TravRay or Jolt's RayInvDirection).
//
// Zero direction components are handled here, in one way: inv_dir = 1/dir
// gives +inf for +0.0 and -inf for -0.0, and the octant is taken from the
// sign bit of dir, so -0.0 is treated as a negative direction. The slab test
// then sees (bound - org) * inf, which is +-inf (the right answer) except
// when org lies exactly on a slab plane, where it is 0 * inf = NaN; the slab
// test orders its min/max so that such a NaN leaves the interval unchanged.
struct RayInv {
  glm::vec3 org;
  glm::vec3 inv_dir;
  // 1 where the direction's sign bit is set (dir < 0 or dir == -0.0): the
  // near plane of that axis is the box's max.
  std::uint8_t neg[3];
  float tmin;
  // The ray's tmax, with +inf lowered to the largest float so that a box
  // entered "at infinity" (a zero direction component with the origin outside
  // the slab) is a miss under the inclusive test tnear <= tfar.
  float tmax;

  // Inline: every OBB leaf test builds one for its local-space ray.
  explicit RayInv(const Ray& ray)
      : org(ray.org),
        tmin(ray.tmin),
        tmax(ray.tmax < std::numeric_limits<float>::max()
                 ? ray.tmax
                 : std::numeric_limits<float>::max()) {
    for (int a = 0; a < 3; ++a) {
      // 1/+0 = +inf and 1/-0 = -inf under IEEE 754, which is what we want.
      inv_dir[a] = 1.0f / ray.dir[a];
      neg[a] = std::signbit(ray.dir[a]) ? 1 : 0;
    }
  }
};

}  // namespace raypick
