// The wide BVH's node: its byte layout, fixed and checked, for 8 slots
// (every tree) and 16 (the top level under the AVX-512 node test). Private
// to the library.
#pragma once

#include "compiler.h"

#include "raypick/core/aabb.h"

#include <cstdint>

namespace raypick {

// A node of W slots, 32 W bytes (W / 2 cache lines), 64-byte aligned in
// its array; for W = 8, 256 bytes:
//   bytes    0..191  bounds[6][8]  rows min_x, min_y, min_z, max_x, max_y,
//                                  max_z, one column per child slot (the
//                                  structure-of-arrays layout SIMD reads)
//   bytes  192..223  child[8]      inner slot: index of the child node;
//                                  leaf slot: first entry in prim_ids
//   bytes  224..255  count[8]      0 for an inner slot, else the number of
//                                  primitives of the leaf slot
// and for W = 16 the same rows of 16 columns (512 bytes). An unused slot
// has count 0, child kInvalidSlot and an empty box (+inf, -inf), which the
// slab test never hits. Children have larger indices than their parents.
template <int W>
struct alignas(64) WideNodeOf {
  static_assert(W == 8 || W == 16, "nodes of 8 or 16 slots");
  static constexpr int kWidth = W;  // child slots

  float bounds[6][kWidth];
  std::uint32_t child[kWidth];
  std::uint32_t count[kWidth];

  static constexpr std::uint32_t kInvalidSlot = 0xFFFFFFFFu;

  bool is_leaf(int slot) const { return count[slot] != 0; }
  bool is_inner(int slot) const {
    return count[slot] == 0 && child[slot] != kInvalidSlot;
  }
  Aabb slot_box(int slot) const {
    return Aabb{{bounds[0][slot], bounds[1][slot], bounds[2][slot]},
                {bounds[3][slot], bounds[4][slot], bounds[5][slot]}};
  }
  void set_slot_box(int slot, const Aabb& b) {
    for (int a = 0; a < 3; ++a) {
      bounds[a][slot] = b.min[a];
      bounds[3 + a][slot] = b.max[a];
    }
  }
  // A bit per used slot (child not kInvalidSlot).
  unsigned used_slots() const {
#if RAYPICK_WIDE_SSE
    const __m128i invalid = _mm_set1_epi32(static_cast<int>(kInvalidSlot));
    unsigned unused = 0;
    for (int h = 0; h < kWidth; h += 4) {
      const __m128i c = _mm_load_si128(reinterpret_cast<const __m128i*>(child + h));
      unused |= static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(c, invalid))))
                << h;
    }
    return ~unused & ((1u << kWidth) - 1u);
#else
    unsigned used = 0;
    for (int s = 0; s < kWidth; ++s) used |= static_cast<unsigned>(child[s] != kInvalidSlot) << s;
    return used;
#endif
  }
  // Each slot box's half_area() (Aabb's arithmetic, bit for bit: 0 for an
  // empty box, else (dx dy + dy dz) + dz dx), four slots per operation.
  void half_areas(float* out) const {
#if RAYPICK_WIDE_SSE
    for (int h = 0; h < kWidth; h += 4) {
      __m128 d[3];
      __m128 full = _mm_castsi128_ps(_mm_set1_epi32(-1));
      for (int a = 0; a < 3; ++a) {
        const __m128 lo = _mm_load_ps(bounds[a] + h), hi = _mm_load_ps(bounds[3 + a] + h);
        full = _mm_and_ps(full, _mm_cmple_ps(lo, hi));
        d[a] = _mm_sub_ps(hi, lo);
      }
      const __m128 area = _mm_add_ps(_mm_add_ps(_mm_mul_ps(d[0], d[1]), _mm_mul_ps(d[1], d[2])),
                                     _mm_mul_ps(d[2], d[0]));
      _mm_storeu_ps(out + h, _mm_and_ps(area, full));
    }
#else
    for (int s = 0; s < kWidth; ++s) out[s] = slot_box(s).half_area();
#endif
  }
  // The union of the slot boxes (unused slots are empty: no effect).
  Aabb box() const {
#if RAYPICK_WIDE_SSE
    float r[6];
    for (int a = 0; a < 6; ++a) {
      __m128 v = _mm_load_ps(bounds[a]);
      for (int h = 4; h < kWidth; h += 4) {
        v = a < 3 ? _mm_min_ps(v, _mm_load_ps(bounds[a] + h))
                  : _mm_max_ps(v, _mm_load_ps(bounds[a] + h));
      }
      const __m128 h = a < 3 ? _mm_min_ps(v, _mm_movehl_ps(v, v))
                             : _mm_max_ps(v, _mm_movehl_ps(v, v));
      const __m128 g = _mm_shuffle_ps(h, h, 1);
      r[a] = _mm_cvtss_f32(a < 3 ? _mm_min_ss(h, g) : _mm_max_ss(h, g));
    }
    return Aabb{{r[0], r[1], r[2]}, {r[3], r[4], r[5]}};
#else
    Aabb b;
    for (int s = 0; s < kWidth; ++s) b.extend(slot_box(s));
    return b;
#endif
  }
};
using WideNode = WideNodeOf<8>;
using WideNode16 = WideNodeOf<16>;
static_assert(sizeof(WideNode) == 256, "WideNode is documented as 256 bytes");
static_assert(sizeof(WideNode16) == 512, "WideNode16 is documented as 512 bytes");

}  // namespace raypick
