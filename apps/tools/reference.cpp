#include "reference.h"

#include <glm/gtc/matrix_inverse.hpp>
#include <glm/matrix.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace raypick::tools {

double box_entry(const glm::dvec3& o, const glm::dvec3& d, const glm::dvec3& lo,
                 const glm::dvec3& hi) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
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

ObbReference::ObbReference(const Scene& scene) {
  objects_.reserve(scene.objects.size());
  for (const Object& obj : scene.objects) {
    Box box{};
    const Aabb local = scene.meshes[obj.mesh].triangle_bounds();
    const glm::dmat4 m{obj.matrix};
    const double det = glm::determinant(glm::dmat3{m});
    box.hittable = !local.empty() && std::isfinite(det) && det != 0.0;
    if (box.hittable) {
      box.to_local = glm::affineInverse(m);
      box.min = glm::dvec3{local.min};
      box.max = glm::dvec3{local.max};
    }
    objects_.push_back(box);
  }
}

BoxEntries ObbReference::entries(std::uint32_t object, const Ray& ray) const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const Box& b = objects_[object];
  if (!b.hittable) return {kInf, kInf, kInf};
  const glm::dvec3 o{b.to_local * glm::dvec4(glm::dvec3{ray.org}, 1.0)};
  const glm::dvec3 d{b.to_local * glm::dvec4(glm::dvec3{ray.dir}, 0.0)};
  const double mag =
      std::max({std::abs(b.min.x), std::abs(b.min.y), std::abs(b.min.z),
                std::abs(b.max.x), std::abs(b.max.y), std::abs(b.max.z),
                std::abs(o.x), std::abs(o.y), std::abs(o.z)});
  const glm::dvec3 margin{kMargin * mag};
  BoxEntries e;
  e.exact = box_entry(o, d, b.min, b.max);
  e.grown = box_entry(o, d, b.min - margin, b.max + margin);
  e.shrunk = box_entry(o, d, b.min + margin, b.max - margin);
  return e;
}

ObbReference::Nearest ObbReference::nearest(const Ray& ray) const {
  Nearest best{UINT32_MAX, std::numeric_limits<double>::infinity()};
  for (std::uint32_t i = 0; i < objects_.size(); ++i) {
    const double t = entries(i, ray).exact;
    if (t < best.t) best = {i, t};
  }
  return best;
}

}  // namespace raypick::tools
