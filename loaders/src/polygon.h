// Triangulation of an OBJ face: ear clipping with z-order hashing of the
// ears (the method of Mapbox's earcut, after Held's "FIST: Fast
// Industrial-Strength Triangulation of Polygons"), written for raypick.
// Private to loaders/.
#pragma once

#include <glm/vec3.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace raypick::detail {

struct PolygonTriangles {
  // Corner indices (into the face's corners) of each triangle.
  std::vector<std::array<std::uint32_t, 3>> triangles;
  // False when ear clipping got stuck (a face that crosses itself): the
  // rest was fanned, and the triangles may cover more or less than the
  // outline.
  bool simple = true;
};

// Triangulates the polygon through `corners` (in order, any orientation),
// projected onto the plane of its largest Newell-normal component. A
// simple polygon, concave or not, with collinear corners or a hole joined
// by a bridge (two coincident edges), gets triangles that cover exactly
// its outline; collinear and repeated corners give no triangle of zero
// area. A convex face takes the fan from its first corner. Cost: about
// n log n in the corners (n squared at worst).
PolygonTriangles triangulate_polygon(std::span<const glm::vec3> corners);

}  // namespace raypick::detail
