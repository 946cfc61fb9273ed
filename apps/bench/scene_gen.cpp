#include "scene_gen.h"

#include <glm/ext/matrix_transform.hpp>
#include <glm/geometric.hpp>
#include <glm/gtc/quaternion.hpp>

#include <cmath>
#include <algorithm>
#include <map>
#include <utility>
#include <random>

namespace raypick::tools {

Mesh unit_cube_mesh() { return box_mesh(Aabb{glm::vec3{-0.5f}, glm::vec3{0.5f}}); }

namespace {

Mesh unit_quad_mesh() {
  Mesh m;
  m.positions = {{-0.5f, -0.5f, 0.0f},
                 {0.5f, -0.5f, 0.0f},
                 {0.5f, 0.5f, 0.0f},
                 {-0.5f, 0.5f, 0.0f}};
  m.triangles = {{0, 1, 2}, {0, 2, 3}};
  return m;
}

}  // namespace

BoxesOptions mixed_options(double times) {
  BoxesOptions o;
  o.shear_fraction = 0.1 * times;
  o.mirror_fraction = 0.1 * times;
  o.flat_fraction = 0.05 * times;
  o.coincident_fraction = 0.02 * times;
  o.axis_aligned_fraction = 0.1 * times;
  return o;
}

Scene make_boxes_scene(std::size_t n, std::uint64_t seed,
                       const BoxesOptions& options) {
  Scene scene;
  scene.meshes.push_back(unit_cube_mesh());
  scene.meshes.push_back(unit_quad_mesh());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  const float extent = 4.0f * std::cbrt(static_cast<float>(std::max<std::size_t>(n, 1)));
  scene.objects.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Object obj;
    obj.name = "box" + std::to_string(i);
    if (i > 0 && unit(rng) < options.coincident_fraction) {
      const Object& twin = scene.objects[static_cast<std::size_t>(
          unit(rng) * static_cast<float>(i)) % i];
      obj.mesh = twin.mesh;
      obj.matrix = twin.matrix;
      scene.objects.push_back(obj);
      continue;
    }
    const glm::vec3 t{unit(rng) * extent, unit(rng) * extent,
                      unit(rng) * extent};
    glm::vec3 s{0.5f + 1.5f * unit(rng), 0.5f + 1.5f * unit(rng),
                0.5f + 1.5f * unit(rng)};
    // A normalized 4D Gaussian is a uniformly random rotation.
    glm::quat q{gauss(rng), gauss(rng), gauss(rng), gauss(rng)};
    if (unit(rng) < options.axis_aligned_fraction) q = glm::quat{1, 0, 0, 0};
    q = glm::normalize(q);
    if (unit(rng) < options.mirror_fraction) {
      s[static_cast<int>(unit(rng) * 3.0f) % 3] *= -1.0f;
    }
    glm::mat4 shear{1.0f};
    if (unit(rng) < options.shear_fraction) {
      shear[1][0] = unit(rng) - 0.5f;  // x += k * y
      shear[2][1] = unit(rng) - 0.5f;  // y += k * z
    }
    if (unit(rng) < options.flat_fraction) obj.mesh = 1;
    obj.matrix = glm::translate(glm::mat4{1.0f}, t) * glm::mat4_cast(q) *
                 shear * glm::scale(glm::mat4{1.0f}, s);
    scene.objects.push_back(obj);
  }
  return scene;
}

Mesh sphere_mesh(int levels) {
  Mesh m;
  m.positions = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  m.triangles = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4},
                 {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
  for (int l = 0; l < levels; ++l) {
    std::map<std::pair<unsigned, unsigned>, unsigned> mid;
    auto midpoint = [&](unsigned a, unsigned b) {
      const auto key = std::minmax(a, b);
      const auto it = mid.find(key);
      if (it != mid.end()) return it->second;
      m.positions.push_back(glm::normalize(m.positions[a] + m.positions[b]));
      return mid[key] = static_cast<unsigned>(m.positions.size() - 1);
    };
    std::vector<glm::uvec3> next;
    for (const glm::uvec3& t : m.triangles) {
      const unsigned ab = midpoint(t.x, t.y), bc = midpoint(t.y, t.z),
                     ca = midpoint(t.z, t.x);
      next.push_back({t.x, ab, ca});
      next.push_back({ab, t.y, bc});
      next.push_back({ca, bc, t.z});
      next.push_back({ab, bc, ca});
    }
    m.triangles = std::move(next);
  }
  for (glm::vec3& p : m.positions) p *= 0.5f;
  return m;
}

Scene make_mesh_scene(std::size_t n, std::uint64_t seed,
                      const BoxesOptions& options) {
  Scene scene = make_boxes_scene(n, seed, options);
  scene.meshes.push_back(sphere_mesh(2));
  Mesh soup;
  std::mt19937_64 rng(seed ^ 0x5eedu);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  for (unsigned t = 0; t < 40; ++t) {
    for (int k = 0; k < 3; ++k) soup.positions.push_back({u(rng), u(rng), u(rng)});
    soup.triangles.push_back({3 * t, 3 * t + 1, 3 * t + 2});
  }
  scene.meshes.push_back(std::move(soup));
  for (std::size_t i = 0; i < scene.objects.size(); ++i) {
    if (scene.objects[i].mesh == 0) scene.objects[i].mesh = static_cast<std::uint32_t>(i % 3 == 0 ? 0 : i % 3 + 1);
  }
  return scene;
}

void shift_scene(Scene& scene, const glm::dvec3& offset) {
  for (Object& o : scene.objects) {
    // In double, kept beyond float (translation_low), as a loader keeps a
    // file's placements: offsets that are not floats give placements that
    // are not floats either.
    glm::dmat4 m = o.world_matrix();
    m[3] += glm::dvec4{offset, 0.0};
    o.place(m);
  }
}

}  // namespace raypick::tools
