// The scene description that loaders fill and the picking engine reads.
#pragma once

#include "raypick/core/aabb.h"
#include "raypick/core/camera.h"

#include <glm/ext/matrix_double4x4.hpp>
#include <glm/ext/vector_double3.hpp>
#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace raypick {

// A triangle mesh in its own (mesh) space. Triangles index `positions`.
// Several objects may instance one mesh.
struct Mesh {
  std::vector<glm::vec3> positions;
  std::vector<glm::uvec3> triangles;

  // The box of the vertices that triangles use (not of every position): the
  // contract's OBB. Empty when there are no triangles. Cost: O(triangles).
  Aabb triangle_bounds() const;
};

// The box `box` as a closed mesh of 8 corners and 12 triangles: corner i
// takes box.max on axis k when bit k of i is set, else box.min; two
// triangles per face, wound counter-clockwise seen from outside, faces in
// the order -x, +x, -y, +y, -z, +z (triangles 0-1 on x = min, 2-3 on
// x = max, and so on): the triangle ids a JSON scene's "box" mesh has.
Mesh box_mesh(const Aabb& box);
// box_mesh's corner i and its 12 triangles, without building a Mesh.
glm::vec3 box_corner(const Aabb& box, int i);
std::span<const glm::uvec3, 12> box_triangles();

// One pickable object: a mesh placed in the world by a 4x4 affine matrix
// (column-major, as glm and glTF store it).
struct Object {
  std::uint32_t mesh = 0;
  glm::mat4 matrix{1.0f};
  std::string name;
  // Pick mask: the object is considered by a query when (mask & the
  // query's mask) != 0. All bits by default; a JSON scene's "layer": k
  // sets bit k only.
  std::uint32_t mask = ~0u;
  // What the translation held beyond float: the object sits at
  // matrix[3] + translation_low, summed exactly (about 48 bits, where
  // matrix[3] alone keeps 24). Zero for placements made of floats; loaders
  // that read matrices in double (JSON scenes, glTF) set it through place(),
  // so that a CAD or GIS placement at 3e5 is not moved by up to 0.016.
  // Code that assigns `matrix` itself sets this too (zero for a float
  // placement): a stale low part would still move the object.
  glm::vec3 translation_low{0.0f};

  // The translation in double: matrix[3] + translation_low.
  glm::dvec3 translation() const;
  // The matrix in double, its translation being translation().
  glm::dmat4 world_matrix() const;
  // Sets matrix to m rounded to float and translation_low to what that
  // rounding took from m's translation (its own rounding to float).
  void place(const glm::dmat4& m);
};

// What rounding `t` to float loses, rounded to float: t - float(t). Zero
// when t is a float. With float(t), the pair carries t to about 48 bits.
glm::vec3 translation_low(const glm::dvec3& t);

// A camera that a scene file defines (a glTF node with a camera), in the
// contract's terms: it sits at the origin of its node's world matrix and
// looks down that matrix's -Z, with its +Y up.
struct SceneCamera {
  std::string name;         // the node's name ("" when it has none)
  std::string camera_name;  // the glTF camera object's name ("" when none)
  glm::dmat4 matrix{1.0};   // the node's world matrix
  Projection projection = Projection::kPerspective;
  double fov_deg = 60.0;     // perspective: yfov in degrees
  double ortho_height = 1.0; // orthographic: 2 * ymag (ymag is half the height)
  double aspect = 0.0;       // the file's aspectRatio or xmag/ymag; 0: none.
                             // The image size decides the aspect, not this.
};

// The camera a scene file defines, as a CameraSpec for a width x height
// image: the eye at the node's origin, the target one unit down its -Z,
// up its +Y, and the file's projection (its aspect ratio is not used: the
// image size decides). check_camera() tells whether the node's matrix can
// place a camera (a degenerate one cannot).
CameraSpec camera_spec(const SceneCamera& camera, int width, int height);

// Objects in id order: object id = index in `objects`.
struct Scene {
  std::vector<Mesh> meshes;
  std::vector<Object> objects;
  // Cameras in the order the loader meets their nodes (glTF: the objects'
  // depth-first order); empty for formats without cameras.
  std::vector<SceneCamera> cameras;

  std::size_t triangle_count() const;  // over objects, instances counted
};

// The supported range of coordinates: every position a triangle uses, in
// mesh space, and every corner of an object's box carried into world space
// by its matrix, lies within [-kMaxCoordinate, kMaxCoordinate].
//
// Why 1e11: the watertight triangle test (ray_triangle.h) multiplies three
// coordinate differences, scaled by 1/|dir|: with every coordinate and the
// ray's origin within B, |t_scaled| <= 24 (2B)^2 * sqrt(3) (2B) / |dir|
// = 333 B^3 / |dir|, which must stay below FLT_MAX (3.4e38). B = 1e11 keeps
// it finite for every direction of length 0.001 or more; measured, a
// triangle at 1e13 is already missed with a unit direction, and the slab
// test of the OBB mode overflows from about 1.7e38.
inline constexpr float kMaxCoordinate = 1e11f;

// The point queries (Picker::closest_point and the others) measure points
// whose coordinates lie within this bound: their squared distances to a
// scene within kMaxCoordinate stay far inside a double's range (beyond
// about 1e154 they overflow). A point beyond it, like a non-finite one, is
// a miss.
inline constexpr double kMaxPointCoordinate = 1e150;

// The bound the CLI and Python put on the points and pixels they are given
// for point queries and picks: the scenes' own range (kMaxCoordinate, as
// the double 1e11), so that the answers print well within float's range.
inline constexpr double kMaxInputPoint = 1e11;

// Checks what the engine relies on: every object's mesh exists, every
// triangle index is in range, every used position is finite and within
// kMaxCoordinate, and so is every object's world box (its mesh's box
// carried by its matrix, computed in double). Returns an empty string when
// the scene is sound, else a description of the first problem ("object 3
// ('wheel'): mesh 7 does not exist"). Cost: O(triangles + objects).
std::string validate_scene(const Scene& scene);

// validate_scene() in two steps, for a caller that checks the objects in
// parallel: validate_meshes() checks every mesh (its triangle indices and
// used positions); validate_objects() checks the objects with ids in
// [begin, end), given every mesh's triangle_bounds() by mesh id, and is
// only meaningful once validate_meshes() found nothing. Each returns the
// first problem it finds, as validate_scene() words it, or "".
std::string validate_meshes(const Scene& scene);
std::string validate_objects(const Scene& scene, std::span<const Aabb> mesh_bounds,
                             std::size_t begin, std::size_t end);

// How far from the origin, on each axis, the world box of `local` under
// `obj`'s placement reaches (|center| + extent, from its matrix as held:
// the float linear part and the translation with its low part), in double.
// validate_objects() refuses an object whose reach exceeds kMaxCoordinate
// on any axis. Precondition: local is not empty.
glm::dvec3 world_reach(const Aabb& local, const Object& obj);

// The box around every object's world box (Obb::world_bounds of its mesh's
// triangle_bounds() carried by its matrix), without the picking engine's
// rounding margin. Objects that can never be hit (no triangles, or a
// singular matrix) add nothing; empty when no object can be hit.
// Precondition: every object's mesh exists. Cost: O(triangles + objects).
Aabb world_bounds(const Scene& scene);

// Every object of `scene` baked into one mesh, in id order: each object's
// mesh positions carried by its matrix (computed in double, rounded to
// float) and its triangles re-indexed. Objects that share a mesh each add
// their own copy. Precondition: every object's mesh exists and the total of
// positions fits a uint32 index. Cost: O(positions + triangles), over
// objects.
Mesh merge_into_one_mesh(const Scene& scene);

// Appends `mesh` to `out` with `matrix` applied to its positions (in double,
// each rounded to float once; `low` added to the translation first, as an
// Object's translation_low) and its indices moved past out's vertices: one
// object's step of merge_into_one_mesh. The caller keeps out's vertex
// count below 2^32.
void append_placed(Mesh& out, const Mesh& mesh, const glm::mat4& matrix,
                   const glm::vec3& low = glm::vec3{0.0f});

}  // namespace raypick
