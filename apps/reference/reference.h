// Double-precision brute-force references for both hit modes. Slow (every
// object, every triangle) and simple on purpose: validate uses them to decide
// who is right when raypick and Embree disagree.
#pragma once

#include "raypick/core/ray.h"
#include "raypick/core/scene.h"

#include <glm/ext/matrix_double3x3.hpp>
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

// One triangle against one ray, in double precision (Moller-Trumbore on the
// ray carried into the object's frame in double). `inside` is the smallest
// barycentric coordinate divided by the margin of rounding: >= 1 means
// surely inside, <= -1 surely outside, in between the ray passes within
// rounding of an edge or vertex. `coplanar` marks a ray (nearly) in the
// triangle's plane or a (nearly) degenerate triangle: no sure answer.
// `t_err` bounds how far a float t may stray from `t` for this ray: the
// rounding of the plane's position grows as the ray nears the plane, by
// 1 / cos of the angle between the ray and the triangle's normal.
struct TriangleEntry {
  double t;
  double inside;
  bool coplanar;
  double t_err;
};

class SceneReference {
 public:
  static constexpr double kMargin = 1e-5;

  explicit SceneReference(const Scene& scene);

  std::size_t object_count() const { return objects_.size(); }
  std::size_t triangle_count(std::uint32_t object) const;

  // The ray is carried into the object's frame in double, the object's
  // translation subtracted first, so the reference is as exact far from the
  // origin as near it. A RayD's origin is used unrounded.
  BoxEntries box_entries(std::uint32_t object, const Ray& ray) const {
    return box_entries(object, to_double(ray));
  }
  BoxEntries box_entries(std::uint32_t object, const RayD& ray) const;
  TriangleEntry triangle_entry(std::uint32_t object, std::uint32_t triangle,
                               const Ray& ray) const {
    return triangle_entry(object, triangle, to_double(ray));
  }
  TriangleEntry triangle_entry(std::uint32_t object, std::uint32_t triangle,
                               const RayD& ray) const;

 private:
  struct Obj {
    glm::dmat3 linear;   // inverse of the matrix's 3x3 part
    glm::dvec3 origin;   // the matrix's translation
    glm::dvec3 min, max;
    std::uint32_t mesh;
    bool hittable;
  };
  // The ray's origin and direction in object's frame.
  void to_local(const Obj& b, const RayD& ray, glm::dvec3& o, glm::dvec3& d) const;

  const Scene* scene_;
  std::vector<Obj> objects_;
};

// The entry t of the ray o + t d (t >= 0) into the closed box [lo, hi] in
// double precision; +inf on a miss. Zero direction components are handled
// by an explicit inside-the-slab check rather than by IEEE infinities, so
// this is an independent check of the float slab test.
double box_entry(const glm::dvec3& o, const glm::dvec3& d, const glm::dvec3& lo,
                 const glm::dvec3& hi);

}  // namespace raypick::tools
