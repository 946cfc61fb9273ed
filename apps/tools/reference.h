// A double-precision brute-force reference for OBB picking. Slow (every
// object for every ray) and simple on purpose: validate uses it to decide
// who is right when raypick and Embree disagree.
#pragma once

#include "raypick/core/ray.h"
#include "raypick/core/scene.h"

#include <glm/ext/matrix_double4x4.hpp>
#include <glm/ext/vector_double3.hpp>

#include <cstdint>
#include <vector>

namespace raypick::tools {

// Entries of one ray into one object's box, in the ray's t units (+inf when
// missed): of the exact box, of the box grown by a margin and of the box
// shrunk by it. The margin is kMargin times the local-space magnitude of
// the box and of the ray origin, which covers the float rounding of carrying
// the ray into the box's frame. A box met by the grown but not the shrunk
// box is met only at its boundary (grazing, along an edge, in a flat box's
// plane): there float answers may differ.
struct BoxEntries {
  double exact;
  double grown;
  double shrunk;
};

class ObbReference {
 public:
  static constexpr double kMargin = 1e-5;

  explicit ObbReference(const Scene& scene);

  std::size_t object_count() const { return objects_.size(); }
  BoxEntries entries(std::uint32_t object, const Ray& ray) const;

  // The smallest exact entry over all objects (ties to the lower id);
  // object == UINT32_MAX when nothing is hit.
  struct Nearest {
    std::uint32_t object;
    double t;
  };
  Nearest nearest(const Ray& ray) const;

 private:
  struct Box {
    glm::dmat4 to_local;
    glm::dvec3 min, max;
    bool hittable;
  };
  std::vector<Box> objects_;
};

// The entry t of the ray o + t d (t >= 0) into the closed box [lo, hi] in
// double precision; +inf on a miss. Zero direction components are handled
// by an explicit inside-the-slab check rather than by IEEE infinities, so
// this is an independent check of the float slab test.
double box_entry(const glm::dvec3& o, const glm::dvec3& d, const glm::dvec3& lo,
                 const glm::dvec3& hi);

}  // namespace raypick::tools
