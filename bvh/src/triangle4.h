// The watertight ray/triangle test (core/ray_triangle.h) on four triangles
// at once, over a block that stores them structure-of-arrays: mesh mode's
// leaf test. Each lane runs the scalar intersect_triangle's operations in
// the same order (no FMA: the project builds with -ffp-contract=off), so
// hit, t, u and v are bit-identical to it; lanes whose edge functions come
// out exactly 0 take the scalar test's double-precision fallback, lane by
// lane. Private to the library.
#pragma once

#include "raypick/core/ray_triangle.h"

#include <glm/gtc/type_ptr.hpp>
#include <glm/vec3.hpp>

#include <array>
#include <cmath>
#include <cstdint>

#if defined(__SSE2__) || defined(_M_X64)
#include <xmmintrin.h>
#define RAYPICK_TRI4_SSE 1
#endif

namespace raypick {

// Four triangles: p[vertex][axis][lane]. Unused lanes are zero (and
// masked out by the caller).
struct alignas(16) TriangleBlock4 {
  float p[3][3][4];
};
static_assert(sizeof(TriangleBlock4) == 144);

// What intersect_triangle4 returns for each lane with bit k of its mask set.
struct TriangleHits4 {
  alignas(16) float t[4];
  alignas(16) float u[4];
  alignas(16) float v[4];
};

// Stores triangle `tri` (its three vertices) in lane `lane` of `block`.
inline void set_lane(TriangleBlock4& block, int lane, const std::array<glm::vec3, 3>& tri) {
  for (int k = 0; k < 3; ++k) {
    for (int a = 0; a < 3; ++a) block.p[k][a][lane] = glm::value_ptr(tri[k])[a];
  }
}

// Tests the lanes set in `lanes` (bits 0..3) for a hit with t in
// [tmin, tmax]; returns a bit per lane hit, with t, u, v in `out`.
RAYPICK_GEOMETRY_INLINE unsigned intersect_triangle4(const TriangleRay& ray,
                                                     const TriangleBlock4& b, unsigned lanes,
                                                     float tmin, float tmax,
                                                     TriangleHits4& out) {
#if RAYPICK_TRI4_SSE
  const float* o = glm::value_ptr(ray.org);
  const int kx = ray.kx, ky = ray.ky, kz = ray.kz;
  const __m128 ox = _mm_set1_ps(o[kx]), oy = _mm_set1_ps(o[ky]), oz = _mm_set1_ps(o[kz]);
  const __m128 sx = _mm_set1_ps(ray.sx), sy = _mm_set1_ps(ray.sy);
  // Per vertex: q[kx] - o[kx], ..., then the shear, as the scalar test.
  const __m128 a_kz = _mm_sub_ps(_mm_load_ps(b.p[0][kz]), oz);
  const __m128 b_kz = _mm_sub_ps(_mm_load_ps(b.p[1][kz]), oz);
  const __m128 c_kz = _mm_sub_ps(_mm_load_ps(b.p[2][kz]), oz);
  const __m128 ax = _mm_sub_ps(_mm_sub_ps(_mm_load_ps(b.p[0][kx]), ox), _mm_mul_ps(sx, a_kz));
  const __m128 ay = _mm_sub_ps(_mm_sub_ps(_mm_load_ps(b.p[0][ky]), oy), _mm_mul_ps(sy, a_kz));
  const __m128 bx = _mm_sub_ps(_mm_sub_ps(_mm_load_ps(b.p[1][kx]), ox), _mm_mul_ps(sx, b_kz));
  const __m128 by = _mm_sub_ps(_mm_sub_ps(_mm_load_ps(b.p[1][ky]), oy), _mm_mul_ps(sy, b_kz));
  const __m128 cx = _mm_sub_ps(_mm_sub_ps(_mm_load_ps(b.p[2][kx]), ox), _mm_mul_ps(sx, c_kz));
  const __m128 cy = _mm_sub_ps(_mm_sub_ps(_mm_load_ps(b.p[2][ky]), oy), _mm_mul_ps(sy, c_kz));
  __m128 u = _mm_sub_ps(_mm_mul_ps(cx, by), _mm_mul_ps(cy, bx));
  __m128 v = _mm_sub_ps(_mm_mul_ps(ax, cy), _mm_mul_ps(ay, cx));
  __m128 w = _mm_sub_ps(_mm_mul_ps(bx, ay), _mm_mul_ps(by, ax));
  const __m128 zero = _mm_setzero_ps();
  const unsigned exact_zero =
      static_cast<unsigned>(_mm_movemask_ps(_mm_or_ps(
          _mm_or_ps(_mm_cmpeq_ps(u, zero), _mm_cmpeq_ps(v, zero)), _mm_cmpeq_ps(w, zero)))) &
      lanes;
  if (exact_zero != 0) {
    // The scalar test's fallback, on the lanes that need it: the double
    // products of the float inputs are exact.
    alignas(16) float fax[4], fay[4], fbx[4], fby[4], fcx[4], fcy[4], fu[4], fv[4], fw[4];
    _mm_store_ps(fax, ax);
    _mm_store_ps(fay, ay);
    _mm_store_ps(fbx, bx);
    _mm_store_ps(fby, by);
    _mm_store_ps(fcx, cx);
    _mm_store_ps(fcy, cy);
    _mm_store_ps(fu, u);
    _mm_store_ps(fv, v);
    _mm_store_ps(fw, w);
    for (int k = 0; k < 4; ++k) {
      if ((exact_zero >> k & 1u) == 0) continue;
      fu[k] = static_cast<float>(double(fcx[k]) * double(fby[k]) - double(fcy[k]) * double(fbx[k]));
      fv[k] = static_cast<float>(double(fax[k]) * double(fcy[k]) - double(fay[k]) * double(fcx[k]));
      fw[k] = static_cast<float>(double(fbx[k]) * double(fay[k]) - double(fby[k]) * double(fax[k]));
    }
    u = _mm_load_ps(fu);
    v = _mm_load_ps(fv);
    w = _mm_load_ps(fw);
  }
  // Inside: no edge function of one sign while another has the other sign.
  const __m128 any_neg =
      _mm_or_ps(_mm_or_ps(_mm_cmplt_ps(u, zero), _mm_cmplt_ps(v, zero)), _mm_cmplt_ps(w, zero));
  const __m128 any_pos =
      _mm_or_ps(_mm_or_ps(_mm_cmpgt_ps(u, zero), _mm_cmpgt_ps(v, zero)), _mm_cmpgt_ps(w, zero));
  const __m128 det = _mm_add_ps(_mm_add_ps(u, v), w);
  // det != 0 and not NaN (cmpneq is true for NaN; cmpord is false).
  const __m128 det_ok = _mm_and_ps(_mm_cmpneq_ps(det, zero), _mm_cmpord_ps(det, det));
  unsigned mask = static_cast<unsigned>(
                      _mm_movemask_ps(_mm_andnot_ps(_mm_and_ps(any_neg, any_pos), det_ok))) &
                  lanes;
  if (mask == 0) return 0;
  const __m128 sz = _mm_set1_ps(ray.sz);
  const __m128 t_scaled =
      _mm_add_ps(_mm_add_ps(_mm_mul_ps(u, _mm_mul_ps(sz, a_kz)), _mm_mul_ps(v, _mm_mul_ps(sz, b_kz))),
                 _mm_mul_ps(w, _mm_mul_ps(sz, c_kz)));
  const __m128 inv_det = _mm_div_ps(_mm_set1_ps(1.0f), det);
  const __m128 t = _mm_mul_ps(t_scaled, inv_det);
  // Written so a NaN t fails, as the scalar test.
  mask &= static_cast<unsigned>(_mm_movemask_ps(
      _mm_and_ps(_mm_cmpge_ps(t, _mm_set1_ps(tmin)), _mm_cmple_ps(t, _mm_set1_ps(tmax)))));
  _mm_store_ps(out.t, t);
  _mm_store_ps(out.u, _mm_mul_ps(v, inv_det));
  _mm_store_ps(out.v, _mm_mul_ps(w, inv_det));
  return mask;
#else
  unsigned mask = 0;
  for (int k = 0; k < 4; ++k) {
    if ((lanes >> k & 1u) == 0) continue;
    glm::vec3 q[3];
    for (int i = 0; i < 3; ++i) q[i] = {b.p[i][0][k], b.p[i][1][k], b.p[i][2][k]};
    const TriangleHit h = intersect_triangle(ray, q[0], q[1], q[2], tmin, tmax);
    if (!h.hit) continue;
    mask |= 1u << k;
    out.t[k] = h.t;
    out.u[k] = h.u;
    out.v[k] = h.v;
  }
  return mask;
#endif
}

}  // namespace raypick
