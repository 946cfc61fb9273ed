// The picking engine: objects' OBBs under a BVH of their world boxes.
#pragma once

#include "raypick/bvh/bvh.h"
#include "raypick/core/hit.h"
#include "raypick/core/obb.h"
#include "raypick/core/scene.h"

#include <cstdint>
#include <vector>

namespace raypick {

// A closest hit together with what the traversal did to find it.
struct PickResult {
  Hit hit;
  TraversalStats stats;
};

// Picks objects by their oriented bounding boxes (the contract's `obb` mode).
//
// Built from a Scene: each object's OBB is the box of the vertices its
// triangles use, under the object's matrix; the BVH is built over the OBBs'
// world boxes (abs-matrix method, padded by a few ulps so that rounding can
// never cull an OBB that the exact leaf test would hit). Objects that can
// never be hit (no triangles, singular matrix) are left out of the BVH.
//
// Thread-safety: const member functions may run concurrently; set_matrix()
// and refit() must not run concurrently with anything.
class Picker {
 public:
  // Copies what it needs from `scene`; the scene may be destroyed after.
  // Precondition: validate_scene(scene) is empty. Cost: O(n log n) in the
  // number of objects plus O(triangles) for the mesh bounds.
  explicit Picker(const Scene& scene, const BvhConfig& config = {});

  // The nearest OBB the ray meets within [ray.tmin, ray.tmax]: the smallest
  // t at which the ray is inside or on the box, ties to the lower object id.
  // A ray starting inside a box hits it at t = ray.tmin. Miss: !hit.hit().
  // Precondition: is_valid(ray).
  Hit intersect(const Ray& ray) const { return intersect_stats(ray).hit; }
  PickResult intersect_stats(const Ray& ray) const;

  // True when any OBB is met within [ray.tmin, ray.tmax]; stops at the first.
  bool occluded(const Ray& ray) const;

  // Every OBB the ray meets within [ray.tmin, ray.tmax], sorted by the
  // contract's order (t, then object id); at most `limit` of the nearest.
  std::vector<Hit> intersect_all(const Ray& ray,
                                 std::size_t limit = SIZE_MAX) const;

  // Moves object `id` to a new matrix. The BVH is stale until refit().
  void set_matrix(std::uint32_t id, const glm::mat4& matrix);
  // Recomputes the world boxes of all objects and refits the BVH bottom-up,
  // keeping its topology. O(objects + nodes). An object that was left out
  // of the BVH (empty mesh, or singular matrix at build time) stays out
  // until the picker is rebuilt.
  void refit();

  std::size_t object_count() const { return obbs_.size(); }
  const Obb& obb(std::uint32_t id) const { return obbs_[id]; }
  // The padded world box the BVH uses for object `id`; empty when the
  // object cannot be hit.
  Aabb world_box(std::uint32_t id) const;
  // The box around every hittable object (empty when there is none).
  Aabb world_bounds() const;
  const Bvh& bvh() const { return bvh_; }
  BvhStats bvh_stats() const { return bvh_.stats(config_); }

 private:
  std::vector<Obb> obbs_;                   // by object id
  std::vector<std::uint32_t> prim_objects_; // BVH primitive id -> object id
  BvhConfig config_;
  Bvh bvh_;
};

}  // namespace raypick
