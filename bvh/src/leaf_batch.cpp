// leaf_frames_and_boxes(): make_local_frame() and pad_transformed_box() for
// eight objects at once, an object per lane: the inputs and the results
// transposed between rows (an object's floats) and lanes. The floats take
// one AVX2 operation for the eight; the adjugate's doubles one AVX-512
// operation, or two AVX2 ones. Each lane does the one-object code's
// operations in its order (the project builds with -ffp-contract=off, and
// these are separate multiplies and adds), so each lane's bits are that
// code's; the cases where the one-object code takes another branch (a
// singular matrix, an empty or non-finite box) are handed back to it.
// Without AVX2 every object is handed back.
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
RAYPICK_TARGET_AVX2 inline void transpose8(const __m256* in, __m256* out) {
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
RAYPICK_TARGET_AVX2 inline void rows4_to_lanes(const __m128* in, __m256* out) {
  __m256 y[4];
  for (int k = 0; k < 4; ++k) y[k] = _mm256_set_m128(in[k + 4], in[k]);
  const __m256 t0 = _mm256_unpacklo_ps(y[0], y[1]), t1 = _mm256_unpackhi_ps(y[0], y[1]);
  const __m256 t2 = _mm256_unpacklo_ps(y[2], y[3]), t3 = _mm256_unpackhi_ps(y[2], y[3]);
  out[0] = _mm256_shuffle_ps(t0, t2, 0x44);
  out[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
  out[2] = _mm256_shuffle_ps(t1, t3, 0x44);
  out[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
}
RAYPICK_TARGET_AVX2 inline void lanes_to_rows4(const __m256* in, __m128* out) {
  const __m256 t0 = _mm256_unpacklo_ps(in[0], in[1]), t1 = _mm256_unpackhi_ps(in[0], in[1]);
  const __m256 t2 = _mm256_unpacklo_ps(in[2], in[3]), t3 = _mm256_unpackhi_ps(in[2], in[3]);
  const __m256 y[4] = {_mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xEE),
                       _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xEE)};
  for (int k = 0; k < 4; ++k) {
    out[k] = _mm256_castps256_ps128(y[k]);
    out[k + 4] = _mm256_extractf128_ps(y[k], 1);
  }
}

// The eight objects' double arithmetic (the adjugate and its determinant)
// and lane flags, per ISA; each policy's functions run only inlined into a
// function of its own target (batch_avx2, batch_avx512). A flag set is an
// 8-bit mask, bit k for object k.
struct DoublesAvx512 {
  using D = __m512d;  // eight doubles
  RAYPICK_TARGET_AVX512 static inline D widen(__m256 x) { return _mm512_cvtps_pd(x); }
  RAYPICK_TARGET_AVX512 static inline __m256 narrow(D x) { return _mm512_cvtpd_ps(x); }
  RAYPICK_TARGET_AVX512 static inline D set1(double x) { return _mm512_set1_pd(x); }
  RAYPICK_TARGET_AVX512 static inline D add(D a, D b) { return _mm512_add_pd(a, b); }
  RAYPICK_TARGET_AVX512 static inline D sub(D a, D b) { return _mm512_sub_pd(a, b); }
  RAYPICK_TARGET_AVX512 static inline D mul(D a, D b) { return _mm512_mul_pd(a, b); }
  RAYPICK_TARGET_AVX512 static inline D div(D a, D b) { return _mm512_div_pd(a, b); }
  RAYPICK_TARGET_AVX512 static inline D abs(D x) {
    return _mm512_castsi512_pd(
        _mm512_and_si512(_mm512_castpd_si512(x), _mm512_set1_epi64(0x7FFFFFFFFFFFFFFF)));
  }
  // ok & (a <= b), a != b, per lane; then the same on floats, and ordered.
  RAYPICK_TARGET_AVX512 static inline unsigned le(unsigned ok, D a, D b) {
    return _mm512_mask_cmp_pd_mask(static_cast<__mmask8>(ok), a, b, _CMP_LE_OQ);
  }
  RAYPICK_TARGET_AVX512 static inline unsigned ne(unsigned ok, D a, D b) {
    return _mm512_mask_cmp_pd_mask(static_cast<__mmask8>(ok), a, b, _CMP_NEQ_OQ);
  }
  RAYPICK_TARGET_AVX512 static inline unsigned le(unsigned ok, __m256 a, __m256 b) {
    return _mm256_mask_cmp_ps_mask(static_cast<__mmask8>(ok), a, b, _CMP_LE_OQ);
  }
  // Not equal, or unordered (a NaN counts as unequal, as in C++).
  RAYPICK_TARGET_AVX512 static inline unsigned ne(unsigned ok, __m256 a, __m256 b) {
    return _mm256_mask_cmp_ps_mask(static_cast<__mmask8>(ok), a, b, _CMP_NEQ_UQ);
  }
  RAYPICK_TARGET_AVX512 static inline unsigned ordered(unsigned ok, __m256 a, __m256 b) {
    return _mm256_mask_cmp_ps_mask(static_cast<__mmask8>(ok), a, b, _CMP_ORD_Q);
  }
  // A box's six floats (min, then max), and back; the two floats beyond
  // are neither read nor written.
  RAYPICK_TARGET_AVX512 static inline __m256 load6(const float* p) {
    return _mm256_maskz_loadu_ps(0x3F, p);
  }
  RAYPICK_TARGET_AVX512 static inline void store6(float* p, __m256 x) {
    _mm256_mask_storeu_ps(p, 0x3F, x);
  }
};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
// AVX2 has no double vector of eight: two of four, objects 0-3 and 4-7.
struct DoublesAvx2 {
  struct D {
    __m256d lo, hi;
  };
  RAYPICK_TARGET_AVX2 static inline D widen(__m256 x) {
    return {_mm256_cvtps_pd(_mm256_castps256_ps128(x)),
            _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1))};
  }
  RAYPICK_TARGET_AVX2 static inline __m256 narrow(D x) {
    return _mm256_set_m128(_mm256_cvtpd_ps(x.hi), _mm256_cvtpd_ps(x.lo));
  }
  RAYPICK_TARGET_AVX2 static inline D set1(double x) {
    return {_mm256_set1_pd(x), _mm256_set1_pd(x)};
  }
  RAYPICK_TARGET_AVX2 static inline D add(D a, D b) {
    return {_mm256_add_pd(a.lo, b.lo), _mm256_add_pd(a.hi, b.hi)};
  }
  RAYPICK_TARGET_AVX2 static inline D sub(D a, D b) {
    return {_mm256_sub_pd(a.lo, b.lo), _mm256_sub_pd(a.hi, b.hi)};
  }
  RAYPICK_TARGET_AVX2 static inline D mul(D a, D b) {
    return {_mm256_mul_pd(a.lo, b.lo), _mm256_mul_pd(a.hi, b.hi)};
  }
  RAYPICK_TARGET_AVX2 static inline D div(D a, D b) {
    return {_mm256_div_pd(a.lo, b.lo), _mm256_div_pd(a.hi, b.hi)};
  }
  RAYPICK_TARGET_AVX2 static inline D abs(D x) {
    const __m256d m = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFF));
    return {_mm256_and_pd(x.lo, m), _mm256_and_pd(x.hi, m)};
  }
  template <int kCmp>
  RAYPICK_TARGET_AVX2 static inline unsigned cmp(unsigned ok, D a, D b) {
    const unsigned lo = static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(a.lo, b.lo, kCmp)));
    const unsigned hi = static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(a.hi, b.hi, kCmp)));
    return ok & (lo | hi << 4);
  }
  RAYPICK_TARGET_AVX2 static inline unsigned le(unsigned ok, D a, D b) {
    return cmp<_CMP_LE_OQ>(ok, a, b);
  }
  RAYPICK_TARGET_AVX2 static inline unsigned ne(unsigned ok, D a, D b) {
    return cmp<_CMP_NEQ_OQ>(ok, a, b);
  }
  RAYPICK_TARGET_AVX2 static inline unsigned le(unsigned ok, __m256 a, __m256 b) {
    return ok & static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_LE_OQ)));
  }
  RAYPICK_TARGET_AVX2 static inline unsigned ne(unsigned ok, __m256 a, __m256 b) {
    return ok & static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_NEQ_UQ)));
  }
  RAYPICK_TARGET_AVX2 static inline unsigned ordered(unsigned ok, __m256 a, __m256 b) {
    return ok & static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_ORD_Q)));
  }
  RAYPICK_TARGET_AVX2 static inline __m256i six() {
    return _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
  }
  RAYPICK_TARGET_AVX2 static inline __m256 load6(const float* p) {
    return _mm256_maskload_ps(p, six());
  }
  RAYPICK_TARGET_AVX2 static inline void store6(float* p, __m256 x) {
    _mm256_maskstore_ps(p, six(), x);
  }
};

RAYPICK_TARGET_AVX2 inline __m256 abs8(__m256 x) {
  return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
}

// std::nextafter(x, -inf) and (x, +inf) for finite, non-zero x: the
// float's bits one step from zero or towards it (delta +1 for x > 0, -1
// for x < 0).
RAYPICK_TARGET_AVX2 inline __m256 next_down(__m256 x) {
  const __m256i bits = _mm256_castps_si256(x);
  const __m256i delta = _mm256_or_si256(_mm256_slli_epi32(_mm256_srai_epi32(bits, 31), 1),
                                        _mm256_set1_epi32(1));
  return _mm256_castsi256_ps(_mm256_sub_epi32(bits, delta));
}
RAYPICK_TARGET_AVX2 inline __m256 next_up(__m256 x) {
  const __m256i bits = _mm256_castps_si256(x);
  const __m256i delta = _mm256_or_si256(_mm256_slli_epi32(_mm256_srai_epi32(bits, 31), 1),
                                        _mm256_set1_epi32(1));
  return _mm256_castsi256_ps(_mm256_add_epi32(bits, delta));
}

// The eight objects' batch, Dbl's double arithmetic: only inlined into a
// function of Dbl's target (AVX2 or wider: the float part is AVX2's).
template <class Dbl>
RAYPICK_TARGET_AVX2 RAYPICK_GEOMETRY_INLINE unsigned batch(
    std::size_t n, const glm::mat4x3* const* m, const Aabb* const* local, const glm::vec3* low,
    const glm::vec3& centre, LocalFrame* const* frames, Aabb* boxes) {
  using D = typename Dbl::D;
  const unsigned live = (1u << n) - 1u;
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
    for (std::size_t k = 0; k < 8; ++k) r8[k] = Dbl::load6(&local[k < n ? k : 0]->min.x);
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
  D c[3][3];
  for (int e = 0; e < 9; ++e) c[e / 3][e % 3] = Dbl::widen(v[e]);
  D rows[3][3];
  for (int i = 0; i < 3; ++i) {
    const D* a = c[(i + 1) % 3];
    const D* b = c[(i + 2) % 3];
    rows[i][0] = Dbl::sub(Dbl::mul(a[1], b[2]), Dbl::mul(b[1], a[2]));
    rows[i][1] = Dbl::sub(Dbl::mul(a[2], b[0]), Dbl::mul(b[2], a[0]));
    rows[i][2] = Dbl::sub(Dbl::mul(a[0], b[1]), Dbl::mul(b[0], a[1]));
  }
  const D det = Dbl::add(Dbl::add(Dbl::mul(c[0][0], rows[0][0]), Dbl::mul(c[0][1], rows[0][1])),
                         Dbl::mul(c[0][2], rows[0][2]));
  // Finite and non-zero.
  unsigned ok = Dbl::le(live, Dbl::abs(det), Dbl::set1(std::numeric_limits<double>::max()));
  ok = Dbl::ne(ok, det, Dbl::set1(0.0));
  const D inv = Dbl::div(Dbl::set1(1.0), det);
  __m256 lin[3][3];  // lin[c][r]: row r's c
  for (int r = 0; r < 3; ++r) {
    for (int col = 0; col < 3; ++col) {
      lin[col][r] = Dbl::narrow(Dbl::mul(rows[r][col], inv));
      ok = Dbl::le(ok, abs8(lin[col][r]), largest);
    }
  }
  const __m256* t = v + 9;
  for (int a = 0; a < 3; ++a) ok = Dbl::le(ok, abs8(t[a]), largest);

  // pad_transformed_box(): the box's centre and half extent, the columns
  // summed from +0 in order, the translation added last; then pad()'s
  // margin. Its maxima are taken in any order: every term is +0 or more,
  // or NaN, which hands the lane back.
  const __m256 half = _mm256_set1_ps(0.5f);
  __m256 cc[3], ee[3];
  for (int a = 0; a < 3; ++a) {
    ok = Dbl::le(ok, lo[a], hi[a]);  // not empty, no NaN
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
    ok = Dbl::le(ok, bmin[a], bmax[a]);
  }
  if (low != nullptr) {
    // An object with a low part (placed beyond float): shift_outward(box,
    // low), the box moved by it and each bound stepped one float outward,
    // before the padding. A bound the move leaves at zero, beyond the
    // floats or NaN is handed back (std::nextafter's cases apart); so is a
    // NaN low part (moved: unequal to zero, as padded_box() sees it).
    __m256 l[3];
    for (int a = 0; a < 3; ++a) {
      alignas(32) float f[8];
      for (std::size_t k = 0; k < 8; ++k) f[k] = low[k < n ? k : 0][a];
      l[a] = _mm256_load_ps(f);
    }
    const __m256 zero = _mm256_setzero_ps();
    unsigned moved = 0;
    for (int a = 0; a < 3; ++a) moved |= Dbl::ne(live, l[a], zero);
    unsigned fine = moved;
    __m256 shifted[6];
    for (int a = 0; a < 3; ++a) {
      shifted[a] = _mm256_add_ps(bmin[a], l[a]);
      shifted[3 + a] = _mm256_add_ps(bmax[a], l[a]);
    }
    for (const __m256 x : shifted) fine = Dbl::ne(Dbl::le(fine, abs8(x), largest), x, zero);
    ok &= ~moved | fine;
    alignas(32) std::int32_t pick[8];
    for (int k = 0; k < 8; ++k) pick[k] = (moved >> k) & 1u ? -1 : 0;
    const __m256 use =
        _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(pick)));
    for (int a = 0; a < 3; ++a) {
      bmin[a] = _mm256_blendv_ps(bmin[a], next_down(shifted[a]), use);
      bmax[a] = _mm256_blendv_ps(bmax[a], next_up(shifted[3 + a]), use);
    }
  }
  for (int a = 0; a < 3; ++a) {
    const __m256 cen = _mm256_set1_ps(centre[a]);
    const __m256 ext = _mm256_sub_ps(bmax[a], bmin[a]);
    const __m256 dmin = abs8(_mm256_sub_ps(bmin[a], cen));
    const __m256 dmax = abs8(_mm256_sub_ps(bmax[a], cen));
    const __m256 am = _mm256_max_ps(abs8(bmin[a]), abs8(bmax[a]));
    ok = Dbl::ordered(ok, ext, dmin);
    ok = Dbl::ordered(ok, dmax, am);
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
    Dbl::store6(&boxes[k].min.x, b8[k]);
  }
  return live & ~ok;
}
#pragma GCC diagnostic pop

RAYPICK_TARGET_AVX2 unsigned batch_avx2(std::size_t n, const glm::mat4x3* const* m,
                                        const Aabb* const* local, const glm::vec3* low,
                                        const glm::vec3& centre, LocalFrame* const* frames,
                                        Aabb* boxes) {
  return batch<DoublesAvx2>(n, m, local, low, centre, frames, boxes);
}

RAYPICK_TARGET_AVX512 unsigned batch_avx512(std::size_t n, const glm::mat4x3* const* m,
                                            const Aabb* const* local, const glm::vec3* low,
                                            const glm::vec3& centre, LocalFrame* const* frames,
                                            Aabb* boxes) {
  return batch<DoublesAvx512>(n, m, local, low, centre, frames, boxes);
}
#pragma GCC diagnostic pop
#endif

}  // namespace

unsigned leaf_frames_and_boxes(int lanes, std::size_t n, const glm::mat4x3* const* m,
                               const Aabb* const* local, const glm::vec3* low,
                               const glm::vec3& centre, LocalFrame* const* frames,
                               Aabb* boxes) {
  if (n == 0) return 0;
#if RAYPICK_PACKET_AVX
  if (lanes >= 16 && compiler::cpu_has_avx512()) {
    return batch_avx512(n, m, local, low, centre, frames, boxes);
  }
  if (lanes >= 8 && compiler::cpu_has_avx2()) {
    return batch_avx2(n, m, local, low, centre, frames, boxes);
  }
#else
  (void)m;
  (void)local;
  (void)low;
  (void)centre;
  (void)frames;
  (void)boxes;
#endif
  (void)lanes;
  return (1u << n) - 1u;
}

}  // namespace raypick
