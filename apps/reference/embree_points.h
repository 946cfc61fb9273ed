// Embree's point query (rtcPointQuery) as a reference for raypick's
// closest_point: validate --points and the bench's point row.
#pragma once

#include "raypick/bvh/picker.h"
#include "raypick/core/pick_mode.h"
#include "raypick/core/scene.h"

#include <memory>
#include <string>

struct RTCDeviceTy;

namespace raypick::tools {

// Why EmbreePointScene's instanced layout cannot take `scene`, naming the
// first object (of those that can be hit) whose matrix is not a similarity
// (rotation or mirror, uniform scale, translation); "" when it can. A
// matrix counts as a similarity when its columns are orthogonal and of
// equal length within a relative 2^-18 (float rounding of T.R.S gives
// about 2^-23).
std::string instanced_points_refusal(const Scene& scene);

// How EmbreePointScene lays a scene out for Embree.
enum class PointLayout {
  // One user-geometry primitive per object that can be hit, bounded by its
  // world box (its local box under its matrix, in double, rounded outward),
  // in one flat scene; the callback measures the whole object: obb mode the
  // nearest point of its OBB (0 inside), mesh mode every one of its
  // triangles (per object brute force: not Embree's best).
  kFlat,
  // Mesh mode only, as Embree's ClosestPoint tutorial builds it: one
  // triangle geometry per mesh with a point-query callback, in a child
  // scene instanced by every object under its matrix (instance id: the
  // object's place). Embree carries the query sphere into an instance as a
  // sphere (its radius times one scale) only when the matrix is a
  // similarity, so only such scenes are taken (instanced_points_refusal).
  // The callback measures the triangle's float vertices placed in world
  // space in double by the object's matrix, as bvh/src/point_query.cpp
  // places them, with core's closest_point_on_triangle.
  kInstanced,
};

// Embree's rtcPointQuery as a reference for Picker::closest_point: Embree's
// BVHs decide what is measured, nearest first; the callbacks measure it
// exactly as raypick does, in double (ties: lower object id, then
// triangle), and shrink the query radius to the best distance so far,
// widened for float rounding (kFlat: by 2^-20 of it plus 2^-22 of the
// query point's largest coordinate; kInstanced: 2^-16 plus 2^-18 of the
// scene's reach, for the float carriage into the instance and a
// similarity's unequal scales). So a right answer equals raypick's bit for
// bit. Thread-safe after construction; the device must outlive the scene.
class EmbreePointScene {
 public:
  // Throws std::invalid_argument for kInstanced when mode is not mesh or
  // instanced_points_refusal(scene) is not "" (with that message).
  EmbreePointScene(RTCDeviceTy* device, const Scene& scene, PickMode mode,
                   PointLayout layout = PointLayout::kFlat);
  ~EmbreePointScene();
  EmbreePointScene(const EmbreePointScene&) = delete;
  EmbreePointScene& operator=(const EmbreePointScene&) = delete;

  PointHit closest_point(const glm::dvec3& p, double max_distance) const;

  struct Impl;  // embree_points.cpp's

 private:
  std::unique_ptr<Impl> impl_;
};

// Brute force in double over every object (every triangle in mesh mode),
// with the contract's ties: what both systems are checked against.
PointHit brute_closest_point(const Scene& scene, const glm::dvec3& p, PickMode mode,
                             double max_distance);

}  // namespace raypick::tools
