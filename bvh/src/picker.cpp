#include "raypick/bvh/picker.h"

#include "raypick/core/assert.h"

#include <algorithm>

namespace raypick {
namespace {

// Pads a world box by a few float ulps of its coordinates' magnitude. The
// box comes from a rounded matrix product while the leaf test carries the
// ray into local space with other roundings; without a margin a ray that
// grazes an OBB's face could be culled by the node test and missed.
Aabb pad(const Aabb& box) {
  if (box.empty()) return box;
  constexpr float kRel = 1.0f / (1 << 18);  // about 32 ulps
  const glm::vec3 mag = glm::max(glm::abs(box.min), glm::abs(box.max));
  const glm::vec3 margin = mag * kRel + (box.max - box.min) * kRel;
  return Aabb{box.min - margin, box.max + margin};
}

}  // namespace

Picker::Picker(const Scene& scene, const BvhConfig& config) : config_(config) {
  RAYPICK_ASSERT(validate_scene(scene).empty(), "scene is not valid");
  std::vector<Aabb> mesh_bounds(scene.meshes.size());
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    mesh_bounds[m] = scene.meshes[m].triangle_bounds();
  }
  obbs_.reserve(scene.objects.size());
  std::vector<Aabb> boxes;
  std::vector<glm::vec3> centers;
  for (std::size_t i = 0; i < scene.objects.size(); ++i) {
    const Object& obj = scene.objects[i];
    obbs_.push_back(Obb::make(mesh_bounds[obj.mesh], obj.matrix));
    const Aabb box = pad(obbs_.back().world_bounds());
    if (box.empty()) continue;
    prim_objects_.push_back(static_cast<std::uint32_t>(i));
    boxes.push_back(box);
    centers.push_back(box.center());
  }
  bvh_ = build_bvh(boxes, centers, config_);
}

PickResult Picker::intersect_stats(const Ray& ray) const {
  RAYPICK_ASSERT(is_valid(ray), "ray must be finite with non-zero direction");
  PickResult r;
  Hit& best = r.hit;
  r.stats = bvh_.traverse(ray, [&](std::uint32_t prim, float& tmax) {
    const std::uint32_t id = prim_objects_[prim];
    const float t = obb_entry(ray, obbs_[id], tmax);
    // obb_entry is inclusive of tmax, so an equal t reaches here and the
    // lower object id wins, as the contract orders ties.
    if (t < best.t || (t == best.t && t != kInfinity && id < best.object)) {
      best.object = id;
      best.t = t;
      tmax = t;
    }
    return false;
  });
  return r;
}

bool Picker::occluded(const Ray& ray) const {
  RAYPICK_ASSERT(is_valid(ray), "ray must be finite with non-zero direction");
  bool found = false;
  bvh_.traverse(ray, [&](std::uint32_t prim, float& tmax) {
    found = obb_entry(ray, obbs_[prim_objects_[prim]], tmax) != kInfinity;
    return found;
  });
  return found;
}

std::vector<Hit> Picker::intersect_all(const Ray& ray,
                                       std::size_t limit) const {
  RAYPICK_ASSERT(is_valid(ray), "ray must be finite with non-zero direction");
  std::vector<Hit> hits;
  bvh_.traverse(ray, [&](std::uint32_t prim, float& tmax) {
    const std::uint32_t id = prim_objects_[prim];
    const float t = obb_entry(ray, obbs_[id], tmax);
    if (t != kInfinity) {
      Hit h;
      h.object = id;
      h.t = t;
      hits.push_back(h);
    }
    return false;
  });
  std::sort(hits.begin(), hits.end(), closer);
  if (hits.size() > limit) hits.resize(limit);
  return hits;
}

void Picker::set_matrix(std::uint32_t id, const glm::mat4& matrix) {
  RAYPICK_ASSERT(id < obbs_.size(), "object id out of range");
  obbs_[id] = Obb::make(obbs_[id].local, matrix);
}

void Picker::refit() {
  std::vector<Aabb> boxes(prim_objects_.size());
  for (std::size_t p = 0; p < prim_objects_.size(); ++p) {
    boxes[p] = pad(obbs_[prim_objects_[p]].world_bounds());
  }
  bvh_.refit(boxes);
}

Aabb Picker::world_box(std::uint32_t id) const {
  RAYPICK_ASSERT(id < obbs_.size(), "object id out of range");
  return pad(obbs_[id].world_bounds());
}

Aabb Picker::world_bounds() const {
  return bvh_.empty() ? Aabb{} : bvh_.nodes[0].bounds;
}

}  // namespace raypick
