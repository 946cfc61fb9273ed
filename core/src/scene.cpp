#include "raypick/core/scene.h"

#include <cmath>
#include <string>

namespace raypick {

Aabb Mesh::triangle_bounds() const {
  Aabb box;
  for (const glm::uvec3& tri : triangles) {
    for (int k = 0; k < 3; ++k) box.extend(positions[tri[k]]);
  }
  return box;
}

std::size_t Scene::triangle_count() const {
  std::size_t n = 0;
  for (const Object& o : objects) {
    if (o.mesh < meshes.size()) n += meshes[o.mesh].triangles.size();
  }
  return n;
}

std::string validate_scene(const Scene& scene) {
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    const Mesh& mesh = scene.meshes[m];
    const std::size_t n = mesh.positions.size();
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
      for (int k = 0; k < 3; ++k) {
        const std::uint32_t i = mesh.triangles[t][k];
        if (i >= n) {
          return "mesh " + std::to_string(m) + ": triangle " +
                 std::to_string(t) + " uses vertex " + std::to_string(i) +
                 " of " + std::to_string(n);
        }
        const glm::vec3& p = mesh.positions[i];
        if (!std::isfinite(p.x) || !std::isfinite(p.y) ||
            !std::isfinite(p.z)) {
          return "mesh " + std::to_string(m) + ": vertex " +
                 std::to_string(i) + " is not finite";
        }
      }
    }
  }
  for (std::size_t o = 0; o < scene.objects.size(); ++o) {
    const Object& obj = scene.objects[o];
    if (obj.mesh >= scene.meshes.size()) {
      return "object " + std::to_string(o) + " ('" + obj.name + "'): mesh " +
             std::to_string(obj.mesh) + " does not exist";
    }
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) {
        if (!std::isfinite(obj.matrix[c][r])) {
          return "object " + std::to_string(o) + " ('" + obj.name +
                 "'): matrix is not finite";
        }
      }
    }
  }
  return {};
}

}  // namespace raypick
