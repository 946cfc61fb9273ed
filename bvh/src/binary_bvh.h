// A binary bounding volume hierarchy over boxes and its binned SAH builder:
// what WideBvhOf::collapse turns into the wide tree that queries traverse.
// Private to the library.
#pragma once

#include "raypick/bvh/bvh.h"
#include "raypick/core/aabb.h"

#include <glm/vec3.hpp>

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
// The root is nodes[0]. A child always has a larger index than its parent.
struct BvhNode {
  Aabb bounds;
  std::uint32_t index = 0;
  std::uint32_t count = 0;

  bool is_leaf() const { return count != 0; }
};
static_assert(sizeof(BvhNode) == 32, "BvhNode is documented as 32 bytes");

// Tree depth (edges from the root to the deepest leaf) never exceeds this;
// the builder proves it (see build_bvh), so traversal stacks sized by it
// never overflow.
inline constexpr int kBvhMaxDepth = 64;

struct Bvh {
  std::vector<BvhNode> nodes;
  // Leaf entries: primitive ids (indices into the builder's input spans).
  std::vector<std::uint32_t> prim_ids;

  bool empty() const { return nodes.empty(); }
};

// Builds a BVH with the binned surface area heuristic ("On fast Construction
// of SAH-based Bounding Volume Hierarchies", Wald 2007) over `boxes`,
// binning each by its center (Aabb::center()). Primitive ids are the boxes'
// indices. Empty boxes are allowed but never reached by traversal in a
// useful way: leave them out.
// Depth bound: a split by SAH is taken only while depth + 1 + ceil(log2 n)
// <= kBvhMaxDepth, otherwise the node is split at the median primitive,
// which halves n; so every node satisfies depth + ceil(log2 n) <=
// kBvhMaxDepth and no leaf is deeper than kBvhMaxDepth. Primitives whose
// centers coincide are split at the median too. Cost: O(n log n), 64 bytes
// of build records per primitive while it runs, subtrees of 1024 or more
// primitives built in parallel (TBB), ranges of 8192 or more binned in
// parallel chunks; node order may vary from run to run, the tree's shape
// and prim_ids do not.
Bvh build_bvh(std::span<const Aabb> boxes, const BvhConfig& config = {});

}  // namespace raypick
