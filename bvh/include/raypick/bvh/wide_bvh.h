// A 4-wide BVH for traversal: the binary SAH tree collapsed so that each
// node holds the boxes of up to four children, tested together with one SSE
// slab test. Built from a binary Bvh; refitted in place.
#pragma once

#include "raypick/bvh/bvh.h"

#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#if defined(__SSE2__) || defined(_M_X64)
#include <xmmintrin.h>
#define RAYPICK_WIDE_SSE 1
#endif

namespace raypick {

// A node, 128 bytes (two cache lines), 64-byte aligned in its array:
//   bytes   0..95   bounds[6][4]  rows min_x, min_y, min_z, max_x, max_y,
//                                 max_z, one column per child slot (the
//                                 structure-of-arrays layout SSE reads)
//   bytes  96..111  child[4]      inner slot: index of the child node;
//                                 leaf slot: first entry in prim_ids
//   bytes 112..127  count[4]      0 for an inner slot, else the number of
//                                 primitives of the leaf slot
// An unused slot has count 0, child kInvalidSlot and an empty box
// (+inf, -inf), which the slab test never hits. Children have larger
// indices than their parents.
struct alignas(64) WideNode {
  float bounds[6][4];
  std::uint32_t child[4];
  std::uint32_t count[4];

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
  // The union of the slot boxes (unused slots are empty: no effect).
  Aabb box() const {
#if RAYPICK_WIDE_SSE
    float r[6];
    for (int a = 0; a < 6; ++a) {
      const __m128 v = _mm_load_ps(bounds[a]);
      const __m128 h = a < 3 ? _mm_min_ps(v, _mm_movehl_ps(v, v))
                             : _mm_max_ps(v, _mm_movehl_ps(v, v));
      const __m128 g = _mm_shuffle_ps(h, h, 1);
      r[a] = _mm_cvtss_f32(a < 3 ? _mm_min_ss(h, g) : _mm_max_ss(h, g));
    }
    return Aabb{{r[0], r[1], r[2]}, {r[3], r[4], r[5]}};
#else
    Aabb b;
    for (int s = 0; s < 4; ++s) b.extend(slot_box(s));
    return b;
#endif
  }
};
static_assert(sizeof(WideNode) == 128, "WideNode is documented as 128 bytes");

class WideBvh {
 public:
  // nodes[0] is the root (when not empty). Leaf slots index `prim_ids`,
  // whose entries are primitive ids; a leaf's primitives are contiguous.
  std::vector<WideNode> nodes;
  std::vector<std::uint32_t> prim_ids;
  // For refits: each node's parent node and slot in it (root: itself, 0),
  // and each entry of prim_ids' leaf node and slot.
  std::vector<std::uint32_t> parent;
  std::vector<std::uint8_t> parent_slot;
  std::vector<std::uint32_t> entry_node;
  std::vector<std::uint8_t> entry_slot;

  bool empty() const { return nodes.empty(); }

  // Collapses `bvh` (its prim_ids order is kept for the entries): each wide
  // node takes a binary node's children and keeps opening its largest inner
  // child until it has four. O(nodes).
  static WideBvh collapse(const Bvh& bvh);

  // The box of everything (empty when the tree is).
  Aabb bounds() const { return nodes.empty() ? Aabb{} : nodes[0].box(); }

  // Statistics in BvhStats' terms: nodes are wide nodes, leaves leaf slots;
  // SAH cost weights each slot by its box area relative to the root's:
  // traversal_cost for a node, intersection_cost * count for a leaf.
  BvhStats stats(const BvhConfig& config = {}) const;

  // Recomputes every box bottom-up from `boxes` (indexed by primitive id).
  // Returns the tree's SAH cost as stats() computes it but not divided by
  // the root's area (the sum the Picker tracks through refits). O(nodes).
  double refit(std::span<const Aabb> boxes, const BvhConfig& config = {});

  // Recomputes the boxes above the given entries only, walking up from each
  // one's leaf and stopping where a box comes out unchanged. Calls
  // on_change(weight, old_area, new_area) for each slot box that changed,
  // where weight is the slot's SAH weight (as in stats()). Returns the
  // number of slot boxes recomputed. O(k * depth).
  template <class OnChange>
  std::size_t refit_entries(std::span<const std::uint32_t> entries,
                            std::span<const Aabb> boxes, const BvhConfig& config,
                            OnChange&& on_change);

  // The traversal loop, as Bvh::traverse: visits every leaf slot whose box
  // the ray meets within [ray.tmin, tmax], nearest box first, with
  //   bool leaf(std::uint32_t entry, float& tmax)
  // called for each entry of the leaf (primitive id: prim_ids[entry]); it
  // may lower tmax and returns true to stop. Box tests are inclusive.
  template <class Leaf>
  TraversalStats traverse(const Ray& ray, Leaf&& leaf) const;

 private:
  Aabb leaf_box(const WideNode& n, int slot, std::span<const Aabb> boxes) const;
};

// --------------------------------------------------------------------------

template <class OnChange>
std::size_t WideBvh::refit_entries(std::span<const std::uint32_t> entries,
                                   std::span<const Aabb> boxes,
                                   const BvhConfig& config,
                                   OnChange&& on_change) {
  std::size_t updated = 0;
  for (std::uint32_t e : entries) {
    std::uint32_t node = entry_node[e];
    int slot = entry_slot[e];
    Aabb b = leaf_box(nodes[node], slot, boxes);
    for (;;) {
      WideNode& n = nodes[node];
      ++updated;
      const Aabb old = n.slot_box(slot);
      // Ancestors depend only on this box: unchanged, they are up to date.
      if (b == old) break;
      const double weight = n.is_leaf(slot)
                                ? double(config.intersection_cost) * n.count[slot]
                                : double(config.traversal_cost);
      on_change(weight, double(old.half_area()), double(b.half_area()));
      n.set_slot_box(slot, b);
      if (node == 0) break;
      b = n.box();
      slot = parent_slot[node];
      node = parent[node];
    }
  }
  return updated;
}

template <class Leaf>
TraversalStats WideBvh::traverse(const Ray& ray, Leaf&& leaf) const {
  TraversalStats st;
  if (nodes.empty()) return st;
  const RayInv inv(ray);
  float tmax = inv.tmax;
  // Rows of the near and far planes per axis, by the ray's octant.
  int near_row[3], far_row[3];
  for (int a = 0; a < 3; ++a) {
    near_row[a] = inv.neg[a] ? 3 + a : a;
    far_row[a] = inv.neg[a] ? a : 3 + a;
  }
  struct Entry {
    std::uint32_t index;  // node, or first entry of a leaf
    std::uint32_t count;  // 0: node; else leaf size
    float tnear;
  };
  // Each node visit pops one entry and pushes at most three (the nearest
  // hit slot is taken next without a push).
  Entry stack[3 * kBvhMaxDepth + 8];
  int top = 0;
  Entry cur{0, 0, inv.tmin};
#if RAYPICK_WIDE_SSE
  const __m128 ox = _mm_set1_ps(inv.org.x), oy = _mm_set1_ps(inv.org.y),
               oz = _mm_set1_ps(inv.org.z);
  const __m128 ix = _mm_set1_ps(inv.inv_dir.x), iy = _mm_set1_ps(inv.inv_dir.y),
               iz = _mm_set1_ps(inv.inv_dir.z);
  const __m128 tmin4 = _mm_set1_ps(inv.tmin);
#endif
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
      alignas(16) float tn[4];
      unsigned mask = 0;
#if RAYPICK_WIDE_SSE
      // Scalar line per slot and axis, as in slab_interval():
      //   tnear = t0 > tnear ? t0 : tnear;  tfar = t1 < tfar ? t1 : tfar;
      // _mm_max_ps(a, b) and _mm_min_ps(a, b) return b when a is NaN, so a
      // NaN plane distance leaves the interval unchanged, as there.
      __m128 t_near = tmin4, t_far = _mm_set1_ps(tmax);
      t_near = _mm_max_ps(_mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.bounds[near_row[0]]), ox), ix), t_near);
      t_far = _mm_min_ps(_mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.bounds[far_row[0]]), ox), ix), t_far);
      t_near = _mm_max_ps(_mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.bounds[near_row[1]]), oy), iy), t_near);
      t_far = _mm_min_ps(_mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.bounds[far_row[1]]), oy), iy), t_far);
      t_near = _mm_max_ps(_mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.bounds[near_row[2]]), oz), iz), t_near);
      t_far = _mm_min_ps(_mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.bounds[far_row[2]]), oz), iz), t_far);
      mask = static_cast<unsigned>(_mm_movemask_ps(_mm_cmple_ps(t_near, t_far)));
      _mm_store_ps(tn, t_near);
#else
      for (int s = 0; s < 4; ++s) {
        float t_near = inv.tmin, t_far = tmax;
        for (int a = 0; a < 3; ++a) {
          const float t0 = (n.bounds[near_row[a]][s] - inv.org[a]) * inv.inv_dir[a];
          const float t1 = (n.bounds[far_row[a]][s] - inv.org[a]) * inv.inv_dir[a];
          t_near = t0 > t_near ? t0 : t_near;
          t_far = t1 < t_far ? t1 : t_far;
        }
        tn[s] = t_near;
        if (t_near <= t_far) mask |= 1u << s;
      }
#endif
      if (mask != 0) {
        // The nearest hit slot is visited next; the others wait on the
        // stack, farthest deepest. One and two hits, the common cases,
        // need no sort.
        const int s0 = std::countr_zero(mask);
        mask &= mask - 1;
        const Entry e0{n.child[s0], n.count[s0], tn[s0]};
        if (mask == 0) {
          cur = e0;
          continue;
        }
        const int s1 = std::countr_zero(mask);
        mask &= mask - 1;
        const Entry e1{n.child[s1], n.count[s1], tn[s1]};
        if (mask == 0) {
          const bool first = e0.tnear <= e1.tnear;
          stack[top++] = first ? e1 : e0;
          cur = first ? e0 : e1;
          continue;
        }
        Entry hits[4] = {e0, e1};
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
        cur = hits[k - 1];
        continue;
      }
    }
    // Pop the next entry that can still hold a hit at t <= tmax; tmax may
    // have dropped since the push, and '<=' keeps ties reachable.
    for (;;) {
      if (top == 0) return st;
      cur = stack[--top];
      if (cur.tnear <= tmax) break;
    }
  }
}

}  // namespace raypick
