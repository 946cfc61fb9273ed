// Closest points: a point's nearest point on a triangle, in double
// precision. What point queries (Picker::closest_point) measure with.
#pragma once

#include <glm/ext/vector_double3.hpp>

namespace raypick {

// The nearest point of the triangle (a, b, c) to p, as a + u (b - a) +
// v (c - a) with u, v >= 0 and u + v <= 1, and its squared distance.
struct TrianglePoint {
  glm::dvec3 point;
  double u = 0.0;
  double v = 0.0;
  double distance2 = 0.0;
};

// The exact nearest point by the triangle's Voronoi regions (vertex, edge,
// face), as in Ericson's "Real-Time Collision Detection", 5.1.5. A
// degenerate triangle (zero area: collinear or coincident corners) gives
// the nearest point of its three edges. Points exactly on an edge or at a
// corner belong to that edge or corner (distance 0). Cost: a few dozen
// double operations; no division but one in the face region.
TrianglePoint closest_point_on_triangle(const glm::dvec3& p, const glm::dvec3& a,
                                        const glm::dvec3& b, const glm::dvec3& c);

// The largest squared distance whose square root (as a distance is
// reported: std::sqrt, correctly rounded) is at most max_distance; +inf
// for +inf. A measured squared distance within it is exactly one whose
// reported distance is within max_distance. (max_distance squared alone
// can round below the square of a distance it equals, and then refuse
// the object at exactly that distance.) Precondition: max_distance >= 0.
double squared_limit(double max_distance);

// The signed solid angle (steradians, in [-2 pi, 2 pi]) that the triangle
// (a, b, c) subtends at p: positive when p lies behind it, on the side
// its normal (b - a) x (c - a) points away from. Summed over a closed, outward-wound
// mesh and divided by 4 pi it is the mesh's winding number at p: 1 inside,
// 0 outside. By the formula of Van Oosterom and Strackee (1983),
// tan(omega / 2) = [a b c] / (|a||b||c| + (a.b)|c| + (b.c)|a| + (c.a)|b|)
// with the corners taken relative to p; 0 when p lies in the triangle's
// plane (the sum is undefined on the surface: the caller tests that
// itself, see on_triangle).
double solid_angle(const glm::dvec3& p, const glm::dvec3& a, const glm::dvec3& b,
                   const glm::dvec3& c);

}  // namespace raypick
