// The scalar forms of the update's per-object arithmetic, as raypick
// computed them before their SSE2 versions (core/src/obb.cpp's
// make_local_frame, bvh/src/picker.cpp's padded box): what those must match
// bit for bit. Also a generator of the matrices that stress them.
#pragma once

#include "raypick/core/obb.h"

#include <glm/ext/vector_double3.hpp>
#include <glm/geometric.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

namespace raypick::test {

// make_local_frame element by element: the adjugate in double (glm::cross,
// glm::dot), scaled by 1 / det, each element rounded to float and checked.
inline bool make_local_frame_scalar(const glm::mat4x3& m, LocalFrame& frame) {
  frame = LocalFrame{glm::mat3{0.0f}, glm::vec3{0.0f}};  // what a failure leaves
  const glm::dvec3 c0{m[0]}, c1{m[1]}, c2{m[2]};
  const glm::dvec3 rows[3] = {glm::cross(c1, c2), glm::cross(c2, c0), glm::cross(c0, c1)};
  const double det = glm::dot(c0, rows[0]);
  if (!std::isfinite(det) || det == 0.0) return false;
  if (!std::isfinite(m[3].x) || !std::isfinite(m[3].y) || !std::isfinite(m[3].z)) return false;
  const double inv_det = 1.0 / det;
  LocalFrame out{glm::mat3{0.0f}, m[3]};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      out.linear[c][r] = static_cast<float>(rows[r][c] * inv_det);
      if (!std::isfinite(out.linear[c][r])) return false;
    }
  }
  frame = out;
  return true;
}

// Matrices of every kind the update meets and some it should not: kind
// 0 rotation * shear * scale (mirrored half the time), 1 the same with
// columns nearly parallel (near-singular), 2 scaled by 10^[-38, 38] per
// column (huge, tiny, overflowing or underflowing inverses), 3 translated
// by up to 1e30, 4 random float bit patterns (inf, NaN and denormals
// included), 5 a zero or repeated column.
inline glm::mat4x3 stress_matrix(std::mt19937_64& rng, int kind) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  glm::mat4x3 m;
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 3; ++r) m[c][r] = 3.0f * u(rng);
  }
  if (u(rng) < 0.0f) m[1] = -m[1];  // a mirror half the time
  switch (kind) {
    case 1: {
      const float eps = std::ldexp(1.0f, -int(rng() % 30));
      m[2] = m[0] * u(rng) + m[1] * u(rng) + glm::vec3{eps * u(rng), eps * u(rng), eps * u(rng)};
      break;
    }
    case 2:
      for (int c = 0; c < 3; ++c) m[c] *= std::pow(10.0f, float(int(rng() % 77) - 38));
      break;
    case 3: m[3] *= std::pow(10.0f, float(rng() % 31)); break;
    case 4:
      for (int c = 0; c < 4; ++c) {
        for (int r = 0; r < 3; ++r) {
          m[c][r] = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
        }
      }
      break;
    case 5: {
      const int c = int(rng() % 3);
      m[c] = rng() % 2 ? glm::vec3{0.0f} : m[(c + 1) % 3];
      break;
    }
    default: break;
  }
  return m;
}

}  // namespace raypick::test
