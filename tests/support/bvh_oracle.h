// What the tests measure of the library's binary BVH (bvh/src/binary_bvh.h),
// which production only collapses into the wide tree.
#pragma once

#include "binary_bvh.h"

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
