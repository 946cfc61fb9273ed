// An 8-wide BVH for traversal: the binary SAH tree collapsed so that each
// node holds the boxes of up to eight children, tested together by a SIMD
// slab test. Built from a binary Bvh; refitted in place. Private to the
// library: the Picker's top level and its meshes' triangle trees.
#pragma once

#include "binary_bvh.h"

#include "raypick/core/ray.h"

#include <glm/geometric.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <vector>

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#include <xmmintrin.h>
#define RAYPICK_WIDE_SSE 1
#endif

// An 8-wide AVX node test, compiled into its own traversal loop for CPUs
// that have AVX2 and chosen at run time (the library itself is built for
// the x86-64 baseline). GCC and Clang only: function-level targets.
#if RAYPICK_WIDE_SSE && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define RAYPICK_WIDE_AVX2 1
#define RAYPICK_TARGET_AVX2 __attribute__((target("avx2")))
#endif


namespace raypick {

// A node, 256 bytes (four cache lines), 64-byte aligned in its array:
//   bytes    0..191  bounds[6][8]  rows min_x, min_y, min_z, max_x, max_y,
//                                  max_z, one column per child slot (the
//                                  structure-of-arrays layout SIMD reads)
//   bytes  192..223  child[8]      inner slot: index of the child node;
//                                  leaf slot: first entry in prim_ids
//   bytes  224..255  count[8]      0 for an inner slot, else the number of
//                                  primitives of the leaf slot
// An unused slot has count 0, child kInvalidSlot and an empty box
// (+inf, -inf), which the slab test never hits. Children have larger
// indices than their parents.
struct alignas(64) WideNode {
  static constexpr int kWidth = 8;  // child slots

  float bounds[6][kWidth];
  std::uint32_t child[kWidth];
  std::uint32_t count[kWidth];

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
      const __m128 v = a < 3 ? _mm_min_ps(_mm_load_ps(bounds[a]), _mm_load_ps(bounds[a] + 4))
                             : _mm_max_ps(_mm_load_ps(bounds[a]), _mm_load_ps(bounds[a] + 4));
      const __m128 h = a < 3 ? _mm_min_ps(v, _mm_movehl_ps(v, v))
                             : _mm_max_ps(v, _mm_movehl_ps(v, v));
      const __m128 g = _mm_shuffle_ps(h, h, 1);
      r[a] = _mm_cvtss_f32(a < 3 ? _mm_min_ss(h, g) : _mm_max_ss(h, g));
    }
    return Aabb{{r[0], r[1], r[2]}, {r[3], r[4], r[5]}};
#else
    Aabb b;
    for (int s = 0; s < kWidth; ++s) b.extend(slot_box(s));
    return b;
#endif
  }
};
static_assert(sizeof(WideNode) == 256, "WideNode is documented as 256 bytes");

// A wide BVH's nodes and the bookkeeping that refits walk by. Leaf slots
// hold runs of entries; entry e stands for primitive prim_id(e), and a
// leaf's entries are contiguous. Data is private: a tree is made by
// collapse(), changed only by the refits below, and read through nodes()
// and the traversal loops.
class WideBvh {
 public:
  // Collapses `bvh` (its prim_ids order is kept for the entries): each wide
  // node takes a binary node's children and keeps opening inner ones until
  // it has eight slots: the largest subtree needing more than eight leaf
  // slots first, then the largest small one that fits whole, so that the
  // small subtrees left make full nodes. O(nodes); large trees collapse
  // their subtrees as parallel tasks, numbered the same on any thread count.
  static WideBvh collapse(const Bvh& bvh);

  bool empty() const { return nodes_.empty(); }
  // nodes()[0] is the root (when not empty); children come after parents.
  std::span<const WideNode> nodes() const { return nodes_; }
  std::size_t entry_count() const { return entry_node_.size(); }
  std::uint32_t prim_id(std::uint32_t entry) const {
    return prim_ids_.empty() ? entry : prim_ids_[entry];
  }
  // Declares that the caller has renumbered its primitives in entry order
  // (primitive e is entry e from here on) and frees the id array.
  void number_by_entry() { prim_ids_ = {}; }

  // The box of everything (empty when the tree is).
  Aabb bounds() const;

  // The SAH cost before dividing by the root's area: the root's visit
  // (traversal_cost times its area) plus each slot's weight times its
  // area. What refit_sweep() returns and what stats() divides. O(nodes).
  double sah_sum(const BvhConfig& config = {}) const;

  // Statistics in BvhStats' terms: nodes are wide nodes, leaves leaf slots;
  // SAH cost weights each slot by its box area relative to the root's:
  // traversal_cost for a node, intersection_cost * count for a leaf.
  BvhStats stats(const BvhConfig& config = {}) const;

  // Bytes held by the tree's arrays (their capacity).
  std::size_t memory_bytes() const;

  // Both refits take the boxes of entries from
  //   Aabb entry_box(std::uint32_t entry)
  // and count their work in slot boxes recomputed (a node has 8 slots).

  // Recomputes the boxes above the given entries only: each of their leaf
  // slots once, then each ancestor slot once, deepest node first (children
  // have larger indices than their parents), going above a node only when
  // one of its slot boxes changed; the slots of many moved entries share
  // their ancestors' work. Calls on_change(weight, old_area, new_area) for
  // each slot box that changed, where weight is the slot's SAH weight (as
  // in stats()), and for the root's own box when a root slot changed
  // (weight traversal_cost, as in sah_sum()), so that the calls add up to
  // the change of sah_sum(). Returns the number of slot boxes recomputed,
  // the unchanged ones that ended a path included. O(k * depth) at most,
  // O(k log k) for the order. prefetch_entry(entry, stage) is called a
  // few slots ahead of entry's turn, twice (stage 0, then 1 closer to it),
  // so that the caller can bring in what entry_box(entry) will read, in
  // two dependent steps.
  template <class EntryBox, class OnChange, class Prefetch>
  std::size_t refit_path(std::span<const std::uint32_t> entries, EntryBox&& entry_box,
                         const BvhConfig& config, OnChange&& on_change,
                         Prefetch&& prefetch_entry);
  template <class EntryBox, class OnChange>
  std::size_t refit_path(std::span<const std::uint32_t> entries, EntryBox&& entry_box,
                         const BvhConfig& config, OnChange&& on_change) {
    return refit_path(entries, entry_box, config, on_change, [](std::uint32_t, int) {});
  }

  struct SweepResult {
    double sah_sum = 0.0;     // as sah_sum()
    std::size_t slots = 0;    // slot boxes recomputed
  };
  // One pass over every entry in order: each leaf slot holding an entry for
  // which changed(entry) is true gets the union of entry_box over its
  // entries; then every inner slot box is recomputed bottom-up. changed() is
  // called once per entry, entry_box() for each entry of a changed slot,
  // both in entry order within a range of entries; past 65,536 entries the
  // ranges run on all cores (TBB), aligned to leaf slots so that each slot
  // is one range's. O(entries + nodes).
  template <class Changed, class EntryBox>
  SweepResult refit_sweep(Changed&& changed, EntryBox&& entry_box, const BvhConfig& config);

  // The traversal loop: visits every leaf slot whose box the ray meets
  // within [ray.tmin, tmax], nearest box first, where tmax starts at
  // ray.tmax, with
  //   bool leaf(std::uint32_t entry, float& tmax)
  // called for each entry of the leaf (primitive id: prim_id(entry)); it
  // may lower tmax to the best t found so far and returns true to stop the
  // whole traversal (any-hit queries). Box tests are inclusive (tnear <=
  // tmax), so a primitive at exactly the best t is still offered to the
  // callback: ties are the callback's to break.
  template <class Leaf>
  TraversalStats traverse(const Ray& ray, Leaf&& leaf) const;
  // Which node test traverse() runs: the 8-wide AVX one when set (only
  // takes effect where the CPU has AVX2), else the two SSE halves. Set once
  // by the tree's owner (the Picker, from PickerConfig::isa); never while
  // queries run. The same nodes, leaves and hits either way.
  void set_avx2(bool on);
  bool avx2() const { return avx2_; }
#if RAYPICK_WIDE_AVX2
  // traverse() with the AVX node test; only where the CPU has AVX2
  // (avx2()). The same nodes and leaves, in the same order.
  template <class Leaf>
  RAYPICK_TARGET_AVX2 TraversalStats traverse_avx2(const Ray& ray, Leaf&& leaf) const;
#endif

  // traverse() for many rays, K of them in flight: each step advances one
  // ray by one node or leaf and prefetches what that ray visits next, then
  // turns to the next ray, so that while one waits for memory the others
  // work. Each ray visits the same nodes and leaves, in the same order, as
  // under traverse(). Calls
  //   bool leaf(std::size_t ray, std::uint32_t entry, float& tmax)
  //   void prefetch_leaf(std::uint32_t first_entry, std::uint32_t count)
  // with `ray` an index into `rays`.
  template <int K, class Leaf, class PrefetchLeaf>
  void traverse_interleaved(std::span<const Ray> rays, Leaf&& leaf,
                            PrefetchLeaf&& prefetch_leaf) const;

  // Rays per packet in traverse_packets().
  static constexpr int kPacket = 16;

  // traverse() for many rays, kPacket consecutive rays at a time walking
  // the tree together when they are coherent (see packet_coherent()): one
  // stack of (node, rays still in it), each node fetched once per packet
  // and its used slots tested against the packet's rays, four rays per SIMD
  // operation, with each ray's own arithmetic of test_node() (so each ray
  // meets exactly the boxes it meets under traverse()) and its own tmax.
  // Children are visited nearest first by the nearest entry among the rays
  // that hit them; an entry popped later goes on only with the rays that
  // still reach it (tnear <= their tmax). Each ray is offered every leaf
  // slot that traverse() could offer it with the same or a larger tmax, in
  // another order: the caller's callback must not depend on the order (a
  // closest hit under a total tie order does not). Groups that are not
  // coherent run traverse() ray by ray. Calls
  //   void leaf(std::size_t ray, std::uint32_t entry, float& tmax)
  // with `ray` an index into `rays`; the leaf cannot stop the traversal.
  template <class Leaf>
  void traverse_packets(std::span<const Ray> rays, Leaf&& leaf) const;

  // Whether rays (at most kPacket) share their direction signs (required),
  // and their origins lie within 1/64 of the tree's box's largest side of
  // the first one's and their unit directions within 1/4 per coordinate of
  // the first one's (rays whose paths through the tree mostly overlap).
  static bool packet_coherent(std::span<const Ray> rays, float extent);

 private:
  // A slot's SAH weight: traversal_cost for an inner slot,
  // intersection_cost * count for a leaf slot, 0 for an unused one.
  static double slot_weight(const WideNode& n, int slot, const BvhConfig& config) {
    if (n.is_leaf(slot)) return double(config.intersection_cost) * n.count[slot];
    return n.is_inner(slot) ? double(config.traversal_cost) : 0.0;
  }
  // Recomputes every inner slot's box bottom-up from the leaf slots';
  // returns the SAH sum. O(nodes).
  double refit_inner(const BvhConfig& config);
  bool first_of_slot(std::size_t e) const {
    return e == 0 || e == entry_node_.size() || entry_node_[e - 1] != entry_node_[e] ||
           entry_slot_[e - 1] != entry_slot_[e];
  }

  friend struct WideBvhInternals;  // tests/support/bvh_oracle.h

  std::vector<WideNode> nodes_;
  // Empty means the identity (entry e is primitive e), which saves the
  // array for a caller that numbers its primitives in entry order.
  std::vector<std::uint32_t> prim_ids_;
  // Where the refits find things: each node's parent node and the slot in
  // it that points at the node (the root: itself, 0); each entry's leaf
  // node and slot.
  std::vector<std::uint32_t> parent_;
  std::vector<std::uint8_t> parent_slot_;
  std::vector<std::uint32_t> entry_node_;
  std::vector<std::uint8_t> entry_slot_;
  bool avx2_ = false;  // see set_avx2()
  // refit_path()'s scratch: per node, its slots still to recompute (all
  // zero between calls), and the nodes to visit, a max-heap.
  std::vector<std::uint8_t> dirty_slots_;
  std::vector<std::uint32_t> dirty_nodes_;
  std::vector<std::uint64_t> leaf_keys_;  // node, slot, entry of moved entries
};

// --------------------------------------------------------------------------

namespace wide_detail {

// Whether this CPU has AVX2 (asked once).
inline bool cpu_has_avx2() {
#if RAYPICK_WIDE_AVX2
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
#else
  return false;
#endif
}

// A hint that the cache line at p will be read soon.
inline void prefetch(const void* p) {
#if defined(__GNUC__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

}  // namespace wide_detail

inline void WideBvh::set_avx2(bool on) { avx2_ = on && wide_detail::cpu_has_avx2(); }

inline Aabb WideBvh::bounds() const { return nodes_.empty() ? Aabb{} : nodes_[0].box(); }

template <class EntryBox, class OnChange, class Prefetch>
std::size_t WideBvh::refit_path(std::span<const std::uint32_t> entries, EntryBox&& entry_box,
                                const BvhConfig& config, OnChange&& on_change,
                                Prefetch&& prefetch_entry) {
  if (nodes_.empty() || entries.empty()) return 0;
  auto prefetch_node = [&](std::uint32_t node) {
    const char* p = reinterpret_cast<const char*>(&nodes_[node]);
    for (std::size_t b = 0; b < sizeof(WideNode); b += 64) wide_detail::prefetch(p + b);
  };
  const double root_before = nodes_[0].box().half_area();
  bool root_changed = false;
  std::size_t updated = 0;
  if (dirty_slots_.size() != nodes_.size()) dirty_slots_.assign(nodes_.size(), 0);
  dirty_nodes_.clear();
  // Marks a parent slot to recompute; its node is visited after every node
  // with a larger index (its children among them).
  auto mark = [&](std::uint32_t node, int slot) {
    if (dirty_slots_[node] == 0) {
      prefetch_node(node);
      dirty_nodes_.push_back(node);
      std::push_heap(dirty_nodes_.begin(), dirty_nodes_.end());
    }
    dirty_slots_[node] |= static_cast<std::uint8_t>(1u << slot);
  };
  // A slot box recomputed: true when it changed.
  auto set_slot = [&](WideNode& n, int slot, const Aabb& b) {
    ++updated;
    const Aabb old = n.slot_box(slot);
    if (b == old) return false;
    on_change(slot_weight(n, slot, config), double(old.half_area()), double(b.half_area()));
    n.set_slot_box(slot, b);
    return true;
  };
  auto changed_node = [&](std::uint32_t node) {
    if (node == 0) {
      root_changed = true;
    } else {
      mark(parent_[node], parent_slot_[node]);
    }
  };
  // The leaf slots first, each once, in descending node order (children
  // before parents), with the nodes and entries a few slots ahead
  // prefetched: at a million objects every one of them is a cache miss.
  std::vector<std::uint64_t>& keys = leaf_keys_;
  keys.clear();
  for (std::uint32_t e : entries) {
    keys.push_back(std::uint64_t{entry_node_[e]} << 35 | std::uint64_t{entry_slot_[e]} << 32 | e);
  }
  std::sort(keys.begin(), keys.end(), std::greater<>());
  constexpr std::size_t kAhead = 8;
  auto node_of = [](std::uint64_t k) { return static_cast<std::uint32_t>(k >> 35); };
  auto slot_of = [](std::uint64_t k) { return static_cast<int>((k >> 32) & 7u); };
  auto entry_of = [](std::uint64_t k) { return static_cast<std::uint32_t>(k); };
  for (std::size_t i = 0; i < std::min(keys.size(), 2 * kAhead); ++i) {
    prefetch_entry(entry_of(keys[i]), 0);
    if (i < kAhead) {
      prefetch_entry(entry_of(keys[i]), 1);
      prefetch_node(node_of(keys[i]));
    }
  }
  bool node_changed = false;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i + 2 * kAhead < keys.size()) prefetch_entry(entry_of(keys[i + 2 * kAhead]), 0);
    if (i + kAhead < keys.size()) {
      prefetch_entry(entry_of(keys[i + kAhead]), 1);
      prefetch_node(node_of(keys[i + kAhead]));
    }
    const std::uint32_t node = node_of(keys[i]);
    const int slot = slot_of(keys[i]);
    // A slot once, however many of its entries moved.
    if (i == 0 || node_of(keys[i - 1]) != node || slot_of(keys[i - 1]) != slot) {
      WideNode& n = nodes_[node];
      Aabb b;
      for (std::uint32_t k = n.child[slot]; k < n.child[slot] + n.count[slot]; ++k) {
        b.extend(entry_box(k));
      }
      node_changed = set_slot(n, slot, b) || node_changed;
    }
    if (i + 1 == keys.size() || node_of(keys[i + 1]) != node) {
      if (node_changed) changed_node(node);
      node_changed = false;
    }
  }
  // Then the inner slots above them, deepest node first, each once.
  while (!dirty_nodes_.empty()) {
    std::pop_heap(dirty_nodes_.begin(), dirty_nodes_.end());
    const std::uint32_t node = dirty_nodes_.back();
    dirty_nodes_.pop_back();
    // The next nodes out of the heap are among its first three: fetched
    // now, they arrive while this one is done (marking prefetched them
    // too, but long before their turn).
    for (std::size_t h = 0; h < std::min<std::size_t>(3, dirty_nodes_.size()); ++h) {
      prefetch_node(dirty_nodes_[h]);
    }
    WideNode& n = nodes_[node];
    bool changed = false;
    for (unsigned m = dirty_slots_[node]; m != 0; m &= m - 1) {
      const int slot = std::countr_zero(m);
      // The child node has a larger index: it is up to date.
      changed = set_slot(n, slot, nodes_[n.child[slot]].box()) || changed;
    }
    dirty_slots_[node] = 0;
    // Ancestors depend only on this node's box: unchanged slots, no walk up.
    if (changed) changed_node(node);
  }
  if (root_changed) {
    // The root's own term of the SAH sum (its visit, weighted by its area,
    // as in sah_sum()) follows the root's box.
    on_change(double(config.traversal_cost), root_before, double(nodes_[0].box().half_area()));
  }
  return updated;
}

template <class Changed, class EntryBox>
WideBvh::SweepResult WideBvh::refit_sweep(Changed&& changed, EntryBox&& entry_box,
                                          const BvhConfig& config) {
  SweepResult result;
  if (nodes_.empty()) return result;
  const std::size_t entries = entry_node_.size();
  std::atomic<std::size_t> leaf_slots{0};
  auto sweep_range = [&](std::size_t begin, std::size_t end) {
    // Ranges are moved to slot boundaries, so that each slot's entries
    // belong to one range only.
    while (!first_of_slot(begin)) ++begin;
    while (!first_of_slot(end)) ++end;
    std::size_t slots = 0;
    for (std::size_t e = begin; e < end;) {
      // The slot's entries, found from the entry arrays (read in order)
      // rather than the node (a cache miss).
      std::size_t last = e + 1;
      bool any = changed(static_cast<std::uint32_t>(e));
      for (; !first_of_slot(last); ++last) {
        any = changed(static_cast<std::uint32_t>(last)) || any;
      }
      if (any) {
        Aabb box;
        for (std::size_t k = e; k < last; ++k) box.extend(entry_box(static_cast<std::uint32_t>(k)));
        nodes_[entry_node_[e]].set_slot_box(entry_slot_[e], box);
        ++slots;
      }
      e = last;
    }
    leaf_slots += slots;
  };
  if (entries >= 65536) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, entries, 16384),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        sweep_range(r.begin(), r.end());
                      });
  } else {
    sweep_range(0, entries);
  }
  result.sah_sum = refit_inner(config);
  // Every node but the root is the child of one inner slot.
  result.slots = leaf_slots.load() + nodes_.size() - 1;
  return result;
}

namespace wide_detail {

// A stack entry: a node, or a leaf's run of entries, and where the ray
// enters its box.
struct Entry {
  std::uint32_t index;  // node, or first entry of a leaf
  std::uint32_t count;  // 0: node; else leaf size
  float tnear;
};

// Each node visit pops one entry and pushes at most kWidth - 1 (the
// nearest hit slot is taken next without a push).
inline constexpr int kStackSize = (WideNode::kWidth - 1) * kBvhMaxDepth + 8;

// What a node test needs of a ray, computed once per ray.
struct NodeRay {
  RayInv inv;
  int near_row[3], far_row[3];  // rows of the near and far planes per axis
#if RAYPICK_WIDE_SSE
  __m128 o[3], i[3], tmin;
#endif
  RAYPICK_GEOMETRY_INLINE explicit NodeRay(const Ray& ray) : inv(ray) {
    for (int a = 0; a < 3; ++a) {
      near_row[a] = inv.neg[a] ? 3 + a : a;
      far_row[a] = inv.neg[a] ? a : 3 + a;
    }
#if RAYPICK_WIDE_SSE
    for (int a = 0; a < 3; ++a) {
      o[a] = _mm_set1_ps(inv.org[a]);
      i[a] = _mm_set1_ps(inv.inv_dir[a]);
    }
    tmin = _mm_set1_ps(inv.tmin);
#endif
  }
};

// The slab test of the ray against a node's slots within
// [tmin, tmax]: a bit per slot hit, and each slot's entry t in tn.
RAYPICK_GEOMETRY_INLINE unsigned test_node(const WideNode& n, const NodeRay& r, float tmax,
                          float* tn) {
#if RAYPICK_WIDE_SSE
  // Scalar line per slot and axis, as in slab_interval():
  //   tnear = t0 > tnear ? t0 : tnear;  tfar = t1 < tfar ? t1 : tfar;
  // _mm_max_ps(a, b) and _mm_min_ps(a, b) return b when a is NaN, so a NaN
  // plane distance leaves the interval unchanged, as there.
  unsigned mask = 0;
  const __m128 tmax4 = _mm_set1_ps(tmax);
  for (int h = 0; h < WideNode::kWidth; h += 4) {
    __m128 t_near = r.tmin, t_far = tmax4;
    for (int a = 0; a < 3; ++a) {
      t_near = _mm_max_ps(
          _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.bounds[r.near_row[a]] + h), r.o[a]), r.i[a]),
          t_near);
      t_far = _mm_min_ps(
          _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.bounds[r.far_row[a]] + h), r.o[a]), r.i[a]),
          t_far);
    }
    _mm_storeu_ps(tn + h, t_near);
    mask |= static_cast<unsigned>(_mm_movemask_ps(_mm_cmple_ps(t_near, t_far))) << h;
  }
  return mask;
#else
  unsigned mask = 0;
  for (int s = 0; s < WideNode::kWidth; ++s) {
    float t_near = r.inv.tmin, t_far = tmax;
    for (int a = 0; a < 3; ++a) {
      const float t0 = (n.bounds[r.near_row[a]][s] - r.inv.org[a]) * r.inv.inv_dir[a];
      const float t1 = (n.bounds[r.far_row[a]][s] - r.inv.org[a]) * r.inv.inv_dir[a];
      t_near = t0 > t_near ? t0 : t_near;
      t_far = t1 < t_far ? t1 : t_far;
    }
    tn[s] = t_near;
    if (t_near <= t_far) mask |= 1u << s;
  }
  return mask;
#endif
}

#if RAYPICK_WIDE_AVX2
// The ray's planes for the AVX test, each broadcast to 8 lanes.
struct NodeRay8 {
  __m256 o[3], i[3], tmin;
  RAYPICK_TARGET_AVX2 explicit NodeRay8(const NodeRay& r) {
    for (int a = 0; a < 3; ++a) {
      o[a] = _mm256_set1_ps(r.inv.org[a]);
      i[a] = _mm256_set1_ps(r.inv.inv_dir[a]);
    }
    tmin = _mm256_set1_ps(r.inv.tmin);
  }
};

// test_node() on all 8 slots at once: the same operations, in the same
// order, on each slot (so the same tn and the same mask; VMAXPS, VMINPS
// and the ordered compare treat NaN as MAXPS, MINPS and CMPLEPS do).
// tn must be 32-byte aligned.
[[gnu::always_inline]] RAYPICK_TARGET_AVX2 inline unsigned test_node_avx2(
    const WideNode& n, const NodeRay& r, const NodeRay8& r8, float tmax, float* tn) {
  __m256 t_near = r8.tmin, t_far = _mm256_set1_ps(tmax);
  for (int a = 0; a < 3; ++a) {
    t_near = _mm256_max_ps(
        _mm256_mul_ps(_mm256_sub_ps(_mm256_load_ps(n.bounds[r.near_row[a]]), r8.o[a]), r8.i[a]),
        t_near);
    t_far = _mm256_min_ps(
        _mm256_mul_ps(_mm256_sub_ps(_mm256_load_ps(n.bounds[r.far_row[a]]), r8.o[a]), r8.i[a]),
        t_far);
  }
  _mm256_store_ps(tn, t_near);
  return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(t_near, t_far, _CMP_LE_OS)));
}
#endif

// Given a node's hit slots (mask != 0): returns the nearest, to be visited
// next, and pushes the others, farthest deepest. One and two hits, the
// common cases, need no sort.
// Node: WideNode, or any node with child[] and count[] arrays of 8 slots
// (raypick_floor's compressed prototype).
template <class Node>
RAYPICK_GEOMETRY_INLINE Entry order_hits(const Node& n, unsigned mask, const float* tn,
                        Entry* stack, int& top) {
  const int s0 = std::countr_zero(mask);
  mask &= mask - 1;
  const Entry e0{n.child[s0], n.count[s0], tn[s0]};
  if (mask == 0) return e0;
  const int s1 = std::countr_zero(mask);
  mask &= mask - 1;
  const Entry e1{n.child[s1], n.count[s1], tn[s1]};
  if (mask == 0) {
    const bool first = e0.tnear <= e1.tnear;
    stack[top++] = first ? e1 : e0;
    return first ? e0 : e1;
  }
  Entry hits[WideNode::kWidth] = {e0, e1};
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
  return hits[k - 1];
}

// Pops the next entry that can still hold a hit at t <= tmax into cur;
// tmax may have dropped since the push, and '<=' keeps ties reachable.
// False when the stack is exhausted.
RAYPICK_GEOMETRY_INLINE bool pop(Entry* stack, int& top, float tmax, Entry& cur) {
  while (top > 0) {
    cur = stack[--top];
    if (cur.tnear <= tmax) return true;
  }
  return false;
}

}  // namespace wide_detail

template <class Leaf>
TraversalStats WideBvh::traverse(const Ray& ray, Leaf&& leaf) const {
  using namespace wide_detail;
#if RAYPICK_WIDE_AVX2
  if (avx2_) return traverse_avx2(ray, leaf);
#endif
  TraversalStats st;
  if (nodes_.empty()) return st;
  const NodeRay r(ray);
  float tmax = r.inv.tmax;
  Entry stack[kStackSize];
  int top = 0;
  Entry cur{0, 0, r.inv.tmin};
  for (;;) {
    if (cur.count != 0) {
      ++st.leaves_visited;
      for (std::uint32_t i = 0; i < cur.count; ++i) {
        ++st.prims_tested;
        if (leaf(cur.index + i, tmax)) return st;
      }
    } else {
      const WideNode& n = nodes_[cur.index];
      ++st.nodes_visited;
      alignas(16) float tn[WideNode::kWidth];
      const unsigned mask = test_node(n, r, tmax, tn);
      if (mask != 0) {
        cur = order_hits(n, mask, tn, stack, top);
        continue;
      }
    }
    if (!pop(stack, top, tmax, cur)) return st;
  }
}

#if RAYPICK_WIDE_AVX2
// traverse()'s loop with test_node_avx2 (a copy: GCC inlines the AVX test
// only into a function of the AVX target).
template <class Leaf>
RAYPICK_TARGET_AVX2 TraversalStats WideBvh::traverse_avx2(const Ray& ray, Leaf&& leaf) const {
  using namespace wide_detail;
  TraversalStats st;
  if (nodes_.empty()) return st;
  const NodeRay r(ray);
  const NodeRay8 r8(r);
  float tmax = r.inv.tmax;
  Entry stack[kStackSize];
  int top = 0;
  Entry cur{0, 0, r.inv.tmin};
  for (;;) {
    if (cur.count != 0) {
      ++st.leaves_visited;
      for (std::uint32_t i = 0; i < cur.count; ++i) {
        ++st.prims_tested;
        if (leaf(cur.index + i, tmax)) return st;
      }
    } else {
      const WideNode& n = nodes_[cur.index];
      ++st.nodes_visited;
      alignas(32) float tn[WideNode::kWidth];
      const unsigned mask = test_node_avx2(n, r, r8, tmax, tn);
      if (mask != 0) {
        cur = order_hits(n, mask, tn, stack, top);
        continue;
      }
    }
    if (!pop(stack, top, tmax, cur)) return st;
  }
}
#endif

template <int K, class Leaf, class PrefetchLeaf>
void WideBvh::traverse_interleaved(std::span<const Ray> rays, Leaf&& leaf,
                                   PrefetchLeaf&& prefetch_leaf) const {
  using namespace wide_detail;
  if (nodes_.empty() || rays.empty()) return;
  struct Lane {
    NodeRay r;
    float tmax;
    Entry cur;
    int top;
    std::size_t ray;
    Entry* stack;
  };
  // Raw storage: NodeRay has no default constructor. The stacks are left
  // uninitialized: only what is pushed is read.
  alignas(Lane) unsigned char storage[K * sizeof(Lane)];
  Lane* lanes = reinterpret_cast<Lane*>(storage);
  // On the heap: K stacks could overflow a small thread stack.
  const auto stacks = std::make_unique_for_overwrite<Entry[]>(K * kStackSize);
  bool active[K];
  std::size_t next = 0;
  int running = 0;
  auto start = [&](int k) {
    const NodeRay r(rays[next]);
    new (&lanes[k]) Lane{r, r.inv.tmax, Entry{0, 0, r.inv.tmin}, 0, next, &stacks[k * kStackSize]};
    ++next;
  };
  for (int k = 0; k < K; ++k) {
    active[k] = next < rays.size();
    if (active[k]) {
      start(k);
      ++running;
    }
  }
  while (running > 0) {
    for (int k = 0; k < K; ++k) {
      if (!active[k]) continue;
      Lane& l = lanes[k];
      bool more = true;
      bool stop = false;
      if (l.cur.count != 0) {
        for (std::uint32_t i = 0; i < l.cur.count && !stop; ++i) {
          stop = leaf(l.ray, l.cur.index + i, l.tmax);
        }
        more = !stop && pop(l.stack, l.top, l.tmax, l.cur);
      } else {
        const WideNode& n = nodes_[l.cur.index];
        alignas(16) float tn[WideNode::kWidth];
        const unsigned mask = test_node(n, l.r, l.tmax, tn);
        if (mask != 0) {
          l.cur = order_hits(n, mask, tn, l.stack, l.top);
        } else {
          more = pop(l.stack, l.top, l.tmax, l.cur);
        }
      }
      if (!more) {
        // This ray is done: the lane takes the next one.
        if (next < rays.size()) {
          start(k);
        } else {
          active[k] = false;
          --running;
          continue;
        }
      }
      // Ask for what this lane reads next; the other lanes run meanwhile.
      if (l.cur.count != 0) {
        prefetch_leaf(l.cur.index, l.cur.count);
      } else {
        const char* p = reinterpret_cast<const char*>(&nodes_[l.cur.index]);
        for (std::size_t b = 0; b < sizeof(WideNode); b += 64) prefetch(p + b);
      }
    }
  }
}

inline bool WideBvh::packet_coherent(std::span<const Ray> rays, float extent) {
  const Ray& r0 = rays[0];
  const glm::vec3 d0 = r0.dir / glm::length(r0.dir);
  const float origin_limit = extent * (1.0f / 64.0f);
  for (const Ray& r : rays) {
    const glm::vec3 d = r.dir / glm::length(r.dir);
    for (int a = 0; a < 3; ++a) {
      if (std::signbit(r.dir[a]) != std::signbit(r0.dir[a])) return false;
      // Written so that NaN fails.
      if (!(std::abs(d[a] - d0[a]) <= 0.25f)) return false;
      if (!(std::abs(r.org[a] - r0.org[a]) <= origin_limit)) return false;
    }
  }
  return true;
}

template <class Leaf>
void WideBvh::traverse_packets(std::span<const Ray> rays, Leaf&& leaf) const {
  using namespace wide_detail;
  if (nodes_.empty() || rays.empty()) return;
#if RAYPICK_WIDE_SSE
  constexpr int kGroups = kPacket / 4;
  static_assert(kPacket % 4 == 0 && kPacket <= 32, "packet masks are 32-bit, groups of 4");
  // A stack entry: a node or a leaf's run, the rays that entered its box
  // and where each of them entered it.
  struct PEntry {
    alignas(16) float tn[kPacket];
    std::uint32_t index;
    std::uint32_t count;
    std::uint32_t mask;
  };
  // On the heap: kStackSize entries of 80 bytes could strain a small
  // thread stack.
  const auto stack = std::make_unique_for_overwrite<PEntry[]>(kStackSize);
  const Aabb root = bounds();
  const glm::vec3 size = root.max - root.min;
  const float extent = std::max(size.x, std::max(size.y, size.z));
  alignas(16) float org[3][kPacket], inv[3][kPacket], tmin[kPacket], tmax[kPacket];
  alignas(16) float slot_tn[WideNode::kWidth][kPacket];
  for (std::size_t base = 0; base < rays.size(); base += kPacket) {
    const std::size_t n = std::min<std::size_t>(kPacket, rays.size() - base);
    const std::span<const Ray> group = rays.subspan(base, n);
    if (n == 1 || !packet_coherent(group, extent)) {
      for (std::size_t i = 0; i < n; ++i) {
        traverse(group[i], [&](std::uint32_t entry, float& t) {
          leaf(base + i, entry, t);
          return false;
        });
      }
      continue;
    }
    // Every ray shares the first one's direction signs.
    int near_row[3], far_row[3];
    for (int a = 0; a < 3; ++a) {
      const bool neg = std::signbit(group[0].dir[a]);
      near_row[a] = neg ? 3 + a : a;
      far_row[a] = neg ? a : 3 + a;
    }
    for (int k = 0; k < kPacket; ++k) {
      if (k < static_cast<int>(n)) {
        const RayInv ri(group[k]);
        for (int a = 0; a < 3; ++a) {
          org[a][k] = ri.org[a];
          inv[a][k] = ri.inv_dir[a];
        }
        tmin[k] = ri.tmin;
        tmax[k] = ri.tmax;
      } else {
        // Padding lanes: never in a mask; finite values only.
        for (int a = 0; a < 3; ++a) org[a][k] = inv[a][k] = 0.0f;
        tmin[k] = tmax[k] = 0.0f;
      }
    }
    bool one_origin = true;
    for (std::size_t k = 1; k < n; ++k) {
      for (int a = 0; a < 3; ++a) {
        one_origin = one_origin && std::bit_cast<std::uint32_t>(org[a][k]) ==
                                       std::bit_cast<std::uint32_t>(org[a][0]);
      }
    }
    const std::uint32_t all = n == 32 ? 0xFFFFFFFFu : (1u << n) - 1u;
    int top = 0;
    std::uint32_t cur_index = 0, cur_count = 0, cur_mask = all;
    for (;;) {
      if (cur_count != 0) {
        for (std::uint32_t m = cur_mask; m != 0; m &= m - 1) {
          const int k = std::countr_zero(m);
          for (std::uint32_t i = 0; i < cur_count; ++i) leaf(base + k, cur_index + i, tmax[k]);
        }
      } else {
        const WideNode& nd = nodes_[cur_index];
        // Used slots: child != kInvalidSlot.
        const __m128i ones = _mm_set1_epi32(-1);
        const unsigned unused =
            static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(
                _mm_load_si128(reinterpret_cast<const __m128i*>(nd.child)), ones)))) |
            static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(
                _mm_load_si128(reinterpret_cast<const __m128i*>(nd.child + 4)), ones))))
                << 4;
        unsigned groups = 0;
        for (int g = 0; g < kGroups; ++g) {
          if ((cur_mask >> (4 * g)) & 0xFu) groups |= 1u << g;
        }
        std::uint32_t slot_mask[WideNode::kWidth];
        float key[WideNode::kWidth];
        unsigned hit_slots = 0;
        // The slots' tests, four rays per operation; with one origin for
        // the packet, each plane's (bound - origin) is the same for every
        // ray and computed once (the same value as lane by lane).
        auto test_slots = [&]<bool kOneOrigin>() {
          for (unsigned used = ~unused & 0xFFu; used != 0; used &= used - 1) {
            const int s = std::countr_zero(used);
            __m128 bn[3], bf[3];
            for (int a = 0; a < 3; ++a) {
              if constexpr (kOneOrigin) {
                bn[a] = _mm_set1_ps(nd.bounds[near_row[a]][s] - org[a][0]);
                bf[a] = _mm_set1_ps(nd.bounds[far_row[a]][s] - org[a][0]);
              } else {
                bn[a] = _mm_set1_ps(nd.bounds[near_row[a]][s]);
                bf[a] = _mm_set1_ps(nd.bounds[far_row[a]][s]);
              }
            }
            std::uint32_t m = 0;
            for (unsigned gs = groups; gs != 0; gs &= gs - 1) {
              const int g = std::countr_zero(gs);
              // test_node()'s arithmetic, lane by lane.
              __m128 t_near = _mm_load_ps(tmin + 4 * g), t_far = _mm_load_ps(tmax + 4 * g);
              for (int a = 0; a < 3; ++a) {
                const __m128 i = _mm_load_ps(inv[a] + 4 * g);
                __m128 dn = bn[a], df = bf[a];
                if constexpr (!kOneOrigin) {
                  const __m128 o = _mm_load_ps(org[a] + 4 * g);
                  dn = _mm_sub_ps(dn, o);
                  df = _mm_sub_ps(df, o);
                }
                t_near = _mm_max_ps(_mm_mul_ps(dn, i), t_near);
                t_far = _mm_min_ps(_mm_mul_ps(df, i), t_far);
              }
              const __m128 h = _mm_cmple_ps(t_near, t_far);
              _mm_store_ps(slot_tn[s] + 4 * g, t_near);
              m |= static_cast<std::uint32_t>(_mm_movemask_ps(h)) << (4 * g);
            }
            m &= cur_mask;
            slot_mask[s] = m;
            if (m != 0) {
              hit_slots |= 1u << s;
              // The order's key: where the first ray that hits enters.
              key[s] = slot_tn[s][std::countr_zero(m)];
            }
          }
        };
        if (one_origin) {
          test_slots.template operator()<true>();
        } else {
          test_slots.template operator()<false>();
        }
        if (hit_slots != 0) {
          // Sort the hit slots by descending key; push all but the last.
          int order[WideNode::kWidth];
          int k = 0;
          for (unsigned hs = hit_slots; hs != 0; hs &= hs - 1) {
            const int s = std::countr_zero(hs);
            int j = k++;
            while (j > 0 && key[order[j - 1]] < key[s]) {
              order[j] = order[j - 1];
              --j;
            }
            order[j] = s;
          }
          for (int j = 0; j + 1 < k; ++j) {
            const int s = order[j];
            PEntry& e = stack[top++];
            for (int g = 0; g < kGroups; ++g) {
              _mm_store_ps(e.tn + 4 * g, _mm_load_ps(slot_tn[s] + 4 * g));
            }
            e.index = nd.child[s];
            e.count = nd.count[s];
            e.mask = slot_mask[s];
          }
          const int s = order[k - 1];
          cur_index = nd.child[s];
          cur_count = nd.count[s];
          cur_mask = slot_mask[s];
          continue;
        }
      }
      // Pop the next entry some ray can still reach.
      bool found = false;
      while (top > 0) {
        const PEntry& e = stack[--top];
        std::uint32_t m = 0;
        for (int g = 0; g < kGroups; ++g) {
          m |= static_cast<std::uint32_t>(_mm_movemask_ps(
                   _mm_cmple_ps(_mm_load_ps(e.tn + 4 * g), _mm_load_ps(tmax + 4 * g))))
               << (4 * g);
        }
        m &= e.mask;
        if (m != 0) {
          cur_index = e.index;
          cur_count = e.count;
          cur_mask = m;
          found = true;
          break;
        }
      }
      if (!found) break;
    }
  }
#else
  for (std::size_t i = 0; i < rays.size(); ++i) {
    traverse(rays[i], [&](std::uint32_t entry, float& t) {
      leaf(i, entry, t);
      return false;
    });
  }
#endif
}

}  // namespace raypick
