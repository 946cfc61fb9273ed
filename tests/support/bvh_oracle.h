// What the tests measure of the library's private trees (bvh/src): the
// binary BVH's statistics (production only collapses it into the wide
// tree) and the wide tree's bookkeeping.
#pragma once

#include "binary_bvh.h"
#include "wide_bvh.h"

#include <algorithm>
#include <vector>

namespace raypick::test {

// The binary tree's shape and SAH cost, in BvhStats' terms: nodes and
// leaves are binary nodes; the SAH cost sums traversal_cost * area(n) over
// inner nodes and intersection_cost * count * area(n) over leaves, relative
// to the root's area. O(nodes).
inline BvhStats binary_stats(const Bvh& bvh, const BvhConfig& config = {}) {
  BvhStats s;
  if (bvh.nodes.empty()) return s;
  s.nodes = bvh.nodes.size();
  s.primitives = bvh.prim_ids.size();
  s.min_leaf_size = ~0u;
  const double root_area = std::max(bvh.nodes[0].bounds.half_area(), 1e-30f);
  struct Item {
    std::uint32_t node;
    int depth;
  };
  std::vector<Item> todo{{0, 0}};
  while (!todo.empty()) {
    const Item it = todo.back();
    todo.pop_back();
    const BvhNode& n = bvh.nodes[it.node];
    const double rel = n.bounds.half_area() / root_area;
    s.max_depth = std::max(s.max_depth, it.depth);
    if (n.is_leaf()) {
      ++s.leaves;
      s.min_leaf_size = std::min(s.min_leaf_size, n.count);
      s.max_leaf_size = std::max(s.max_leaf_size, n.count);
      s.sah_cost += config.intersection_cost * n.count * rel;
    } else {
      s.sah_cost += config.traversal_cost * rel;
      todo.push_back({n.index, it.depth + 1});
      todo.push_back({n.index + 1, it.depth + 1});
    }
  }
  s.mean_leaf_size = static_cast<double>(s.primitives) / static_cast<double>(s.leaves);
  return s;
}

}  // namespace raypick::test

namespace raypick {

// Declared a friend by WideBvhOf: where its refits find things.
struct WideBvhInternals {
  // Entry e's leaf node and slot.
  template <int W>
  static std::uint32_t entry_node(const WideBvhOf<W>& w, std::uint32_t e) {
    return WideBvhOf<W>::place_node(w.entry_place_[e]);
  }
  template <int W>
  static int entry_slot(const WideBvhOf<W>& w, std::uint32_t e) {
    return WideBvhOf<W>::place_slot(w.entry_place_[e]);
  }
  // A node's parent node and the slot in it that points at the node.
  template <int W>
  static std::uint32_t parent(const WideBvhOf<W>& w, std::uint32_t n) {
    return WideBvhOf<W>::place_node(w.parent_[n]);
  }
  template <int W>
  static int parent_slot(const WideBvhOf<W>& w, std::uint32_t n) {
    return WideBvhOf<W>::place_slot(w.parent_[n]);
  }
};

}  // namespace raypick
