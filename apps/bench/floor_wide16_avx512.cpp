// The 16-wide walks of floor_wide16.h, compiled for AVX-512 by the pragma
// below, which comes after every include: only this file's own functions
// get the target, so no inline function shared with other files (glm,
// std, the engine's headers) is emitted with AVX-512 instructions that
// the linker could pick for a CPU without them. Callers check
// cpu_has_avx512() first.
#include "floor_wide16.h"

#include <immintrin.h>

#include <bit>
#include <type_traits>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw")

namespace raypick::floorq {
namespace {

// The ray as the library's 16-slot test takes it: its planes' rows and
// reciprocals (NodeRay), and each broadcast to 16 lanes (NodeRay16).
struct Ray16 {
  wide_detail::NodeRay r;
  wide_detail::NodeRay16 r16;
  explicit Ray16(const Ray& ray) : r(ray), r16(r) {}
};

// The library's 16-slot test (wide_detail::test_node_avx512).
[[gnu::always_inline]] inline __mmask16 test16(const Node16& n, const Ray16& r, float tmax,
                                               __m512& t_near) {
  return static_cast<__mmask16>(wide_detail::test_node_avx512(n, r.r, r.r16, tmax, t_near));
}

// The library's stack of walk_avx512 (structure of arrays, room for a
// whole node's slots at the top).
using Stack16 = wide_detail::Stack16;

// Either tree's node array.
inline std::span<const Node16> nodes_of(const Wide16& tree) { return tree.nodes; }
inline std::span<const WideNode> nodes_of(const WideBvh& tree) { return tree.nodes(); }

// Pushes the slots of `mask` in slot order (child, count and, with kWithT,
// entry t) by a register compress and one plain store each.
template <bool kWithT>
[[gnu::always_inline]] inline void push(const Node16& n, unsigned mask, __m512 tn, Stack16& s) {
  const auto m = static_cast<__mmask16>(mask);
  _mm512_storeu_si512(s.index + s.top, _mm512_maskz_compress_epi32(m, _mm512_load_si512(n.child)));
  _mm512_storeu_si512(s.count + s.top, _mm512_maskz_compress_epi32(m, _mm512_load_si512(n.count)));
  if constexpr (kWithT) _mm512_storeu_ps(s.tnear + s.top, _mm512_maskz_compress_ps(m, tn));
  s.top += std::popcount(mask);
}
template <bool kWithT>
[[gnu::always_inline]] inline void push(const WideNode& n, unsigned mask, __m256 tn, Stack16& s) {
  const auto m = static_cast<__mmask8>(mask);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(s.index + s.top),
                      _mm256_maskz_compress_epi32(
                          m, _mm256_load_si256(reinterpret_cast<const __m256i*>(n.child))));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(s.count + s.top),
                      _mm256_maskz_compress_epi32(
                          m, _mm256_load_si256(reinterpret_cast<const __m256i*>(n.count))));
  if constexpr (kWithT) _mm256_storeu_ps(s.tnear + s.top, _mm256_maskz_compress_ps(m, tn));
  s.top += std::popcount(mask);
}

// The walk at the ray's tmax over either tree (Node16 in 512-bit vectors,
// WideNode in 256-bit ones): every hit slot pushed, one popped.
template <class Tree>
TraversalStats walk_compress512(const Tree& tree, const Ray& ray) {
  constexpr bool k16 = std::is_same_v<Tree, Wide16>;
  TraversalStats st;
  const auto nodes = nodes_of(tree);
  if (nodes.empty()) return st;
  const Ray16 r(ray);
  const wide_detail::NodeRay8 r8(r.r);
  const float tmax = r.r.inv.tmax;
  Stack16 s;
  std::uint32_t index = 0, count = 0;
  for (;;) {
    if (count != 0) {
      ++st.leaves_visited;
      st.prims_tested += count;
    } else {
      const auto& n = nodes[index];
      ++st.nodes_visited;
      if constexpr (k16) {
        __m512 tn;
        push<false>(n, test16(n, r, tmax, tn), tn, s);
      } else {
        alignas(32) float tn[8];
        push<false>(n, wide_detail::test_node_avx2(n, r.r, r8, tmax, tn), _mm256_load_ps(tn), s);
      }
    }
    if (s.top == 0) return st;
    --s.top;
    index = s.index[s.top];
    count = s.count[s.top];
  }
}

// A leaf slot's run of leaf copies, each OBB tested against the ray in
// the Picker's tie order (the nearest t, then the lowest object id).
inline void test_leaf(std::span<const Leaf> leaves, std::span<const Aabb> mesh_bounds,
                      const Ray& ray, std::uint32_t index, std::uint32_t count,
                      TraversalStats& st, Hit& best, float& tmax) {
  ++st.leaves_visited;
  st.prims_tested += count;
  for (std::uint32_t k = 0; k < count; ++k) {
    const Leaf& l = leaves[index + k];
    if (l.mesh == kInvalidId) continue;
    const float t = obb_entry(l.frame, mesh_bounds[l.mesh], ray, tmax);
    if (t != kInfinity && (t < best.t || (t == best.t && l.object < best.object))) {
      best.object = l.object;
      best.t = t;
      tmax = t;
    }
  }
}

// The closest-hit loop over either tree: Node16 with 512-bit vectors, or
// WideNode with 256-bit ones (AVX-512VL), the same steps.
template <class Tree>
Hit intersect_compress512(const Tree& tree, std::span<const Leaf> leaves,
                       std::span<const Aabb> mesh_bounds, const Ray& ray, TraversalStats* stats) {
  constexpr bool k16 = std::is_same_v<Tree, Wide16>;
  Hit best;
  TraversalStats st;
  const auto nodes = nodes_of(tree);
  if (nodes.empty()) {
    if (stats) *stats = st;
    return best;
  }
  const Ray16 r(ray);
  const wide_detail::NodeRay8 r8(r.r);
  float tmax = r.r.inv.tmax;
  Stack16 s;
  std::uint32_t index = 0, count = 0;
  for (;;) {
    if (count != 0) {
      test_leaf(leaves, mesh_bounds, ray, index, count, st, best, tmax);
    } else {
      const auto& n = nodes[index];
      ++st.nodes_visited;
      unsigned mask;
      int near;
      if constexpr (k16) {
        __m512 tn;
        mask = test16(n, r, tmax, tn);
        if (mask != 0) {
          // A single hit slot next at once (a branch the CPU predicts and
          // runs ahead of); of several, the nearest by one integer
          // reduction over keys of t's bits and the slot (the library's
          // walk_avx512), the others pushed in slot order.
          near = std::countr_zero(mask);
          if ((mask & (mask - 1)) != 0) {
            near = wide_detail::nearest_slot(mask, tn);
            push<true>(n, mask & ~(1u << near), tn, s);
          }
        }
      } else {
        alignas(32) float tf[8];
        mask = wide_detail::test_node_avx2(n, r.r, r8, tmax, tf);
        if (mask != 0) {
          const __m256 tn = _mm256_load_ps(tf);
          near = std::countr_zero(mask);
          if ((mask & (mask - 1)) != 0) {
            near = wide_detail::nearest_slot(mask, tn);
            push<true>(n, mask & ~(1u << near), tn, s);
          }
        }
      }
      if (mask != 0) {
        index = n.child[near];
        count = n.count[near];
        continue;
      }
    }
    for (;;) {
      if (s.top == 0) {
        if (stats) *stats = st;
        return best;
      }
      --s.top;
      if (s.tnear[s.top] <= tmax) break;
    }
    index = s.index[s.top];
    count = s.count[s.top];
  }
}

// The quantized node's test: per axis, a slot's plane is origin + q *
// scale, so its distance along the ray is q * (scale * inv) + (origin -
// org) * inv, one multiply-add per row after two scalar products per
// node. A NaN (a zero direction component's 0 * inf) leaves the interval
// unchanged, as in the float test: the slot is kept, never lost.
[[gnu::always_inline]] inline __mmask16 testq16(const QNode16& n, const Ray16& r, float tmax,
                                                __m512& t_near) {
  t_near = r.r16.tmin;
  __m512 t_far = _mm512_set1_ps(tmax);
  for (int a = 0; a < 3; ++a) {
    const float inv = r.r.inv.inv_dir[a];
    const __m512 s = _mm512_set1_ps(n.scale[a] * inv);
    const __m512 b = _mm512_set1_ps((n.origin[a] - r.r.inv.org[a]) * inv);
    const __m512 qn = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(n.q[r.r.near_row[a]]))));
    const __m512 qf = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(n.q[r.r.far_row[a]]))));
    t_near = _mm512_max_ps(_mm512_fmadd_ps(qn, s, b), t_near);
    t_far = _mm512_min_ps(_mm512_fmadd_ps(qf, s, b), t_far);
  }
  return static_cast<__mmask16>(_mm512_cmp_ps_mask(t_near, t_far, _CMP_LE_OS) & n.used);
}

// The quantized walks' stack: a slot's packed child and entry t.
struct StackQ {
  static constexpr int kSize = wide_detail::kStackSizeOf<16>;
  alignas(64) std::uint32_t child[kSize];
  alignas(64) float tnear[kSize];
  int top = 0;
};

template <bool kWithT>
[[gnu::always_inline]] inline void pushq(const QNode16& n, unsigned mask, __m512 tn, StackQ& s) {
  const auto m = static_cast<__mmask16>(mask);
  _mm512_storeu_si512(s.child + s.top,
                      _mm512_maskz_compress_epi32(m, _mm512_loadu_si512(n.child)));
  if constexpr (kWithT) _mm512_storeu_ps(s.tnear + s.top, _mm512_maskz_compress_ps(m, tn));
  s.top += std::popcount(mask);
}

TraversalStats walk_q(const QWide16& tree, const Ray& ray) {
  TraversalStats st;
  const auto& nodes = tree.nodes;
  if (nodes.empty()) return st;
  const Ray16 r(ray);
  const float tmax = r.r.inv.tmax;
  StackQ s;
  std::uint32_t c = 0;
  for (;;) {
    const std::uint32_t count = c >> QNode16::kCountShift;
    const std::uint32_t index = c & QNode16::kIndexMask;
    if (count != 0) {
      ++st.leaves_visited;
      st.prims_tested += count;
    } else {
      const QNode16& n = nodes[index];
      ++st.nodes_visited;
      __m512 tn;
      pushq<false>(n, testq16(n, r, tmax, tn), tn, s);
    }
    if (s.top == 0) return st;
    c = s.child[--s.top];
  }
}

Hit intersect_q(const QWide16& tree, std::span<const Leaf> leaves,
                std::span<const Aabb> mesh_bounds, const Ray& ray, TraversalStats* stats) {
  Hit best;
  TraversalStats st;
  const auto& nodes = tree.nodes;
  if (nodes.empty()) {
    if (stats) *stats = st;
    return best;
  }
  const Ray16 r(ray);
  float tmax = r.r.inv.tmax;
  StackQ s;
  std::uint32_t c = 0;
  for (;;) {
    const std::uint32_t count = c >> QNode16::kCountShift;
    const std::uint32_t index = c & QNode16::kIndexMask;
    if (count != 0) {
      test_leaf(leaves, mesh_bounds, ray, index, count, st, best, tmax);
    } else {
      const QNode16& n = nodes[index];
      ++st.nodes_visited;
      __m512 tn;
      const unsigned mask = testq16(n, r, tmax, tn);
      if (mask != 0) {
        int near = std::countr_zero(mask);
        if ((mask & (mask - 1)) != 0) {
          near = wide_detail::nearest_slot(mask, tn);
          pushq<true>(n, mask & ~(1u << near), tn, s);
        }
        c = n.child[near];
        continue;
      }
    }
    for (;;) {
      if (s.top == 0) {
        if (stats) *stats = st;
        return best;
      }
      --s.top;
      if (s.tnear[s.top] <= tmax) break;
    }
    c = s.child[s.top];
  }
}

}  // namespace

TraversalStats walk16(const Wide16& tree, const Ray& ray) { return walk_compress512(tree, ray); }

TraversalStats walk8_compress512(const WideBvh& top, const Ray& ray) {
  return walk_compress512(top, ray);
}

Hit intersect16(const Wide16& tree, std::span<const Leaf> leaves,
                std::span<const Aabb> mesh_bounds, const Ray& ray, TraversalStats* stats) {
  return intersect_compress512(tree, leaves, mesh_bounds, ray, stats);
}

Hit intersect8_compress512(const WideBvh& top, std::span<const Leaf> leaves,
                           std::span<const Aabb> mesh_bounds, const Ray& ray,
                           TraversalStats* stats) {
  return intersect_compress512(top, leaves, mesh_bounds, ray, stats);
}

TraversalStats walkq16(const QWide16& tree, const Ray& ray) { return walk_q(tree, ray); }

Hit intersectq16(const QWide16& tree, std::span<const Leaf> leaves,
                 std::span<const Aabb> mesh_bounds, const Ray& ray, TraversalStats* stats) {
  return intersect_q(tree, leaves, mesh_bounds, ray, stats);
}

}  // namespace raypick::floorq

#pragma GCC pop_options
