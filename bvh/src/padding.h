// The padding of the top level's world boxes: a few float ulps so that no
// rounding of the leaf tests loses a hit, measured from the scene's centre.
// Inline: a commit pads every moved object. Private to the library;
// padded_world_box() and padding_centre() (picker.h) are their public face.
#pragma once

#include "compiler.h"

#include "raypick/core/aabb.h"

#include <glm/mat4x3.hpp>
#include <glm/vec3.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace raypick {


// Pads a box by a few float ulps. World boxes come from a rounded matrix
// product while the leaf tests carry the ray into local space with other
// roundings, and the triangle test computes t its own way; without a margin
// a grazing ray could be culled by a node test and lose a hit the exact leaf
// test would find. Those roundings are relative to the box's size and to
// the ray's distance, for which the box's distance from `centre` (the middle
// of the scene, where rays come from) stands in: 2^-18 of the larger. The
// float box itself is rounded to its coordinates (transform_aabb adds the
// translation once, then the extent): at least 2^-22 of the largest, 2 ulps
// or more. Measured from a centre rather than from the
// world origin, a scene far from the origin is not padded by ulps of its
// coordinates (1.1 units at 3e5, where 0.07 suffice), which would slow
// picking there. The margin is the same on every axis: a box flat on an
// axis (a quad at z = 0) must be padded there too, since the triangle test
// may place the hit an ulp beyond the plane the slab test computes.
constexpr float kRel = 1.0f / (1 << 18);     // about 32 ulps
constexpr float kCoord = 1.0f / (1 << 22);   // 2 to 4 ulps

inline Aabb pad(const Aabb& box, const glm::vec3& centre = glm::vec3{0.0f}) {
  if (box.empty()) return box;
  const glm::vec3 ext = box.max - box.min;
  float m = std::max({ext.x, ext.y, ext.z});
  float c = 0.0f;
  for (int a = 0; a < 3; ++a) {
    m = std::max({m, std::fabs(box.min[a] - centre[a]), std::fabs(box.max[a] - centre[a])});
    c = std::max({c, std::fabs(box.min[a]), std::fabs(box.max[a])});
  }
  const glm::vec3 margin{std::max(m * kRel, c * kCoord)};
  return Aabb{box.min - margin, box.max + margin};
}

// The mean of translations, summed in double in the order given.
struct CentreSum {
  glm::dvec3 sum{0.0};
  std::size_t count = 0;
  void add(const glm::vec3& t) {
    sum += glm::dvec3{t};
    ++count;
  }
  glm::vec3 centre() const {
    return count == 0 ? glm::vec3{0.0f} : glm::vec3{sum / double(count)};
  }
};


#if RAYPICK_WIDE_SSE
// pad(transform_aabb(m, local), centre), bit for bit, with x, y and z in
// three lanes of SSE registers (the fourth is unused): each lane does the
// scalar code's operations in its order (0 + m0 c0 + m1 c1 + m2 c2, the
// translation added last), and the margin's maxima are folded in the
// scalar order, so even NaN and infinite boxes come out the same. About a
// third of the scalar code's instructions; it runs for every moved object.
inline Aabb pad_transformed_box(const glm::mat4x3& m, const Aabb& local, const glm::vec3& centre) {
  if (local.empty()) return Aabb{};
  // Columns 0-2 as 4 floats each (the 4th lane is the next column's x);
  // the translation from floats 8-11, shifted down one lane.
  const float* f = &m[0].x;
  const __m128 c0 = _mm_loadu_ps(f), c1 = _mm_loadu_ps(f + 3), c2 = _mm_loadu_ps(f + 6);
  const __m128 t8 = _mm_loadu_ps(f + 8);
  const __m128 t = _mm_shuffle_ps(t8, t8, _MM_SHUFFLE(3, 3, 2, 1));
  const __m128 lo = _mm_loadu_ps(&local.min.x);  // min.xyz, max.x
  const __m128 hi8 = _mm_loadu_ps(&local.min.z);  // min.z, max.xyz
  const __m128 hi = _mm_shuffle_ps(hi8, hi8, _MM_SHUFFLE(3, 3, 2, 1));
  const __m128 half = _mm_set1_ps(0.5f);
  const __m128 c = _mm_mul_ps(_mm_add_ps(lo, hi), half);  // local.center()
  const __m128 e = _mm_mul_ps(_mm_sub_ps(hi, lo), half);  // local.half_extent()
  const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF));
  __m128 offset = _mm_setzero_ps();
  __m128 extent = _mm_setzero_ps();
  auto column = [&](__m128 col, __m128 cc, __m128 ee) {
    offset = _mm_add_ps(offset, _mm_mul_ps(col, cc));
    extent = _mm_add_ps(extent, _mm_mul_ps(_mm_and_ps(col, abs_mask), ee));
  };
  column(c0, _mm_shuffle_ps(c, c, 0x00), _mm_shuffle_ps(e, e, 0x00));
  column(c1, _mm_shuffle_ps(c, c, 0x55), _mm_shuffle_ps(e, e, 0x55));
  column(c2, _mm_shuffle_ps(c, c, 0xAA), _mm_shuffle_ps(e, e, 0xAA));
  const __m128 mid = _mm_add_ps(t, offset);
  const __m128 bmin = _mm_sub_ps(mid, extent);
  const __m128 bmax = _mm_add_ps(mid, extent);
  // pad(box, centre): if box.empty() (NaN included), the box unpadded.
  if ((_mm_movemask_ps(_mm_cmple_ps(bmin, bmax)) & 7) != 7) {
    alignas(16) float mn[4], mx[4];
    _mm_store_ps(mn, bmin);
    _mm_store_ps(mx, bmax);
    return Aabb{{mn[0], mn[1], mn[2]}, {mx[0], mx[1], mx[2]}};
  }
  const __m128 cen = _mm_setr_ps(centre.x, centre.y, centre.z, 0.0f);
  const __m128 ext = _mm_sub_ps(bmax, bmin);
  const __m128 dmin = _mm_and_ps(_mm_sub_ps(bmin, cen), abs_mask);
  const __m128 dmax = _mm_and_ps(_mm_sub_ps(bmax, cen), abs_mask);
  const __m128 amax = _mm_max_ps(_mm_and_ps(bmin, abs_mask), _mm_and_ps(bmax, abs_mask));
  // The margin's two maxima. Their terms are +0 or positive (never -0:
  // ext is +0 when min == max) or NaN (inf - inf): without a NaN, any order
  // of taking the maximum gives the same bits, so lanes are folded at once;
  // with one, pad()'s order of std::max decides which NaN comes out, and
  // pad() itself runs.
  // (_mm_max_ps hides a NaN in its first operand: the terms are checked.)
  const __m128 nan = _mm_or_ps(_mm_cmpunord_ps(ext, dmin), _mm_cmpunord_ps(dmax, amax));
  if ((_mm_movemask_ps(nan) & 7) != 0) {
    alignas(16) float mn[4], mx[4];
    _mm_store_ps(mn, bmin);
    _mm_store_ps(mx, bmax);
    return pad(Aabb{{mn[0], mn[1], mn[2]}, {mx[0], mx[1], mx[2]}}, centre);
  }
  const __m128 terms = _mm_max_ps(ext, _mm_max_ps(dmin, dmax));
  auto fold3 = [](__m128 v) {  // max of lanes 0-2, in lane 0
    return _mm_max_ss(_mm_max_ss(v, _mm_shuffle_ps(v, v, 1)), _mm_shuffle_ps(v, v, 2));
  };
  const float r = _mm_cvtss_f32(fold3(terms));
  const float a = std::max(0.0f, _mm_cvtss_f32(fold3(amax)));
  const __m128 margin = _mm_set1_ps(std::max(r * kRel, a * kCoord));
  alignas(16) float mn[4], mx[4];
  _mm_store_ps(mn, _mm_sub_ps(bmin, margin));
  _mm_store_ps(mx, _mm_add_ps(bmax, margin));
  return Aabb{{mn[0], mn[1], mn[2]}, {mx[0], mx[1], mx[2]}};
}
#else
inline Aabb pad_transformed_box(const glm::mat4x3& m, const Aabb& local, const glm::vec3& centre) {
  return pad(transform_aabb(m, local), centre);
}
#endif

}  // namespace raypick
