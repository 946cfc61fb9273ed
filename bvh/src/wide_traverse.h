// The wide tree's traversal: the node step per instruction set (a policy:
// IsaSse, the x86-64 baseline with a scalar fallback, and IsaAvx2, eight
// slots per instruction, for either width), the loops built on that one
// step (single rays: walk(), for traverse() and traverse_avx2(); many rays
// interleaved), and the AVX-512 single-ray loop (walk_avx512(), for
// traverse_avx512(): 16 slots per test, or 8 with AVX-512VL).
// Included by wide_bvh.h.
#pragma once

#include "wide_bvh.h"

namespace raypick {

namespace wide_detail {

// A stack entry: a node, or a leaf's run of entries, and where the ray
// enters its box.
struct Entry {
  std::uint32_t index;  // node, or first entry of a leaf
  std::uint32_t count;  // 0: node; else leaf size
  float tnear;
};

// Each node visit pops one entry and pushes at most W - 1 (the nearest hit
// slot is taken next without a push); a node at depth L (at most
// kBvhMaxDepth) has at most (W - 1) L entries below the top. W more leave
// room for a store of a whole node's slots at the top (walk_avx512()).
template <int W>
inline constexpr int kStackSizeOf = (W - 1) * kBvhMaxDepth + W;
inline constexpr int kStackSize = kStackSizeOf<8>;

// A leaf slot's run of entries, for a traverse() leaf that takes a whole
// run at a time.
struct LeafRun {
  std::uint32_t index;
  std::uint32_t count;
};

// What a node test needs of a ray, computed once per ray.
struct NodeRay {
  RayInv inv;
  int near_row[3], far_row[3];  // rows of the near and far planes per axis
#if RAYPICK_WIDE_SSE
  __m128 o[3], i[3], tmin;
#endif
  RAYPICK_GEOMETRY_INLINE explicit NodeRay(const Ray& ray) : inv(ray) {
    // In arithmetic, not a choice: a compiler made that a branch, which a
    // random direction mispredicts half the time (33k mispredicts over
    // 50,000 crowd-300 incoherent rays under callgrind, the top level's
    // and the mesh trees' walks together).
    for (int a = 0; a < 3; ++a) {
      near_row[a] = a + 3 * int(inv.neg[a]);
      far_row[a] = 3 + a - 3 * int(inv.neg[a]);
    }
#if RAYPICK_WIDE_SSE
    for (int a = 0; a < 3; ++a) {
      o[a] = _mm_set1_ps(inv.org[a]);
      i[a] = _mm_set1_ps(inv.inv_dir[a]);
    }
    tmin = _mm_set1_ps(inv.tmin);
#endif
  }
};

// The slab test of the ray against a node's slots within
// [tmin, tmax]: a bit per slot hit, and each slot's entry t in tn.
template <int W>
RAYPICK_GEOMETRY_INLINE unsigned test_node(const WideNodeOf<W>& n, const NodeRay& r, float tmax,
                          float* tn) {
#if RAYPICK_WIDE_SSE
  // Scalar line per slot and axis, as in slab_interval():
  //   tnear = t0 > tnear ? t0 : tnear;  tfar = t1 < tfar ? t1 : tfar;
  // _mm_max_ps(a, b) and _mm_min_ps(a, b) return b when a is NaN, so a NaN
  // plane distance leaves the interval unchanged, as there.
  unsigned mask = 0;
  const __m128 tmax4 = _mm_set1_ps(tmax);
  for (int h = 0; h < W; h += 4) {
    __m128 t_near = r.tmin, t_far = tmax4;
    for (int a = 0; a < 3; ++a) {
      t_near = _mm_max_ps(
          _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.bounds[r.near_row[a]] + h), r.o[a]), r.i[a]),
          t_near);
      t_far = _mm_min_ps(
          _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.bounds[r.far_row[a]] + h), r.o[a]), r.i[a]),
          t_far);
    }
    _mm_storeu_ps(tn + h, t_near);
    mask |= static_cast<unsigned>(_mm_movemask_ps(_mm_cmple_ps(t_near, t_far))) << h;
  }
  return mask;
#else
  unsigned mask = 0;
  for (int s = 0; s < W; ++s) {
    float t_near = r.inv.tmin, t_far = tmax;
    for (int a = 0; a < 3; ++a) {
      const float t0 = (n.bounds[r.near_row[a]][s] - r.inv.org[a]) * r.inv.inv_dir[a];
      const float t1 = (n.bounds[r.far_row[a]][s] - r.inv.org[a]) * r.inv.inv_dir[a];
      t_near = t0 > t_near ? t0 : t_near;
      t_far = t1 < t_far ? t1 : t_far;
    }
    tn[s] = t_near;
    if (t_near <= t_far) mask |= 1u << s;
  }
  return mask;
#endif
}

#if RAYPICK_WIDE_AVX2
// The ray's planes for the AVX test, each broadcast to 8 lanes.
struct NodeRay8 {
  __m256 o[3], i[3], tmin;
  RAYPICK_TARGET_AVX2 explicit NodeRay8(const NodeRay& r) {
    for (int a = 0; a < 3; ++a) {
      o[a] = _mm256_set1_ps(r.inv.org[a]);
      i[a] = _mm256_set1_ps(r.inv.inv_dir[a]);
    }
    tmin = _mm256_set1_ps(r.inv.tmin);
  }
};

// test_node() eight slots at a time (a 16-wide node in two halves): the
// same operations, in the same order, on each slot (so the same tn and
// the same mask; VMAXPS, VMINPS and the ordered compare treat NaN as
// MAXPS, MINPS and CMPLEPS do). tn must be 32-byte aligned.
// Slots h .. h + 7: each one's entry and exit t.
template <int W>
[[gnu::always_inline]] RAYPICK_TARGET_AVX2 inline void slab_interval8(
    const WideNodeOf<W>& n, int h, const NodeRay& r, const NodeRay8& r8, float tmax,
    __m256& t_near, __m256& t_far) {
  t_near = r8.tmin;
  t_far = _mm256_set1_ps(tmax);
  for (int a = 0; a < 3; ++a) {
    t_near = _mm256_max_ps(
        _mm256_mul_ps(_mm256_sub_ps(_mm256_load_ps(n.bounds[r.near_row[a]] + h), r8.o[a]),
                      r8.i[a]),
        t_near);
    t_far = _mm256_min_ps(
        _mm256_mul_ps(_mm256_sub_ps(_mm256_load_ps(n.bounds[r.far_row[a]] + h), r8.o[a]),
                      r8.i[a]),
        t_far);
  }
}
template <int W>
[[gnu::always_inline]] RAYPICK_TARGET_AVX2 inline unsigned test_node_avx2(
    const WideNodeOf<W>& n, const NodeRay& r, const NodeRay8& r8, float tmax, float* tn) {
  static_assert(W % 8 == 0);
  unsigned mask = 0;
  for (int h = 0; h < W; h += 8) {
    __m256 t_near, t_far;
    slab_interval8(n, h, r, r8, tmax, t_near, t_far);
    _mm256_store_ps(tn + h, t_near);
    mask |= static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(t_near, t_far, _CMP_LE_OS)))
            << h;
  }
  return mask;
}
#endif

// Given a node's hit slots (mask != 0): returns the nearest, to be visited
// next, and pushes the others: of two, the farther; of three or more, the
// second nearest last (popped first) and the rest before it in slot
// order. No sort: an insertion sort of three or more hits, farthest
// deepest, cost more in branches than the stricter order saved in nodes
// (docs/performance.md, "What was tried").
// Node: WideNodeOf<W>, or any node with child[] and count[] arrays and
// kWidth (raypick_floor's compressed prototype).
template <class Node>
RAYPICK_GEOMETRY_INLINE Entry order_hits(const Node& n, unsigned mask, const float* tn,
                        Entry* stack, int& top) {
  const int s0 = std::countr_zero(mask);
  mask &= mask - 1;
  const Entry e0{n.child[s0], n.count[s0], tn[s0]};
  if (mask == 0) return e0;
  const int s1 = std::countr_zero(mask);
  mask &= mask - 1;
  const Entry e1{n.child[s1], n.count[s1], tn[s1]};
  if (mask == 0) {
    const bool first = e0.tnear <= e1.tnear;
    stack[top++] = first ? e1 : e0;
    return first ? e0 : e1;
  }
  // Three or more: the nearest and the second nearest by keys of t's bits
  // with the slot in the low bits (as nearest_slot() below); the nearest
  // is visited next, the second pushed last (popped first), the others
  // pushed in slot order before it.
  mask |= (1u << s0) | (1u << s1);
  constexpr std::uint32_t kSlotBits = Node::kWidth == 16 ? 15u : 7u;
  constexpr std::uint32_t kCleared = kSlotBits | 0x80000000u;  // and the sign
  std::uint32_t best = 0xFFFFFFFFu, second = 0xFFFFFFFFu;
  for (int s = 0; s < Node::kWidth; ++s) {
    const std::uint32_t key = (mask >> s & 1u) != 0
                                  ? (std::bit_cast<std::uint32_t>(tn[s]) & ~kCleared) | std::uint32_t(s)
                                  : 0xFFFFFFFFu;
    second = std::min(second, std::max(best, key));
    best = std::min(best, key);
  }
  const int next = static_cast<int>(best & kSlotBits);
  const int after = static_cast<int>(second & kSlotBits);
  for (unsigned rest = mask & ~(1u << next) & ~(1u << after); rest != 0; rest &= rest - 1) {
    const int sk = std::countr_zero(rest);
    stack[top++] = Entry{n.child[sk], n.count[sk], tn[sk]};
  }
  stack[top++] = Entry{n.child[after], n.count[after], tn[after]};
  return Entry{n.child[next], n.count[next], tn[next]};
}

// Pops the next entry that can still hold a hit at t <= tmax into cur;
// tmax may have dropped since the push, and '<=' keeps ties reachable.
// False when the stack is exhausted.
RAYPICK_GEOMETRY_INLINE bool pop(Entry* stack, int& top, float tmax, Entry& cur) {
  while (top > 0) {
    cur = stack[--top];
    if (cur.tnear <= tmax) return true;
  }
  return false;
}

// The node step per instruction set: set up once per ray, then
//   unsigned test(const Node& n, float tmax, float* tn)
// returns the slots hit and their entry t (tn 32-byte aligned). Every
// policy computes the same mask and tn bit for bit (the tests force each).
struct IsaSse {
  const NodeRay& r;
  explicit IsaSse(const NodeRay& ray) : r(ray) {}
  template <int W>
  RAYPICK_GEOMETRY_INLINE unsigned test(const WideNodeOf<W>& n, float tmax, float* tn) const {
    return test_node(n, r, tmax, tn);
  }
};
#if RAYPICK_WIDE_AVX2
// Only in functions of the AVX2 target (traverse_avx2, interleave_avx2):
// its steps are inlined there. Either width.
struct IsaAvx2 {
  const NodeRay& r;
  const NodeRay8 r8;
  RAYPICK_TARGET_AVX2 explicit IsaAvx2(const NodeRay& ray) : r(ray), r8(ray) {}
  template <int W>
  RAYPICK_TARGET_AVX2 inline unsigned test(const WideNodeOf<W>& n, float tmax, float* tn) const {
    return test_node_avx2(n, r, r8, tmax, tn);
  }
};
#endif

// The single-ray loop, once for every policy: traverse()'s contract. With
// kFetchPushed, the nodes of the inner slots it pushes are fetched as they
// are pushed (WideBvhOf::set_fetch_pushed).
template <class Isa, bool kFetchPushed, class Node, class Leaf>
RAYPICK_GEOMETRY_INLINE TraversalStats walk(std::span<const Node> nodes, const Ray& ray,
                                            Leaf& leaf) {
  TraversalStats st;
  if (nodes.empty()) return st;
  const NodeRay r(ray);
  const Isa isa(r);
  float tmax = r.inv.tmax;
  Entry stack[kStackSizeOf<Node::kWidth>];
  int top = 0;
  Entry cur{0, 0, r.inv.tmin};
  for (;;) {
    if (cur.count != 0) {
      ++st.leaves_visited;
      if constexpr (std::is_invocable_v<Leaf&, LeafRun, float&>) {
        st.prims_tested += cur.count;
        if (leaf(LeafRun{cur.index, cur.count}, tmax)) return st;
      } else {
        for (std::uint32_t i = 0; i < cur.count; ++i) {
          ++st.prims_tested;
          if (leaf(cur.index + i, tmax)) return st;
        }
      }
    } else {
      const Node& n = nodes[cur.index];
      ++st.nodes_visited;
      alignas(32) float tn[Node::kWidth];
      const unsigned mask = isa.test(n, tmax, tn);
      if (mask != 0) {
        const int pushed_from = top;
        cur = order_hits(n, mask, tn, stack, top);
        if constexpr (kFetchPushed) {
          for (int i = pushed_from; i < top; ++i) {
            if (stack[i].count == 0) compiler::prefetch_lines(nodes[stack[i].index]);
          }
        }
        continue;
      }
    }
    if (!pop(stack, top, tmax, cur)) return st;
  }
}

#if RAYPICK_WIDE_AVX512
// The ray's planes for the 16-slot test, each broadcast to 16 lanes.
struct NodeRay16 {
  __m512 o[3], i[3], tmin;
  RAYPICK_TARGET_AVX512 explicit NodeRay16(const NodeRay& r) {
    for (int a = 0; a < 3; ++a) {
      o[a] = _mm512_set1_ps(r.inv.org[a]);
      i[a] = _mm512_set1_ps(r.inv.inv_dir[a]);
    }
    tmin = _mm512_set1_ps(r.inv.tmin);
  }
};

// GCC 12 flags _mm512_max_ps and _mm512_min_ps once inlined here: their
// header passes a deliberately uninitialized register (GCC bug 105593).
// Nothing of ours is uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
// test_node() on all 16 slots at once: the same operations in the same
// order on each slot, so the same mask and entry t (VMAXPS and VMINPS
// return their second operand on NaN, as MAXPS and MINPS do).
[[gnu::always_inline]] RAYPICK_TARGET_AVX512 inline unsigned test_node_avx512(
    const WideNode16& n, const NodeRay& r, const NodeRay16& r16, float tmax, __m512& t_near) {
  t_near = r16.tmin;
  __m512 t_far = _mm512_set1_ps(tmax);
  for (int a = 0; a < 3; ++a) {
    t_near = _mm512_max_ps(
        _mm512_mul_ps(_mm512_sub_ps(_mm512_load_ps(n.bounds[r.near_row[a]]), r16.o[a]), r16.i[a]),
        t_near);
    t_far = _mm512_min_ps(
        _mm512_mul_ps(_mm512_sub_ps(_mm512_load_ps(n.bounds[r.far_row[a]]), r16.o[a]), r16.i[a]),
        t_far);
  }
  return _mm512_cmp_ps_mask(t_near, t_far, _CMP_LE_OS);
}
// test_node_avx2() on an 8-slot node with its entry t kept in a register
// and the mask from an AVX-512VL compare: the same operations, so the
// same mask and entry t.
[[gnu::always_inline]] RAYPICK_TARGET_AVX512 inline unsigned test_node_avx512(
    const WideNode& n, const NodeRay& r, const NodeRay8& r8, float tmax, __m256& t_near) {
  __m256 t_far;
  slab_interval8(n, 0, r, r8, tmax, t_near, t_far);
  return _mm256_cmp_ps_mask(t_near, t_far, _CMP_LE_OS);
}

// The 16-slot test as a node-step policy (the interleaved loop's), its
// entry t stored to tn (64-byte aligned).
struct IsaAvx512 {
  const NodeRay& r;
  const NodeRay16 r16;
  RAYPICK_TARGET_AVX512 explicit IsaAvx512(const NodeRay& ray) : r(ray), r16(ray) {}
  RAYPICK_TARGET_AVX512 inline unsigned test(const WideNode16& n, float tmax, float* tn) const {
    __m512 t;
    const unsigned mask = test_node_avx512(n, r, r16, tmax, t);
    _mm512_store_ps(tn, t);
    return mask;
  }
};

#pragma GCC diagnostic pop

// walk_avx512()'s stack: structure of arrays, so that a node's hit slots
// are pushed by one register compress and one store per array (a compress
// straight to memory is microcoded, and slow, on AMD's Zen 4).
template <int W>
struct StackOf {
  static constexpr int kSize = kStackSizeOf<W>;
  alignas(64) std::uint32_t index[kSize];
  alignas(64) std::uint32_t count[kSize];
  alignas(64) float tnear[kSize];
  int top = 0;
};
using Stack16 = StackOf<16>;

// The hit slot of `mask` (two or more) to visit next: the nearest by one
// integer reduction. Each slot's key is its entry t's bits (t >= tmin >=
// 0, and non-negative floats order as their bits do; the sign bit cleared,
// as a tmin of -0.0 leaves -0.0 entries) with the low bits (4 for 16
// slots, 3 for 8) replaced by the slot: the nearest to within 16 (8) ulps,
// the lowest slot among those; order_hits() keys the same way. A float
// reduction, then a compare for the slot, took about twice as long, on
// the chain of dependent node visits. The order decides only how soon
// tmax drops, never the answer: every slot whose entry t is within tmax
// is visited.
[[gnu::always_inline]] RAYPICK_TARGET_AVX512 inline int nearest_slot(unsigned mask, __m512 tn) {
  const __m512i slots =
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i key =
      _mm512_or_si512(_mm512_andnot_si512(_mm512_set1_epi32(std::int32_t(0x8000000F)),
                                          _mm512_castps_si512(tn)),
                      slots);
  const __m512i keys = _mm512_mask_blend_epi32(static_cast<__mmask16>(mask),
                                               _mm512_set1_epi32(0x7FFFFFFF), key);
  return _mm512_reduce_min_epi32(keys) & 15;
}
[[gnu::always_inline]] RAYPICK_TARGET_AVX512 inline int nearest_slot(unsigned mask, __m256 tn) {
  const __m256i key = _mm256_or_si256(
      _mm256_andnot_si256(_mm256_set1_epi32(std::int32_t(0x80000007)), _mm256_castps_si256(tn)),
      _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256i k = _mm256_mask_blend_epi32(static_cast<__mmask8>(mask),
                                      _mm256_set1_epi32(0x7FFFFFFF), key);
  k = _mm256_min_epi32(k, _mm256_permute2x128_si256(k, k, 0x01));
  k = _mm256_min_epi32(k, _mm256_shuffle_epi32(k, 0x4E));
  k = _mm256_min_epi32(k, _mm256_shuffle_epi32(k, 0xB1));
  return _mm256_cvtsi256_si32(k) & 7;
}

// Pushes the slots of `rest` in slot order: one register compress and one
// store per stack array.
[[gnu::always_inline]] RAYPICK_TARGET_AVX512 inline void push_slots(const WideNode16& n,
                                                                    unsigned rest, __m512 tn,
                                                                    StackOf<16>& s) {
  const auto m = static_cast<__mmask16>(rest);
  _mm512_storeu_si512(s.index + s.top, _mm512_maskz_compress_epi32(m, _mm512_load_si512(n.child)));
  _mm512_storeu_si512(s.count + s.top, _mm512_maskz_compress_epi32(m, _mm512_load_si512(n.count)));
  _mm512_storeu_ps(s.tnear + s.top, _mm512_maskz_compress_ps(m, tn));
  s.top += std::popcount(rest);
}
[[gnu::always_inline]] RAYPICK_TARGET_AVX512 inline void push_slots(const WideNode& n,
                                                                    unsigned rest, __m256 tn,
                                                                    StackOf<8>& s) {
  const auto m = static_cast<__mmask8>(rest);
  _mm256_storeu_si256(
      reinterpret_cast<__m256i*>(s.index + s.top),
      _mm256_maskz_compress_epi32(m, _mm256_load_si256(reinterpret_cast<const __m256i*>(n.child))));
  _mm256_storeu_si256(
      reinterpret_cast<__m256i*>(s.count + s.top),
      _mm256_maskz_compress_epi32(m, _mm256_load_si256(reinterpret_cast<const __m256i*>(n.count))));
  _mm256_storeu_ps(s.tnear + s.top, _mm256_maskz_compress_ps(m, tn));
  s.top += std::popcount(rest);
}

// The single-ray loop with AVX-512: traverse()'s contract. 16-slot nodes
// take the 16-slot test; 8-slot ones the AVX2 test's operations, with
// AVX-512VL's masks and compress. A single hit slot is visited next at
// once: a branch, which the CPU mostly predicts and then runs ahead of,
// where a choice among several lies on the chain of dependent node
// visits. Of two or more, the nearest (nearest_slot()) is visited next
// and the others are pushed in slot order, with no sort and no branch on
// their number.
template <int W>
struct Avx512Lanes;
template <>
struct Avx512Lanes<16> {
  using Wide = NodeRay16;  // the ray's planes, one lane per slot
  using Tn = __m512;       // entry t per slot
};
template <>
struct Avx512Lanes<8> {
  using Wide = NodeRay8;
  using Tn = __m256;
};
template <int W, bool kFetchPushed, class Leaf>
RAYPICK_TARGET_AVX512 TraversalStats walk_avx512(std::span<const WideNodeOf<W>> nodes,
                                                 const Ray& ray, Leaf& leaf) {
  using Wide = typename Avx512Lanes<W>::Wide;
  using Tn = typename Avx512Lanes<W>::Tn;
  TraversalStats st;
  if (nodes.empty()) return st;
  const NodeRay r(ray);
  const Wide rw(r);
  float tmax = r.inv.tmax;
  StackOf<W> s;
  std::uint32_t index = 0, count = 0;
  for (;;) {
    if (count != 0) {
      ++st.leaves_visited;
      if constexpr (std::is_invocable_v<Leaf&, LeafRun, float&>) {
        st.prims_tested += count;
        if (leaf(LeafRun{index, count}, tmax)) return st;
      } else {
        for (std::uint32_t i = 0; i < count; ++i) {
          ++st.prims_tested;
          if (leaf(index + i, tmax)) return st;
        }
      }
    } else {
      const WideNodeOf<W>& n = nodes[index];
      ++st.nodes_visited;
      Tn tn;
      const unsigned mask = test_node_avx512(n, r, rw, tmax, tn);
      if (mask != 0) {
        int next = std::countr_zero(mask);
        if ((mask & (mask - 1)) != 0) {
          next = nearest_slot(mask, tn);
          const unsigned rest = mask & ~(1u << next);
          push_slots(n, rest, tn, s);
          if constexpr (kFetchPushed) {
            for (unsigned m = rest; m != 0; m &= m - 1) {
              const int slot = std::countr_zero(m);
              if (n.count[slot] == 0) compiler::prefetch_lines(nodes[n.child[slot]]);
            }
          }
        }
        index = n.child[next];
        count = n.count[next];
        continue;
      }
    }
    // Pop the next entry that can still hold a hit at t <= tmax.
    for (;;) {
      if (s.top == 0) return st;
      --s.top;
      if (s.tnear[s.top] <= tmax) break;
    }
    index = s.index[s.top];
    count = s.count[s.top];
  }
}
#endif

}  // namespace wide_detail

template <int W>
template <class Leaf>
TraversalStats WideBvhOf<W>::traverse(const Ray& ray, Leaf&& leaf) const {
#if RAYPICK_WIDE_AVX512
  if (node_test_ == NodeTest::kAvx512) return traverse_avx512(ray, leaf);
#endif
#if RAYPICK_WIDE_AVX2
  if (node_test_ == NodeTest::kAvx2) return traverse_avx2(ray, leaf);
#endif
  const std::span<const Node> nodes(nodes_);
  if (fetch_pushed_) return wide_detail::walk<wide_detail::IsaSse, true>(nodes, ray, leaf);
  return wide_detail::walk<wide_detail::IsaSse, false>(nodes, ray, leaf);
}

#if RAYPICK_WIDE_AVX2
// The same loop in a function of the AVX2 target, where GCC inlines the
// AVX node test.
template <int W>
template <class Leaf>
RAYPICK_TARGET_AVX2 TraversalStats WideBvhOf<W>::traverse_avx2(const Ray& ray,
                                                               Leaf&& leaf) const {
  const std::span<const Node> nodes(nodes_);
  if (fetch_pushed_) return wide_detail::walk<wide_detail::IsaAvx2, true>(nodes, ray, leaf);
  return wide_detail::walk<wide_detail::IsaAvx2, false>(nodes, ray, leaf);
}
#endif

#if RAYPICK_WIDE_AVX512
template <int W>
template <class Leaf>
RAYPICK_TARGET_AVX512 TraversalStats WideBvhOf<W>::traverse_avx512(const Ray& ray,
                                                                   Leaf&& leaf) const {
  const std::span<const Node> nodes(nodes_);
  if (fetch_pushed_) return wide_detail::walk_avx512<W, true>(nodes, ray, leaf);
  return wide_detail::walk_avx512<W, false>(nodes, ray, leaf);
}
#endif

namespace wide_detail {

// traverse_interleaved()'s loop over nodes of either width, once for every
// policy. Not forced inline: forced, it halved the 8-wide batch at a
// million objects (1.9 to 0.8 Mrays/s), its leaf steps no longer inlined.
template <class Isa, int K, class Node, class Leaf, class PrefetchLeaf>
inline void interleave(std::span<const Node> nodes, std::span<const Ray> rays, Leaf& leaf,
                       PrefetchLeaf& prefetch_leaf) {
  constexpr int W = Node::kWidth;
  if (nodes.empty() || rays.empty()) return;
  struct Lane {
    NodeRay r;
    float tmax;
    Entry cur;
    int top;
    std::size_t ray;
    Entry* stack;
  };
  // Raw storage: NodeRay has no default constructor. The stacks are left
  // uninitialized: only what is pushed is read.
  alignas(Lane) unsigned char storage[K * sizeof(Lane)];
  Lane* lanes = reinterpret_cast<Lane*>(storage);
  // On the heap: K stacks could overflow a small thread stack.
  constexpr int kStack = kStackSizeOf<W>;
  const auto stacks = std::make_unique_for_overwrite<Entry[]>(K * kStack);
  bool active[K];
  std::size_t next = 0;
  int running = 0;
  auto start = [&](int k) {
    const NodeRay r(rays[next]);
    new (&lanes[k]) Lane{r, r.inv.tmax, Entry{0, 0, r.inv.tmin}, 0, next, &stacks[k * kStack]};
    ++next;
  };
  for (int k = 0; k < K; ++k) {
    active[k] = next < rays.size();
    if (active[k]) {
      start(k);
      ++running;
    }
  }
  while (running > 0) {
    for (int k = 0; k < K; ++k) {
      if (!active[k]) continue;
      Lane& l = lanes[k];
      bool more = true;
      bool stop = false;
      if (l.cur.count != 0) {
        for (std::uint32_t i = 0; i < l.cur.count && !stop; ++i) {
          stop = leaf(l.ray, l.cur.index + i, l.tmax);
        }
        more = !stop && pop(l.stack, l.top, l.tmax, l.cur);
      } else {
        const Node& n = nodes[l.cur.index];
        alignas(4 * W) float tn[W];  // a whole vector of the node's test
        const unsigned mask = Isa(l.r).test(n, l.tmax, tn);
        if (mask != 0) {
          l.cur = order_hits(n, mask, tn, l.stack, l.top);
        } else {
          more = pop(l.stack, l.top, l.tmax, l.cur);
        }
      }
      if (!more) {
        // This ray is done: the lane takes the next one.
        if (next < rays.size()) {
          start(k);
        } else {
          active[k] = false;
          --running;
          continue;
        }
      }
      // Ask for what this lane reads next; the other lanes run meanwhile.
      if (l.cur.count != 0) {
        prefetch_leaf(l.cur.index, l.cur.count);
      } else {
        compiler::prefetch_lines(nodes[l.cur.index]);
      }
    }
  }
}

#if RAYPICK_WIDE_AVX512
// The loop with the 16-slot test, from a function of the AVX-512 target
// (GCC keeps the loop out of line and calls the test).
template <int K, class Leaf, class PrefetchLeaf>
RAYPICK_TARGET_AVX512 void interleave_avx512(std::span<const WideNode16> nodes,
                                             std::span<const Ray> rays, Leaf& leaf,
                                             PrefetchLeaf& prefetch_leaf) {
  interleave<IsaAvx512, K>(nodes, rays, leaf, prefetch_leaf);
}
#endif
#if RAYPICK_WIDE_AVX2
// The loop with the AVX2 test on 16-wide nodes (two halves), likewise.
template <int K, class Leaf, class PrefetchLeaf>
RAYPICK_TARGET_AVX2 void interleave_avx2(std::span<const WideNode16> nodes,
                                         std::span<const Ray> rays, Leaf& leaf,
                                         PrefetchLeaf& prefetch_leaf) {
  interleave<IsaAvx2, K>(nodes, rays, leaf, prefetch_leaf);
}
#endif

}  // namespace wide_detail

template <int W>
template <int K, class Leaf, class PrefetchLeaf>
void WideBvhOf<W>::traverse_interleaved(std::span<const Ray> rays, Leaf&& leaf,
                                        PrefetchLeaf&& prefetch_leaf) const {
  // (8 wide, the SSE test serves every node test: the AVX2 test measured
  // no faster in this loop, docs/performance.md, "What was tried".)
#if RAYPICK_WIDE_AVX512
  if constexpr (W == 16) {
    if (node_test_ == NodeTest::kAvx512) {
      wide_detail::interleave_avx512<K>(std::span<const Node>(nodes_), rays, leaf, prefetch_leaf);
      return;
    }
  }
#endif
#if RAYPICK_WIDE_AVX2
  if constexpr (W == 16) {
    if (node_test_ == NodeTest::kAvx2) {
      wide_detail::interleave_avx2<K>(std::span<const Node>(nodes_), rays, leaf, prefetch_leaf);
      return;
    }
  }
#endif
  wide_detail::interleave<wide_detail::IsaSse, K>(std::span<const Node>(nodes_), rays, leaf,
                                                  prefetch_leaf);
}

}  // namespace raypick
