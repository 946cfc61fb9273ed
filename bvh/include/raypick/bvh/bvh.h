// A binary bounding volume hierarchy over boxes: nodes, SAH builder, refit
// and the one traversal loop that closest, any and all-hit queries share.
#pragma once

#include "raypick/core/aabb.h"
#include "raypick/core/ray.h"
#include "raypick/core/ray_box.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace raypick {

// A node, 32 bytes, two to a 64-byte cache line:
//   bytes  0..23  bounds   world box of everything below (6 floats)
//   bytes 24..27  index    inner: index of the left child; the right child is
//                          index + 1 (siblings are adjacent). Leaf: first
//                          entry of Bvh::prim_ids.
//   bytes 28..31  count    0 for an inner node, else the number of
//                          primitives in the leaf.
// The root is nodes[0]. A child always has a larger index than its parent,
// so a reverse sweep visits children before parents (refit relies on it).
struct BvhNode {
  Aabb bounds;
  std::uint32_t index = 0;
  std::uint32_t count = 0;

  bool is_leaf() const { return count != 0; }
};
static_assert(sizeof(BvhNode) == 32, "BvhNode is documented as 32 bytes");

// Builder settings. The defaults suit a top level over objects.
struct BvhConfig {
  // Leaves never hold more than this; a leaf is made earlier when the SAH
  // says splitting costs more than testing every primitive. 1..255.
  std::uint32_t max_leaf_size = 4;
  // Number of centroid bins per axis for the binned SAH. 2..64.
  std::uint32_t bins = 16;
  // SAH cost of visiting an inner node, relative to one primitive test.
  float traversal_cost = 1.0f;
  float intersection_cost = 1.0f;
};

// Tree depth (edges from the root to the deepest leaf) never exceeds this;
// the builder proves it (see build_bvh), so traversal stacks of
// kBvhMaxDepth + 1 entries never overflow.
inline constexpr int kBvhMaxDepth = 64;

struct BvhStats {
  std::size_t nodes = 0;
  std::size_t leaves = 0;
  std::size_t primitives = 0;
  int max_depth = 0;
  std::uint32_t min_leaf_size = 0;
  std::uint32_t max_leaf_size = 0;
  double mean_leaf_size = 0.0;
  // SAH cost relative to the root's area: sum over inner nodes of
  // traversal_cost * area(n) / area(root), plus over leaves of
  // intersection_cost * count * area(n) / area(root).
  double sah_cost = 0.0;
};

// What one query did; returned as a value, like Box2D's b2TreeStats.
struct TraversalStats {
  std::uint32_t nodes_visited = 0;   // nodes whose box was tested
  std::uint32_t leaves_visited = 0;  // leaves whose primitives were tested
  std::uint32_t prims_tested = 0;
};

class Bvh {
 public:
  std::vector<BvhNode> nodes;
  // Leaf entries: primitive ids (indices into the builder's input spans).
  std::vector<std::uint32_t> prim_ids;

  bool empty() const { return nodes.empty(); }

  // Statistics of the current tree under `config`'s costs. O(nodes).
  BvhStats stats(const BvhConfig& config = {}) const;

  // Recomputes every node's bounds from new primitive boxes, keeping the
  // topology; `boxes` is indexed by primitive id as at build time. O(nodes).
  // The tree stays correct however far primitives moved; only its quality
  // (SAH cost) can degrade.
  void refit(std::span<const Aabb> boxes);

  // The one traversal loop. Visits every leaf whose box the ray meets within
  // [ray.tmin, tmax], near child first, where tmax starts at ray.tmax and
  // is lowered by the leaf callback:
  //   bool leaf(std::uint32_t prim_id, float& tmax)
  // tests one primitive, may lower tmax to the best t found so far, and
  // returns true to stop the whole traversal (any-hit queries). Node tests
  // are inclusive (tnear <= tmax), so a primitive at exactly the best t is
  // still offered to the callback: ties are the callback's to break.
  template <class Leaf>
  TraversalStats traverse(const Ray& ray, Leaf&& leaf) const;
};

// Builds a BVH with the binned surface area heuristic ("On fast Construction
// of SAH-based Bounding Volume Hierarchies", Wald 2007) over `boxes`, with
// `centers` the points to bin by (usually the box centers). Both spans have
// one entry per primitive; primitive ids are their indices. Empty boxes are
// allowed but never reached by traversal in a useful way: leave them out.
// Depth bound: a split by SAH is taken only while depth + 1 + ceil(log2 n)
// <= kBvhMaxDepth, otherwise the node is split at the median primitive,
// which halves n; so every node satisfies depth + ceil(log2 n) <=
// kBvhMaxDepth and no leaf is deeper than kBvhMaxDepth. Primitives whose
// centers coincide are split at the median too. Cost: O(n log n), subtrees
// of 4096 or more primitives built in parallel (TBB); node order may vary
// from run to run, the tree's shape does not.
Bvh build_bvh(std::span<const Aabb> boxes, std::span<const glm::vec3> centers,
              const BvhConfig& config = {});

template <class Leaf>
TraversalStats Bvh::traverse(const Ray& ray, Leaf&& leaf) const {
  TraversalStats st;
  if (nodes.empty()) return st;
  const RayInv inv(ray);
  float tmax = inv.tmax;

  // Pending far children with their entry t, so a pop needs no box test.
  struct Pending {
    std::uint32_t node;
    float tnear;
  };
  Pending stack[kBvhMaxDepth + 1];
  int top = 0;
  std::uint32_t current = 0;
  ++st.nodes_visited;
  if (!slab_overlaps(inv, nodes[0].bounds, tmax)) return st;
  for (;;) {
    const BvhNode& node = nodes[current];
    if (node.is_leaf()) {
      ++st.leaves_visited;
      for (std::uint32_t i = 0; i < node.count; ++i) {
        ++st.prims_tested;
        if (leaf(prim_ids[node.index + i], tmax)) return st;
      }
    } else {
      const std::uint32_t left = node.index;
      const float tl = slab_entry(inv, nodes[left].bounds, tmax);
      const float tr = slab_entry(inv, nodes[left + 1].bounds, tmax);
      st.nodes_visited += 2;
      const bool hit_l = tl != kInfinity;
      const bool hit_r = tr != kInfinity;
      if (hit_l && hit_r) {
        // Near child first; the far one waits on the stack. '<=' keeps the
        // left child first on equal entries, which favours lower ids in
        // trees built in order, but ties are decided by the callback.
        const bool left_first = tl <= tr;
        stack[top++] = left_first ? Pending{left + 1, tr} : Pending{left, tl};
        current = left_first ? left : left + 1;
        continue;
      }
      if (hit_l || hit_r) {
        current = hit_l ? left : left + 1;
        continue;
      }
    }
    // Pop the next pending node that can still hold a hit at t <= tmax.
    for (;;) {
      if (top == 0) return st;
      const Pending p = stack[--top];
      // tmax may have dropped since the push; '<=' keeps ties reachable.
      if (p.tnear <= tmax) {
        current = p.node;
        break;
      }
    }
  }
}

}  // namespace raypick
