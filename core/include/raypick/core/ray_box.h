// The ray/axis-aligned box slab test, written once (raypick's RayAABox).
//
// Every test treats the box as closed: a ray that only touches a face, edge
// or corner hits, and a box with zero extent on an axis (a flat quad) is hit
// when the ray crosses or lies in it. A ray whose origin is inside or on the
// box enters it at t = tmin (t = 0 for a default ray). An empty box
// (min > max on some axis) is never hit.
//
// NaN safety: (bound - org) * inv_dir is NaN only when org lies exactly on
// that slab plane and the direction component is +-0. The ray then runs in
// the plane of a face of a closed slab, so that axis must not constrain t.
// The updates below are written `candidate > tnear ? candidate : tnear` and
// `candidate < tfar ? candidate : tfar`: a NaN candidate compares false and
// leaves the ray's own interval unchanged. Near and far planes are chosen by
// the octant, never by min/max of the two plane distances, because a
// min/max of (NaN, x) picks x whatever x is, and x = -inf on the far plane
// would turn a hit into a miss.
#pragma once

#include "raypick/core/aabb.h"
#include "raypick/core/ray.h"

#include <bit>
#include <cstdint>

namespace raypick {

// The parametric interval [tnear, tfar] in which the ray is inside `box`,
// clipped to the ray's [tmin, tmax]. A miss returns tnear > tfar.
struct SlabInterval {
  float tnear;
  float tfar;
  bool hit() const { return tnear <= tfar; }
};

// The interval of the ray inside `box`, clipped to [ray.tmin, tmax_limit].
// `tmax_limit` lets traversal pass its best t so far; it should be no larger
// than ray.tmax. Miss: tnear > tfar. Origin inside: tnear = ray.tmin.
inline SlabInterval slab_interval(const RayInv& ray, const Aabb& box,
                                  float tmax_limit) {
  float tnear = ray.tmin;
  float tfar = tmax_limit;
  for (int a = 0; a < 3; ++a) {
    // The near and far planes picked by bit masks, not by a choice that a
    // compiler made a branch: an object's local direction is as good as
    // random, and that branch was an eighth of the mispredicts of
    // incoherent rays at boxes-10k (97k of 756k over 50,000 rays under
    // callgrind).
    const std::uint32_t to_max = 0u - std::uint32_t(ray.neg[a] != 0);
    const auto min_bits = std::bit_cast<std::uint32_t>(box.min[a]);
    const auto max_bits = std::bit_cast<std::uint32_t>(box.max[a]);
    const float lo = std::bit_cast<float>((max_bits & to_max) | (min_bits & ~to_max));
    const float hi = std::bit_cast<float>((min_bits & to_max) | (max_bits & ~to_max));
    const float t0 = (lo - ray.org[a]) * ray.inv_dir[a];
    const float t1 = (hi - ray.org[a]) * ray.inv_dir[a];
    // A NaN t0 or t1 compares false and keeps the current bound (see above).
    tnear = t0 > tnear ? t0 : tnear;
    tfar = t1 < tfar ? t1 : tfar;
  }
  return {tnear, tfar};
}

inline SlabInterval slab_interval(const RayInv& ray, const Aabb& box) {
  return slab_interval(ray, box, ray.tmax);
}

// The entry t of the ray into `box` within [ray.tmin, tmax_limit], or +inf
// on a miss. Origin inside: ray.tmin.
inline float slab_entry(const RayInv& ray, const Aabb& box,
                        float tmax_limit) {
  const SlabInterval s = slab_interval(ray, box, tmax_limit);
  return s.tnear <= s.tfar ? s.tnear : kInfinity;
}

inline float slab_entry(const RayInv& ray, const Aabb& box) {
  return slab_entry(ray, box, ray.tmax);
}

// True when the ray meets `box` at some t in [ray.tmin, tmax_limit].
inline bool slab_overlaps(const RayInv& ray, const Aabb& box,
                          float tmax_limit) {
  return slab_interval(ray, box, tmax_limit).hit();
}

}  // namespace raypick
