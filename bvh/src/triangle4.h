// Up to four triangles against one ray in one SSE pass: the mesh trees'
// leaf step. Each lane runs intersect_triangle()'s arithmetic on its
// triangle, the same operations in the same order (no FMA: SSE multiplies
// and adds round apart), so each lane's hit, t, u and v are
// intersect_triangle()'s bit for bit. The one step intersect_triangle()
// takes in double (a scaled barycentric exactly zero) is left to it: such a
// lane is reported in `redo` for the caller to test with
// intersect_triangle().
#pragma once

#include "compiler.h"

#include "raypick/core/ray_triangle.h"

#include <glm/gtc/type_ptr.hpp>

#include <array>
#include <cstdint>

namespace raypick {

// Triangles as a leaf's run stores them: three vertices each, packed.
using TriangleVerts = std::array<glm::vec3, 3>;
static_assert(sizeof(TriangleVerts) == 9 * sizeof(float), "nine packed floats per triangle");

struct Triangle4Hits {
  unsigned hit = 0;   // lanes that hit with t in [tmin, tmax]
  unsigned redo = 0;  // lanes to test again with intersect_triangle()
  alignas(16) float t[4];
  alignas(16) float u[4];
  alignas(16) float v[4];
};

#if RAYPICK_WIDE_SSE
// Triangles tri[0 .. count - 1] (count 1..4) against `ray`, tmin and tmax
// inclusive. Lanes from count on are neither hit nor redo.
RAYPICK_GEOMETRY_INLINE Triangle4Hits intersect_triangles4(const TriangleRay& ray,
                                                           const TriangleVerts* tri,
                                                           unsigned count, float tmin,
                                                           float tmax) {
  // The triangles as structure of arrays: p[k][axis] holds vertex k's
  // coordinate on that axis for the four lanes. Lanes past count repeat
  // the first triangle (never reported).
  const float* f[4];
  for (unsigned j = 0; j < 4; ++j) {
    f[j] = glm::value_ptr(tri[j < count ? j : 0][0]);
  }
  // Floats 0..3 of each triangle are x0 y0 z0 x1, floats 4..7 are y1 z1 x2
  // y2, float 8 is z2: two 4x4 transposes and one gather.
  __m128 r0 = _mm_loadu_ps(f[0]), r1 = _mm_loadu_ps(f[1]), r2 = _mm_loadu_ps(f[2]),
         r3 = _mm_loadu_ps(f[3]);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  __m128 s0 = _mm_loadu_ps(f[0] + 4), s1 = _mm_loadu_ps(f[1] + 4), s2 = _mm_loadu_ps(f[2] + 4),
         s3 = _mm_loadu_ps(f[3] + 4);
  _MM_TRANSPOSE4_PS(s0, s1, s2, s3);
  const __m128 p[3][3] = {{r0, r1, r2}, {r3, s0, s1}, {s2, s3, _mm_setr_ps(f[0][8], f[1][8], f[2][8], f[3][8])}};

  const float* o = glm::value_ptr(ray.org);
  const int kx = ray.kx, ky = ray.ky, kz = ray.kz;
  const __m128 ox = _mm_set1_ps(o[kx]), oy = _mm_set1_ps(o[ky]), oz = _mm_set1_ps(o[kz]);
  const __m128 sx = _mm_set1_ps(ray.sx), sy = _mm_set1_ps(ray.sy), sz = _mm_set1_ps(ray.sz);
  // intersect_triangle()'s steps, lane by lane.
  const __m128 a_kx = _mm_sub_ps(p[0][kx], ox), a_ky = _mm_sub_ps(p[0][ky], oy),
               a_kz = _mm_sub_ps(p[0][kz], oz);
  const __m128 b_kx = _mm_sub_ps(p[1][kx], ox), b_ky = _mm_sub_ps(p[1][ky], oy),
               b_kz = _mm_sub_ps(p[1][kz], oz);
  const __m128 c_kx = _mm_sub_ps(p[2][kx], ox), c_ky = _mm_sub_ps(p[2][ky], oy),
               c_kz = _mm_sub_ps(p[2][kz], oz);
  const __m128 ax = _mm_sub_ps(a_kx, _mm_mul_ps(sx, a_kz));
  const __m128 ay = _mm_sub_ps(a_ky, _mm_mul_ps(sy, a_kz));
  const __m128 bx = _mm_sub_ps(b_kx, _mm_mul_ps(sx, b_kz));
  const __m128 by = _mm_sub_ps(b_ky, _mm_mul_ps(sy, b_kz));
  const __m128 cx = _mm_sub_ps(c_kx, _mm_mul_ps(sx, c_kz));
  const __m128 cy = _mm_sub_ps(c_ky, _mm_mul_ps(sy, c_kz));
  const __m128 u = _mm_sub_ps(_mm_mul_ps(cx, by), _mm_mul_ps(cy, bx));
  const __m128 v = _mm_sub_ps(_mm_mul_ps(ax, cy), _mm_mul_ps(ay, cx));
  const __m128 w = _mm_sub_ps(_mm_mul_ps(bx, ay), _mm_mul_ps(by, ax));
  const __m128 zero = _mm_setzero_ps();
  const unsigned live = (1u << count) - 1u;
  Triangle4Hits out;
  out.redo = static_cast<unsigned>(_mm_movemask_ps(_mm_or_ps(
                 _mm_or_ps(_mm_cmpeq_ps(u, zero), _mm_cmpeq_ps(v, zero)),
                 _mm_cmpeq_ps(w, zero)))) &
             live;
  // Outside: some barycentric below zero and some above (NaN is neither).
  const __m128 below = _mm_or_ps(_mm_or_ps(_mm_cmplt_ps(u, zero), _mm_cmplt_ps(v, zero)),
                                 _mm_cmplt_ps(w, zero));
  const __m128 above = _mm_or_ps(_mm_or_ps(_mm_cmpgt_ps(u, zero), _mm_cmpgt_ps(v, zero)),
                                 _mm_cmpgt_ps(w, zero));
  const __m128 det = _mm_add_ps(_mm_add_ps(u, v), w);
  // A zero or NaN det misses.
  const __m128 bad_det = _mm_or_ps(_mm_cmpeq_ps(det, zero), _mm_cmpunord_ps(det, det));
  const __m128 az = _mm_mul_ps(sz, a_kz);
  const __m128 bz = _mm_mul_ps(sz, b_kz);
  const __m128 cz = _mm_mul_ps(sz, c_kz);
  const __m128 t_scaled =
      _mm_add_ps(_mm_add_ps(_mm_mul_ps(u, az), _mm_mul_ps(v, bz)), _mm_mul_ps(w, cz));
  const __m128 inv_det = _mm_div_ps(_mm_set1_ps(1.0f), det);
  const __m128 t = _mm_mul_ps(t_scaled, inv_det);
  // Ordered compares: a NaN t fails.
  const __m128 in_range =
      _mm_and_ps(_mm_cmpge_ps(t, _mm_set1_ps(tmin)), _mm_cmple_ps(t, _mm_set1_ps(tmax)));
  const __m128 miss = _mm_or_ps(_mm_and_ps(below, above), bad_det);
  out.hit = static_cast<unsigned>(_mm_movemask_ps(_mm_andnot_ps(miss, in_range))) & live &
            ~out.redo;
  _mm_store_ps(out.t, t);
  _mm_store_ps(out.u, _mm_mul_ps(v, inv_det));
  _mm_store_ps(out.v, _mm_mul_ps(w, inv_det));
  return out;
}
#endif

}  // namespace raypick
