#include "reference.h"

#include "raypick/core/obb.h"

#include <glm/geometric.hpp>
#include <glm/matrix.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace raypick::tools {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double max_abs(const glm::dvec3& v) {
  return std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)});
}

}  // namespace

double box_entry(const glm::dvec3& o, const glm::dvec3& d, const glm::dvec3& lo,
                 const glm::dvec3& hi) {
  double t0 = 0.0;
  double t1 = kInf;
  for (int a = 0; a < 3; ++a) {
    if (!(lo[a] <= hi[a])) return kInf;
    if (d[a] == 0.0) {
      if (o[a] < lo[a] || o[a] > hi[a]) return kInf;
      continue;
    }
    double ta = (lo[a] - o[a]) / d[a];
    double tb = (hi[a] - o[a]) / d[a];
    if (ta > tb) std::swap(ta, tb);
    t0 = std::max(t0, ta);
    t1 = std::min(t1, tb);
  }
  return t0 <= t1 ? t0 : kInf;
}

SceneReference::SceneReference(const Scene& scene) : scene_(&scene) {
  objects_.reserve(scene.objects.size());
  for (const Object& obj : scene.objects) {
    Obj o{};
    o.mesh = obj.mesh;
    const Aabb local = scene.meshes[obj.mesh].triangle_bounds();
    o.hittable = !local.empty() && is_invertible(glm::mat4x3{obj.matrix});
    if (o.hittable) {
      o.linear = glm::inverse(glm::dmat3{glm::mat3{obj.matrix}});
      o.origin = obj.translation();  // with its part beyond float
      o.min = glm::dvec3{local.min};
      o.max = glm::dvec3{local.max};
    }
    objects_.push_back(o);
  }
}

std::size_t SceneReference::triangle_count(std::uint32_t object) const {
  return scene_->meshes[objects_[object].mesh].triangles.size();
}

void SceneReference::to_local(const Obj& b, const RayD& ray, glm::dvec3& o,
                              glm::dvec3& d) const {
  o = b.linear * (ray.org - b.origin);
  d = b.linear * glm::dvec3{ray.dir};
}

BoxEntries SceneReference::box_entries(std::uint32_t object,
                                       const RayD& ray) const {
  const Obj& b = objects_[object];
  if (!b.hittable) return {kInf, kInf, kInf};
  glm::dvec3 o, d;
  to_local(b, ray, o, d);
  const double mag = std::max({max_abs(b.min), max_abs(b.max), max_abs(o)});
  const glm::dvec3 margin{kMargin * mag};
  BoxEntries e;
  e.exact = box_entry(o, d, b.min, b.max);
  e.grown = box_entry(o, d, b.min - margin, b.max + margin);
  e.shrunk = box_entry(o, d, b.min + margin, b.max - margin);
  return e;
}

TriangleEntry SceneReference::triangle_entry(std::uint32_t object,
                                             std::uint32_t triangle,
                                             const RayD& ray) const {
  const Obj& b = objects_[object];
  const Mesh& mesh = scene_->meshes[b.mesh];
  const glm::uvec3 idx = mesh.triangles[triangle];
  glm::dvec3 o, d;
  to_local(b, ray, o, d);
  const glm::dvec3 p0{mesh.positions[idx.x]}, p1{mesh.positions[idx.y]},
      p2{mesh.positions[idx.z]};
  const glm::dvec3 e1 = p1 - p0, e2 = p2 - p0;
  const glm::dvec3 pvec = glm::cross(d, e2);
  const double det = glm::dot(e1, pvec);
  const double edge = std::max({glm::length(e1), glm::length(e2),
                                glm::length(p2 - p1)});
  const double scale = glm::length(e1) * glm::length(e2) * glm::length(d);
  // A barycentric coordinate is a distance to an edge over the altitude
  // onto it: rounding of size kMargin * mag in the positions moves it by
  // that over the smallest altitude (large for slivers).
  const double mag = std::max({max_abs(p0), max_abs(p1), max_abs(p2), max_abs(o)});
  const double min_altitude = glm::length(glm::cross(e1, e2)) / std::max(edge, 1e-300);
  if (!(std::abs(det) > 1e-9 * scale)) return {kInf, 0.0, true, kInf};
  // A grazing ray moves its hit point on the plane by 1 / cos of the angle
  // to the normal for the same rounding.
  const double cos_normal =
      std::abs(det) / (glm::length(d) * glm::length(glm::cross(e1, e2)));
  const double margin = kMargin * std::max(mag, edge) /
                        (std::max(min_altitude, 1e-300) * cos_normal);
  const glm::dvec3 tvec = o - p0;
  const double b1 = glm::dot(tvec, pvec) / det;
  const glm::dvec3 qvec = glm::cross(tvec, e1);
  const double b2 = glm::dot(d, qvec) / det;
  const double t = glm::dot(e2, qvec) / det;
  const double b0 = 1.0 - b1 - b2;
  const double t_err = kMargin * mag / (glm::length(d) * cos_normal);
  return {t, std::min({b0, b1, b2}) / margin, false, t_err};
}

}  // namespace raypick::tools
