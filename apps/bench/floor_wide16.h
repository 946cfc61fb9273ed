// raypick_floor's prototype of 16-wide nodes for AVX-512 (issue 25's
// "one traversal per ISA": AVX-512 tests 16 slots in one pass), over two
// trees: today's 8-wide top level widened (each node takes over its
// largest inner children's slots while they fit in 16), and the binary
// tree collapsed by the SAH (collapse16: the library's WideBvh16 collapse,
// which came from this prototype). Measured by raypick_floor's `wide16`
// and `wide8c` lines (docs/performance.md). Unlike the Picker, its
// queries know no low parts, masks or filters: the bench scenes have none.
#pragma once

#include "floor_qbvh.h"

#include "binary_bvh.h"
#include "wide_bvh.h"

#include <cstdint>
#include <span>
#include <vector>

namespace raypick::floorq {

// A node, 512 bytes: the library's 16-slot node (wide_node.h).
using Node16 = WideNode16;

struct Wide16 {
  std::vector<Node16> nodes;  // root first; children after their parents
  double slots_used = 0.0;    // mean used slots per node
};

// Today's top level widened to 16 slots per node (see above).
Wide16 widen16(const WideBvh& top);

// A binary tree collapsed into 16-wide nodes by the SAH over its cuts
// (each subtree covered by the cheapest set of at most 16 slots): the
// library's WideBvh16::collapse with these costs; leaf slots index
// binary.prim_ids.
Wide16 collapse16(const Bvh& binary, float traversal_cost, float intersection_cost);

// The tree's SAH cost in collapse16's units: over its slots,
// traversal_cost * area for an inner slot and intersection_cost * count *
// area for a leaf slot (the root's own visit left out).
double sah_cost(const Wide16& tree, float traversal_cost, float intersection_cost);

// Whether this CPU runs the AVX-512 functions below (F, VL, DQ, BW): the
// library's check.
inline bool cpu_has_avx512() { return compiler::cpu_has_avx512(); }

// The walk with an empty leaf test at the ray's tmax (at the answer's t:
// the nodes any closest-hit query of this tree must open). Hit slots are
// pushed by a register compress and one plain store (a compress straight
// to memory is microcoded and slow on AMD's Zen 4): no sort, no branch on
// their number.
TraversalStats walk16(const Wide16& tree, const Ray& ray);
// The same walk over today's 8-wide nodes, its hit slots pushed by an
// AVX-512VL register compress: what the order alone changes.
TraversalStats walk8_compress512(const WideBvh& top, const Ray& ray);
// The closest-hit query over the 16-wide tree with the Picker's leaf
// copies and tie rule: the nearest hit slot next, the others pushed by
// a compress store.
Hit intersect16(const Wide16& tree, std::span<const Leaf> leaves,
                std::span<const Aabb> mesh_bounds, const Ray& ray, TraversalStats* stats);

// The same query over today's 8-wide nodes, with AVX-512VL's compress.
Hit intersect8_compress512(const WideBvh& top, std::span<const Leaf> leaves,
                           std::span<const Aabb> mesh_bounds, const Ray& ray,
                           TraversalStats* stats);

}  // namespace raypick::floorq
