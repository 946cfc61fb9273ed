// The point queries' measure, four triangles at a time: each triangle's
// nearest point to p exactly as closest_point_on_triangle computes it (the
// same operations in the same order, in double, no contraction), without
// its branches. Every lane divides, whatever its region: a lane that
// needs no division may divide by zero or compute 0 / 0 and raise the
// floating-point flags (the answers never read those lanes), which the
// scalar code would not; a host that traps on them would stop here.
// Private to the library.
#pragma once

#include "compiler.h"

#include "raypick/core/closest_point.h"
#include "raypick/core/scene.h"

#include <glm/ext/matrix_double3x3.hpp>
#include <glm/ext/vector_double3.hpp>
#include <glm/ext/vector_float3.hpp>

#include <bit>
#include <cfloat>
#include <cstdint>
#include <span>

// See wide_packets.h: the AVX2 policy's vector functions run only inlined
// into functions of their own target (place_nearest4_avx2, box_nearest12_avx2).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace raypick::triangle_points {

// Bit for bit the scalar code only where it rounds each operation to
// double, as SSE2 does (not x87's extended precision).
static_assert(FLT_EVAL_METHOD == 0, "the scalar code must round each operation to its type");

// Four triangles' corners in the world, a row of four per coordinate.
struct Corners4 {
  alignas(32) double a[3][4];
  alignas(32) double b[3][4];
  alignas(32) double c[3][4];

  // Lane `lane` <- the triangle (a, b, c).
  void set(int lane, const glm::dvec3& pa, const glm::dvec3& pb, const glm::dvec3& pc) {
    for (int k = 0; k < 3; ++k) {
      a[k][lane] = pa[k];
      b[k][lane] = pb[k];
      c[k][lane] = pc[k];
    }
  }
};

// Four triangles' corners in their mesh's frame (float), a row of four
// per corner and coordinate: v[corner][coordinate][lane].
struct Floats4 {
  alignas(16) float v[3][3][4];

  void set(int lane, const glm::vec3& a, const glm::vec3& b, const glm::vec3& c) {
    for (int k = 0; k < 3; ++k) {
      v[0][k][lane] = a[k];
      v[1][k][lane] = b[k];
      v[2][k][lane] = c[k];
    }
  }
};

// Their nearest points: for each lane, closest_point_on_triangle's point,
// u, v and distance2, bit for bit.
struct Nearest4 {
  alignas(32) double point[3][4];
  alignas(32) double u[4];
  alignas(32) double v[4];
  alignas(32) double d2[4];

  // A bit per lane whose squared distance is at most `limit` (not NaN).
  unsigned within(double limit) const {
    return unsigned(d2[0] <= limit) | unsigned(d2[1] <= limit) << 1 |
           unsigned(d2[2] <= limit) << 2 | unsigned(d2[3] <= limit) << 3;
  }

  TrianglePoint lane(int i) const {
    return TrianglePoint{{point[0][i], point[1][i], point[2][i]}, u[i], v[i], d2[i]};
  }
};

// The arithmetic per instruction set on four doubles; masks are lanes of
// all ones or all zeros. Comparisons are ordered: false where either side
// is NaN, as the scalar code's <=, >= and > are.
#if RAYPICK_WIDE_SSE
struct DoublesSse2 {
  struct D {
    __m128d lo, hi;
  };
  RAYPICK_GEOMETRY_INLINE static D load(const double* p) { return {_mm_load_pd(p), _mm_load_pd(p + 2)}; }
  RAYPICK_GEOMETRY_INLINE static void store(double* p, D v) {
    _mm_store_pd(p, v.lo);
    _mm_store_pd(p + 2, v.hi);
  }
  RAYPICK_GEOMETRY_INLINE static D set1(double x) { return {_mm_set1_pd(x), _mm_set1_pd(x)}; }
  // Four floats (16-byte aligned), each widened to double.
  RAYPICK_GEOMETRY_INLINE static D widen(const float* p) {
    const __m128 f = _mm_load_ps(p);
    return {_mm_cvtps_pd(f), _mm_cvtps_pd(_mm_movehl_ps(f, f))};
  }
  RAYPICK_GEOMETRY_INLINE static D add(D a, D b) { return {_mm_add_pd(a.lo, b.lo), _mm_add_pd(a.hi, b.hi)}; }
  RAYPICK_GEOMETRY_INLINE static D sub(D a, D b) { return {_mm_sub_pd(a.lo, b.lo), _mm_sub_pd(a.hi, b.hi)}; }
  RAYPICK_GEOMETRY_INLINE static D mul(D a, D b) { return {_mm_mul_pd(a.lo, b.lo), _mm_mul_pd(a.hi, b.hi)}; }
  RAYPICK_GEOMETRY_INLINE static D div(D a, D b) { return {_mm_div_pd(a.lo, b.lo), _mm_div_pd(a.hi, b.hi)}; }
  RAYPICK_GEOMETRY_INLINE static D le(D a, D b) { return {_mm_cmple_pd(a.lo, b.lo), _mm_cmple_pd(a.hi, b.hi)}; }
  RAYPICK_GEOMETRY_INLINE static D ge(D a, D b) { return {_mm_cmpge_pd(a.lo, b.lo), _mm_cmpge_pd(a.hi, b.hi)}; }
  RAYPICK_GEOMETRY_INLINE static D gt(D a, D b) { return {_mm_cmpgt_pd(a.lo, b.lo), _mm_cmpgt_pd(a.hi, b.hi)}; }
  RAYPICK_GEOMETRY_INLINE static D both(D a, D b) { return {_mm_and_pd(a.lo, b.lo), _mm_and_pd(a.hi, b.hi)}; }
  RAYPICK_GEOMETRY_INLINE static D either(D a, D b) { return {_mm_or_pd(a.lo, b.lo), _mm_or_pd(a.hi, b.hi)}; }
  // a and not b
  RAYPICK_GEOMETRY_INLINE static D but_not(D a, D b) {
    return {_mm_andnot_pd(b.lo, a.lo), _mm_andnot_pd(b.hi, a.hi)};
  }
  // Per lane: if_set where m is set, else if_clear.
  RAYPICK_GEOMETRY_INLINE static D pick(D m, D if_set, D if_clear) {
    return {_mm_or_pd(_mm_and_pd(m.lo, if_set.lo), _mm_andnot_pd(m.lo, if_clear.lo)),
            _mm_or_pd(_mm_and_pd(m.hi, if_set.hi), _mm_andnot_pd(m.hi, if_clear.hi))};
  }
  // glm::dot's order: (x + y) + z.
  RAYPICK_GEOMETRY_INLINE static D dot(const D* x, const D* y) {
    return add(add(mul(x[0], y[0]), mul(x[1], y[1])), mul(x[2], y[2]));
  }
  RAYPICK_GEOMETRY_INLINE static unsigned bits(D m) {
    return unsigned(_mm_movemask_pd(m.lo)) | unsigned(_mm_movemask_pd(m.hi)) << 2;
  }
  // Corner rows of group g of box_triangles() from the 8 placed corners.
  RAYPICK_GEOMETRY_INLINE static void face_rows(const double (&corner)[2][3][4], int g, Corners4& t);
};
#endif
#if RAYPICK_PACKET_AVX
// Only in functions of the AVX2 target (place_nearest4_avx2, box_nearest12_avx2).
struct DoublesAvx2 {
  using D = __m256d;
  RAYPICK_TARGET_AVX2 static inline D load(const double* p) { return _mm256_load_pd(p); }
  RAYPICK_TARGET_AVX2 static inline void store(double* p, D v) { _mm256_store_pd(p, v); }
  RAYPICK_TARGET_AVX2 static inline D set1(double x) { return _mm256_set1_pd(x); }
  RAYPICK_TARGET_AVX2 static inline D widen(const float* p) { return _mm256_cvtps_pd(_mm_load_ps(p)); }
  RAYPICK_TARGET_AVX2 static inline D add(D a, D b) { return _mm256_add_pd(a, b); }
  RAYPICK_TARGET_AVX2 static inline D sub(D a, D b) { return _mm256_sub_pd(a, b); }
  RAYPICK_TARGET_AVX2 static inline D mul(D a, D b) { return _mm256_mul_pd(a, b); }
  RAYPICK_TARGET_AVX2 static inline D div(D a, D b) { return _mm256_div_pd(a, b); }
  RAYPICK_TARGET_AVX2 static inline D le(D a, D b) { return _mm256_cmp_pd(a, b, _CMP_LE_OQ); }
  RAYPICK_TARGET_AVX2 static inline D ge(D a, D b) { return _mm256_cmp_pd(a, b, _CMP_GE_OQ); }
  RAYPICK_TARGET_AVX2 static inline D gt(D a, D b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
  RAYPICK_TARGET_AVX2 static inline D both(D a, D b) { return _mm256_and_pd(a, b); }
  RAYPICK_TARGET_AVX2 static inline D either(D a, D b) { return _mm256_or_pd(a, b); }
  RAYPICK_TARGET_AVX2 static inline D but_not(D a, D b) { return _mm256_andnot_pd(b, a); }
  RAYPICK_TARGET_AVX2 static inline D pick(D m, D if_set, D if_clear) {
    return _mm256_blendv_pd(if_clear, if_set, m);
  }
  RAYPICK_TARGET_AVX2 static inline D dot(const D* x, const D* y) {
    return add(add(mul(x[0], y[0]), mul(x[1], y[1])), mul(x[2], y[2]));
  }
  RAYPICK_TARGET_AVX2 static inline unsigned bits(D m) { return unsigned(_mm256_movemask_pd(m)); }
  RAYPICK_TARGET_AVX2 static inline void face_rows(const double (&corner)[2][3][4], int g, Corners4& t);
};
#endif

// Lane i measured by closest_point_on_triangle itself.
inline void measure_lane(const glm::dvec3& p, const Corners4& t, int i, Nearest4& out) {
  const TrianglePoint tp = closest_point_on_triangle(p, {t.a[0][i], t.a[1][i], t.a[2][i]},
                                                     {t.b[0][i], t.b[1][i], t.b[2][i]},
                                                     {t.c[0][i], t.c[1][i], t.c[2][i]});
  for (int k = 0; k < 3; ++k) out.point[k][i] = tp.point[k];
  out.u[i] = tp.u;
  out.v[i] = tp.v;
  out.d2[i] = tp.distance2;
}

// closest_point_on_triangle for four triangles. Each lane's Voronoi region
// is the first of the scalar code's order (vertex a, b, edge ab, vertex c,
// edge ac, edge bc, face) whose test holds, by masks; its (u, v) then
// gives the point by the scalar's own formula. A lane whose region's
// denominator is not positive (a degenerate triangle) is measured by the
// scalar code itself.
template <class L>
RAYPICK_GEOMETRY_INLINE void nearest4(const glm::dvec3& p, const Corners4& t, Nearest4& out) {
  using D = typename L::D;
  D a[3], ab[3], ac[3], ap[3], bp[3], cp[3];
  for (int k = 0; k < 3; ++k) {
    const D pk = L::set1(p[k]), ak = L::load(t.a[k]), bk = L::load(t.b[k]), ck = L::load(t.c[k]);
    a[k] = ak;
    ab[k] = L::sub(bk, ak);
    ac[k] = L::sub(ck, ak);
    ap[k] = L::sub(pk, ak);
    bp[k] = L::sub(pk, bk);
    cp[k] = L::sub(pk, ck);
  }
  const D zero = L::set1(0.0), one = L::set1(1.0);
  const D d1 = L::dot(ab, ap), d2 = L::dot(ac, ap), d3 = L::dot(ab, bp), d4 = L::dot(ac, bp);
  const D d5 = L::dot(ab, cp), d6 = L::dot(ac, cp);
  const D vc = L::sub(L::mul(d1, d4), L::mul(d3, d2));
  const D vb = L::sub(L::mul(d5, d2), L::mul(d1, d6));
  const D va = L::sub(L::mul(d3, d6), L::mul(d5, d4));
  const D d43 = L::sub(d4, d3), d56 = L::sub(d5, d6);
  const D in_a = L::both(L::le(d1, zero), L::le(d2, zero));
  const D in_b = L::both(L::ge(d3, zero), L::le(d4, d3));
  const D in_ab = L::both(L::both(L::le(vc, zero), L::ge(d1, zero)), L::le(d3, zero));
  const D in_c = L::both(L::ge(d6, zero), L::le(d5, d6));
  const D in_ac = L::both(L::both(L::le(vb, zero), L::ge(d2, zero)), L::le(d6, zero));
  const D in_bc = L::both(L::both(L::le(va, zero), L::ge(d43, zero)), L::ge(d56, zero));
  // The one division of an edge (num / den) or the face's two: picked
  // from the last region in the order to the first, so the first that
  // holds wins (the vertex regions divide nothing).
  const D face = L::add(L::add(va, vb), vc);
  D num = L::pick(in_bc, d43, vb), den = L::pick(in_bc, L::add(d43, d56), face);
  num = L::pick(in_ac, d2, num);
  den = L::pick(in_ac, L::sub(d2, d6), den);
  num = L::pick(in_ab, d1, num);
  den = L::pick(in_ab, L::sub(d1, d3), den);
  const D s = L::div(num, den), w = L::div(vc, face);
  D u = L::pick(in_bc, L::sub(one, s), s), v = L::pick(in_bc, s, w);
  u = L::pick(in_ac, zero, u);
  v = L::pick(in_ac, s, v);
  u = L::pick(in_c, zero, u);
  v = L::pick(in_c, one, v);
  u = L::pick(in_ab, s, u);
  v = L::pick(in_ab, zero, v);
  u = L::pick(in_b, one, u);
  v = L::pick(in_b, zero, v);
  u = L::pick(in_a, zero, u);
  v = L::pick(in_a, zero, v);
  // The point a + u (b - a) + v (c - a), and its squared distance.
  D d[3];
  for (int k = 0; k < 3; ++k) {
    const D x = L::add(L::add(a[k], L::mul(u, ab[k])), L::mul(v, ac[k]));
    L::store(out.point[k], x);
    d[k] = L::sub(L::set1(p[k]), x);
  }
  L::store(out.u, u);
  L::store(out.v, v);
  L::store(out.d2, L::dot(d, d));
  // Lanes that divided by a denominator not > 0: those of a division
  // region (not a vertex's; c's only where ab's test failed).
  const D vertex = L::either(L::either(in_a, in_b), L::but_not(in_c, in_ab));
  const unsigned bad = ~(L::bits(L::gt(den, zero)) | L::bits(vertex)) & 0xFu;
  for (unsigned lanes = bad; lanes != 0; lanes &= lanes - 1) {
    measure_lane(p, t, std::countr_zero(lanes), out);
  }
}

// Four float points, a row of four per coordinate, placed by the matrix
// `m` and origin `o` in double: out[r][i] is row r of m * point i + o,
// summed as glm's matrix product (x, then y, then z, then o), so bit for
// bit Placement::apply.
template <class L>
RAYPICK_GEOMETRY_INLINE void place4(const glm::dmat3& m, const glm::dvec3& o, const float (&in)[3][4],
                                    double (&out)[3][4]) {
  using D = typename L::D;
  const D x = L::widen(in[0]), y = L::widen(in[1]), z = L::widen(in[2]);
  for (int r = 0; r < 3; ++r) {
    const D sum = L::add(L::add(L::mul(L::set1(m[0][r]), x), L::mul(L::set1(m[1][r]), y)),
                         L::mul(L::set1(m[2][r]), z));
    L::store(out[r], L::add(sum, L::set1(o[r])));
  }
}

// The triangles `f` placed by (m, o) (place4), then measured (nearest4).
template <class L>
RAYPICK_GEOMETRY_INLINE void place_nearest4(const glm::dvec3& p, const glm::dmat3& m,
                                            const glm::dvec3& o, const Floats4& f, Nearest4& out) {
  Corners4 t;
  place4<L>(m, o, f.v[0], t.a);
  place4<L>(m, o, f.v[1], t.b);
  place4<L>(m, o, f.v[2], t.c);
  nearest4<L>(p, t, out);
}

// The 12 triangles of the box `local` (box_triangles(), corners by
// box_corner()) placed by (m, o): its 8 corners placed four at a time,
// then the triangles measured in three groups of four, in their order.
template <class L>
RAYPICK_GEOMETRY_INLINE void box_nearest12(const glm::dvec3& p, const glm::dmat3& m,
                                           const glm::dvec3& o, const Aabb& local,
                                           Nearest4 (&out)[3]) {
  // Corners 0-3 and 4-7 (box_corner: bit 0 x, bit 1 y, bit 2 z).
  alignas(16) float in[2][3][4];
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < 4; ++i) {
      const int c = 4 * h + i;
      in[h][0][i] = (c & 1) ? local.max.x : local.min.x;
      in[h][1][i] = (c & 2) ? local.max.y : local.min.y;
      in[h][2][i] = (c & 4) ? local.max.z : local.min.z;
    }
  }
  alignas(32) double corner[2][3][4];
  place4<L>(m, o, in[0], corner[0]);
  place4<L>(m, o, in[1], corner[1]);
  for (int g = 0; g < 3; ++g) {
    Corners4 t;
    L::face_rows(corner, g, t);
    nearest4<L>(p, t, out[g]);
  }
}

// Group g's triangles (box_triangles() 4g to 4g + 3) from the 8 placed
// corners (corner[i >> 2][coordinate][i & 3]), a copy per lane.
inline void face_rows_copied(const double (&corner)[2][3][4], int g, Corners4& t) {
  const std::span<const glm::uvec3, 12> faces = box_triangles();
  for (int l = 0; l < 4; ++l) {
    const glm::uvec3& f = faces[std::size_t(4 * g + l)];
    for (int k = 0; k < 3; ++k) {
      t.a[k][l] = corner[f.x >> 2][k][f.x & 3];
      t.b[k][l] = corner[f.y >> 2][k][f.y & 3];
      t.c[k][l] = corner[f.z >> 2][k][f.z & 3];
    }
  }
}

#if RAYPICK_WIDE_SSE
RAYPICK_GEOMETRY_INLINE void DoublesSse2::face_rows(const double (&corner)[2][3][4], int g,
                                                    Corners4& t) {
  face_rows_copied(corner, g, t);
}
#endif
#if RAYPICK_PACKET_AVX
// For each group and corner (a, b, c) of its triangles: the 32-bit
// permutation that moves each lane's corner from a row of four corners
// into place, and the lanes that take corners 4-7 (sign bits set).
struct FaceGather {
  alignas(32) std::int32_t index[3][3][8];
  alignas(32) std::int64_t high[3][3][4];
};
inline const FaceGather& face_gather() {
  static const FaceGather gather = [] {
    FaceGather out{};
    const std::span<const glm::uvec3, 12> faces = box_triangles();
    for (int g = 0; g < 3; ++g) {
      for (int l = 0; l < 4; ++l) {
        const glm::uvec3& f = faces[std::size_t(4 * g + l)];
        for (int v = 0; v < 3; ++v) {
          const unsigned c = f[v];
          out.index[g][v][2 * l] = std::int32_t(2 * (c & 3u));
          out.index[g][v][2 * l + 1] = std::int32_t(2 * (c & 3u) + 1);
          out.high[g][v][l] = c >= 4 ? -1 : 0;
        }
      }
    }
    return out;
  }();
  return gather;
}
RAYPICK_TARGET_AVX2 inline void DoublesAvx2::face_rows(const double (&corner)[2][3][4], int g,
                                                       Corners4& t) {
  const FaceGather& gather = face_gather();
  double(*rows[3])[4] = {t.a, t.b, t.c};
  for (int v = 0; v < 3; ++v) {
    const __m256i index =
        _mm256_load_si256(reinterpret_cast<const __m256i*>(gather.index[g][v]));
    const __m256d high = _mm256_castsi256_pd(
        _mm256_load_si256(reinterpret_cast<const __m256i*>(gather.high[g][v])));
    for (int k = 0; k < 3; ++k) {
      const __m256 lo = _mm256_permutevar8x32_ps(_mm256_castpd_ps(load(corner[0][k])), index);
      const __m256 hi = _mm256_permutevar8x32_ps(_mm256_castpd_ps(load(corner[1][k])), index);
      store(rows[v][k], _mm256_blendv_pd(_mm256_castps_pd(lo), _mm256_castps_pd(hi), high));
    }
  }
}
#endif

// Each lane by the scalar code: for builds without SSE2.
inline void nearest4_scalar(const glm::dvec3& p, const Corners4& t, Nearest4& out) {
  for (int i = 0; i < 4; ++i) measure_lane(p, t, i, out);
}
inline void place_nearest4_scalar(const glm::dvec3& p, const glm::dmat3& m, const glm::dvec3& o,
                                  const Floats4& f, Nearest4& out) {
  Corners4 t;
  for (int i = 0; i < 4; ++i) {
    glm::dvec3 corner[3];
    for (int k = 0; k < 3; ++k) {
      corner[k] = m * glm::dvec3(f.v[k][0][i], f.v[k][1][i], f.v[k][2][i]) + o;
    }
    t.set(i, corner[0], corner[1], corner[2]);
  }
  nearest4_scalar(p, t, out);
}

inline void box_nearest12_scalar(const glm::dvec3& p, const glm::dmat3& m, const glm::dvec3& o,
                                 const Aabb& local, Nearest4 (&out)[3]) {
  double corner[2][3][4];
  for (int i = 0; i < 8; ++i) {
    const glm::dvec3 c = m * glm::dvec3(box_corner(local, i)) + o;
    for (int k = 0; k < 3; ++k) corner[i >> 2][k][i & 3] = c[k];
  }
  for (int g = 0; g < 3; ++g) {
    Corners4 t;
    face_rows_copied(corner, g, t);
    nearest4_scalar(p, t, out[g]);
  }
}

#if RAYPICK_WIDE_SSE
inline void place_nearest4_sse2(const glm::dvec3& p, const glm::dmat3& m, const glm::dvec3& o,
                                const Floats4& f, Nearest4& out) {
  place_nearest4<DoublesSse2>(p, m, o, f, out);
}
inline void box_nearest12_sse2(const glm::dvec3& p, const glm::dmat3& m, const glm::dvec3& o,
                               const Aabb& local, Nearest4 (&out)[3]) {
  box_nearest12<DoublesSse2>(p, m, o, local, out);
}
#endif
#if RAYPICK_PACKET_AVX
RAYPICK_TARGET_AVX2 inline void place_nearest4_avx2(const glm::dvec3& p, const glm::dmat3& m,
                                                    const glm::dvec3& o, const Floats4& f,
                                                    Nearest4& out) {
  place_nearest4<DoublesAvx2>(p, m, o, f, out);
}
RAYPICK_TARGET_AVX2 inline void box_nearest12_avx2(const glm::dvec3& p, const glm::dmat3& m,
                                                   const glm::dvec3& o, const Aabb& local,
                                                   Nearest4 (&out)[3]) {
  box_nearest12<DoublesAvx2>(p, m, o, local, out);
}
#endif

// The measures of one instruction set.
struct Measure4 {
  void (*place_nearest)(const glm::dvec3&, const glm::dmat3&, const glm::dvec3&, const Floats4&,
                        Nearest4&);
  void (*box)(const glm::dvec3&, const glm::dmat3&, const glm::dvec3&, const Aabb&,
              Nearest4 (&)[3]);
};

// The widest this build and CPU run, AVX2 only where `avx2` (the picker's
// Isa allows it and the CPU has it). All give the same bits.
inline Measure4 measure4_for(bool avx2) {
#if RAYPICK_PACKET_AVX
  if (avx2) return {place_nearest4_avx2, box_nearest12_avx2};
#endif
  (void)avx2;
#if RAYPICK_WIDE_SSE
  return {place_nearest4_sse2, box_nearest12_sse2};
#else
  return {place_nearest4_scalar, box_nearest12_scalar};
#endif
}

}  // namespace raypick::triangle_points

#pragma GCC diagnostic pop
