#include "raypick/core/frustum.h"

#include <glm/geometric.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace raypick {

bool touches(const Frustum& region, std::span<const glm::dvec3> vertices,
             std::span<const glm::dvec3> edges, std::span<const glm::dvec3> faces) {
  if (vertices.empty()) return false;
  // The region's planes: all vertices strictly outside one of them.
  for (const Plane& pl : region.planes) {
    bool all_out = true;
    for (const glm::dvec3& v : vertices) all_out = all_out && pl.eval(v) < 0.0;
    if (all_out) return false;
  }
  // A vertex inside: touching, no need for the other axes.
  for (const glm::dvec3& v : vertices) {
    if (region.contains(v)) return true;
  }
  // The region's edge directions: its rays, and the rectangle's sides.
  glm::dvec3 redges[6];
  for (int k = 0; k < 4; ++k) redges[k] = region.edge_dir[k];
  redges[4] = region.right;
  redges[5] = region.up;
  auto separated = [&](const glm::dvec3& axis) {
    if (axis == glm::dvec3(0.0)) return false;
    double pmin = std::numeric_limits<double>::infinity(), pmax = -pmin;
    for (const glm::dvec3& v : vertices) {
      const double d = glm::dot(axis, v);
      pmin = std::min(pmin, d);
      pmax = std::max(pmax, d);
    }
    double rmin = std::numeric_limits<double>::infinity(), rmax = -rmin;
    for (const glm::dvec3& v : region.vertex) {
      const double d = glm::dot(axis, v);
      rmin = std::min(rmin, d);
      rmax = std::max(rmax, d);
    }
    // The rays leave the vertices: unbounded on the side they go. An axis
    // made from a ray (cross(e, ray)) is perpendicular to it, but the dot
    // product rounds to +-1e-17 or so, which would open the interval on
    // one side: below a relative 1e-12 the ray counts as perpendicular.
    const double axis_len = glm::length(axis);
    for (const glm::dvec3& d : region.edge_dir) {
      const double s = glm::dot(axis, d);
      if (std::abs(s) <= 1e-12 * axis_len * glm::length(d)) continue;
      if (s > 0.0) rmax = std::numeric_limits<double>::infinity();
      if (s < 0.0) rmin = -std::numeric_limits<double>::infinity();
    }
    return pmax < rmin || pmin > rmax;
  };
  for (const glm::dvec3& n : faces) {
    if (separated(n)) return false;
  }
  for (const glm::dvec3& e : edges) {
    for (const glm::dvec3& r : redges) {
      if (separated(glm::cross(e, r))) return false;
    }
    for (int k = 0; k < 4; ++k) {
      if (separated(glm::cross(region.planes[k].n, e))) return false;
    }
  }
  for (const glm::dvec3& n : faces) {
    for (const glm::dvec3& r : redges) {
      if (separated(glm::cross(n, r))) return false;
    }
  }
  return true;
}

std::array<glm::dvec3, 8> box_corners(const glm::dmat4x3& m, const Aabb& local) {
  std::array<glm::dvec3, 8> c;
  for (int k = 0; k < 8; ++k) {
    const glm::dvec3 q{(k & 1) ? local.max.x : local.min.x,
                       (k & 2) ? local.max.y : local.min.y,
                       (k & 4) ? local.max.z : local.min.z};
    c[k] = m[3] + m[0] * q.x + m[1] * q.y + m[2] * q.z;
  }
  return c;
}

std::array<glm::dvec3, 8> box_corners(const glm::mat4x3& m, const Aabb& local) {
  return box_corners(glm::dmat4x3(m), local);
}

bool box_touches(const Frustum& region, const glm::dmat4x3& m, const Aabb& local) {
  const std::array<glm::dvec3, 8> c = box_corners(m, local);
  const glm::dvec3 edges[3] = {m[0], m[1], m[2]};
  const glm::dvec3 faces[3] = {glm::cross(edges[1], edges[2]), glm::cross(edges[2], edges[0]),
                               glm::cross(edges[0], edges[1])};
  return touches(region, c, edges, faces);
}

bool box_touches(const Frustum& region, const glm::mat4x3& m, const Aabb& local) {
  return box_touches(region, glm::dmat4x3(m), local);
}

bool triangle_touches(const Frustum& region, const glm::dvec3& p0,
                      const glm::dvec3& p1, const glm::dvec3& p2) {
  const glm::dvec3 v[3] = {p0, p1, p2};
  const glm::dvec3 edges[3] = {p1 - p0, p2 - p1, p0 - p2};
  const glm::dvec3 face = glm::cross(edges[0], p2 - p0);
  return touches(region, v, edges, std::span<const glm::dvec3>(&face, 1));
}

}  // namespace raypick
