// The wide tree's packets: kPacket coherent rays walking the tree together
// (WideBvhOf::traverse_packets), one loop over the lanes policy of each
// instruction set (4, 8 or 16 rays per operation). Included by wide_bvh.h.
#pragma once

#include "wide_bvh.h"

namespace raypick {

// The generic packet loop below calls the AVX2 and AVX-512 policies'
// vector functions, which GCC flags (-Wpsabi) as a vector ABI change. The
// loop runs only inlined into functions of the policy's own target
// (traverse_packets_avx2 and _avx512, packet_obb_entries_avx2 and
// _avx512), where the ABI is the same on both sides. Clang refuses the
// calls all the same (compiler.h, RAYPICK_PACKET_AVX).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace wide_detail {

// The packet loop's arithmetic per instruction set: kLanes rays per
// operation. Every policy computes each ray's test_node() values bit for
// bit (MAXPS, MINPS and the ordered compare treat NaN alike at every
// width), so a ray meets the same boxes under each.
#if RAYPICK_WIDE_SSE
struct LanesSse {
  static constexpr int kLanes = 4;
  using V = __m128;
  RAYPICK_GEOMETRY_INLINE static V load(const float* p) { return _mm_load_ps(p); }
  RAYPICK_GEOMETRY_INLINE static void store(float* p, V v) { _mm_store_ps(p, v); }
  RAYPICK_GEOMETRY_INLINE static V set1(float x) { return _mm_set1_ps(x); }
  RAYPICK_GEOMETRY_INLINE static V sub(V a, V b) { return _mm_sub_ps(a, b); }
  RAYPICK_GEOMETRY_INLINE static V mul(V a, V b) { return _mm_mul_ps(a, b); }
  RAYPICK_GEOMETRY_INLINE static V max(V a, V b) { return _mm_max_ps(a, b); }
  RAYPICK_GEOMETRY_INLINE static V min(V a, V b) { return _mm_min_ps(a, b); }
  RAYPICK_GEOMETRY_INLINE static V add(V a, V b) { return _mm_add_ps(a, b); }
  RAYPICK_GEOMETRY_INLINE static V div(V a, V b) { return _mm_div_ps(a, b); }
  // Per lane: if_neg where `sign`'s sign bit is set, else if_pos.
  RAYPICK_GEOMETRY_INLINE static V pick_neg(V sign, V if_neg, V if_pos) {
    const V m = _mm_castsi128_ps(_mm_srai_epi32(_mm_castps_si128(sign), 31));
    return _mm_or_ps(_mm_and_ps(m, if_neg), _mm_andnot_ps(m, if_pos));
  }
  // A bit per lane: a <= b.
  RAYPICK_GEOMETRY_INLINE static std::uint32_t le(V a, V b) {
    return static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmple_ps(a, b)));
  }
  // A bit per lane: its sign bit.
  RAYPICK_GEOMETRY_INLINE static std::uint32_t sign_bits(V a) {
    return static_cast<std::uint32_t>(_mm_movemask_ps(a));
  }
  // A bit per lane: a and b have the same bits.
  RAYPICK_GEOMETRY_INLINE static std::uint32_t same_bits(V a, V b) {
    return static_cast<std::uint32_t>(_mm_movemask_ps(
        _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_castps_si128(a), _mm_castps_si128(b)))));
  }
  // Lane k: base[idx[k]].
  RAYPICK_GEOMETRY_INLINE static V gather(const float* base, const std::int32_t* idx) {
    return _mm_setr_ps(base[idx[0]], base[idx[1]], base[idx[2]], base[idx[3]]);
  }
  // The smallest and largest lane (no NaN).
  RAYPICK_GEOMETRY_INLINE static float lowest(V a) {
    a = _mm_min_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_min_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(2, 3, 0, 1))));
  }
  RAYPICK_GEOMETRY_INLINE static float highest(V a) {
    a = _mm_max_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_max_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(2, 3, 0, 1))));
  }
};
#endif
#if RAYPICK_PACKET_AVX
// Only in functions of the AVX2 target (traverse_packets_avx2,
// packet_obb_entries_avx2).
struct LanesAvx2 {
  static constexpr int kLanes = 8;
  using V = __m256;
  RAYPICK_TARGET_AVX2 static inline V load(const float* p) {
    return _mm256_load_ps(p);
  }
  RAYPICK_TARGET_AVX2 static inline void store(float* p, V v) {
    _mm256_store_ps(p, v);
  }
  RAYPICK_TARGET_AVX2 static inline V set1(float x) {
    return _mm256_set1_ps(x);
  }
  RAYPICK_TARGET_AVX2 static inline V sub(V a, V b) {
    return _mm256_sub_ps(a, b);
  }
  RAYPICK_TARGET_AVX2 static inline V mul(V a, V b) {
    return _mm256_mul_ps(a, b);
  }
  RAYPICK_TARGET_AVX2 static inline V max(V a, V b) {
    return _mm256_max_ps(a, b);
  }
  RAYPICK_TARGET_AVX2 static inline V min(V a, V b) {
    return _mm256_min_ps(a, b);
  }
  RAYPICK_TARGET_AVX2 static inline V add(V a, V b) { return _mm256_add_ps(a, b); }
  RAYPICK_TARGET_AVX2 static inline V div(V a, V b) { return _mm256_div_ps(a, b); }
  RAYPICK_TARGET_AVX2 static inline V pick_neg(V sign, V if_neg, V if_pos) {
    return _mm256_blendv_ps(if_pos, if_neg, sign);
  }
  RAYPICK_TARGET_AVX2 static inline std::uint32_t le(V a, V b) {
    return static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_LE_OS)));
  }
  RAYPICK_TARGET_AVX2 static inline std::uint32_t sign_bits(V a) {
    return static_cast<std::uint32_t>(_mm256_movemask_ps(a));
  }
  RAYPICK_TARGET_AVX2 static inline std::uint32_t same_bits(V a, V b) {
    return static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b)))));
  }
  RAYPICK_TARGET_AVX2 static inline V gather(const float* base, const std::int32_t* idx) {
    return _mm256_i32gather_ps(base, _mm256_load_si256(reinterpret_cast<const __m256i*>(idx)), 4);
  }
  RAYPICK_TARGET_AVX2 static inline float lowest(V a) {
    return LanesSse::lowest(_mm_min_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)));
  }
  RAYPICK_TARGET_AVX2 static inline float highest(V a) {
    return LanesSse::highest(_mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)));
  }
};
#endif
#if RAYPICK_PACKET_AVX
// Only in functions of the AVX-512 target (traverse_packets_avx512,
// packet_obb_entries_avx512): half a packet, 16 rays, per operation.
struct LanesAvx512 {
  static constexpr int kLanes = 16;
  using V = __m512;
  RAYPICK_TARGET_AVX512 static inline V load(const float* p) {
    return _mm512_load_ps(p);
  }
  RAYPICK_TARGET_AVX512 static inline void store(float* p, V v) {
    _mm512_store_ps(p, v);
  }
  RAYPICK_TARGET_AVX512 static inline V set1(float x) {
    return _mm512_set1_ps(x);
  }
  RAYPICK_TARGET_AVX512 static inline V sub(V a, V b) {
    return _mm512_sub_ps(a, b);
  }
  RAYPICK_TARGET_AVX512 static inline V mul(V a, V b) {
    return _mm512_mul_ps(a, b);
  }
  RAYPICK_TARGET_AVX512 static inline V max(V a, V b) {
    return _mm512_max_ps(a, b);
  }
  RAYPICK_TARGET_AVX512 static inline V min(V a, V b) {
    return _mm512_min_ps(a, b);
  }
  RAYPICK_TARGET_AVX512 static inline V add(V a, V b) { return _mm512_add_ps(a, b); }
  RAYPICK_TARGET_AVX512 static inline V div(V a, V b) { return _mm512_div_ps(a, b); }
  RAYPICK_TARGET_AVX512 static inline V pick_neg(V sign, V if_neg, V if_pos) {
    return _mm512_mask_blend_ps(_mm512_movepi32_mask(_mm512_castps_si512(sign)), if_pos, if_neg);
  }
  RAYPICK_TARGET_AVX512 static inline std::uint32_t le(V a, V b) {
    return _mm512_cmp_ps_mask(a, b, _CMP_LE_OS);
  }
  RAYPICK_TARGET_AVX512 static inline std::uint32_t sign_bits(V a) {
    return _mm512_movepi32_mask(_mm512_castps_si512(a));
  }
  RAYPICK_TARGET_AVX512 static inline std::uint32_t same_bits(V a, V b) {
    return _mm512_cmpeq_epi32_mask(_mm512_castps_si512(a), _mm512_castps_si512(b));
  }
  RAYPICK_TARGET_AVX512 static inline V gather(const float* base, const std::int32_t* idx) {
    return _mm512_i32gather_ps(_mm512_load_si512(idx), base, 4);
  }
  RAYPICK_TARGET_AVX512 static inline float lowest(V a) { return _mm512_reduce_min_ps(a); }
  RAYPICK_TARGET_AVX512 static inline float highest(V a) { return _mm512_reduce_max_ps(a); }
};
#endif

#if RAYPICK_WIDE_SSE
// The mask of a packet's first n lanes (n <= 32).
constexpr std::uint32_t lanes_below(std::size_t n) {
  return n >= 32 ? ~0u : (1u << n) - 1u;
}

// A packet's rays, structure of arrays (kPacketRays lanes, 64-byte
// aligned for every policy's loads), and the rows of the near and far
// planes they share (same direction signs).
inline constexpr int kPacketRays = 32;
struct PacketRays {
  alignas(64) float org[3][kPacketRays];
  alignas(64) float dir[3][kPacketRays];
  alignas(64) float inv[3][kPacketRays];
  alignas(64) float tmin[kPacketRays];
  alignas(64) float tmax[kPacketRays];
  int near_row[3], far_row[3];
  // For packets with one origin and no zero direction component (`cull`):
  // each axis's smallest and largest inverse over the rays, and the rays'
  // smallest tmin and largest tmax (at the start; tmax only drops). A slot
  // whose interval test with these fails is missed by every ray (below).
  bool cull;
  float inv_lo[3], inv_hi[3], t_lo, t_hi;
};
// A packet stack entry: a node or a leaf's run, the rays that entered its
// box and where each of them entered it.
struct PacketEntry {
  alignas(64) float tn[kPacketRays];
  std::uint32_t index;
  std::uint32_t count;
  std::uint32_t mask;
};

// Room for one packet walk's stack on a tree of width W, made by the
// caller once for many walks (WideBvhOf::traverse_coherent). On the heap:
// kStackSizeOf<W> entries of 192 bytes could strain a small thread stack.
template <int W>
class PacketStack {
 public:
  PacketStack() : entries_(std::make_unique_for_overwrite<PacketEntry[]>(kStackSizeOf<W>)) {}
  PacketEntry* get() const { return entries_.get(); }

 private:
  std::unique_ptr<PacketEntry[]> entries_;
};

// A bit per lane of a packet already in p: that ray may walk in one packet
// with ray 0 (WideBvhOf::packet_coherent() says when; ray 0's own bit is
// set unless it has NaN or an infinity), kLanes rays per operation.
// The same arithmetic in every policy, in the same order, so the same
// answer at every width. No early exit and no division or root: this runs
// on every group of a batch (it took a tenth of a crowd-300 camera batch
// with unit directions computed per ray). NaN fails every comparison.
template <class Lanes>
RAYPICK_GEOMETRY_INLINE std::uint32_t lanes_coherent(const PacketRays& p, float extent) {
  constexpr int L = Lanes::kLanes;
  using V = typename Lanes::V;
  const float origin_limit = extent * (1.0f / 64.0f);
  const float len0 = p.dir[0][0] * p.dir[0][0] + p.dir[1][0] * p.dir[1][0] +
                     p.dir[2][0] * p.dir[2][0];
  V d0[3], o0[3];
  std::uint32_t sign0[3];
  for (int a = 0; a < 3; ++a) {
    d0[a] = Lanes::set1(p.dir[a][0]);
    o0[a] = Lanes::set1(p.org[a][0]);
    sign0[a] = std::signbit(p.dir[a][0]) ? lanes_below(L) : 0u;
  }
  const V limit = Lanes::set1(origin_limit);
  const V scale = Lanes::set1(1.0f / 16.0f);
  const V len0v = Lanes::set1(len0);
  std::uint32_t ok = 0;
  for (int g = 0; g < kPacketRays / L; ++g) {
    V d[3];
    for (int a = 0; a < 3; ++a) d[a] = Lanes::load(p.dir[a] + L * g);
    // cross(d, d0), dot(c, c) and dot(d, d) as glm computes them.
    const V cx = Lanes::sub(Lanes::mul(d[1], d0[2]), Lanes::mul(d0[1], d[2]));
    const V cy = Lanes::sub(Lanes::mul(d[2], d0[0]), Lanes::mul(d0[2], d[0]));
    const V cz = Lanes::sub(Lanes::mul(d[0], d0[1]), Lanes::mul(d0[0], d[1]));
    const V cc = Lanes::add(Lanes::add(Lanes::mul(cx, cx), Lanes::mul(cy, cy)), Lanes::mul(cz, cz));
    const V dd =
        Lanes::add(Lanes::add(Lanes::mul(d[0], d[0]), Lanes::mul(d[1], d[1])), Lanes::mul(d[2], d[2]));
    std::uint32_t m = Lanes::le(cc, Lanes::mul(Lanes::mul(scale, dd), len0v));
    for (int a = 0; a < 3; ++a) {
      m &= ~(Lanes::sign_bits(d[a]) ^ sign0[a]);
      // |o - o0| <= limit, as two comparisons (o0 - o is exactly -(o - o0)).
      const V o = Lanes::load(p.org[a] + L * g);
      m &= Lanes::le(Lanes::sub(o, o0[a]), limit) & Lanes::le(Lanes::sub(o0[a], o), limit);
    }
    ok |= m << (L * g);
  }
  return ok;
}

// The rays rays[0 .. n - 1] (1 <= n <= kPacketRays) into p as structure of
// arrays, kLanes lanes per gather: a vector load of lanes written one
// float at a time waits for those stores to drain. The lanes past n get
// copies of ray 0 (never live; bounds over all lanes are then the live
// rays' bounds).
template <class Lanes>
RAYPICK_GEOMETRY_INLINE void load_packet(const Ray* rays, std::size_t n, PacketRays& p) {
  constexpr int L = Lanes::kLanes;
  static_assert(sizeof(Ray) == 8 * sizeof(float) && offsetof(Ray, org) == 0 &&
                    offsetof(Ray, dir) == 3 * sizeof(float) &&
                    offsetof(Ray, tmin) == 6 * sizeof(float) &&
                    offsetof(Ray, tmax) == 7 * sizeof(float),
                "a Ray is 8 packed floats");
  static constexpr auto kFull = [] {
    std::array<std::int32_t, kPacketRays> idx{};
    for (int k = 0; k < kPacketRays; ++k) idx[k] = 8 * k;
    return idx;
  }();
  const float* base = &rays[0].org.x;
  float* const dst[8] = {p.org[0], p.org[1], p.org[2], p.dir[0],
                         p.dir[1], p.dir[2], p.tmin,   p.tmax};
  alignas(64) std::array<std::int32_t, kPacketRays> idx = kFull;
  if (n < kPacketRays) {
    for (std::size_t k = n; k < kPacketRays; ++k) idx[k] = 0;
  }
  for (int g = 0; g < kPacketRays / L; ++g) {
    for (int c = 0; c < 8; ++c) {
      Lanes::store(dst[c] + L * g, Lanes::gather(base + c, idx.data() + L * g));
    }
  }
}

// A bit per lane of a packet loaded by load_packet: the ray is_valid()
// (finite origin, direction and tmin, a direction not zero, 0 <= tmin <=
// tmax, tmax not NaN), by the same comparisons lane by lane.
template <class Lanes>
RAYPICK_GEOMETRY_INLINE std::uint32_t lanes_valid(const PacketRays& p) {
  constexpr int L = Lanes::kLanes;
  const auto zero = Lanes::set1(0.0f);
  const auto inf = Lanes::set1(std::numeric_limits<float>::infinity());
  // x * 0 <= 0 holds for every finite x and fails for infinities and NaN.
  auto finite = [&](const auto& x) { return Lanes::le(Lanes::mul(x, zero), zero); };
  std::uint32_t ok = 0;
  for (int g = 0; g < kPacketRays / L; ++g) {
    const auto tmin = Lanes::load(p.tmin + L * g);
    const auto tmax = Lanes::load(p.tmax + L * g);
    std::uint32_t m = finite(tmin) & Lanes::le(zero, tmin) & Lanes::le(tmin, tmax) &
                      Lanes::le(tmax, inf);
    std::uint32_t zero_dir = ~0u;
    for (int a = 0; a < 3; ++a) {
      const auto o = Lanes::load(p.org[a] + L * g);
      const auto d = Lanes::load(p.dir[a] + L * g);
      m &= finite(o) & finite(d);
      zero_dir &= Lanes::le(d, zero) & Lanes::le(zero, d);
    }
    ok |= (m & ~zero_dir & lanes_below(L)) << (L * g);
  }
  return ok;
}

// RayInv's values for a packet's rays already in p: inv = 1 / dir (the same
// IEEE division) and tmax lowered to the largest float.
template <class Lanes>
RAYPICK_GEOMETRY_INLINE void lanes_inverse(PacketRays& p) {
  constexpr int L = Lanes::kLanes;
  const auto one = Lanes::set1(1.0f);
  const auto largest = Lanes::set1(std::numeric_limits<float>::max());
  for (int g = 0; g < kPacketRays / L; ++g) {
    for (int a = 0; a < 3; ++a) {
      Lanes::store(p.inv[a] + L * g, Lanes::div(one, Lanes::load(p.dir[a] + L * g)));
    }
    // tmax < largest ? tmax : largest; tmax is never NaN here (the packet's
    // rays are valid).
    Lanes::store(p.tmax + L * g, Lanes::min(Lanes::load(p.tmax + L * g), largest));
  }
}

// After lanes_inverse: the near and far rows of a packet whose rays (every
// lane: the lanes past its rays hold copies of ray 0) share their
// direction signs, the bounds of its interval test (packet_maybe_slots)
// and p.cull; true when all its rays have one origin (the same bits).
template <class Lanes>
RAYPICK_GEOMETRY_INLINE bool packet_bounds(PacketRays& p) {
  constexpr int L = Lanes::kLanes;
  // Every ray shares the first one's direction signs.
  for (int a = 0; a < 3; ++a) {
    const bool neg = std::signbit(p.dir[a][0]);
    p.near_row[a] = neg ? 3 + a : a;
    p.far_row[a] = neg ? a : 3 + a;
  }
  // One origin (the same bits), and the rays' bounds for the interval
  // test (packet_maybe_slots), over every lane.
  std::uint32_t same = ~0u, finite = ~0u;
  const auto largest = Lanes::set1(std::numeric_limits<float>::max());
  const auto zero = Lanes::set1(0.0f);
  for (int a = 0; a < 3; ++a) {
    const auto o0 = Lanes::set1(p.org[a][0]);
    auto lo = Lanes::load(p.inv[a]), hi = lo;
    for (int g = 0; g < kPacketRays / L; ++g) {
      const auto inv = Lanes::load(p.inv[a] + L * g);
      same &= Lanes::same_bits(Lanes::load(p.org[a] + L * g), o0);
      // |inv| <= largest: not an infinity (a zero direction component).
      finite &= Lanes::le(Lanes::max(inv, Lanes::sub(zero, inv)), largest);
      lo = Lanes::min(lo, inv);
      hi = Lanes::max(hi, inv);
    }
    p.inv_lo[a] = Lanes::lowest(lo);
    p.inv_hi[a] = Lanes::highest(hi);
  }
  auto t_lo = Lanes::load(p.tmin), t_hi = Lanes::load(p.tmax);
  for (int g = 1; g < kPacketRays / L; ++g) {
    t_lo = Lanes::min(t_lo, Lanes::load(p.tmin + L * g));
    t_hi = Lanes::max(t_hi, Lanes::load(p.tmax + L * g));
  }
  p.t_lo = Lanes::lowest(t_lo);
  p.t_hi = Lanes::highest(t_hi);
  constexpr std::uint32_t kLaneBits = lanes_below(L);
  const bool one_origin = (same & kLaneBits) == kLaneBits;
  p.cull = one_origin && (finite & kLaneBits) == kLaneBits;
  return one_origin;
}

// The planes a packet's rays meet in one node: per axis, each slot's near
// and far bound, less the packet's origin when it has one (the same value
// as lane by lane), in rows of W slots.
template <bool kOneOrigin, int W>
struct PacketPlanes {
  alignas(64) float near[3][W];
  alignas(64) float far[3][W];
  RAYPICK_GEOMETRY_INLINE PacketPlanes(const WideNodeOf<W>& nd, const PacketRays& p) {
    for (int a = 0; a < 3; ++a) {
      const float o = kOneOrigin ? p.org[a][0] : 0.0f;
      for (int s = 0; s < W; ++s) {
        near[a][s] = kOneOrigin ? nd.bounds[p.near_row[a]][s] - o : nd.bounds[p.near_row[a]][s];
        far[a][s] = kOneOrigin ? nd.bounds[p.far_row[a]][s] - o : nd.bounds[p.far_row[a]][s];
      }
    }
  }
};

// The slots of a node that some ray of the packet may hit (p.cull): per
// slot, the interval test of the rays' bounds. For each axis and slot,
// x -> fl(d * x) is monotone, so each ray's fl(d * inv) lies between
// fl(d * inv_lo) and fl(d * inv_hi): its entry t is at least the interval's
// `lo` and its exit at most `hi`, and lo > hi means it misses the slot.
// No NaN can arise (finite inverses; a used slot's planes are finite, an
// unused one's infinite planes give infinities).
#if RAYPICK_PACKET_AVX
// packet_maybe_slots() of a 16-slot node, the same operations on all 16
// slots at once (only in AVX-512 code: the packets' LanesAvx512 walks).
RAYPICK_TARGET_AVX512 inline unsigned maybe_slots16_avx512(const PacketPlanes<true, 16>& planes,
                                                           const PacketRays& p) {
  __m512 lo = _mm512_set1_ps(p.t_lo), hi = _mm512_set1_ps(p.t_hi);
  for (int a = 0; a < 3; ++a) {
    const __m512 il = _mm512_set1_ps(p.inv_lo[a]), ih = _mm512_set1_ps(p.inv_hi[a]);
    const __m512 n = _mm512_load_ps(planes.near[a]), f = _mm512_load_ps(planes.far[a]);
    lo = _mm512_max_ps(lo, _mm512_min_ps(_mm512_mul_ps(n, il), _mm512_mul_ps(n, ih)));
    hi = _mm512_min_ps(hi, _mm512_max_ps(_mm512_mul_ps(f, il), _mm512_mul_ps(f, ih)));
  }
  return _mm512_cmp_ps_mask(lo, hi, _CMP_LE_OS);
}
// The same for an 8-slot node (AVX2 and AVX-512 code).
RAYPICK_TARGET_AVX2 inline unsigned maybe_slots8_avx2(const PacketPlanes<true, 8>& planes,
                                                      const PacketRays& p) {
  __m256 lo = _mm256_set1_ps(p.t_lo), hi = _mm256_set1_ps(p.t_hi);
  for (int a = 0; a < 3; ++a) {
    const __m256 il = _mm256_set1_ps(p.inv_lo[a]), ih = _mm256_set1_ps(p.inv_hi[a]);
    const __m256 n = _mm256_load_ps(planes.near[a]), f = _mm256_load_ps(planes.far[a]);
    lo = _mm256_max_ps(lo, _mm256_min_ps(_mm256_mul_ps(n, il), _mm256_mul_ps(n, ih)));
    hi = _mm256_min_ps(hi, _mm256_max_ps(_mm256_mul_ps(f, il), _mm256_mul_ps(f, ih)));
  }
  return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(lo, hi, _CMP_LE_OS)));
}
#endif

template <class Lanes, int W>
RAYPICK_GEOMETRY_INLINE unsigned packet_maybe_slots(const PacketPlanes<true, W>& planes,
                                                    const PacketRays& p) {
#if RAYPICK_PACKET_AVX
  if constexpr (Lanes::kLanes == 16 && W == 16) return maybe_slots16_avx512(planes, p);
  if constexpr (Lanes::kLanes >= 8 && W == 8) return maybe_slots8_avx2(planes, p);
#endif
  // Four slots per SSE operation.
  __m128 il[3], ih[3];
  for (int a = 0; a < 3; ++a) {
    il[a] = _mm_set1_ps(p.inv_lo[a]);
    ih[a] = _mm_set1_ps(p.inv_hi[a]);
  }
  unsigned maybe = 0;
  for (int h = 0; h < W; h += 4) {
    __m128 lo = _mm_set1_ps(p.t_lo), hi = _mm_set1_ps(p.t_hi);
    for (int a = 0; a < 3; ++a) {
      const __m128 n = _mm_load_ps(planes.near[a] + h), f = _mm_load_ps(planes.far[a] + h);
      lo = _mm_max_ps(lo, _mm_min_ps(_mm_mul_ps(n, il[a]), _mm_mul_ps(n, ih[a])));
      hi = _mm_min_ps(hi, _mm_max_ps(_mm_mul_ps(f, il[a]), _mm_mul_ps(f, ih[a])));
    }
    maybe |= static_cast<unsigned>(_mm_movemask_ps(_mm_cmple_ps(lo, hi))) << h;
  }
  return maybe;
}

// Slot s of a node (its planes) against the packet's rays:
// test_node()'s arithmetic lane by lane; each ray's entry t goes to tn, and
// the rays of `live` that hit come back as bits. Every lane is computed, a
// fixed number of operations: skipping groups of kLanes rays with none
// live cost more in loop steps than it saved.
template <class Lanes, bool kOneOrigin, int W>
RAYPICK_GEOMETRY_INLINE std::uint32_t packet_slot(const PacketPlanes<kOneOrigin, W>& planes,
                                                  int s, const PacketRays& p,
                                                  std::uint32_t live, float* tn) {
  constexpr int L = Lanes::kLanes;
  typename Lanes::V bn[3], bf[3];
  for (int a = 0; a < 3; ++a) {
    bn[a] = Lanes::set1(planes.near[a][s]);
    bf[a] = Lanes::set1(planes.far[a][s]);
  }
  std::uint32_t m = 0;
  for (int g = 0; g < kPacketRays / L; ++g) {
    auto t_near = Lanes::load(p.tmin + L * g), t_far = Lanes::load(p.tmax + L * g);
    for (int a = 0; a < 3; ++a) {
      const auto i = Lanes::load(p.inv[a] + L * g);
      auto dn = bn[a], df = bf[a];
      if constexpr (!kOneOrigin) {
        const auto o = Lanes::load(p.org[a] + L * g);
        dn = Lanes::sub(dn, o);
        df = Lanes::sub(df, o);
      }
      t_near = Lanes::max(Lanes::mul(dn, i), t_near);
      t_far = Lanes::min(Lanes::mul(df, i), t_far);
    }
    Lanes::store(tn + L * g, t_near);
    m |= Lanes::le(t_near, t_far) << (L * g);
  }
  return m & live;
}

// One coherent packet's rays `all` (p filled; the other lanes never live)
// through the tree: traverse_packets()'s contract, each leaf entry offered
// once to the packet's rays that reach it, as leaf(entry, mask, p) with
// `mask` those rays, which may lower their p.tmax.
template <class Lanes, bool kOneOrigin, int W, class Leaf>
RAYPICK_GEOMETRY_INLINE void walk_packet(std::span<const WideNodeOf<W>> nodes, PacketRays& p,
                                         std::uint32_t all, PacketEntry* stack, Leaf& leaf) {
  constexpr int L = Lanes::kLanes;
  constexpr int kGroups = kPacketRays / L;
  static_assert(kPacketRays % L == 0 && kPacketRays <= 32, "packet masks are 32-bit");
  alignas(64) float slot_tn[W][kPacketRays];
  int top = 0;
  std::uint32_t cur_index = 0, cur_count = 0, cur_mask = all;
  for (;;) {
    if (cur_count != 0) {
      for (std::uint32_t i = 0; i < cur_count; ++i) leaf(cur_index + i, cur_mask, p);
    } else {
      const WideNodeOf<W>& nd = nodes[cur_index];
      std::uint32_t slot_mask[W];
      float key[W];
      unsigned hit_slots = 0;
      unsigned used = nd.used_slots();
      const PacketPlanes<kOneOrigin, W> planes(nd, p);
      if constexpr (kOneOrigin) {
        if (p.cull) used &= packet_maybe_slots<Lanes>(planes, p);
      }
      for (; used != 0; used &= used - 1) {
        const int s = std::countr_zero(used);
        const std::uint32_t m =
            packet_slot<Lanes, kOneOrigin>(planes, s, p, cur_mask, slot_tn[s]);
        slot_mask[s] = m;
        if (m != 0) {
          hit_slots |= 1u << s;
          // The order's key: where the first ray that hits enters.
          key[s] = slot_tn[s][std::countr_zero(m)];
        }
      }
      if (hit_slots != 0) {
        // Sort the hit slots by descending key; push all but the last.
        int order[W];
        int k = 0;
        for (unsigned hs = hit_slots; hs != 0; hs &= hs - 1) {
          const int s = std::countr_zero(hs);
          int j = k++;
          while (j > 0 && key[order[j - 1]] < key[s]) {
            order[j] = order[j - 1];
            --j;
          }
          order[j] = s;
        }
        for (int j = 0; j + 1 < k; ++j) {
          const int s = order[j];
          PacketEntry& e = stack[top++];
          for (int g = 0; g < kGroups; ++g) {
            Lanes::store(e.tn + L * g, Lanes::load(slot_tn[s] + L * g));
          }
          e.index = nd.child[s];
          e.count = nd.count[s];
          e.mask = slot_mask[s];
        }
        const int s = order[k - 1];
        cur_index = nd.child[s];
        cur_count = nd.count[s];
        cur_mask = slot_mask[s];
        continue;
      }
    }
    // Pop the next entry some ray can still reach.
    bool found = false;
    while (top > 0) {
      const PacketEntry& e = stack[--top];
      std::uint32_t m = 0;
      for (int g = 0; g < kGroups; ++g) {
        m |= Lanes::le(Lanes::load(e.tn + L * g), Lanes::load(p.tmax + L * g)) << (L * g);
      }
      m &= e.mask;
      if (m != 0) {
        cur_index = e.index;
        cur_count = e.count;
        cur_mask = m;
        found = true;
        break;
      }
    }
    if (!found) return;
  }
}
#endif

}  // namespace wide_detail

template <int W>
template <class Leaf>
void WideBvhOf<W>::traverse_packets(std::span<const Ray> rays, Leaf&& leaf) const {
  auto each_ray = [&](std::size_t base, std::uint32_t entry, std::uint32_t mask,
                      wide_detail::PacketRays& p) {
    for (; mask != 0; mask &= mask - 1) {
      const int k = std::countr_zero(mask);
      leaf(base + k, entry, p.tmax[k]);
    }
  };
  traverse_packets(rays, leaf, each_ray);
}

template <int W>
template <class Leaf, class PacketLeaf>
void WideBvhOf<W>::traverse_packets(std::span<const Ray> rays, Leaf&& leaf,
                                    PacketLeaf&& packet_leaf) const {
  auto one_at_a_time = [&](std::size_t base, std::size_t n) {
    for (std::size_t i = base; i < base + n; ++i) {
      traverse(rays[i], [&](std::uint32_t entry, float& t) {
        leaf(i, entry, t);
        return false;
      });
    }
  };
  wide_detail::PacketStack<W> stack;
  traverse_coherent(rays, packet_leaf, one_at_a_time, stack);
}

template <int W>
template <class PacketLeaf, class Diverged>
void WideBvhOf<W>::traverse_coherent(std::span<const Ray> rays, PacketLeaf&& packet_leaf,
                                     Diverged&& diverged,
                                     const wide_detail::PacketStack<W>& stack) const {
  wide_detail::PacketEntry* entries = stack.get();
#if RAYPICK_PACKET_AVX
  if (packet_lanes_ == 16) return traverse_packets_avx512(rays, packet_leaf, diverged, entries);
  if (packet_lanes_ == 8) return traverse_packets_avx2(rays, packet_leaf, diverged, entries);
#endif
#if RAYPICK_WIDE_SSE
  packets<wide_detail::LanesSse>(rays, packet_leaf, diverged, entries);
#else
  (void)packet_leaf;
  (void)entries;
  for (std::size_t base = 0; base < rays.size(); base += kPacket) {
    diverged(base, std::min<std::size_t>(kPacket, rays.size() - base));
  }
#endif
}

#if RAYPICK_PACKET_AVX
template <int W>
template <class PacketLeaf, class Diverged>
RAYPICK_TARGET_AVX2 void WideBvhOf<W>::traverse_packets_avx2(std::span<const Ray> rays,
                                                             PacketLeaf& packet_leaf,
                                                             Diverged& diverged,
                                                             wide_detail::PacketEntry* stack) const
{
  packets<wide_detail::LanesAvx2>(rays, packet_leaf, diverged, stack);
}
#endif
#if RAYPICK_PACKET_AVX
template <int W>
template <class PacketLeaf, class Diverged>
RAYPICK_TARGET_AVX512 void WideBvhOf<W>::traverse_packets_avx512(std::span<const Ray> rays,
                                                                 PacketLeaf& packet_leaf,
                                                                 Diverged& diverged,
                                                                 wide_detail::PacketEntry* stack) const
{
  packets<wide_detail::LanesAvx512>(rays, packet_leaf, diverged, stack);
}
#endif

template <int W>
bool WideBvhOf<W>::packet_coherent(std::span<const Ray> rays, float extent) {
#if RAYPICK_WIDE_SSE
  RAYPICK_ASSERT(!rays.empty() && rays.size() <= std::size_t{kPacket},
                 "packet_coherent takes 1 to kPacket rays");
  using Lanes = wide_detail::LanesSse;
  wide_detail::PacketRays p;
  wide_detail::load_packet<Lanes>(rays.data(), rays.size(), p);
  const std::uint32_t live = wide_detail::lanes_below(rays.size());
  return (wide_detail::lanes_valid<Lanes>(p) & live) == live &&
         (wide_detail::lanes_coherent<Lanes>(p, extent) & live) == live;
#else
  (void)rays;
  (void)extent;
  return false;  // no packets without SSE: every group walks ray by ray
#endif
}

#if RAYPICK_WIDE_SSE
template <int W>
template <class Lanes, class PacketLeaf, class Diverged>
void WideBvhOf<W>::packets(std::span<const Ray> rays, PacketLeaf& packet_leaf,
                           Diverged& diverged, wide_detail::PacketEntry* stack) const {
  using namespace wide_detail;
  if (nodes_.empty() || rays.empty()) return;
  static_assert(kPacket == kPacketRays);
  const Aabb root = bounds();
  const glm::vec3 size = root.max - root.min;
  const float extent = std::max(size.x, std::max(size.y, size.z));
  PacketRays p;
  for (std::size_t base = 0, n = 0; base < rays.size(); base += n) {
    n = std::min<std::size_t>(kPacket, rays.size() - base);
    if (n == 1) {
      diverged(base, n);
      continue;
    }
    // A group with a ray that is not is_valid() walks ray by ray: the
    // caller answers that ray as a miss.
    load_packet<Lanes>(rays.data() + base, n, p);
    std::uint32_t live = lanes_below(n);
    const std::uint32_t ok = lanes_valid<Lanes>(p) & lanes_coherent<Lanes>(p, extent) & live;
    if (ok != live) {
      // Not one packet. Where its first rays are coherent (a camera's row
      // kPacket pixels wide spans more angle than a half), its first half
      // walks alone, as a packet when that half is coherent, and the next
      // group starts at its second half; otherwise (random rays: its
      // first two differ) the whole group walks ray by ray.
      constexpr std::size_t kHalf = kPacket / 2;
      if (n <= kHalf || (ok & 3u) != 3u) {
        diverged(base, n);
        continue;
      }
      n = kHalf;
      live = lanes_below(n);
      if ((ok & live) != live) {
        diverged(base, n);
        continue;
      }
      // Again, so that the lanes from n on are copies of ray 0.
      load_packet<Lanes>(rays.data() + base, n, p);
    }
    lanes_inverse<Lanes>(p);
    const bool one_origin = packet_bounds<Lanes>(p);
    auto offer = [&](std::uint32_t entry, std::uint32_t mask, PacketRays& rays_in) {
      packet_leaf(base, entry, mask, rays_in);
    };
    const std::span<const Node> nodes(nodes_);
    if (one_origin) {
      walk_packet<Lanes, true>(nodes, p, live, stack, offer);
    } else {
      walk_packet<Lanes, false>(nodes, p, live, stack, offer);
    }
  }
}
#endif

}  // namespace raypick

#pragma GCC diagnostic pop
