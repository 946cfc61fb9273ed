// Generated scenes for validation, tests and benchmarks (fixed seeds).
#pragma once

#include "raypick/core/scene.h"

#include <glm/ext/vector_double3.hpp>

#include <cstdint>

namespace raypick::tools {

// The unit cube [-0.5, 0.5]^3 as 8 vertices and 12 triangles.
Mesh unit_cube_mesh();

struct BoxesOptions {
  // Fraction of objects whose matrix also shears (off-diagonal terms).
  double shear_fraction = 0.0;
  // Fraction of objects mirrored (one negative scale axis).
  double mirror_fraction = 0.0;
  // Fraction of objects squashed flat on one axis (zero scale there would be
  // singular, so the mesh itself is flat: a unit quad in the z = 0 plane).
  double flat_fraction = 0.0;
  // Fraction of objects that copy the matrix of an earlier object exactly.
  double coincident_fraction = 0.0;
  // Fraction of objects left axis-aligned (no rotation), so that rays with
  // zero direction components meet their faces head-on.
  double axis_aligned_fraction = 0.0;
};

// Every kind of object a validation scene should hold, at the rates
// `raypick validate --boxes` uses: 10% sheared, 10% mirrored, 5% flat, 2%
// exact duplicates, 10% axis-aligned. Tests that want more of each scale
// the rates with `times`.
BoxesOptions mixed_options(double times = 1.0);

// boxes-N: N unit cubes, object i under T * R * S with S uniform in
// [0.5, 2]^3, R a uniformly random rotation and T uniform in [0, L]^3,
// L = 4 * N^(1/3); options add sheared, mirrored, flat, coincident and
// axis-aligned objects. Meshes: 0 = unit cube, 1 = unit quad. Objects are
// named "box<i>". Deterministic for a given (n, seed, options).
Scene make_boxes_scene(std::size_t n, std::uint64_t seed,
                       const BoxesOptions& options = {});

// A sphere of radius 0.5 made by subdividing an octahedron `levels` times
// (8 * 4^levels triangles, vertices shared, a closed mesh).
Mesh sphere_mesh(int levels);

// Like make_boxes_scene, but objects that would be cubes instance one of
// several meshes: the cube (mesh 0), a sphere (mesh 2, 128 triangles) or a
// soup of 40 random triangles in the unit cube (mesh 3). For mesh-mode
// tests: rays pass between the soup's triangles and miss round spheres'
// corners, where obb mode would hit.
Scene make_mesh_scene(std::size_t n, std::uint64_t seed,
                      const BoxesOptions& options = {});

// Moves every object by `offset`: its translation becomes translation +
// offset, computed in double and kept beyond float (Object::place). For
// validating and benching scenes far from the origin (`--offset`).
void shift_scene(Scene& scene, const glm::dvec3& offset);

}  // namespace raypick::tools
