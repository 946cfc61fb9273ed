// A packet's rays against one object's OBB at once: obb_entry() (core/obb.h)
// for every ray of the packet, Lanes::kLanes rays per SIMD operation, each
// ray's arithmetic the scalar one's bit for bit. The Picker's batches use it
// for the leaves their packets reach (picker_queries.cpp).
#pragma once

#include "wide_packets.h"

#include "raypick/core/aabb.h"
#include "raypick/core/obb.h"

#include <cstdint>

// See wide_packets.h: the AVX policies' vector functions run only inlined
// into functions of their own target (packet_obb_entries_avx2, _avx512).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace raypick::wide_detail {

#if RAYPICK_WIDE_SSE
// For the rays k of `mask`: obb_entry(f, box, ray k, p.tmax[k]), the ray
// carried into the frame by transform_ray() (a float ray, no low part).
// Returns the rays that hit, each one's entry t in t_out[k]. The steps are
// obb_entry's, lane by lane: org - origin; the 3x3 products summed left to
// right; RayInv's 1 / dir, tmax clamped to the largest float; slab_entry's
// near and far planes by the local direction's sign, `t0 > tnear ? t0 :
// tnear` (MAXPS) and `t1 < tfar ? t1 : tfar` (MINPS), then tnear <= tfar.
// With `reach`, each ray's tmax is first taken to mesh_walk_reach(tmax)
// (t + |t| * 2^-17, the same operations): the bound of a mesh tree's walk.
// Where `carried` is not null, each ray's carried origin and direction are
// stored there too, as rows of kPacketRays floats (origin x, y, z, then
// direction x, y, z): transform_ray()'s, bit for bit, for the mesh walks
// of the rays that pass.
template <class Lanes>
RAYPICK_GEOMETRY_INLINE std::uint32_t packet_obb_entries(const LocalFrame& f, const Aabb& box,
                                                         const PacketRays& p, std::uint32_t mask,
                                                         float* t_out, bool reach,
                                                         float* carried) {
  using V = typename Lanes::V;
  constexpr int L = Lanes::kLanes;
  const glm::mat3& m = f.linear;
  std::uint32_t hits = 0;
  for (int g = 0; g < kPacketRays / L; ++g) {
    if (((mask >> (L * g)) & ((L == 32 ? 0u : 1u << L) - 1u)) == 0) continue;
    V v[3], d[3];
    for (int a = 0; a < 3; ++a) {
      v[a] = Lanes::sub(Lanes::load(p.org[a] + L * g), Lanes::set1(f.origin[a]));
      d[a] = Lanes::load(p.dir[a] + L * g);
    }
    V t_near = Lanes::load(p.tmin + L * g);
    V t_far = Lanes::load(p.tmax + L * g);
    if (reach) {
      // mesh_walk_reach(): t + |t| * 2^-17 (|t| as max(t, 0 - t)).
      t_far = Lanes::add(t_far, Lanes::mul(Lanes::max(t_far, Lanes::sub(Lanes::set1(0.0f), t_far)),
                                           Lanes::set1(0x1p-17f)));
    }
    t_far = Lanes::min(t_far, Lanes::set1(std::numeric_limits<float>::max()));
    for (int r = 0; r < 3; ++r) {
      const V m0 = Lanes::set1(m[0][r]), m1 = Lanes::set1(m[1][r]), m2 = Lanes::set1(m[2][r]);
      const V o = Lanes::add(Lanes::add(Lanes::mul(m0, v[0]), Lanes::mul(m1, v[1])),
                             Lanes::mul(m2, v[2]));
      const V dir = Lanes::add(Lanes::add(Lanes::mul(m0, d[0]), Lanes::mul(m1, d[1])),
                               Lanes::mul(m2, d[2]));
      if (carried != nullptr) {
        Lanes::store(carried + r * kPacketRays + L * g, o);
        Lanes::store(carried + (3 + r) * kPacketRays + L * g, dir);
      }
      const V inv = Lanes::div(Lanes::set1(1.0f), dir);
      const V lo = Lanes::pick_neg(dir, Lanes::set1(box.max[r]), Lanes::set1(box.min[r]));
      const V hi = Lanes::pick_neg(dir, Lanes::set1(box.min[r]), Lanes::set1(box.max[r]));
      t_near = Lanes::max(Lanes::mul(Lanes::sub(lo, o), inv), t_near);
      t_far = Lanes::min(Lanes::mul(Lanes::sub(hi, o), inv), t_far);
    }
    Lanes::store(t_out + L * g, t_near);
    hits |= Lanes::le(t_near, t_far) << (L * g);
  }
  return hits & mask;
}

// packet_obb_entries() with `lanes` rays per operation (WideBvh's
// packet_lanes(): 4, 8 or 16, only where the CPU has them and the build
// has them, RAYPICK_PACKET_AVX), each a function of its own target.
inline std::uint32_t packet_obb_entries_sse(const LocalFrame& f, const Aabb& box,
                                            const PacketRays& p, std::uint32_t mask,
                                            float* t_out, bool reach, float* carried) {
  return packet_obb_entries<LanesSse>(f, box, p, mask, t_out, reach, carried);
}
#if RAYPICK_PACKET_AVX
RAYPICK_TARGET_AVX2 inline std::uint32_t packet_obb_entries_avx2(const LocalFrame& f,
                                                                 const Aabb& box,
                                                                 const PacketRays& p,
                                                                 std::uint32_t mask,
                                                                 float* t_out, bool reach,
                                                                 float* carried) {
  return packet_obb_entries<LanesAvx2>(f, box, p, mask, t_out, reach, carried);
}
#endif
#if RAYPICK_PACKET_AVX
RAYPICK_TARGET_AVX512 inline std::uint32_t packet_obb_entries_avx512(const LocalFrame& f,
                                                                     const Aabb& box,
                                                                     const PacketRays& p,
                                                                     std::uint32_t mask,
                                                                     float* t_out, bool reach,
                                                                     float* carried) {
  return packet_obb_entries<LanesAvx512>(f, box, p, mask, t_out, reach, carried);
}
#endif
inline std::uint32_t packet_obb_entries(int lanes, const LocalFrame& f, const Aabb& box,
                                        const PacketRays& p, std::uint32_t mask, float* t_out,
                                        bool reach = false, float* carried = nullptr) {
#if RAYPICK_PACKET_AVX
  if (lanes == 16) return packet_obb_entries_avx512(f, box, p, mask, t_out, reach, carried);
  if (lanes == 8) return packet_obb_entries_avx2(f, box, p, mask, t_out, reach, carried);
#else
  (void)lanes;
#endif
  return packet_obb_entries_sse(f, box, p, mask, t_out, reach, carried);
}
#endif

}  // namespace raypick::wide_detail

#pragma GCC diagnostic pop
