// The value types that describe raypick's BVHs to an embedder: builder
// settings, tree statistics and what one query visited. The trees
// themselves are private to the library (bvh/src).
#pragma once

#include <cstddef>
#include <cstdint>

namespace raypick {

// Builder settings. The defaults suit a top level over objects.
struct BvhConfig {
  // Leaves never hold more than this; a leaf is made earlier when the SAH
  // says splitting costs more than testing every primitive. 1..255.
  std::uint32_t max_leaf_size = 4;
  // Number of centroid bins per axis for the binned SAH. 2..64; a range
  // bins into no more than half as many as it has primitives, and no
  // fewer than min(bins, 4).
  std::uint32_t bins = 16;
  // SAH cost of visiting an inner node, relative to one primitive test.
  float traversal_cost = 1.0f;
  float intersection_cost = 1.0f;
  // Primitives a leaf tests together (rounded up to a power of two and
  // clamped to 1..16): the builder's SAH charges a leaf intersection_cost
  // per started block of this many (the trees' SAH statistics still count
  // primitives). A mesh tree's leaves are tested four triangles at a time,
  // so with 4 a leaf of four costs what a leaf of one does
  // (PickerConfig::mesh). A range of at most max_leaf_size primitives
  // whose leaf costs no more than traversal_cost is made a leaf without a
  // search, keeping its primitives in the order they come. Costs must not
  // be negative.
  std::uint32_t leaf_block = 1;
};

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
  // Primitives handed to the leaf test. A leaf whose primitives go to the
  // test as one run (a mesh tree's triangles, four at a time) counts whole,
  // even where an any-hit query stops inside it.
  std::uint32_t prims_tested = 0;
};

}  // namespace raypick
