// Shared test helpers: approximate equality for glm types, random matrices.
#pragma once

#include <doctest/doctest.h>

#include "raypick/core/aabb.h"

#include <glm/ext/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include <cmath>
#include <random>
#include <string>

namespace raypick::test {

inline bool near(float a, float b, float tol) { return std::abs(a - b) <= tol; }

inline bool near(const glm::vec3& a, const glm::vec3& b, float tol) {
  return near(a.x, b.x, tol) && near(a.y, b.y, tol) && near(a.z, b.z, tol);
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

}  // namespace raypick::test
