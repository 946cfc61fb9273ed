// The picking engine: a two-level BVH. The top level is a BVH over the
// objects' OBB world boxes; in mesh mode each object's mesh has its own
// triangle BVH, built once per mesh and shared by every object that
// instances it.
#pragma once

#include "raypick/bvh/bvh.h"
#include "raypick/core/hit.h"
#include "raypick/core/obb.h"
#include "raypick/core/scene.h"

#include <cstdint>
#include <vector>

namespace raypick {

// What a hit means (the contract's hit modes).
enum class PickMode {
  // The smallest t >= tmin at which the ray is inside or on the object's
  // OBB (a ray starting inside a box hits it at t = tmin). Hit::triangle is
  // kInvalidId.
  kObb,
  // The smallest t >= tmin at which the ray meets one of the object's
  // triangles, either face (watertight test). Hit carries triangle, u, v.
  kMesh,
};

struct PickerConfig {
  BvhConfig top;  // over objects
  BvhConfig mesh{/*max_leaf_size=*/4, /*bins=*/16, /*traversal_cost=*/1.0f,
                 /*intersection_cost=*/1.0f};  // over each mesh's triangles
  // Build the per-mesh triangle BVHs (needed by PickMode::kMesh). Without
  // them mesh-mode queries are a precondition violation.
  bool mesh_mode = true;
};

// A closest hit together with what the top-level traversal did.
struct PickResult {
  Hit hit;
  TraversalStats stats;
};

// Picks objects by ray. Built from a Scene; objects that can never be hit
// (no triangles, singular matrix) are left out of the top level.
//
// Every query takes a ray with valid origin and direction (is_valid) and
// considers t in [ray.tmin, ray.tmax]. t is in units of the given direction
// in both modes: the ray is carried into an object's frame by its inverse
// matrix, which keeps t. Ties go to the lower object id, then to the lower
// triangle id.
//
// Thread-safety: const member functions may run concurrently; set_matrix()
// and refit() must not run concurrently with anything.
class Picker {
 public:
  // Copies what it needs from `scene`, which may be destroyed after.
  // Precondition: validate_scene(scene) is empty. Cost: O(n log n) in the
  // objects, plus O(t log t) in each used mesh's triangles for mesh mode.
  explicit Picker(const Scene& scene, const PickerConfig& config = {});

  // The nearest hit. Miss: !hit.hit().
  Hit intersect(const Ray& ray, PickMode mode = PickMode::kObb) const {
    return intersect_stats(ray, mode).hit;
  }
  PickResult intersect_stats(const Ray& ray,
                             PickMode mode = PickMode::kObb) const;

  // True when anything is hit; stops at the first hit found.
  bool occluded(const Ray& ray, PickMode mode = PickMode::kObb) const;

  // Every object the ray hits, one hit per object (its nearest), sorted by
  // t, then object id; at most `limit` of the nearest. For cycling through
  // overlapping objects under the cursor, as editors do.
  std::vector<Hit> intersect_all(const Ray& ray,
                                 PickMode mode = PickMode::kObb,
                                 std::size_t limit = SIZE_MAX) const;

  // The world-space geometric normal of a mesh-mode hit: the unit normal of
  // the hit triangle as placed in the world (the cross product of its world
  // edges p1 - p0 and p2 - p0), correct under mirroring, non-uniform scale
  // and shear. Zero for a miss or an obb-mode hit.
  glm::vec3 world_normal(const Hit& hit) const;

  // Moves object `id` to a new matrix. The BVH is stale until refit().
  void set_matrix(std::uint32_t id, const glm::mat4& matrix);
  // Recomputes the world boxes of all objects and refits the top level
  // bottom-up, keeping its topology. O(objects + nodes). An object that was
  // left out of the top level (empty mesh, or singular matrix at build
  // time) stays out until the picker is rebuilt.
  void refit();

  std::size_t object_count() const { return objects_.size(); }
  const Obb& obb(std::uint32_t id) const { return objects_[id].obb; }
  // The padded world box the top level uses for object `id`; empty when the
  // object cannot be hit.
  Aabb world_box(std::uint32_t id) const;
  // The box around every hittable object (empty when there is none).
  Aabb world_bounds() const;
  const Bvh& bvh() const { return top_; }
  BvhStats bvh_stats() const { return top_.stats(config_.top); }

 private:
  struct MeshAccel {
    std::vector<glm::vec3> positions;
    std::vector<glm::uvec3> triangles;
    Bvh bvh;  // over triangles; empty unless config.mesh_mode
  };
  struct ObjectRec {
    Obb obb;
    std::uint32_t mesh;
  };

  template <bool kAny>
  Hit object_hit(std::uint32_t id, const Ray& ray, float tmax,
                 PickMode mode) const;

  std::vector<ObjectRec> objects_;          // by object id
  std::vector<MeshAccel> meshes_;           // by mesh index
  std::vector<std::uint32_t> prim_objects_; // top-level primitive -> object
  PickerConfig config_;
  Bvh top_;
};

}  // namespace raypick
