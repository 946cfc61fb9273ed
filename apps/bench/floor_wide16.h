// raypick_floor's prototype of 16-wide nodes for AVX-512 (issue 25's
// "one traversal per ISA": AVX-512 tests 16 slots in one pass), over two
// trees: today's 8-wide top level widened (each node takes over its
// largest inner children's slots while they fit in 16), and the binary
// tree collapsed by the SAH (collapse16: the library's WideBvh16 collapse,
// which came from this prototype); and the SAH tree's slot boxes
// quantized to 8 bits (QNode16). Measured by raypick_floor's `wide16`,
// `q16` and `wide8c` lines (docs/performance.md). Their walks choose the
// next slot as the library's walk_avx512 does. Unlike the Picker, its
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

// The SAH-collapsed tree with its slot boxes quantized (issue 25's
// compressed node, at 16 slots): 192 bytes (three cache lines) per node
// instead of 512. Per axis the node keeps its box's low corner and a
// quantum; a slot's planes are 8-bit multiples of the quantum, rounded
// outward (so every quantized box holds its float box). A slot's child
// packs a leaf's count in its top 5 bits (0: an inner slot).
struct alignas(64) QNode16 {
  static constexpr int kWidth = 16;
  static constexpr int kCountShift = 27;
  static constexpr std::uint32_t kIndexMask = (1u << kCountShift) - 1u;
  float origin[3];                 // bytes   0..11
  float scale[3];                  // bytes  12..23: the quantum per axis
  std::uint8_t q[6][kWidth];       // bytes  24..119: rows as WideNode's bounds
  std::uint32_t child[kWidth];     // bytes 120..183: index | count << 27
  std::uint32_t used;              // bytes 184..187: a bit per used slot
  std::uint32_t pad;
};
static_assert(sizeof(QNode16) == 192, "QNode16 is three cache lines");

struct QWide16 {
  std::vector<QNode16> nodes;
};

// The quantized copy of `tree` (the same slots and order).
QWide16 quantize16(const Wide16& tree);
// walk16 and intersect16 over the quantized tree (AVX-512).
TraversalStats walkq16(const QWide16& tree, const Ray& ray);
Hit intersectq16(const QWide16& tree, std::span<const Leaf> leaves,
                 std::span<const Aabb> mesh_bounds, const Ray& ray, TraversalStats* stats);

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
// copies and tie rule: a single hit slot next, else the nearest, the
// others pushed by a register compress.
Hit intersect16(const Wide16& tree, std::span<const Leaf> leaves,
                std::span<const Aabb> mesh_bounds, const Ray& ray, TraversalStats* stats);

// The same query over today's 8-wide nodes, with AVX-512VL's compress.
Hit intersect8_compress512(const WideBvh& top, std::span<const Leaf> leaves,
                           std::span<const Aabb> mesh_bounds, const Ray& ray,
                           TraversalStats* stats);

}  // namespace raypick::floorq
