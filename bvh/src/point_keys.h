// The float keys of the point queries' walk (point_query.cpp): a slot's key
// is the squared distance, in float, from the query point rounded to float
// to the slot's float box, and a threshold turns a radius into the largest
// key a slot within that radius can have, rounding included. Float keys
// take four slots per SSE operation. Private to the library; here so that
// the tests can check the bound on its own.
#pragma once

#include "wide_node.h"

#include <glm/vec3.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace raypick::point_keys {

// The key of each of a node's W slots for the point pf: the float squared
// distance to the slot's box (any value for unused slots). Each float step
// rounds by at most u = 2^-24 of its result, and a square or a sum in the
// subnormal range by at most 2^-150 outright, so the true distance from
// the unrounded point, e off pf on no axis by more than e, is at least
//   sqrt(max(key - 2^-146, 0)) (1 - 3u) - 2e.
template <int W>
void slot_keys(const WideNodeOf<W>& node, const glm::vec3& pf, float* out) {
#if RAYPICK_WIDE_SSE
  __m128 sum[W / 4];
  for (auto& v : sum) v = _mm_setzero_ps();
  for (int a = 0; a < 3; ++a) {
    const __m128 pa = _mm_set1_ps(pf[a]);
    for (int h = 0; h < W / 4; ++h) {
      const __m128 below = _mm_sub_ps(_mm_load_ps(node.bounds[a] + 4 * h), pa);
      const __m128 above = _mm_sub_ps(pa, _mm_load_ps(node.bounds[3 + a] + 4 * h));
      const __m128 gap = _mm_max_ps(_mm_max_ps(below, above), _mm_setzero_ps());
      sum[h] = _mm_add_ps(sum[h], _mm_mul_ps(gap, gap));
    }
  }
  for (int h = 0; h < W / 4; ++h) _mm_storeu_ps(out + 4 * h, sum[h]);
#else
  for (int s = 0; s < W; ++s) out[s] = 0.0f;
  for (int a = 0; a < 3; ++a) {
    for (int s = 0; s < W; ++s) {
      const float below = node.bounds[a][s] - pf[a];
      const float above = pf[a] - node.bounds[3 + a][s];
      const float d = below > above ? below : above;
      const float gap = d > 0.0f ? d : 0.0f;
      out[s] += gap * gap;
    }
  }
#endif
}

// A mesh's triangles' boxes in its tree's entry order, for the keys of a
// leaf's triangles: six rows (min x, y, z, max x, y, z) of stride()
// floats, entry e at [row * stride() + e], each box the exact box of the
// triangle's three float vertices. The rows have three entries of padding
// past the last triangle, so that four consecutive entries from any one
// of them can be read at once.
struct TriangleBoxes {
  std::vector<float> rows;

  std::size_t stride() const { return rows.size() / 6; }
  template <class Verts>
  void assign(const Verts& verts) {
    rows.assign(6 * (verts.size() + 3), 0.0f);
    const std::size_t stride = this->stride();
    for (std::size_t e = 0; e < verts.size(); ++e) {
      const auto& v = verts[e];
      for (int a = 0; a < 3; ++a) {
        rows[std::size_t(a) * stride + e] = std::min(std::min(v[0][a], v[1][a]), v[2][a]);
        rows[std::size_t(3 + a) * stride + e] = std::max(std::max(v[0][a], v[1][a]), v[2][a]);
      }
    }
  }
  std::size_t bytes() const { return rows.capacity() * sizeof(float); }
};

// A bit for each of the four triangles e .. e + 3 of `boxes` whose key for
// pf (slot_keys' arithmetic on its box, so the same bound holds) is at
// most `threshold`.
inline unsigned triangle_keys_within(const TriangleBoxes& boxes, std::size_t e,
                                     const glm::vec3& pf, float threshold) {
  const float* row = boxes.rows.data() + e;
  const std::size_t stride = boxes.stride();
#if RAYPICK_WIDE_SSE
  __m128 sum = _mm_setzero_ps();
  for (int a = 0; a < 3; ++a) {
    const __m128 pa = _mm_set1_ps(pf[a]);
    const __m128 below = _mm_sub_ps(_mm_loadu_ps(row + std::size_t(a) * stride), pa);
    const __m128 above = _mm_sub_ps(pa, _mm_loadu_ps(row + std::size_t(3 + a) * stride));
    const __m128 gap = _mm_max_ps(_mm_max_ps(below, above), _mm_setzero_ps());
    sum = _mm_add_ps(sum, _mm_mul_ps(gap, gap));
  }
  return unsigned(_mm_movemask_ps(_mm_cmple_ps(sum, _mm_set1_ps(threshold))));
#else
  unsigned within = 0;
  for (int k = 0; k < 4; ++k) {
    float sum = 0.0f;
    for (int a = 0; a < 3; ++a) {
      const float below = row[std::size_t(a) * stride + k] - pf[a];
      const float above = pf[a] - row[std::size_t(3 + a) * stride + k];
      const float d = below > above ? below : above;
      const float gap = d > 0.0f ? d : 0.0f;
      sum += gap * gap;
    }
    within |= unsigned(sum <= threshold) << k;
  }
  return within;
#endif
}

// The largest float at most x (the largest float above the float range,
// -inf below it).
inline float float_down(double x) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (x == std::numeric_limits<double>::infinity()) return std::numeric_limits<float>::infinity();
  if (x > kMax) return std::numeric_limits<float>::max();
  if (x < -kMax) return -std::numeric_limits<float>::infinity();
  float f = static_cast<float>(x);
  if (double(f) > x) f = std::nextafter(f, -INFINITY);
  return f;
}

// The smallest float at least x (+inf above the float range, the lowest
// float below it).
inline float float_up(double x) {
  return -float_down(-x);
}

// x rounded to float; +-inf outside the float range.
inline float nearest_float(double x) {
  const float inf = std::numeric_limits<float>::infinity();
  if (!(std::abs(x) <= double(std::numeric_limits<float>::max()))) return x > 0.0 ? inf : -inf;
  return static_cast<float>(x);
}

// The query point rounded to float, and how far it moved on its worst axis
// (+inf when a coordinate lies outside the float range or is NaN).
struct RoundedPoint {
  glm::vec3 pf{0.0f};
  double e = 0.0;

  explicit RoundedPoint(const glm::dvec3& p) {
    for (int a = 0; a < 3; ++a) {
      pf[a] = nearest_float(p[a]);
      const double moved = std::abs(p[a] - double(pf[a]));
      e = std::isnan(moved) || std::isnan(e) ? std::numeric_limits<double>::quiet_NaN()
                                             : std::max(e, moved);
    }
    if (!std::isfinite(e)) e = std::numeric_limits<double>::infinity();
  }
  // The threshold of a radius (a world or local distance): a slot whose
  // key exceeds it holds no point within `radius` of the unrounded point,
  // since by the bound above a key beyond ((radius + 2e) (1 + 2^-20))^2 +
  // 2^-146 means a distance beyond radius. Negative radius: -inf, every
  // slot pruned.
  float threshold(double radius) const {
    if (!(radius >= 0.0)) return -std::numeric_limits<float>::infinity();
    const double r = (radius + 2.0 * e) * (1.0 + 0x1p-20);
    return float_up(r * r + 0x1p-146);
  }
};

}  // namespace raypick::point_keys
