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

#include <cmath>
#include <glm/common.hpp>

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
RAYPICK_GEOMETRY_INLINE TriangleHit intersect_triangle(
    const TriangleRay& ray, const glm::vec3& p0, const glm::vec3& p1,
    const glm::vec3& p2, float tmin, float tmax);

// Inline: the mesh traversal runs these once per object and triangle.
RAYPICK_GEOMETRY_INLINE TriangleRay::TriangleRay(const glm::vec3& origin,
                                                 const glm::vec3& dir)
    : org(origin) {
  const glm::vec3 a{std::fabs(dir.x), std::fabs(dir.y), std::fabs(dir.z)};
  kz = a.x > a.y ? (a.x > a.z ? 0 : 2) : (a.y > a.z ? 1 : 2);
  kx = kz == 2 ? 0 : kz + 1;
  ky = kx == 2 ? 0 : kx + 1;
  // Swapping kx and ky when dir[kz] < 0 keeps the sign of the edge
  // functions consistent, so "all of one sign" means inside either way.
  if (dir[kz] < 0.0f) {
    const int tmp = kx;
    kx = ky;
    ky = tmp;
  }
  sx = dir[kx] / dir[kz];
  sy = dir[ky] / dir[kz];
  sz = 1.0f / dir[kz];
}

RAYPICK_GEOMETRY_INLINE TriangleHit intersect_triangle(
    const TriangleRay& ray, const glm::vec3& p0, const glm::vec3& p1,
    const glm::vec3& p2, float tmin, float tmax) {
  const glm::vec3 a = p0 - ray.org;
  const glm::vec3 b = p1 - ray.org;
  const glm::vec3 c = p2 - ray.org;
  // Shear and scale so the ray runs along +z from the origin.
  const float ax = a[ray.kx] - ray.sx * a[ray.kz];
  const float ay = a[ray.ky] - ray.sy * a[ray.kz];
  const float bx = b[ray.kx] - ray.sx * b[ray.kz];
  const float by = b[ray.ky] - ray.sy * b[ray.kz];
  const float cx = c[ray.kx] - ray.sx * c[ray.kz];
  const float cy = c[ray.ky] - ray.sy * c[ray.kz];
  // Scaled barycentrics: u weights p0, v p1, w p2.
  float u = cx * by - cy * bx;
  float v = ax * cy - ay * cx;
  float w = bx * ay - by * ax;
  // An exact zero may be a rounding artefact right on an edge; the double
  // products of the float inputs are exact, so the sign there is right.
  if (u == 0.0f || v == 0.0f || w == 0.0f) {
    u = static_cast<float>(double(cx) * double(by) - double(cy) * double(bx));
    v = static_cast<float>(double(ax) * double(cy) - double(ay) * double(cx));
    w = static_cast<float>(double(bx) * double(ay) - double(by) * double(ax));
  }
  TriangleHit out;
  if ((u < 0.0f || v < 0.0f || w < 0.0f) && (u > 0.0f || v > 0.0f || w > 0.0f)) {
    return out;
  }
  const float det = u + v + w;
  // det == 0: degenerate triangle, or the ray lies in its plane. A NaN det
  // (overflow in the products) also fails the test below.
  if (!(det != 0.0f) || std::isnan(det)) return out;
  const float az = ray.sz * a[ray.kz];
  const float bz = ray.sz * b[ray.kz];
  const float cz = ray.sz * c[ray.kz];
  const float t_scaled = u * az + v * bz + w * cz;
  const float inv_det = 1.0f / det;
  const float t = t_scaled * inv_det;
  // Written so a NaN t fails.
  if (!(t >= tmin && t <= tmax)) return out;
  out.hit = true;
  out.t = t;
  out.u = v * inv_det;
  out.v = w * inv_det;
  return out;
}

}  // namespace raypick
