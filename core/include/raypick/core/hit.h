// The result of a picking query.
#pragma once

#include "raypick/core/ray.h"

#include <cstdint>
#include <limits>

namespace raypick {

inline constexpr std::uint32_t kInvalidId =
    std::numeric_limits<std::uint32_t>::max();

// The nearest hit of a query, like Embree's RTCHit. A miss has
// object == kInvalidId and t == +inf. In obb mode triangle stays kInvalidId
// and u, v are 0; in mesh mode they name the triangle and the barycentric
// coordinates of the hit point on it.
struct Hit {
  std::uint32_t object = kInvalidId;
  float t = kInfinity;
  std::uint32_t triangle = kInvalidId;
  float u = 0.0f;
  float v = 0.0f;

  bool hit() const { return object != kInvalidId; }
  explicit operator bool() const { return hit(); }
};

// The world point of a hit, org + t * dir, in double from the ray as the
// query took it (what the CLI prints as "point", rounded to float there);
// NaN for a miss. R is Ray or RayD.
template <class R>
glm::dvec3 hit_point(const R& ray, const Hit& hit) {
  if (!hit.hit()) return glm::dvec3(std::numeric_limits<double>::quiet_NaN());
  return glm::dvec3(ray.org) + double(hit.t) * glm::dvec3(ray.dir);
}

// The contract's order of hits: nearer t first, then lower object id, then
// lower triangle id. True when `a` should replace `b` as the nearest hit.
inline bool closer(const Hit& a, const Hit& b) {
  if (a.t != b.t) return a.t < b.t;
  if (a.object != b.object) return a.object < b.object;
  return a.triangle < b.triangle;
}

}  // namespace raypick
