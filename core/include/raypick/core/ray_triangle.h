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
#include <glm/gtc/type_ptr.hpp>

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

 private:
  // kz, then kx and ky, without data-dependent branches (they mispredict
  // on incoherent rays).
  RAYPICK_GEOMETRY_INLINE void choose_axes(const glm::vec3& dir);
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
RAYPICK_GEOMETRY_INLINE void TriangleRay::choose_axes(const glm::vec3& dir) {
  const float ax = std::fabs(dir.x), ay = std::fabs(dir.y), az = std::fabs(dir.z);
  // kz = ax > ay ? (ax > az ? 0 : 2) : (ay > az ? 1 : 2), by a table over
  // the three comparisons (the same comparisons, so the same kz, NaN too).
  static constexpr signed char kZ[8] = {2, 2, 2, 0, 1, 2, 1, 0};
  kz = kZ[unsigned(ax > ay) | unsigned(ax > az) << 1 | unsigned(ay > az) << 2];
  // kx, ky = the next two axes, swapped when dir[kz] < 0: that keeps the
  // sign of the edge functions consistent, so "all of one sign" means
  // inside either way.
  static constexpr signed char kXY[3][2][2] = {
      {{1, 2}, {2, 1}}, {{2, 0}, {0, 2}}, {{0, 1}, {1, 0}}};
  const float* d = glm::value_ptr(dir);
  const int neg = d[kz] < 0.0f ? 1 : 0;
  kx = kXY[kz][neg][0];
  ky = kXY[kz][neg][1];
}

// Components are read through value_ptr, not glm's operator[], which is a
// switch: three branches per read, on axes that change from ray to ray.
RAYPICK_GEOMETRY_INLINE TriangleRay::TriangleRay(const glm::vec3& origin,
                                                 const glm::vec3& dir)
    : org(origin) {
  choose_axes(dir);
  const float* d = glm::value_ptr(dir);
  sx = d[kx] / d[kz];
  sy = d[ky] / d[kz];
  sz = 1.0f / d[kz];
}

RAYPICK_GEOMETRY_INLINE TriangleHit intersect_triangle(
    const TriangleRay& ray, const glm::vec3& p0, const glm::vec3& p1,
    const glm::vec3& p2, float tmin, float tmax) {
  // a = p0 - org, b = p1 - org, c = p2 - org, by axis kx, ky, kz.
  const float* o = glm::value_ptr(ray.org);
  const float* q0 = glm::value_ptr(p0);
  const float* q1 = glm::value_ptr(p1);
  const float* q2 = glm::value_ptr(p2);
  const int kx = ray.kx, ky = ray.ky, kz = ray.kz;
  const float a_kx = q0[kx] - o[kx], a_ky = q0[ky] - o[ky], a_kz = q0[kz] - o[kz];
  const float b_kx = q1[kx] - o[kx], b_ky = q1[ky] - o[ky], b_kz = q1[kz] - o[kz];
  const float c_kx = q2[kx] - o[kx], c_ky = q2[ky] - o[ky], c_kz = q2[kz] - o[kz];
  // Shear and scale so the ray runs along +z from the origin.
  const float ax = a_kx - ray.sx * a_kz;
  const float ay = a_ky - ray.sy * a_kz;
  const float bx = b_kx - ray.sx * b_kz;
  const float by = b_ky - ray.sy * b_kz;
  const float cx = c_kx - ray.sx * c_kz;
  const float cy = c_ky - ray.sy * c_kz;
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
  const float az = ray.sz * a_kz;
  const float bz = ray.sz * b_kz;
  const float cz = ray.sz * c_kz;
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
