// Axis-aligned bounding box.
#pragma once

#include <glm/vec3.hpp>
#include <glm/common.hpp>

#include <limits>

namespace raypick {

// A closed box {p : min <= p <= max}. Default-constructed it is empty
// (min = +inf, max = -inf), which is the identity of extend(): extending an
// empty box by anything gives that thing. A box with min == max on an axis is
// flat, not empty, and can be hit.
struct Aabb {
  glm::vec3 min{std::numeric_limits<float>::infinity()};
  glm::vec3 max{-std::numeric_limits<float>::infinity()};

  // True when some axis has min > max (the default state). NaN bounds also
  // count as empty, since no point satisfies them.
  bool empty() const {
    return !(min.x <= max.x && min.y <= max.y && min.z <= max.z);
  }

  Aabb& extend(const glm::vec3& p) {
    min = glm::min(min, p);
    max = glm::max(max, p);
    return *this;
  }

  Aabb& extend(const Aabb& b) {
    min = glm::min(min, b.min);
    max = glm::max(max, b.max);
    return *this;
  }

  // Only meaningful for a non-empty box.
  glm::vec3 center() const { return (min + max) * 0.5f; }
  // Half the size on each axis; only meaningful for a non-empty box.
  glm::vec3 half_extent() const { return (max - min) * 0.5f; }

  // Half the surface area, the SAH's measure; 0 for an empty box.
  float half_area() const {
    if (empty()) return 0.0f;
    const glm::vec3 d = max - min;
    return d.x * d.y + d.y * d.z + d.z * d.x;
  }

  bool contains(const glm::vec3& p) const {
    return min.x <= p.x && p.x <= max.x && min.y <= p.y && p.y <= max.y &&
           min.z <= p.z && p.z <= max.z;
  }

  static Aabb from_center_extent(const glm::vec3& c, const glm::vec3& e) {
    return Aabb{c - e, c + e};
  }
};

inline bool operator==(const Aabb& a, const Aabb& b) {
  return a.min == b.min && a.max == b.max;
}

}  // namespace raypick
