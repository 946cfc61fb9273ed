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
    } else {
      const auto& n = nodes[index];
      ++st.nodes_visited;
      unsigned mask;
      int near;
      if constexpr (k16) {
        __m512 tn;
        mask = test16(n, r, tmax, tn);
        if (mask != 0) {
          // The nearest hit slot next (ties: the lowest slot); the others
          // pushed in slot order.
          const __m512 tv = _mm512_mask_blend_ps(static_cast<__mmask16>(mask),
                                                 _mm512_set1_ps(kInfinity), tn);
          const float m = _mm512_reduce_min_ps(tv);
          const auto eq = static_cast<unsigned>(_mm512_mask_cmp_ps_mask(
              static_cast<__mmask16>(mask), tv, _mm512_set1_ps(m), _CMP_EQ_OQ));
          near = std::countr_zero(eq != 0 ? eq : mask);  // (eq holds m's lane)
          push<true>(n, mask & ~(1u << near), tn, s);
        }
      } else {
        alignas(32) float tf[8];
        mask = wide_detail::test_node_avx2(n, r.r, r8, tmax, tf);
        if (mask != 0) {
          const __m256 tn = _mm256_load_ps(tf);
          const __m256 tv = _mm256_mask_blend_ps(static_cast<__mmask8>(mask),
                                                 _mm256_set1_ps(kInfinity), tn);
          __m256 m = _mm256_min_ps(tv, _mm256_permute_ps(tv, 0xB1));
          m = _mm256_min_ps(m, _mm256_permute_ps(m, 0x4E));
          m = _mm256_min_ps(m, _mm256_permute2f128_ps(m, m, 0x01));
          const auto eq = static_cast<unsigned>(
              _mm256_mask_cmp_ps_mask(static_cast<__mmask8>(mask), tv, m, _CMP_EQ_OQ));
          near = std::countr_zero(eq != 0 ? eq : mask);
          push<true>(n, mask & ~(1u << near), tn, s);
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

}  // namespace raypick::floorq

#pragma GCC pop_options
