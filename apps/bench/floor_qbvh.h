// raypick_floor's prototype of the compressed design (bvh/src/qbvh.h): the
// obb-mode query and walk per ISA. floor_qbvh_avx2.cpp is compiled with
// -mavx2; callers check the CPU first.
#pragma once

#include "qbvh.h"

#include "picker_impl.h"

namespace raypick::floorq {

// The Picker's own leaf copy (PickerCore::LeafObb): one cache line per
// object, in the tree's entry order.
using Leaf = PickerCore::LeafObb;

// Today's tree and leaves, walked with the hit children's order taken
// from a SIMD compress of the hit mask (no branch on how many children a
// node hits): the nearest hit child next, the others pushed in slot order.
Hit intersect_compress(const WideBvh& top, std::span<const Leaf> leaves,
                       std::span<const Aabb> mesh_bounds, const Ray& ray, TraversalStats* stats);
TraversalStats walk_compress(const WideBvh& top, const Ray& ray);

// Today's tree and leaves, the hit children visited in an order fixed per
// node and ray-direction octant (no sort, no branch on how many children a
// node hits): octant_order(top)[node * 8 + octant] holds the node's slots
// near to far for rays of that octant (bit a set: dir[a] < 0), by their
// boxes' centres projected on the octant's diagonal, one byte each.
std::vector<std::uint64_t> octant_order(const WideBvh& top);
Hit intersect_octant(const WideBvh& top, std::span<const std::uint64_t> order,
                     std::span<const Leaf> leaves, std::span<const Aabb> mesh_bounds,
                     const Ray& ray, TraversalStats* stats);
TraversalStats walk_octant(const WideBvh& top, std::span<const std::uint64_t> order,
                           const Ray& ray);

Hit intersect_scalar(const QBvh& tree, const Ray& ray, TraversalStats* stats);
Hit intersect_avx2(const QBvh& tree, const Ray& ray, TraversalStats* stats);
// The node test folded per node (IsaAvx2Folded).
Hit intersect_folded(const QBvh& tree, const Ray& ray, TraversalStats* stats);
TraversalStats walk_folded(const QBvh& tree, const Ray& ray);
// The walk with an empty leaf test (tmax stays the ray's).
TraversalStats walk_avx2(const QBvh& tree, const Ray& ray);
// The walk with the leaves' OBB tests, tmax never lowered (at the answer's
// t: the work any closest-hit query of this tree must do).
TraversalStats walk_leaves_avx2(const QBvh& tree, const Ray& ray);
// Only the leaf tests: the OBB tests of entries [first, first + count).
float leaf_avx2(const QBvh& tree, std::uint32_t first, std::uint32_t count, const Ray& ray,
                float tmax);

}  // namespace raypick::floorq
