// The region a marquee selects (a Frustum: five closed half-spaces, also
// given as a polyhedron) and its exact separating-axis tests against a
// convex polytope, an oriented box and a triangle, in double precision.
// Camera::frustum (camera.h) makes one from a rectangle of the image.
//
//   raypick::Frustum region = camera.frustum(100, 100, 300, 250);
//   if (raypick::box_touches(region, glm::dmat4x3(object.world_matrix()), mesh_box)) ...;
#pragma once

#include "raypick/core/aabb.h"

#include <glm/ext/matrix_double4x3.hpp>
#include <glm/mat4x3.hpp>
#include <glm/vec3.hpp>

#include <array>
#include <span>

namespace raypick {

// A closed half-space {p : dot(n, p) + d >= 0}, in double precision.
struct Plane {
  glm::dvec3 n{0.0};
  double d = 0.0;
  double eval(const glm::dvec3& p) const { return n.x * p.x + n.y * p.y + n.z * p.z + d; }
};

// The region a rectangle of the image selects: everything in front of the
// camera whose projection lies in the rectangle, boundary included. It is
// the intersection of five closed half-spaces: four sides (left, right,
// bottom, top, in image terms) and `front`, the plane through the eye
// facing the view direction. For a perspective camera that is the infinite
// pyramid from the eye (the eye itself included; nothing else on the eye's
// plane); for an orthographic one the half-infinite box in front of the
// eye's plane. A zero-width or zero-height rectangle gives a flat region,
// a zero-area one a half-line.
//
// For separating-axis tests the region is also given as a polyhedron:
// `vertex` (4 of them; all equal to the eye for a perspective camera, the
// rectangle's corners on the eye's plane for an orthographic one) plus the
// rays `edge_dir` leaving them (the corner directions, or the view
// direction 4 times), and the rectangle's two edge directions.
struct Frustum {
  std::array<Plane, 5> planes;  // left, right, bottom, top, front
  std::array<glm::dvec3, 4> vertex;
  std::array<glm::dvec3, 4> edge_dir;
  glm::dvec3 right{1.0, 0.0, 0.0};  // the rectangle's edge directions
  glm::dvec3 up{0.0, 1.0, 0.0};
  bool perspective = true;

  // True when p is inside or on the region.
  bool contains(const glm::dvec3& p) const {
    for (const Plane& pl : planes) {
      if (!(pl.eval(p) >= 0.0)) return false;
    }
    return true;
  }
};

// Whether the convex polytope with the given vertices touches `region`
// (shares a point with it, boundary included), by separating axes in
// double precision: the region's planes, the polytope's face normals, and
// the cross products of the two sets' edge directions (plus those of each
// set's face normals with the other's edges, which separate flat shapes
// lying in one plane). `edges` are the polytope's edge directions, `faces`
// its face normals (either orientation; zero vectors are skipped). Exact up
// to the rounding of the dot products.
bool touches(const Frustum& region, std::span<const glm::dvec3> vertices,
             std::span<const glm::dvec3> edges, std::span<const glm::dvec3> faces);

// The 8 corners of box `local` under the affine matrix `m` (top three rows),
// in double precision; corner k takes max on axis a when bit a of k is set.
std::array<glm::dvec3, 8> box_corners(const glm::mat4x3& m, const Aabb& local);
// The same for a matrix in double (a translation held beyond float).
std::array<glm::dvec3, 8> box_corners(const glm::dmat4x3& m, const Aabb& local);

// touches() for the box `local` placed by the affine matrix `m` (an OBB).
bool box_touches(const Frustum& region, const glm::mat4x3& m, const Aabb& local);
bool box_touches(const Frustum& region, const glm::dmat4x3& m, const Aabb& local);

// touches() for a triangle (degenerate ones too: a segment or a point).
bool triangle_touches(const Frustum& region, const glm::dvec3& p0,
                      const glm::dvec3& p1, const glm::dvec3& p2);

}  // namespace raypick
