// The wide tree's traversal: the node step per instruction set (a policy:
// IsaSse, the x86-64 baseline with a scalar fallback, and IsaAvx2), and
// the loops built on that one step: single rays (walk(), for traverse()
// and traverse_avx2()) and many rays interleaved. Included by wide_bvh.h.
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

// Each node visit pops one entry and pushes at most kWidth - 1 (the
// nearest hit slot is taken next without a push).
inline constexpr int kStackSize = (WideNode::kWidth - 1) * kBvhMaxDepth + 8;

// What a node test needs of a ray, computed once per ray.
struct NodeRay {
  RayInv inv;
  int near_row[3], far_row[3];  // rows of the near and far planes per axis
#if RAYPICK_WIDE_SSE
  __m128 o[3], i[3], tmin;
#endif
  RAYPICK_GEOMETRY_INLINE explicit NodeRay(const Ray& ray) : inv(ray) {
    for (int a = 0; a < 3; ++a) {
      near_row[a] = inv.neg[a] ? 3 + a : a;
      far_row[a] = inv.neg[a] ? a : 3 + a;
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
RAYPICK_GEOMETRY_INLINE unsigned test_node(const WideNode& n, const NodeRay& r, float tmax,
                          float* tn) {
#if RAYPICK_WIDE_SSE
  // Scalar line per slot and axis, as in slab_interval():
  //   tnear = t0 > tnear ? t0 : tnear;  tfar = t1 < tfar ? t1 : tfar;
  // _mm_max_ps(a, b) and _mm_min_ps(a, b) return b when a is NaN, so a NaN
  // plane distance leaves the interval unchanged, as there.
  unsigned mask = 0;
  const __m128 tmax4 = _mm_set1_ps(tmax);
  for (int h = 0; h < WideNode::kWidth; h += 4) {
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
  for (int s = 0; s < WideNode::kWidth; ++s) {
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

// test_node() on all 8 slots at once: the same operations, in the same
// order, on each slot (so the same tn and the same mask; VMAXPS, VMINPS
// and the ordered compare treat NaN as MAXPS, MINPS and CMPLEPS do).
// tn must be 32-byte aligned.
[[gnu::always_inline]] RAYPICK_TARGET_AVX2 inline unsigned test_node_avx2(
    const WideNode& n, const NodeRay& r, const NodeRay8& r8, float tmax, float* tn) {
  __m256 t_near = r8.tmin, t_far = _mm256_set1_ps(tmax);
  for (int a = 0; a < 3; ++a) {
    t_near = _mm256_max_ps(
        _mm256_mul_ps(_mm256_sub_ps(_mm256_load_ps(n.bounds[r.near_row[a]]), r8.o[a]), r8.i[a]),
        t_near);
    t_far = _mm256_min_ps(
        _mm256_mul_ps(_mm256_sub_ps(_mm256_load_ps(n.bounds[r.far_row[a]]), r8.o[a]), r8.i[a]),
        t_far);
  }
  _mm256_store_ps(tn, t_near);
  return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(t_near, t_far, _CMP_LE_OS)));
}
#endif

// Given a node's hit slots (mask != 0): returns the nearest, to be visited
// next, and pushes the others, farthest deepest. One and two hits, the
// common cases, need no sort.
// Node: WideNode, or any node with child[] and count[] arrays of 8 slots
// (raypick_floor's compressed prototype).
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
  Entry hits[WideNode::kWidth] = {e0, e1};
  int k = 2;
  while (mask != 0) {
    const int sk = std::countr_zero(mask);
    mask &= mask - 1;
    hits[k++] = Entry{n.child[sk], n.count[sk], tn[sk]};
  }
  // Sort by descending t (ties are the leaf callback's to break).
  for (int i = 1; i < k; ++i) {
    const Entry h = hits[i];
    int j = i;
    while (j > 0 && hits[j - 1].tnear < h.tnear) {
      hits[j] = hits[j - 1];
      --j;
    }
    hits[j] = h;
  }
  for (int j = 0; j + 1 < k; ++j) stack[top++] = hits[j];
  return hits[k - 1];
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
//   unsigned test(const WideNode& n, float tmax, float* tn)
// returns the slots hit and their entry t (tn 32-byte aligned). Every
// policy computes the same mask and tn bit for bit (the tests force each).
struct IsaSse {
  const NodeRay& r;
  explicit IsaSse(const NodeRay& ray) : r(ray) {}
  RAYPICK_GEOMETRY_INLINE unsigned test(const WideNode& n, float tmax, float* tn) const {
    return test_node(n, r, tmax, tn);
  }
};
#if RAYPICK_WIDE_AVX2
// Only in functions of the AVX2 target (traverse_avx2): its steps are
// inlined there.
struct IsaAvx2 {
  const NodeRay& r;
  const NodeRay8 r8;
  RAYPICK_TARGET_AVX2 explicit IsaAvx2(const NodeRay& ray) : r(ray), r8(ray) {}
  RAYPICK_TARGET_AVX2 inline unsigned test(const WideNode& n, float tmax, float* tn) const {
    return test_node_avx2(n, r, r8, tmax, tn);
  }
};
#endif

// The single-ray loop, once for every policy: traverse()'s contract.
template <class Isa, class Leaf>
RAYPICK_GEOMETRY_INLINE TraversalStats walk(std::span<const WideNode> nodes, const Ray& ray,
                                            Leaf& leaf) {
  TraversalStats st;
  if (nodes.empty()) return st;
  const NodeRay r(ray);
  const Isa isa(r);
  float tmax = r.inv.tmax;
  Entry stack[kStackSize];
  int top = 0;
  Entry cur{0, 0, r.inv.tmin};
  for (;;) {
    if (cur.count != 0) {
      ++st.leaves_visited;
      for (std::uint32_t i = 0; i < cur.count; ++i) {
        ++st.prims_tested;
        if (leaf(cur.index + i, tmax)) return st;
      }
    } else {
      const WideNode& n = nodes[cur.index];
      ++st.nodes_visited;
      alignas(32) float tn[WideNode::kWidth];
      const unsigned mask = isa.test(n, tmax, tn);
      if (mask != 0) {
        cur = order_hits(n, mask, tn, stack, top);
        continue;
      }
    }
    if (!pop(stack, top, tmax, cur)) return st;
  }
}

}  // namespace wide_detail

template <class Leaf>
TraversalStats WideBvh::traverse(const Ray& ray, Leaf&& leaf) const {
#if RAYPICK_WIDE_AVX2
  if (avx2_) return traverse_avx2(ray, leaf);
#endif
  return wide_detail::walk<wide_detail::IsaSse>(nodes_, ray, leaf);
}

#if RAYPICK_WIDE_AVX2
// The same loop in a function of the AVX2 target, where GCC inlines the
// AVX node test.
template <class Leaf>
RAYPICK_TARGET_AVX2 TraversalStats WideBvh::traverse_avx2(const Ray& ray, Leaf&& leaf) const {
  return wide_detail::walk<wide_detail::IsaAvx2>(nodes_, ray, leaf);
}
#endif

template <int K, class Leaf, class PrefetchLeaf>
void WideBvh::traverse_interleaved(std::span<const Ray> rays, Leaf&& leaf,
                                   PrefetchLeaf&& prefetch_leaf) const {
  using namespace wide_detail;
  if (nodes_.empty() || rays.empty()) return;
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
  const auto stacks = std::make_unique_for_overwrite<Entry[]>(K * kStackSize);
  bool active[K];
  std::size_t next = 0;
  int running = 0;
  auto start = [&](int k) {
    const NodeRay r(rays[next]);
    new (&lanes[k]) Lane{r, r.inv.tmax, Entry{0, 0, r.inv.tmin}, 0, next, &stacks[k * kStackSize]};
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
        const WideNode& n = nodes_[l.cur.index];
        alignas(32) float tn[WideNode::kWidth];
        const unsigned mask = IsaSse(l.r).test(n, l.tmax, tn);
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
        const char* p = reinterpret_cast<const char*>(&nodes_[l.cur.index]);
        for (std::size_t b = 0; b < sizeof(WideNode); b += 64) compiler::prefetch(p + b);
      }
    }
  }
}

}  // namespace raypick
