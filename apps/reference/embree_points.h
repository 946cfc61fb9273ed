// Embree's point query (rtcPointQuery) as a reference for raypick's
// closest_point: validate --points and the bench's point row.
#pragma once

#include "raypick/bvh/picker.h"
#include "raypick/core/pick_mode.h"
#include "raypick/core/scene.h"

#include <memory>

struct RTCDeviceTy;

namespace raypick::tools {

// One Embree user-geometry primitive per object that can be hit, bounded
// by the object's world box (its local box under the object's matrix, in
// double, rounded outward), in one flat scene; rtcPointQuery visits the
// primitives whose box meets the query sphere, nearest first as Embree
// orders them, and the callback measures the object exactly in double as
// the contract says: obb mode the nearest point of its OBB (0 inside), mesh
// mode every one of its triangles (no second tree: per object, brute
// force, so mesh-mode timings are not Embree's best and the bench does not
// show them). The callback shrinks the query radius to the best distance
// so far, rounded up to a float. Ties: lower object id, then triangle.
// Thread-safe after construction; the device must outlive the scene.
class EmbreePointScene {
 public:
  EmbreePointScene(RTCDeviceTy* device, const Scene& scene, PickMode mode);
  ~EmbreePointScene();
  EmbreePointScene(const EmbreePointScene&) = delete;
  EmbreePointScene& operator=(const EmbreePointScene&) = delete;

  PointHit closest_point(const glm::dvec3& p, double max_distance) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Brute force in double over every object (every triangle in mesh mode),
// with the contract's ties: what both systems are checked against.
PointHit brute_closest_point(const Scene& scene, const glm::dvec3& p, PickMode mode,
                             double max_distance);

}  // namespace raypick::tools
