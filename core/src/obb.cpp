#include "raypick/core/obb.h"

#include <glm/ext/vector_double3.hpp>
#include <glm/geometric.hpp>

#include <algorithm>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace raypick {

namespace {

// The 3x3 part's adjugate, in double: with columns c0, c1, c2 the inverse's
// rows are cross(c1, c2), cross(c2, c0) and cross(c0, c1) over
// det = dot(c0, cross(c1, c2)).
struct Adjugate {
  glm::dvec3 rows[3];
  double det;
  bool invertible() const { return std::isfinite(det) && det != 0.0; }
};

Adjugate adjugate(const glm::mat4x3& m) {
  const glm::dvec3 c0{m[0]}, c1{m[1]}, c2{m[2]};
  Adjugate a{{glm::cross(c1, c2), glm::cross(c2, c0), glm::cross(c0, c1)}, 0.0};
  a.det = glm::dot(c0, a.rows[0]);
  return a;
}

}  // namespace

bool is_invertible(const glm::mat4x3& m) { return adjugate(m).invertible(); }

bool invert_affine(const glm::mat4x3& m, glm::mat4x3& inverse) {
  // The inverse in double keeps the local-space ray as exact as float
  // allows (a float inverse of a badly scaled matrix loses digits).
  const Adjugate a = adjugate(m);
  const glm::dvec3 t{m[3]};
  bool ok = a.invertible();
  if (ok) {
    const double inv_det = 1.0 / a.det;
    for (int r = 0; r < 3; ++r) {
      const glm::dvec3 row = a.rows[r] * inv_det;
      for (int c = 0; c < 3; ++c) inverse[c][r] = static_cast<float>(row[c]);
      inverse[3][r] = static_cast<float>(-glm::dot(row, t));
    }
    for (int c = 0; c < 4; ++c) {
      ok = ok && std::isfinite(inverse[c].x) && std::isfinite(inverse[c].y) &&
           std::isfinite(inverse[c].z);
    }
  }
  if (!ok) inverse = glm::mat4x3{0.0f};
  return ok;
}

#if defined(__SSE2__)

namespace {

// A column (x, y, z) as the double pairs the cross products take: (x, y),
// (y, z) and (z, x). Exact: every float is a double. Read one float at a
// time: a 16-byte load of a matrix just written by smaller stores (a
// caller's temporary) would wait for them to reach the cache (a failed
// store forward, 8 ns per frame measured).
struct ColumnD {
  __m128d xy, yz, zx;
  explicit ColumnD(const glm::vec3& c) {
    const __m128d x = _mm_set_sd(c.x), y = _mm_set_sd(c.y), z = _mm_set_sd(c.z);
    xy = _mm_unpacklo_pd(x, y);
    yz = _mm_unpacklo_pd(y, z);
    zx = _mm_unpacklo_pd(z, x);
  }
};

// glm::cross(a, b) in double, as the pairs (x, y) and (z, -): the same
// operations, so the same bits. Each component is a.p * b.q - b.p * a.q;
// the products of two floats are exact in double, so only the one
// subtraction rounds, and in glm's order.
struct RowD {
  __m128d xy, z;
};
RowD cross_d(const ColumnD& a, const ColumnD& b) {
  // x = a.y b.z - b.y a.z, y = a.z b.x - b.z a.x
  const __m128d xy = _mm_sub_pd(_mm_mul_pd(a.yz, b.zx), _mm_mul_pd(b.yz, a.zx));
  // z = a.x b.y - b.x a.y: (a.x b.y, a.y b.x), then lane 0 - lane 1
  const __m128d p = _mm_mul_pd(a.xy, _mm_shuffle_pd(b.xy, b.xy, 1));
  return RowD{xy, _mm_sub_sd(p, _mm_unpackhi_pd(p, p))};
}

// Lanes 0-2 of v are all finite: v - v is 0 there, NaN for inf or NaN.
__m128 finite_probe(__m128 v) { return _mm_sub_ps(v, v); }

}  // namespace

// The double-precision adjugate of adjugate() and its rounding to float in
// SSE2 lanes, each lane doing the scalar code's operations in its order:
// the same frame, bit for bit (tests/core/test_obb.cpp checks it against
// the scalar code on random matrices), without the scalar code's branch
// per element. It runs for every moved object at each commit.
bool make_local_frame(const glm::mat4x3& m, LocalFrame& frame) {
  const ColumnD c0{m[0]}, c1{m[1]}, c2{m[2]};
  const RowD r0 = cross_d(c1, c2), r1 = cross_d(c2, c0), r2 = cross_d(c0, c1);
  // det = (c0.x r0.x + c0.y r0.y) + c0.z r0.z, as glm::dot.
  const __m128d p = _mm_mul_pd(c0.xy, r0.xy);
  const __m128d det = _mm_add_sd(_mm_add_sd(p, _mm_unpackhi_pd(p, p)), _mm_mul_sd(c0.zx, r0.z));
  const double d = _mm_cvtsd_f64(det);
  bool ok = std::isfinite(d) && d != 0.0;
  if (ok) {
    const __m128d inv = _mm_set1_pd(1.0 / d);
    auto row = [&](const RowD& r) {
      return _mm_movelh_ps(_mm_cvtpd_ps(_mm_mul_pd(r.xy, inv)),
                           _mm_cvtpd_ps(_mm_mul_sd(r.z, inv)));
    };
    __m128 a = row(r0), b = row(r1), c = row(r2);
    // Lanes 0-2 of the rows and the translation (lane 3 is unused).
    const __m128 t = _mm_setr_ps(m[3].x, m[3].y, m[3].z, 0.0f);
    const __m128 probe = _mm_add_ps(_mm_add_ps(finite_probe(a), finite_probe(b)),
                                    _mm_add_ps(finite_probe(c), finite_probe(t)));
    ok = (_mm_movemask_ps(_mm_cmpeq_ps(probe, _mm_setzero_ps())) & 7) == 7;
    if (ok) {
      // linear[c][r] = row r's c: the transpose of (a, b, c).
      __m128 z = _mm_setzero_ps();
      _MM_TRANSPOSE4_PS(a, b, c, z);
      float* out = &frame.linear[0].x;
      _mm_storeu_ps(out, a);
      _mm_storeu_ps(out + 3, b);
      _mm_storeu_ps(out + 6, c);  // its lane 3 is origin.x, written next
      frame.origin = m[3];
    }
  }
  if (!ok) frame = LocalFrame{glm::mat3{0.0f}, glm::vec3{0.0f}};
  return ok;
}

#else

bool make_local_frame(const glm::mat4x3& m, LocalFrame& frame) {
  // As invert_affine, without the translation column.
  const Adjugate a = adjugate(m);
  bool ok = a.invertible();
  if (ok) {
    const double inv_det = 1.0 / a.det;
    for (int r = 0; r < 3; ++r) {
      const glm::dvec3 row = a.rows[r] * inv_det;
      for (int c = 0; c < 3; ++c) {
        frame.linear[c][r] = static_cast<float>(row[c]);
        ok = ok && std::isfinite(frame.linear[c][r]);
      }
    }
    frame.origin = m[3];
    ok = ok && std::isfinite(m[3].x) && std::isfinite(m[3].y) && std::isfinite(m[3].z);
  }
  if (!ok) frame = LocalFrame{glm::mat3{0.0f}, glm::vec3{0.0f}};
  return ok;
}

#endif

Obb Obb::make(const Aabb& local, const glm::mat4& to_world, const glm::vec3& origin_low) {
  Obb obb;
  obb.local = local;
  obb.to_world = to_world;
  obb.origin_low = significant_low(glm::mat4x3(to_world), local, origin_low);
  glm::mat4x3 inverse;
  // Hittable as the Picker's leaves decide it, by the frame.
  obb.invertible = make_local_frame(glm::mat4x3(to_world), obb.frame);
  invert_affine(glm::mat4x3(to_world), inverse);
  obb.to_local = glm::mat4(inverse);  // last row 0, 0, 0, 1
  if (!obb.invertible) {
    obb.to_local = glm::mat4{0.0f};
    obb.frame = LocalFrame{glm::mat3{0.0f}, glm::vec3{0.0f}};
    obb.origin_low = glm::vec3{0.0f};
  }
  return obb;
}

Aabb Obb::world_bounds() const {
  if (!invertible) return Aabb{};
  const Aabb box = transform_aabb(to_world, local);
  if (origin_low == glm::vec3{0.0f}) return box;
  return shift_outward(box, origin_low);
}

glm::vec3 significant_low(const glm::mat4x3& m, const Aabb& local, const glm::vec3& low) {
  if (low == glm::vec3{0.0f} || local.empty() || !is_invertible(m)) return glm::vec3{0.0f};
  const glm::dvec3 size = glm::dvec3{local.max} - glm::dvec3{local.min};
  double extent = 0.0;
  for (int r = 0; r < 3; ++r) {
    double e = 0.0;
    for (int c = 0; c < 3; ++c) e += std::fabs(double(m[c][r])) * size[c];
    extent = std::max(extent, e);
  }
  const double bound = extent * 0x1p-22;
  for (int a = 0; a < 3; ++a) {
    if (std::fabs(double(low[a])) > bound) return low;
  }
  return glm::vec3{0.0f};
}

Aabb shift_outward(const Aabb& box, const glm::vec3& offset) {
  if (box.empty()) return box;
  Aabb out{box.min + offset, box.max + offset};
  for (int a = 0; a < 3; ++a) {
    out.min[a] = std::nextafter(out.min[a], -kInfinity);
    out.max[a] = std::nextafter(out.max[a], kInfinity);
  }
  return out;
}

}  // namespace raypick
