#include "raypick/bvh/picker.h"

#include "raypick/core/assert.h"
#include "raypick/core/ray_triangle.h"

#include <glm/matrix.hpp>

#include <algorithm>

namespace raypick {
namespace {

// Pads a box by a few float ulps of its coordinates' magnitude. World boxes
// come from a rounded matrix product while the leaf tests carry the ray into
// local space with other roundings, and the triangle test computes t its own
// way; without a margin a grazing ray could be culled by a node test and
// lose a hit the exact leaf test would find.
Aabb pad(const Aabb& box) {
  if (box.empty()) return box;
  constexpr float kRel = 1.0f / (1 << 18);  // about 32 ulps
  const glm::vec3 mag = glm::max(glm::abs(box.min), glm::abs(box.max));
  const glm::vec3 margin = mag * kRel + (box.max - box.min) * kRel;
  return Aabb{box.min - margin, box.max + margin};
}

// Tie order within one object: nearer t, then lower triangle id.
bool better_in_object(float t, std::uint32_t tri, const Hit& best) {
  return t < best.t || (t == best.t && tri < best.triangle);
}

}  // namespace

Picker::Picker(const Scene& scene, const PickerConfig& config)
    : config_(config) {
  RAYPICK_ASSERT(validate_scene(scene).empty(), "scene is not valid");
  std::vector<bool> used(scene.meshes.size(), false);
  for (const Object& obj : scene.objects) used[obj.mesh] = true;
  meshes_.resize(scene.meshes.size());
  std::vector<Aabb> mesh_bounds(scene.meshes.size());
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    if (!used[m]) continue;
    const Mesh& src = scene.meshes[m];
    mesh_bounds[m] = src.triangle_bounds();
    MeshAccel& acc = meshes_[m];
    acc.positions = src.positions;
    acc.triangles = src.triangles;
    if (!config_.mesh_mode || src.triangles.empty()) continue;
    std::vector<Aabb> boxes(src.triangles.size());
    std::vector<glm::vec3> centers(src.triangles.size());
    for (std::size_t t = 0; t < src.triangles.size(); ++t) {
      Aabb b;
      for (int k = 0; k < 3; ++k) b.extend(src.positions[src.triangles[t][k]]);
      boxes[t] = pad(b);
      centers[t] = b.center();
    }
    acc.bvh = build_bvh(boxes, centers, config_.mesh);
  }

  objects_.reserve(scene.objects.size());
  std::vector<Aabb> boxes;
  std::vector<glm::vec3> centers;
  for (std::size_t i = 0; i < scene.objects.size(); ++i) {
    const Object& obj = scene.objects[i];
    objects_.push_back({Obb::make(mesh_bounds[obj.mesh], obj.matrix), obj.mesh});
    const Aabb box = pad(objects_.back().obb.world_bounds());
    if (box.empty()) continue;
    prim_objects_.push_back(static_cast<std::uint32_t>(i));
    boxes.push_back(box);
    centers.push_back(box.center());
  }
  top_ = build_bvh(boxes, centers, config_.top);
}

// The nearest hit on one object with t <= tmax (any hit when kAny).
template <bool kAny>
Hit Picker::object_hit(std::uint32_t id, const Ray& ray, float tmax,
                       PickMode mode) const {
  const ObjectRec& obj = objects_[id];
  Hit best;
  if (mode == PickMode::kObb) {
    const float t = obb_entry(ray, obj.obb, tmax);
    if (t != kInfinity) {
      best.object = id;
      best.t = t;
    }
    return best;
  }
  if (!obj.obb.invertible) return best;
  const MeshAccel& mesh = meshes_[obj.mesh];
  RAYPICK_ASSERT(config_.mesh_mode, "mesh mode needs PickerConfig::mesh_mode");
  Ray local = transform_ray(obj.obb.to_local, ray);
  local.tmax = tmax;
  const TriangleRay tri_ray(local.org, local.dir);
  mesh.bvh.traverse(local, [&](std::uint32_t tri, float& local_tmax) {
    const glm::uvec3& idx = mesh.triangles[tri];
    const TriangleHit h =
        intersect_triangle(tri_ray, mesh.positions[idx.x],
                           mesh.positions[idx.y], mesh.positions[idx.z],
                           local.tmin, local_tmax);
    if (!h.hit || !better_in_object(h.t, tri, best)) return false;
    best.object = id;
    best.t = h.t;
    best.triangle = tri;
    best.u = h.u;
    best.v = h.v;
    local_tmax = h.t;
    return kAny;
  });
  return best;
}

PickResult Picker::intersect_stats(const Ray& ray, PickMode mode) const {
  RAYPICK_ASSERT(is_valid(ray), "ray must be finite with non-zero direction");
  PickResult r;
  Hit& best = r.hit;
  r.stats = top_.traverse(ray, [&](std::uint32_t prim, float& tmax) {
    const Hit h = object_hit<false>(prim_objects_[prim], ray, tmax, mode);
    // Leaf tests are inclusive of tmax, so an equal t reaches here and the
    // contract's order (t, object, triangle) decides.
    if (h.hit() && closer(h, best)) {
      best = h;
      tmax = h.t;
    }
    return false;
  });
  return r;
}

bool Picker::occluded(const Ray& ray, PickMode mode) const {
  RAYPICK_ASSERT(is_valid(ray), "ray must be finite with non-zero direction");
  bool found = false;
  top_.traverse(ray, [&](std::uint32_t prim, float& tmax) {
    found = object_hit<true>(prim_objects_[prim], ray, tmax, mode).hit();
    return found;
  });
  return found;
}

std::vector<Hit> Picker::intersect_all(const Ray& ray, PickMode mode,
                                       std::size_t limit) const {
  RAYPICK_ASSERT(is_valid(ray), "ray must be finite with non-zero direction");
  std::vector<Hit> hits;
  top_.traverse(ray, [&](std::uint32_t prim, float& tmax) {
    const Hit h = object_hit<false>(prim_objects_[prim], ray, tmax, mode);
    if (h.hit()) hits.push_back(h);
    return false;
  });
  std::sort(hits.begin(), hits.end(), closer);
  if (hits.size() > limit) hits.resize(limit);
  return hits;
}

glm::vec3 Picker::world_normal(const Hit& hit) const {
  if (!hit.hit() || hit.triangle == kInvalidId) return glm::vec3{0.0f};
  const ObjectRec& obj = objects_[hit.object];
  const MeshAccel& mesh = meshes_[obj.mesh];
  const glm::uvec3& idx = mesh.triangles[hit.triangle];
  const glm::vec3 p0 = mesh.positions[idx.x];
  const glm::vec3 n_local =
      glm::cross(mesh.positions[idx.y] - p0, mesh.positions[idx.z] - p0);
  // cross(M e1, M e2) = det(M) * M^-T * cross(e1, e2): the inverse
  // transpose alone would flip the normal of a mirrored object.
  const glm::mat3 m{obj.obb.to_world};
  const glm::mat3 inv_t = glm::transpose(glm::mat3{obj.obb.to_local});
  glm::vec3 n = inv_t * n_local;
  if (glm::determinant(m) < 0.0f) n = -n;
  const float len = glm::length(n);
  return len > 0.0f ? n / len : glm::vec3{0.0f};
}

void Picker::set_matrix(std::uint32_t id, const glm::mat4& matrix) {
  RAYPICK_ASSERT(id < objects_.size(), "object id out of range");
  objects_[id].obb = Obb::make(objects_[id].obb.local, matrix);
}

void Picker::refit() {
  std::vector<Aabb> boxes(prim_objects_.size());
  for (std::size_t p = 0; p < prim_objects_.size(); ++p) {
    boxes[p] = pad(objects_[prim_objects_[p]].obb.world_bounds());
  }
  top_.refit(boxes);
}

Aabb Picker::world_box(std::uint32_t id) const {
  RAYPICK_ASSERT(id < objects_.size(), "object id out of range");
  return pad(objects_[id].obb.world_bounds());
}

Aabb Picker::world_bounds() const {
  return top_.empty() ? Aabb{} : top_.nodes[0].bounds;
}

}  // namespace raypick
