// The watertight ray/triangle test of "Watertight Ray/Triangle
// Intersection" (Woop, Benthin, Wald, JCGT 2013).
//
// Watertight: a ray through a shared edge or vertex of a closed mesh hits at
// least one of the triangles sharing it, never slips between them, because
// the edge functions of a shared edge are computed from the same sheared
// vertex coordinates with the same operations and fall back to double
// precision when they are exactly 0. Both faces are hit (no culling).
//
// What is not a hit: a degenerate (zero-area) triangle, and a ray lying in a
// triangle's plane (it meets the triangle in a segment, not a point; Embree
// misses it too).
#pragma once

#include "raypick/core/ray.h"

#include <glm/vec3.hpp>

namespace raypick {

// The per-query part of the watertight test, built once per ray (and once
// per object when the ray is carried into the object's frame).
struct TriangleRay {
  glm::vec3 org;
  int kx, ky, kz;  // kz: the axis of the largest |dir| component
  float sx, sy, sz;  // shear constants: dir[kx]/dir[kz], dir[ky]/dir[kz], 1/dir[kz]

  // Precondition: dir is non-zero.
  TriangleRay(const glm::vec3& origin, const glm::vec3& dir);
};

struct TriangleHit {
  bool hit = false;
  float t = kInfinity;
  // Barycentric coordinates of the hit point: p = (1-u-v) p0 + u p1 + v p2
  // (Embree's convention).
  float u = 0.0f;
  float v = 0.0f;
};

// Tests one triangle for a hit with t in [tmin, tmax] (inclusive). Miss:
// hit == false and t == +inf.
TriangleHit intersect_triangle(const TriangleRay& ray, const glm::vec3& p0,
                               const glm::vec3& p1, const glm::vec3& p2,
                               float tmin, float tmax);

}  // namespace raypick
