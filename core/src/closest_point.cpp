#include "raypick/core/closest_point.h"

#include <glm/geometric.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace raypick {

double squared_limit(double max_distance) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (max_distance == kInf) return kInf;
  // sqrt is monotonic: from max_distance squared (within an ulp or two of
  // the boundary), down while the root is beyond, then up while the next
  // square's root is still within.
  double x = max_distance * max_distance;
  while (x > 0.0 && std::sqrt(x) > max_distance) x = std::nextafter(x, 0.0);
  for (;;) {
    const double up = std::nextafter(x, kInf);
    if (!(std::sqrt(up) <= max_distance)) return x;
    x = up;
  }
}

namespace {

// The nearest point of segment [a, b] to p, as a + s (b - a), s in [0, 1].
double segment_parameter(const glm::dvec3& p, const glm::dvec3& a, const glm::dvec3& b) {
  const glm::dvec3 ab = b - a;
  const double len2 = glm::dot(ab, ab);
  if (!(len2 > 0.0)) return 0.0;
  return std::clamp(glm::dot(p - a, ab) / len2, 0.0, 1.0);
}

TrianglePoint make(const glm::dvec3& p, const glm::dvec3& a, const glm::dvec3& b,
                   const glm::dvec3& c, double u, double v) {
  TrianglePoint t;
  t.u = u;
  t.v = v;
  t.point = a + u * (b - a) + v * (c - a);
  const glm::dvec3 d = p - t.point;
  t.distance2 = glm::dot(d, d);
  return t;
}

// A degenerate triangle: the nearest of its three edges.
TrianglePoint nearest_edge(const glm::dvec3& p, const glm::dvec3& a, const glm::dvec3& b,
                           const glm::dvec3& c) {
  const double s_ab = segment_parameter(p, a, b);
  const double s_ac = segment_parameter(p, a, c);
  const double s_bc = segment_parameter(p, b, c);
  TrianglePoint best = make(p, a, b, c, s_ab, 0.0);
  for (const TrianglePoint& t : {make(p, a, b, c, 0.0, s_ac), make(p, a, b, c, 1.0 - s_bc, s_bc)}) {
    if (t.distance2 < best.distance2) best = t;
  }
  return best;
}

enum class Edge { kAb, kAc, kBc };

// The point `num / denom` of the way along edge `e` (from a to b, a to c, b
// to c); the nearest of the three edges when `e` is degenerate (denom not
// > 0, NaN included).
TrianglePoint edge_point(const glm::dvec3& p, const glm::dvec3& a, const glm::dvec3& b,
                         const glm::dvec3& c, double num, double denom, Edge e) {
  if (!(denom > 0.0)) return nearest_edge(p, a, b, c);
  const double s = num / denom;
  switch (e) {
    case Edge::kAb: return make(p, a, b, c, s, 0.0);
    case Edge::kAc: return make(p, a, b, c, 0.0, s);
    case Edge::kBc: break;
  }
  return make(p, a, b, c, 1.0 - s, s);
}

}  // namespace

TrianglePoint closest_point_on_triangle(const glm::dvec3& p, const glm::dvec3& a,
                                        const glm::dvec3& b, const glm::dvec3& c) {
  const glm::dvec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = glm::dot(ab, ap), d2 = glm::dot(ac, ap);
  if (d1 <= 0.0 && d2 <= 0.0) return make(p, a, b, c, 0.0, 0.0);  // vertex a
  const glm::dvec3 bp = p - b;
  const double d3 = glm::dot(ab, bp), d4 = glm::dot(ac, bp);
  if (d3 >= 0.0 && d4 <= d3) return make(p, a, b, c, 1.0, 0.0);  // vertex b
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return edge_point(p, a, b, c, d1, d1 - d3, Edge::kAb);
  const glm::dvec3 cp = p - c;
  const double d5 = glm::dot(ab, cp), d6 = glm::dot(ac, cp);
  if (d6 >= 0.0 && d5 <= d6) return make(p, a, b, c, 0.0, 1.0);  // vertex c
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return edge_point(p, a, b, c, d2, d2 - d6, Edge::kAc);
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    return edge_point(p, a, b, c, d4 - d3, (d4 - d3) + (d5 - d6), Edge::kBc);
  }
  // Inside the face region: barycentrics from the region's areas.
  const double denom = va + vb + vc;
  if (!(denom > 0.0)) return nearest_edge(p, a, b, c);
  return make(p, a, b, c, vb / denom, vc / denom);
}

double solid_angle(const glm::dvec3& p, const glm::dvec3& a, const glm::dvec3& b,
                   const glm::dvec3& c) {
  const glm::dvec3 x = a - p, y = b - p, z = c - p;
  const double lx = glm::length(x), ly = glm::length(y), lz = glm::length(z);
  const double num = glm::dot(x, glm::cross(y, z));
  if (num == 0.0) return 0.0;  // in the plane: no angle off the surface
  const double den = lx * ly * lz + glm::dot(x, y) * lz + glm::dot(y, z) * lx + glm::dot(z, x) * ly;
  // num = n . (a - p) for the normal n = (b - a) x (c - a): positive
  // behind the triangle.
  return 2.0 * std::atan2(num, den);
}

}  // namespace raypick
