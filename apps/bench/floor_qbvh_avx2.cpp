// Compiled with -mavx2 (apps/CMakeLists.txt): the AVX2 policy's query.
#include "floor_qbvh.h"

namespace raypick::floorq {
namespace {

// kCompress[mask]: the indices of mask's set bits, lowest first, then 0s.
struct CompressTable {
  alignas(64) std::uint8_t idx[256][8];
  CompressTable() {
    for (unsigned m = 0; m < 256; ++m) {
      int k = 0;
      for (int s = 0; s < 8; ++s) {
        if (m & (1u << s)) idx[m][k++] = static_cast<std::uint8_t>(s);
      }
      while (k < 8) idx[m][k++] = 0;
    }
  }
};
const CompressTable kCompress;

// A structure-of-arrays stack with room for a full 8-lane store at the top.
struct SoaStack {
  static constexpr int kSize = (WideNode::kWidth - 1) * kBvhMaxDepth + 16;
  alignas(32) std::uint32_t index[kSize];
  alignas(32) std::uint32_t count[kSize];
  alignas(32) float t[kSize];
  int top = 0;
};

// The walk over WideNodes with a SoaStack; leaf(entry, tmax) as
// WideBvh::traverse's. order(r, n, node, mask, tn, stack, index, count)
// stores node `node`'s hit slots on the stack and sets index and count to
// the one visited next: the variants differ only there.
template <class Order, class LeafFn>
[[gnu::always_inline]] inline TraversalStats walk_soa(const WideBvh& tree, const Ray& ray,
                                                      Order&& order, LeafFn&& leaf) {
  TraversalStats st;
  const std::span<const WideNode> nodes = tree.nodes();
  if (nodes.empty()) return st;
  const wide_detail::NodeRay r(ray);
  const wide_detail::NodeRay8 r8(r);
  float tmax = r.inv.tmax;
  SoaStack s;
  std::uint32_t index = 0, count = 0;
  for (;;) {
    if (count != 0) {
      ++st.leaves_visited;
      st.prims_tested += count;
      for (std::uint32_t i = 0; i < count; ++i) {
        if (leaf(index + i, tmax)) return st;
      }
    } else {
      const WideNode& n = nodes[index];
      ++st.nodes_visited;
      alignas(32) float tn[8];
      const unsigned mask = wide_detail::test_node_avx2(n, r, r8, tmax, tn);
      if (mask != 0) {
        order(r, n, index, mask, tn, s, index, count);
        continue;
      }
    }
    for (;;) {
      if (s.top == 0) return st;
      --s.top;
      if (s.t[s.top] <= tmax) break;
    }
    index = s.index[s.top];
    count = s.count[s.top];
  }
}

// The compress order: the hit slots in slot order, the nearest taken out
// (the last hit lane takes its place).
struct CompressOrder {
  [[gnu::always_inline]] void operator()(const wide_detail::NodeRay&, const WideNode& n,
                                         std::uint32_t, unsigned mask, const float* tn,
                                         SoaStack& s, std::uint32_t& index,
                                         std::uint32_t& count) const {
    const __m256 inf = _mm256_set1_ps(kInfinity);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i perm = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(kCompress.idx[mask])));
    const int hits = std::popcount(mask);
    const __m256 t = _mm256_permutevar8x32_ps(_mm256_load_ps(tn), perm);
    const __m256i c = _mm256_permutevar8x32_epi32(
        _mm256_load_si256(reinterpret_cast<const __m256i*>(n.child)), perm);
    const __m256i k = _mm256_permutevar8x32_epi32(
        _mm256_load_si256(reinterpret_cast<const __m256i*>(n.count)), perm);
    // The nearest of the first `hits` lanes (ties: the lowest lane).
    const __m256 valid =
        _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(hits), lane));
    const __m256 tv = _mm256_blendv_ps(inf, t, valid);
    __m256 m = _mm256_min_ps(tv, _mm256_permute_ps(tv, 0xB1));
    m = _mm256_min_ps(m, _mm256_permute_ps(m, 0x4E));
    m = _mm256_min_ps(m, _mm256_permute2f128_ps(m, m, 0x01));
    const int near = std::countr_zero(
        static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(tv, m, _CMP_EQ_OQ))) |
        (1u << (hits - 1)));
    const int top = s.top;
    _mm256_storeu_ps(s.t + top, t);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(s.index + top), c);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(s.count + top), k);
    index = s.index[top + near];
    count = s.count[top + near];
    const int last = top + hits - 1;
    s.index[top + near] = s.index[last];
    s.count[top + near] = s.count[last];
    s.t[top + near] = s.t[last];
    s.top = last;
  }
};

// kReverse[mask]: the indices of mask's set bits, highest first, then 0s.
struct ReverseTable {
  alignas(64) std::uint8_t idx[256][8];
  ReverseTable() {
    for (unsigned m = 0; m < 256; ++m) {
      int k = 0;
      for (int s = 7; s >= 0; --s) {
        if (m & (1u << s)) idx[m][k++] = static_cast<std::uint8_t>(s);
      }
      while (k < 8) idx[m][k++] = 0;
    }
  }
};
const ReverseTable kReverse;

// The octant order: the hit slots, permuted near to far by the node's
// order for the ray's octant, stored far first; the nearest (the last
// stored) is visited next.
struct OctantOrder {
  std::span<const std::uint64_t> order;
  [[gnu::always_inline]] void operator()(const wide_detail::NodeRay& r, const WideNode& n,
                                         std::uint32_t node, unsigned mask, const float* tn,
                                         SoaStack& s, std::uint32_t& index,
                                         std::uint32_t& count) const {
    const unsigned octant = (r.inv.neg[0] ? 1u : 0u) | (r.inv.neg[1] ? 2u : 0u) |
                            (r.inv.neg[2] ? 4u : 0u);
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    // The node's slots near to far, and the mask in that order.
    const __m256i perm = _mm256_cvtepu8_epi32(_mm_loadl_epi64(
        reinterpret_cast<const __m128i*>(&order[std::size_t{node} * 8 + octant])));
    const __m256i lanes = _mm256_cmpeq_epi32(
        _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(mask)), bit), bit);
    const unsigned pm = static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_permutevar8x32_epi32(lanes, perm))));
    // The hit slots, far first.
    const __m256i sel = _mm256_permutevar8x32_epi32(
        perm, _mm256_cvtepu8_epi32(
                  _mm_loadl_epi64(reinterpret_cast<const __m128i*>(kReverse.idx[pm]))));
    const int top = s.top;
    _mm256_storeu_ps(s.t + top, _mm256_permutevar8x32_ps(_mm256_load_ps(tn), sel));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(s.index + top),
                        _mm256_permutevar8x32_epi32(
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(n.child)), sel));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(s.count + top),
                        _mm256_permutevar8x32_epi32(
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(n.count)), sel));
    s.top = top + std::popcount(mask) - 1;
    index = s.index[s.top];
    count = s.count[s.top];
  }
};

template <class Walk>
Hit obb_query(const Walk& walk, std::span<const Leaf> leaves, std::span<const Aabb> mesh_bounds,
              const Ray& ray, TraversalStats* stats) {
  Hit best;
  const TraversalStats st = walk([&](std::uint32_t entry, float& tmax) {
    const Leaf& l = leaves[entry];
    if (l.mesh == kInvalidId) return false;
    const float t = obb_entry(l.frame, mesh_bounds[l.mesh], ray, tmax);
    if (t != kInfinity && (t < best.t || (t == best.t && l.object < best.object))) {
      best.object = l.object;
      best.t = t;
      tmax = t;
    }
    return false;
  });
  if (stats) *stats = st;
  return best;
}

}  // namespace

std::vector<std::uint64_t> octant_order(const WideBvh& top) {
  const std::span<const WideNode> nodes = top.nodes();
  std::vector<std::uint64_t> out(nodes.size() * 8);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const WideNode& n = nodes[i];
    for (unsigned o = 0; o < 8; ++o) {
      float key[8];
      int slots[8];
      for (int s = 0; s < 8; ++s) {
        slots[s] = s;
        const bool used = n.is_leaf(s) || n.is_inner(s);
        float k = 0.0f;
        for (int a = 0; a < 3; ++a) {
          const float c = 0.5f * (n.bounds[a][s] + n.bounds[3 + a][s]);
          k += (o >> a & 1) ? -c : c;
        }
        key[s] = used ? k : kInfinity;
      }
      std::stable_sort(slots, slots + 8, [&](int a, int b) { return key[a] < key[b]; });
      std::uint64_t packed = 0;
      for (int k = 0; k < 8; ++k) packed |= std::uint64_t(slots[k]) << (8 * k);
      out[i * 8 + o] = packed;
    }
  }
  return out;
}

Hit intersect_octant(const WideBvh& top, std::span<const std::uint64_t> order,
                     std::span<const Leaf> leaves, std::span<const Aabb> mesh_bounds,
                     const Ray& ray, TraversalStats* stats) {
  return obb_query([&](auto&& leaf) { return walk_soa(top, ray, OctantOrder{order}, leaf); },
                   leaves, mesh_bounds, ray, stats);
}

TraversalStats walk_octant(const WideBvh& top, std::span<const std::uint64_t> order,
                           const Ray& ray) {
  return walk_soa(top, ray, OctantOrder{order}, [](std::uint32_t, float&) { return false; });
}

Hit intersect_compress(const WideBvh& top, std::span<const Leaf> leaves,
                       std::span<const Aabb> mesh_bounds, const Ray& ray, TraversalStats* stats) {
  return obb_query([&](auto&& leaf) { return walk_soa(top, ray, CompressOrder{}, leaf); },
                   leaves, mesh_bounds, ray, stats);
}

TraversalStats walk_compress(const WideBvh& top, const Ray& ray) {
  return walk_soa(top, ray, CompressOrder{}, [](std::uint32_t, float&) { return false; });
}

float leaf_avx2(const QBvh& tree, std::uint32_t first, std::uint32_t count, const Ray& ray,
                float tmax);

Hit intersect_avx2(const QBvh& tree, const Ray& ray, TraversalStats* stats) {
  return intersect_obb<IsaAvx2>(tree, ray, stats);
}

Hit intersect_folded(const QBvh& tree, const Ray& ray, TraversalStats* stats) {
  return intersect_obb<IsaAvx2Folded>(tree, ray, stats);
}

TraversalStats walk_folded(const QBvh& tree, const Ray& ray) {
  return traverse<IsaAvx2Folded>(tree, ray,
                                 [](std::uint32_t, std::uint32_t, float&) { return false; });
}

TraversalStats walk_avx2(const QBvh& tree, const Ray& ray) {
  return traverse<IsaAvx2>(tree, ray, [](std::uint32_t, std::uint32_t, float&) { return false; });
}

TraversalStats walk_leaves_avx2(const QBvh& tree, const Ray& ray) {
  return traverse<IsaAvx2>(tree, ray, [&](std::uint32_t first, std::uint32_t count, float& tmax) {
    asm volatile("" : : "x"(leaf_avx2(tree, first, count, ray, tmax)));
    return false;
  });
}

float leaf_avx2(const QBvh& tree, std::uint32_t first, std::uint32_t count, const Ray& ray,
                float tmax) {
  float best = kInfinity;
  const std::uint32_t end = first + count;
  for (std::uint32_t b = first / 8; b * 8 < end; ++b) {
    const std::uint32_t lo = std::max(first, b * 8) - b * 8;
    const std::uint32_t hi = std::min(end, b * 8 + 8) - b * 8;
    const unsigned lanes = ((1u << hi) - 1u) & ~((1u << lo) - 1u);
    std::uint32_t object = kInvalidId;
    best = std::min(best, IsaAvx2::test_obbs(tree.blocks[b], lanes, ray, tmax, object));
  }
  return best;
}

}  // namespace raypick::floorq
