// The compressed 8-wide BVH: a prototype that raypick_floor measures (see
// docs/performance.md, "The compressed design"); not part of the library
// until its floor clears the goals: each node stores its 8 child boxes as 8-bit offsets
// from its own box, rounded outward, in 128 bytes (two cache lines) instead
// of WideNode's 256; the top level's leaves hold up to 8 objects whose OBBs
// are tested together, one SIMD lane per object. The node and leaf tests
// exist once per ISA (a policy type); the traversal loop is written once
// over the policy, and each ISA's translation unit is compiled with its own
// flags (-mavx2 for IsaAvx2), so that the default build runs on any x86-64
// and no loop is copied.
//
// Exactness: a node's dequantized child box contains the child's float box
// (checked when quantizing, with the same float operations the tests run),
// and the node test is today's slab test on that box, so it never culls a
// box today's node test keeps; the leaf test computes, lane by lane, the
// same operations in the same order as obb_entry (transform_ray, RayInv,
// slab_interval), so its t is obb_entry's bit for bit.
#pragma once

#include "wide_bvh.h"

#include "raypick/core/hit.h"
#include "raypick/core/obb.h"

#include <immintrin.h>

#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

namespace raypick {

// A node, 128 bytes (two cache lines), 64-byte aligned in its array:
//   bytes   0..11   origin[3]   the node's box min: dequantized bound of
//   bytes  12..23   scale[3]    quantum q on axis a is origin[a] + q * scale[a]
//                               (a float multiply, then a float add)
//   bytes  24..47   lo[3][8]    per axis and slot, quantized min (rounded down)
//   bytes  48..71   hi[3][8]    per axis and slot, quantized max (rounded up)
//   bytes  72..103  child[8]    inner slot: child node; leaf slot: first entry
//   bytes 104..111  count[8]    0 for an inner slot, else entries in the leaf
//   byte  112       used        a bit per slot in use
//   bytes 113..127  (padding)
struct alignas(64) QNode {
  static constexpr int kWidth = 8;
  float origin[3];
  float scale[3];
  std::uint8_t lo[3][kWidth];
  std::uint8_t hi[3][kWidth];
  std::uint32_t child[kWidth];
  std::uint8_t count[kWidth];
  std::uint8_t used;
  std::uint8_t pad[15];

  // The dequantized bound: what every node test computes.
  static float bound(float origin, float scale, std::uint8_t q) {
    return origin + static_cast<float>(q) * scale;
  }
  Aabb slot_box(int s) const {
    Aabb b;
    for (int a = 0; a < 3; ++a) {
      b.min[a] = bound(origin[a], scale[a], lo[a][s]);
      b.max[a] = bound(origin[a], scale[a], hi[a][s]);
    }
    return b;
  }
};
static_assert(sizeof(QNode) == 128, "QNode is documented as 128 bytes");

// Up to 8 objects' OBBs, structure of arrays, one lane per object, for the
// leaf test: each object's LocalFrame (origin, inverse 3x3) and local box.
// 608 bytes. Lanes past the last object are zero (a zero direction in an
// empty-box lane: never reported, lane masks exclude them anyway).
struct alignas(32) ObbBlock {
  static constexpr int kLanes = 8;
  float linear[9][kLanes];  // LocalFrame::linear[c][r] at [3 * c + r]
  float origin[3][kLanes];
  float lo[3][kLanes];
  float hi[3][kLanes];
  std::uint32_t object[kLanes];
};
static_assert(sizeof(ObbBlock) == 608, "ObbBlock is documented as 608 bytes");

// A compressed tree: the nodes, and the leaves' objects as blocks of 8 in
// entry order (entry e is lane e % 8 of block e / 8; a leaf's entries are
// contiguous and may run over two blocks).
struct QBvh {
  std::vector<QNode> nodes;
  std::vector<ObbBlock> blocks;
  std::size_t entries = 0;

  // Quantizes `wide` node by node (same shape, same entries). O(nodes).
  static QBvh from_wide(const WideBvh& wide);
  // Fills entry e's lane.
  void set_entry(std::uint32_t e, const LocalFrame& frame, const Aabb& local,
                 std::uint32_t object);
  std::size_t memory_bytes() const {
    return nodes.capacity() * sizeof(QNode) + blocks.capacity() * sizeof(ObbBlock);
  }
};

namespace qbvh_detail {

// The wide tree's stack entry and child order, over QNodes.
using wide_detail::Entry;
using wide_detail::order_hits;
inline constexpr int kStackSize = (QNode::kWidth - 1) * kBvhMaxDepth + 8;

}  // namespace qbvh_detail

// ---- ISA policies -----------------------------------------------------
//
// Each provides
//   struct NodeRay  (built from a Ray once per query)
//   unsigned test_node(const QNode&, const NodeRay&, float tmax, float* tn)
//   float test_obbs(const ObbBlock&, unsigned lanes, const Ray&, float tmax,
//                   std::uint32_t& object)
// with the same results bit for bit.

// The scalar reference: the arithmetic every SIMD form must reproduce.
struct IsaScalar {
  struct NodeRay {
    RayInv inv;
    explicit NodeRay(const Ray& ray) : inv(ray) {}
  };
  static unsigned test_node(const QNode& n, const NodeRay& r, float tmax, float* tn) {
    unsigned mask = 0;
    for (int s = 0; s < QNode::kWidth; ++s) {
      // slab_interval() on the dequantized box.
      const SlabInterval i = slab_interval(r.inv, n.slot_box(s), tmax);
      tn[s] = i.tnear;
      if (i.hit()) mask |= 1u << s;
    }
    return mask & n.used;
  }
  // The nearest OBB entry among `lanes` of block b within [ray.tmin, tmax]
  // (ties to the lower object id); +inf and object untouched on a miss.
  static float test_obbs(const ObbBlock& b, unsigned lanes, const Ray& ray, float tmax,
                         std::uint32_t& object) {
    float best = kInfinity;
    for (; lanes != 0; lanes &= lanes - 1) {
      const int k = std::countr_zero(lanes);
      LocalFrame f;
      for (int c = 0; c < 3; ++c) {
        for (int r = 0; r < 3; ++r) f.linear[c][r] = b.linear[3 * c + r][k];
        f.origin[c] = b.origin[c][k];
      }
      const Aabb local{{b.lo[0][k], b.lo[1][k], b.lo[2][k]}, {b.hi[0][k], b.hi[1][k], b.hi[2][k]}};
      const float t = obb_entry(f, local, ray, tmax);
      if (t < best || (t == best && t != kInfinity && b.object[k] < object)) {
        best = t;
        object = b.object[k];
      }
    }
    return best;
  }
};

#if defined(__AVX2__)
// 8 slots, 8 objects per instruction.
struct IsaAvx2 {
  struct NodeRay {
    RayInv inv;
    int near_lo[3];  // 1 where the near plane of axis a is the slot's lo
    __m256 o[3], i[3], tmin;
    explicit NodeRay(const Ray& ray) : inv(ray) {
      for (int a = 0; a < 3; ++a) {
        near_lo[a] = inv.neg[a] ? 0 : 1;
        o[a] = _mm256_set1_ps(inv.org[a]);
        i[a] = _mm256_set1_ps(inv.inv_dir[a]);
      }
      tmin = _mm256_set1_ps(inv.tmin);
    }
  };
  [[gnu::always_inline]] static __m256 dequantize(const std::uint8_t* q, float origin,
                                                  float scale) {
    // origin + float(q) * scale, lane by lane (QNode::bound).
    const __m256 f = _mm256_cvtepi32_ps(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q))));
    return _mm256_add_ps(_mm256_set1_ps(origin), _mm256_mul_ps(f, _mm256_set1_ps(scale)));
  }
  [[gnu::always_inline]] static unsigned test_node(const QNode& n, const NodeRay& r, float tmax,
                                                   float* tn) {
    // Scalar line per slot and axis, as in slab_interval():
    //   tnear = t0 > tnear ? t0 : tnear;  tfar = t1 < tfar ? t1 : tfar;
    // (VMAXPS/VMINPS return the second operand when the first is NaN.)
    __m256 t_near = r.tmin, t_far = _mm256_set1_ps(tmax);
    for (int a = 0; a < 3; ++a) {
      const std::uint8_t* qn = r.near_lo[a] ? n.lo[a] : n.hi[a];
      const std::uint8_t* qf = r.near_lo[a] ? n.hi[a] : n.lo[a];
      const __m256 bn = dequantize(qn, n.origin[a], n.scale[a]);
      const __m256 bf = dequantize(qf, n.origin[a], n.scale[a]);
      t_near = _mm256_max_ps(_mm256_mul_ps(_mm256_sub_ps(bn, r.o[a]), r.i[a]), t_near);
      t_far = _mm256_min_ps(_mm256_mul_ps(_mm256_sub_ps(bf, r.o[a]), r.i[a]), t_far);
    }
    _mm256_storeu_ps(tn, t_near);
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(t_near, t_far, _CMP_LE_OS))) &
           n.used;
  }
  [[gnu::always_inline]] static float test_obbs(const ObbBlock& b, unsigned lanes, const Ray& ray,
                                                float tmax, std::uint32_t& object) {
    // transform_ray: v = org - origin; out[r] = (L[0][r] v.x + L[1][r] v.y) + L[2][r] v.z.
    __m256 v[3], d[3];
    for (int a = 0; a < 3; ++a) {
      v[a] = _mm256_sub_ps(_mm256_set1_ps(ray.org[a]), _mm256_load_ps(b.origin[a]));
      d[a] = _mm256_set1_ps(ray.dir[a]);
    }
    __m256 lo[3], ld[3];
    for (int r = 0; r < 3; ++r) {
      const __m256 m0 = _mm256_load_ps(b.linear[r]), m1 = _mm256_load_ps(b.linear[3 + r]),
                   m2 = _mm256_load_ps(b.linear[6 + r]);
      lo[r] = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(m0, v[0]), _mm256_mul_ps(m1, v[1])),
                            _mm256_mul_ps(m2, v[2]));
      ld[r] = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(m0, d[0]), _mm256_mul_ps(m1, d[1])),
                            _mm256_mul_ps(m2, d[2]));
    }
    // RayInv and slab_interval, lane by lane: the near plane by the sign
    // bit of the local direction (-0.0 counts as negative).
    const float tmax_c = tmax < std::numeric_limits<float>::max()
                             ? tmax
                             : std::numeric_limits<float>::max();
    __m256 t_near = _mm256_set1_ps(ray.tmin), t_far = _mm256_set1_ps(tmax_c);
    const __m256 one = _mm256_set1_ps(1.0f);
    for (int a = 0; a < 3; ++a) {
      const __m256 inv = _mm256_div_ps(one, ld[a]);
      const __m256 blo = _mm256_load_ps(b.lo[a]), bhi = _mm256_load_ps(b.hi[a]);
      const __m256 pn = _mm256_blendv_ps(blo, bhi, ld[a]);
      const __m256 pf = _mm256_blendv_ps(bhi, blo, ld[a]);
      t_near = _mm256_max_ps(_mm256_mul_ps(_mm256_sub_ps(pn, lo[a]), inv), t_near);
      t_far = _mm256_min_ps(_mm256_mul_ps(_mm256_sub_ps(pf, lo[a]), inv), t_far);
    }
    unsigned hit =
        static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(t_near, t_far, _CMP_LE_OS))) &
        lanes;
    float best = kInfinity;
    if (hit == 0) return best;
    alignas(32) float t[8];
    _mm256_store_ps(t, t_near);
    for (; hit != 0; hit &= hit - 1) {
      const int k = std::countr_zero(hit);
      if (t[k] < best || (t[k] == best && b.object[k] < object)) {
        best = t[k];
        object = b.object[k];
      }
    }
    return best;
  }
};

// IsaAvx2 with the node test folded per node (an experiment, see
// raypick_floor): t = q * (scale * inv) + (origin - org) * inv, three
// operations per plane instead of six. Not the same rounding as the slab
// test on the dequantized box: conservative only as far as the padding of
// the world boxes covers the difference.
struct IsaAvx2Folded : IsaAvx2 {
  [[gnu::always_inline]] static unsigned test_node(const QNode& n, const NodeRay& r, float tmax,
                                                   float* tn) {
    __m256 t_near = r.tmin, t_far = _mm256_set1_ps(tmax);
    for (int a = 0; a < 3; ++a) {
      const std::uint8_t* qn = r.near_lo[a] ? n.lo[a] : n.hi[a];
      const std::uint8_t* qf = r.near_lo[a] ? n.hi[a] : n.lo[a];
      const float inv = r.inv.inv_dir[a];
      const __m256 k = _mm256_set1_ps(n.scale[a] * inv);
      const __m256 b = _mm256_set1_ps((n.origin[a] - r.inv.org[a]) * inv);
      const __m256 fn = _mm256_cvtepi32_ps(
          _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(qn))));
      const __m256 ff = _mm256_cvtepi32_ps(
          _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(qf))));
      t_near = _mm256_max_ps(_mm256_add_ps(_mm256_mul_ps(fn, k), b), t_near);
      t_far = _mm256_min_ps(_mm256_add_ps(_mm256_mul_ps(ff, k), b), t_far);
    }
    _mm256_storeu_ps(tn, t_near);
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(t_near, t_far, _CMP_LE_OS))) &
           n.used;
  }
};
#endif

// The traversal loop, once for every ISA: visits every leaf whose box the
// ray meets within [ray.tmin, tmax], nearest box first, calling
//   bool leaf(std::uint32_t first_entry, std::uint32_t count, float& tmax)
// (true stops the traversal). As WideBvh::traverse.
template <class Isa, class Leaf>
[[gnu::always_inline]] inline TraversalStats traverse(const QBvh& tree, const Ray& ray,
                                                      Leaf&& leaf) {
  using namespace qbvh_detail;
  TraversalStats st;
  if (tree.nodes.empty()) return st;
  const typename Isa::NodeRay r(ray);
  float tmax = r.inv.tmax;
  Entry stack[kStackSize];
  int top = 0;
  Entry cur{0, 0, r.inv.tmin};
  const QNode* nodes = tree.nodes.data();
  for (;;) {
    if (cur.count != 0) {
      ++st.leaves_visited;
      st.prims_tested += cur.count;
      if (leaf(cur.index, cur.count, tmax)) return st;
    } else {
      const QNode& n = nodes[cur.index];
      ++st.nodes_visited;
      alignas(32) float tn[QNode::kWidth];
      const unsigned mask = Isa::test_node(n, r, tmax, tn);
      if (mask != 0) {
        cur = order_hits(n, mask, tn, stack, top);
        continue;
      }
    }
    for (;;) {
      if (top == 0) return st;
      cur = stack[--top];
      if (cur.tnear <= tmax) break;
    }
  }
}

// The obb-mode closest hit over the tree's blocks (ties to the lower
// object id), as Picker::intersect in obb mode.
template <class Isa>
[[gnu::always_inline]] inline Hit intersect_obb(const QBvh& tree, const Ray& ray,
                                                TraversalStats* stats = nullptr) {
  Hit best;
  const TraversalStats st =
      traverse<Isa>(tree, ray, [&](std::uint32_t first, std::uint32_t count, float& tmax) {
        const std::uint32_t end = first + count;
        for (std::uint32_t b = first / 8; b * 8 < end; ++b) {
          const std::uint32_t lo = std::max(first, b * 8) - b * 8;
          const std::uint32_t hi = std::min(end, b * 8 + 8) - b * 8;
          const unsigned lanes = ((1u << hi) - 1u) & ~((1u << lo) - 1u);
          std::uint32_t object = best.object;
          const float t = Isa::test_obbs(tree.blocks[b], lanes, ray, tmax, object);
          if (t < best.t || (t == best.t && t != kInfinity && object < best.object)) {
            best.t = t;
            best.object = object;
            tmax = t;
          }
        }
        return false;
      });
  if (stats) *stats = st;
  return best;
}

}  // namespace raypick
