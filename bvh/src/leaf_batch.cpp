// leaf_frames_and_boxes(): make_local_frame() and pad_transformed_box() for
// eight objects per AVX-512 operation, an object per lane: the inputs and
// the results transposed between rows (an object's floats) and lanes. Each lane does the one-object code's
// operations in its order (the project builds with -ffp-contract=off, and
// these are separate multiplies and adds), so each lane's bits are that
// code's; the cases where the one-object code takes another branch (a
// singular matrix, an empty or non-finite box) are handed back to it.
// Without AVX-512 every object is handed back: the baseline's and AVX2's
// versions of this measured no faster than one object at a time.
#include "leaf_batch.h"

#include "compiler.h"
#include "padding.h"

#include <cstdint>
#include <limits>

namespace raypick {

namespace {

#if RAYPICK_PACKET_AVX
// GCC 12 reports its own intrinsics' undefined pass-through vectors as
// uninitialized where they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"

// An 8x8 transpose: out[j] lane k = in[k] lane j (its own inverse).
RAYPICK_TARGET_AVX512 inline void transpose8(const __m256* in, __m256* out) {
  __m256 t[8], u[8];
  for (int h = 0; h < 8; h += 4) {
    t[h + 0] = _mm256_unpacklo_ps(in[h + 0], in[h + 1]);
    t[h + 1] = _mm256_unpackhi_ps(in[h + 0], in[h + 1]);
    t[h + 2] = _mm256_unpacklo_ps(in[h + 2], in[h + 3]);
    t[h + 3] = _mm256_unpackhi_ps(in[h + 2], in[h + 3]);
    u[h + 0] = _mm256_shuffle_ps(t[h + 0], t[h + 2], 0x44);
    u[h + 1] = _mm256_shuffle_ps(t[h + 0], t[h + 2], 0xEE);
    u[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0x44);
    u[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    out[j] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x20);
    out[j + 4] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x31);
  }
}

// Four floats of eight rows into four vectors of eight lanes (out[j] lane
// k = in[k] element j), and back.
RAYPICK_TARGET_AVX512 inline void rows4_to_lanes(const __m128* in, __m256* out) {
  __m256 y[4];
  for (int k = 0; k < 4; ++k) y[k] = _mm256_set_m128(in[k + 4], in[k]);
  const __m256 t0 = _mm256_unpacklo_ps(y[0], y[1]), t1 = _mm256_unpackhi_ps(y[0], y[1]);
  const __m256 t2 = _mm256_unpacklo_ps(y[2], y[3]), t3 = _mm256_unpackhi_ps(y[2], y[3]);
  out[0] = _mm256_shuffle_ps(t0, t2, 0x44);
  out[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
  out[2] = _mm256_shuffle_ps(t1, t3, 0x44);
  out[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
}
RAYPICK_TARGET_AVX512 inline void lanes_to_rows4(const __m256* in, __m128* out) {
  const __m256 t0 = _mm256_unpacklo_ps(in[0], in[1]), t1 = _mm256_unpackhi_ps(in[0], in[1]);
  const __m256 t2 = _mm256_unpacklo_ps(in[2], in[3]), t3 = _mm256_unpackhi_ps(in[2], in[3]);
  const __m256 y[4] = {_mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xEE),
                       _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xEE)};
  for (int k = 0; k < 4; ++k) {
    out[k] = _mm256_castps256_ps128(y[k]);
    out[k + 4] = _mm256_extractf128_ps(y[k], 1);
  }
}

RAYPICK_TARGET_AVX512 inline __m256 abs8(__m256 x) {
  return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
}

RAYPICK_TARGET_AVX512 unsigned batch_avx512(std::size_t n, const glm::mat4x3* const* m,
                                            const Aabb* const* local, const glm::vec3& centre,
                                            LocalFrame* const* frames, Aabb* boxes) {
  const __mmask8 live = static_cast<__mmask8>((1u << n) - 1u);
  // The matrices' 12 floats (column major: 3c + r is column c, row r), one
  // object per lane (lanes from n on repeat object 0), and the local
  // boxes' 6.
  __m256 v[12];
  {
    __m256 r8[8];
    __m128 r4[8];
    for (std::size_t k = 0; k < 8; ++k) {
      const float* f = &(*m[k < n ? k : 0])[0].x;
      r8[k] = _mm256_loadu_ps(f);
      r4[k] = _mm_loadu_ps(f + 8);
    }
    transpose8(r8, v);
    rows4_to_lanes(r4, v + 8);
  }
  __m256 lo[3], hi[3];
  bool one_box = true;
  for (std::size_t k = 1; k < n; ++k) one_box = one_box && local[k] == local[0];
  if (one_box) {
    for (int a = 0; a < 3; ++a) {
      lo[a] = _mm256_set1_ps(local[0]->min[a]);
      hi[a] = _mm256_set1_ps(local[0]->max[a]);
    }
  } else {
    __m256 r8[8];
    for (std::size_t k = 0; k < 8; ++k) {
      // min.xyz, max.xyz and two floats beyond, unused: loaded as 6.
      r8[k] = _mm256_maskz_loadu_ps(0x3F, &local[k < n ? k : 0]->min.x);
    }
    __m256 b[8];
    transpose8(r8, b);
    for (int a = 0; a < 3; ++a) {
      lo[a] = b[a];
      hi[a] = b[3 + a];
    }
  }
  const __m256 largest = _mm256_set1_ps(std::numeric_limits<float>::max());

  // make_local_frame(): the adjugate's rows in double (each product of two
  // floats exact, so only the subtraction rounds): rows[i] = cross(c[i+1],
  // c[i+2]) as glm::cross (x = a.y b.z - b.y a.z, ...); the determinant in
  // glm::dot's order; each row times 1 / det rounded once to float.
  __m512d c[3][3];
  for (int e = 0; e < 9; ++e) c[e / 3][e % 3] = _mm512_cvtps_pd(v[e]);
  __m512d rows[3][3];
  for (int i = 0; i < 3; ++i) {
    const __m512d* a = c[(i + 1) % 3];
    const __m512d* b = c[(i + 2) % 3];
    rows[i][0] = _mm512_sub_pd(_mm512_mul_pd(a[1], b[2]), _mm512_mul_pd(b[1], a[2]));
    rows[i][1] = _mm512_sub_pd(_mm512_mul_pd(a[2], b[0]), _mm512_mul_pd(b[2], a[0]));
    rows[i][2] = _mm512_sub_pd(_mm512_mul_pd(a[0], b[1]), _mm512_mul_pd(b[0], a[1]));
  }
  const __m512d det = _mm512_add_pd(
      _mm512_add_pd(_mm512_mul_pd(c[0][0], rows[0][0]), _mm512_mul_pd(c[0][1], rows[0][1])),
      _mm512_mul_pd(c[0][2], rows[0][2]));
  // Finite and non-zero.
  const __m512d abs_det = _mm512_castsi512_pd(
      _mm512_and_si512(_mm512_castpd_si512(det), _mm512_set1_epi64(0x7FFFFFFFFFFFFFFF)));
  __mmask8 ok = _mm512_mask_cmp_pd_mask(
      live, abs_det, _mm512_set1_pd(std::numeric_limits<double>::max()), _CMP_LE_OQ);
  ok = _mm512_mask_cmp_pd_mask(ok, det, _mm512_setzero_pd(), _CMP_NEQ_OQ);
  const __m512d inv = _mm512_div_pd(_mm512_set1_pd(1.0), det);
  __m256 lin[3][3];  // lin[c][r]: row r's c
  for (int r = 0; r < 3; ++r) {
    for (int col = 0; col < 3; ++col) {
      lin[col][r] = _mm512_cvtpd_ps(_mm512_mul_pd(rows[r][col], inv));
      ok = _mm256_mask_cmp_ps_mask(ok, abs8(lin[col][r]), largest, _CMP_LE_OQ);
    }
  }
  const __m256* t = v + 9;
  for (int a = 0; a < 3; ++a) ok = _mm256_mask_cmp_ps_mask(ok, abs8(t[a]), largest, _CMP_LE_OQ);

  // pad_transformed_box(): the box's centre and half extent, the columns
  // summed from +0 in order, the translation added last; then pad()'s
  // margin. Its maxima are taken in any order: every term is +0 or more,
  // or NaN, which hands the lane back.
  const __m256 half = _mm256_set1_ps(0.5f);
  __m256 cc[3], ee[3];
  for (int a = 0; a < 3; ++a) {
    ok = _mm256_mask_cmp_ps_mask(ok, lo[a], hi[a], _CMP_LE_OQ);  // not empty, no NaN
    cc[a] = _mm256_mul_ps(_mm256_add_ps(lo[a], hi[a]), half);
    ee[a] = _mm256_mul_ps(_mm256_sub_ps(hi[a], lo[a]), half);
  }
  __m256 bmin[3], bmax[3];
  __m256 r = _mm256_setzero_ps(), amax = _mm256_setzero_ps();
  for (int a = 0; a < 3; ++a) {
    __m256 offset = _mm256_setzero_ps(), extent = _mm256_setzero_ps();
    for (int col = 0; col < 3; ++col) {
      offset = _mm256_add_ps(offset, _mm256_mul_ps(v[3 * col + a], cc[col]));
      extent = _mm256_add_ps(extent, _mm256_mul_ps(abs8(v[3 * col + a]), ee[col]));
    }
    const __m256 mid = _mm256_add_ps(t[a], offset);
    bmin[a] = _mm256_sub_ps(mid, extent);
    bmax[a] = _mm256_add_ps(mid, extent);
    ok = _mm256_mask_cmp_ps_mask(ok, bmin[a], bmax[a], _CMP_LE_OQ);
    const __m256 cen = _mm256_set1_ps(centre[a]);
    const __m256 ext = _mm256_sub_ps(bmax[a], bmin[a]);
    const __m256 dmin = abs8(_mm256_sub_ps(bmin[a], cen));
    const __m256 dmax = abs8(_mm256_sub_ps(bmax[a], cen));
    const __m256 am = _mm256_max_ps(abs8(bmin[a]), abs8(bmax[a]));
    ok = _mm256_mask_cmp_ps_mask(ok, ext, dmin, _CMP_ORD_Q);
    ok = _mm256_mask_cmp_ps_mask(ok, dmax, am, _CMP_ORD_Q);
    r = _mm256_max_ps(r, _mm256_max_ps(ext, _mm256_max_ps(dmin, dmax)));
    amax = _mm256_max_ps(amax, am);
  }
  const __m256 margin = _mm256_max_ps(_mm256_mul_ps(r, _mm256_set1_ps(kRel)),
                                      _mm256_mul_ps(amax, _mm256_set1_ps(kCoord)));

  // The lanes kept, stored: each frame's 12 floats (linear, then the
  // origin: the translation itself) and each box's 6, transposed back into
  // rows.
  __m256 out[12];
  for (int col = 0; col < 3; ++col) {
    for (int row = 0; row < 3; ++row) out[3 * col + row] = lin[col][row];
  }
  for (int a = 0; a < 3; ++a) out[9 + a] = t[a];
  __m256 f8[8];
  __m128 f4[8];
  transpose8(out, f8);
  lanes_to_rows4(out + 8, f4);
  __m256 box[8];
  for (int a = 0; a < 3; ++a) {
    box[a] = _mm256_sub_ps(bmin[a], margin);
    box[3 + a] = _mm256_add_ps(bmax[a], margin);
  }
  box[6] = box[7] = _mm256_setzero_ps();
  __m256 b8[8];
  transpose8(box, b8);
  for (unsigned k = 0; k < 8; ++k) {
    if (((ok >> k) & 1u) == 0) continue;
    float* f = &frames[k]->linear[0].x;
    _mm256_storeu_ps(f, f8[k]);
    _mm_storeu_ps(f + 8, f4[k]);
    _mm256_mask_storeu_ps(&boxes[k].min.x, 0x3F, b8[k]);
  }
  return live & ~static_cast<unsigned>(ok);
}
#pragma GCC diagnostic pop
#endif

}  // namespace

unsigned leaf_frames_and_boxes(int lanes, std::size_t n, const glm::mat4x3* const* m,
                               const Aabb* const* local, const glm::vec3& centre,
                               LocalFrame* const* frames, Aabb* boxes) {
  if (n == 0) return 0;
#if RAYPICK_PACKET_AVX
  if (lanes >= 16 && compiler::cpu_has_avx512()) {
    return batch_avx512(n, m, local, centre, frames, boxes);
  }
#else
  (void)m;
  (void)local;
  (void)centre;
  (void)frames;
  (void)boxes;
#endif
  (void)lanes;
  return (1u << n) - 1u;
}

}  // namespace raypick
