// Shared test helpers: approximate equality for glm types, random matrices.
#pragma once

#include <doctest/doctest.h>

#include "raypick/core/aabb.h"
#include "raypick/core/ray.h"
#include "raypick/core/scene.h"

#include <glm/ext/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace raypick::test {

// The box [-1, 1] on each axis.
inline const Aabb kUnitBox{glm::vec3{-1.0f}, glm::vec3{1.0f}};

// The corner positions of a mesh's triangles, three per triangle, in order.
inline std::vector<glm::vec3> triangle_corners(const Mesh& mesh) {
  std::vector<glm::vec3> out;
  out.reserve(mesh.triangles.size() * 3);
  for (const glm::uvec3& tri : mesh.triangles) {
    for (int k = 0; k < 3; ++k) out.push_back(mesh.positions[tri[k]]);
  }
  return out;
}

// `relative` under /usr/share/assimp/models, from Debian's assimp-testmodels
// (./setup.sh installs it). A missing file fails the test with that advice,
// rather than letting it pass without checking anything.
inline std::filesystem::path assimp_model(const std::string& relative) {
  const std::filesystem::path p = std::filesystem::path("/usr/share/assimp/models") / relative;
  REQUIRE_MESSAGE(std::filesystem::exists(p),
                  p.string() << " is missing: install assimp-testmodels (./setup.sh deps)");
  return p;
}

inline bool near(float a, float b, float tol) { return std::abs(a - b) <= tol; }

inline bool near(const glm::vec3& a, const glm::vec3& b, float tol) {
  return near(a.x, b.x, tol) && near(a.y, b.y, tol) && near(a.z, b.z, tol);
}

// Every element of a and b within tol.
inline bool near(const glm::mat4& a, const glm::mat4& b, float tol) {
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 4; ++r) {
      if (std::abs(a[c][r] - b[c][r]) > tol) return false;
    }
  }
  return true;
}

inline std::string str(const glm::vec3& v) {
  return "(" + std::to_string(v.x) + ", " + std::to_string(v.y) + ", " +
         std::to_string(v.z) + ")";
}

#define CHECK_VEC_NEAR(a, b, tol)                                         \
  CHECK_MESSAGE(::raypick::test::near((a), (b), (tol)),                    \
                ::raypick::test::str(a) << " vs " << ::raypick::test::str(b))

// A random affine matrix: T * R * Shear * S with non-uniform scale, and a
// mirror (negative scale) half the time.
inline glm::mat4 random_affine(std::mt19937_64& rng, bool shear = true) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const glm::quat q = glm::normalize(glm::quat{g(rng), g(rng), g(rng), g(rng)});
  glm::vec3 s{0.2f + 2.0f * std::abs(u(rng)), 0.2f + 2.0f * std::abs(u(rng)),
              0.2f + 2.0f * std::abs(u(rng))};
  if (u(rng) < 0.0f) s.y = -s.y;
  glm::mat4 sh{1.0f};
  if (shear) {
    sh[1][0] = u(rng);
    sh[2][0] = u(rng);
    sh[2][1] = u(rng);
  }
  const glm::vec3 t{10.0f * u(rng), 10.0f * u(rng), 10.0f * u(rng)};
  return glm::translate(glm::mat4{1.0f}, t) * glm::mat4_cast(q) * sh *
         glm::scale(glm::mat4{1.0f}, s);
}

// Appends n objects named "o<i>" to `scene`, object i on mesh i % (the mesh
// count) under random_affine(rng, shear(i)).
template <class Shear>
void add_random_objects(Scene& scene, std::size_t n, std::mt19937_64& rng, Shear&& shear) {
  for (std::size_t i = 0; i < n; ++i) {
    Object o;
    o.mesh = static_cast<std::uint32_t>(i % scene.meshes.size());
    o.matrix = random_affine(rng, shear(i));
    o.name = "o" + std::to_string(i);
    scene.objects.push_back(o);
  }
}

// How random_scene_rays draws its rays.
struct SceneRayMix {
  float margin = 3.0f;       // origins: the objects' translations' box grown by this
  float aim = 0.5f;          // fraction aimed at an object's origin...
  float jitter = 0.0f;       // ...moved by up to +-jitter/2 in its frame
  float zero_x = 0.0f;       // fraction whose dir.x is set to +0.0 or -0.0
};

// Random rays over a scene, deterministic for (scene, n, seed, mix): origins
// uniform in the box of the objects' translations grown by mix.margin; a
// share aimed at object (index mod count)'s frame origin, the rest in
// directions uniform on the sphere.
inline std::vector<Ray> random_scene_rays(const Scene& scene, std::size_t n,
                                          std::uint64_t seed,
                                          const SceneRayMix& mix = {}) {
  Aabb bounds;
  for (const Object& o : scene.objects) bounds.extend(glm::vec3(o.matrix[3]));
  if (bounds.empty()) bounds = Aabb{glm::vec3{-1}, glm::vec3{1}};
  bounds.min -= mix.margin;
  bounds.max += mix.margin;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<Ray> rays;
  while (rays.size() < n) {
    Ray r;
    r.org = bounds.min + glm::vec3{u(rng), u(rng), u(rng)} * (bounds.max - bounds.min);
    if (!scene.objects.empty() && u(rng) < mix.aim) {
      const Object& o = scene.objects[rays.size() % scene.objects.size()];
      glm::vec3 local{0.0f};
      if (mix.jitter > 0.0f) {
        local = {mix.jitter * (u(rng) - 0.5f), mix.jitter * (u(rng) - 0.5f),
                 mix.jitter * (u(rng) - 0.5f)};
      }
      r.dir = glm::vec3(o.matrix * glm::vec4(local, 1.0f)) - r.org;
    } else {
      r.dir = {g(rng), g(rng), g(rng)};
    }
    if (mix.zero_x > 0.0f && u(rng) < mix.zero_x) {
      r.dir.x = u(rng) < 0.5f ? 0.0f : -0.0f;  // zero components of both signs
    }
    if (is_valid(r)) rays.push_back(r);
  }
  return rays;
}

}  // namespace raypick::test
