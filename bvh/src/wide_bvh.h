// A wide BVH for traversal: the binary SAH tree collapsed so that each
// node holds the boxes of up to W children (8, or 16 for the top level
// under the AVX-512 node test), tested together by a SIMD slab test. Built
// from a binary Bvh; refitted in place. Private to the library: the
// Picker's top level and its meshes' triangle trees.
//
// The tree's parts: wide_node.h (the node's layout), this file (the tree,
// its collapse from a binary tree and its refits), wide_traverse.h (the
// node step per instruction set and the traversal loops built on it) and
// wide_packets.h (coherent packets); including this file brings them all.
#pragma once

#include "binary_bvh.h"
#include "compiler.h"
#include "saved_trees.h"
#include "wide_node.h"

#include "raypick/core/assert.h"
#include "raypick/core/ray.h"

#include <glm/geometric.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace raypick {

namespace wide_detail {  // the packets' types (wide_packets.h)
struct PacketEntry;
template <int W>
class PacketStack;
}  // namespace wide_detail

// Sorts `keys` by their top 32 bits (a leaf slot's place), largest first,
// stably: an LSD radix sort over the lowest `place_bits` bits of the place,
// the higher ones being zero. `scratch` is its second buffer. Linear where
// std::sort was 0.5 ms of a boxes-1M commit of 10,000 moves.
void sort_places_descending(std::vector<std::uint64_t>& keys,
                            std::vector<std::uint64_t>& scratch, int place_bits);

// The node test a wide tree's walks run (WideBvhOf::set_node_test): SSE,
// four slots per instruction (any x86-64); AVX2, eight (an 8-wide node in
// one, a 16-wide one in two); AVX-512, sixteen (16-wide nodes), or over
// 8-wide nodes the AVX2 test's operations with AVX-512VL's masks and
// compress in the single-ray walk. Every one gives the same hit slots and
// entry t.
enum class NodeTest : std::uint8_t { kSse, kAvx2, kAvx512 };

// A wide BVH of W-slot nodes (WideNodeOf<W>) and the bookkeeping that
// refits walk by. Leaf slots
// hold runs of entries; entry e stands for primitive prim_id(e), and a
// leaf's entries are contiguous. Data is private: a tree is made by
// collapse(), changed only by the refits below, and read through nodes()
// and the traversal loops.
template <int W>
class WideBvhOf {
 public:
  using Node = WideNodeOf<W>;
  static constexpr int kWidth = W;
  // The most nodes a tree may have (a tree of more would hold over 2^28
  // objects): a node index and a slot number fit in one 32-bit place,
  // never equal to kInvalidId.
  static constexpr std::size_t kMaxNodes = (std::size_t{1} << 28) - 1;
  // A slot's place: its node's index above kSlotBits bits of slot number.
  // The refits find an entry's leaf slot and a node's parent slot by it:
  // one array read where a node array and a slot array were two misses.
  static constexpr int kSlotBits = W > 8 ? 4 : 3;
  static constexpr std::uint32_t place(std::uint32_t node, int slot) {
    return node << kSlotBits | static_cast<std::uint32_t>(slot);
  }
  static constexpr std::uint32_t place_node(std::uint32_t p) { return p >> kSlotBits; }
  static constexpr int place_slot(std::uint32_t p) { return static_cast<int>(p & (W - 1u)); }

  // Collapses `bvh` (its prim_ids order is kept for the entries). With 8
  // slots, each wide node takes a binary node's children and keeps opening
  // inner ones until it has eight slots: the largest subtree needing more
  // than eight leaf slots first, then the largest small one that fits
  // whole, so that the small subtrees left make full nodes. With 16 slots,
  // by the SAH (config's costs): each node covers its subtree by the
  // cheapest set of at most 16 of the binary tree's nodes, exactly over the
  // tree's cuts (a table of min(16, leaves below) costs per binary node).
  // O(nodes) (times up to 16^2 per node for 16 slots); large trees collapse
  // their subtrees as parallel tasks, numbered the same on any thread count.
  static WideBvhOf collapse(const Bvh& bvh, const BvhConfig& config = {});

  bool empty() const { return nodes_.empty(); }
  // nodes()[0] is the root (when not empty); children come after parents.
  std::span<const Node> nodes() const { return nodes_; }
  std::size_t entry_count() const { return entry_place_.size(); }
  std::uint32_t prim_id(std::uint32_t entry) const {
    return prim_ids_.empty() ? entry : prim_ids_[entry];
  }
  // Declares that the caller has renumbered its primitives in entry order
  // (primitive e is entry e from here on) and frees the id array. (Not
  // `prim_ids_ = {}`: that assigns an empty initializer list and keeps the
  // storage, 4 bytes per entry.)
  void number_by_entry() { std::vector<std::uint32_t>().swap(prim_ids_); }

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

  // The tree's shape for a saved picker (PickerCore::save_trees): the
  // entry count, per node its slots' children and counts, and the entries'
  // primitive ids when they are not the identity. The boxes are not saved:
  // the owner refits them from its primitives. Appended to `out`.
  void save_shape(std::string& out) const;
  // Reads a shape that save_shape() wrote, for a tree over `prims`
  // primitives, and checks that it is one: children after their parents,
  // each node but the root a child of exactly one slot, no deeper than
  // kBvhMaxDepth (the traversal's stack is sized by it), leaf slots holding
  // every entry once, the primitive ids a permutation of 0..prims-1. Every
  // slot box is empty: refit_sweep() with every entry changed fills them
  // (the same boxes a build makes: unions are exact). nullopt, with the
  // reason in `why`, when the bytes are not such a shape. O(nodes + prims).
  // A leaf slot holds at most max_leaf entries (as a build with that
  // BvhConfig::max_leaf_size makes them), so that no forged shape makes a
  // leaf slower than the build's.
  static std::optional<WideBvhOf> load_shape(saved::Bytes& in, std::size_t prims,
                                           std::uint32_t max_leaf, std::string& why);
  // Whether entries carry their own primitive ids (not the identity).
  bool has_prim_ids() const { return !prim_ids_.empty(); }

  // Both refits take the boxes of entries from
  //   Aabb entry_box(std::uint32_t entry)
  // and count their work in slot boxes recomputed (a node has W slots).

  // Recomputes the boxes above the given entries only, in one pass over
  // the nodes concerned, largest node index first (so children, whose
  // indices are larger, before their parents; not by depth): each of
  // their leaf slots once and each ancestor slot once, going above a node
  // only when
  // one of its slot boxes changed; the slots of many moved entries share
  // their ancestors' work. Calls on_change(weight, old_area, new_area) for
  // each slot box that changed, where weight is the slot's SAH weight (as
  // in stats()), and for the root's own box when a root slot changed
  // (weight traversal_cost, as in sah_sum()), so that the calls add up to
  // the change of sah_sum(). Returns the number of slot boxes recomputed,
  // the unchanged ones that ended a path included. O(k * depth) at most,
  // plus O(k) for the order (a radix sort) and a scan of one bit per node
  // below the highest moved entry's node.
  // The moved entries' own boxes come from moved_box(i), i their index in
  // `entries` (the caller may have made them all beforehand, in its own
  // order), the other entries of their slots' from entry_box; the overloads
  // without moved_box ask entry_box for every entry. prefetch_entry(entry,
  // stage) is called a few slots ahead of entry's turn, twice, so that the
  // caller can bring in what it will read in two dependent steps: stages 0
  // then 1 (closer to it) for a moved entry, 2 then 3 for the other entries
  // of its slot, which entry_box will read.
  template <class EntryBox, class MovedBox, class OnChange, class Prefetch>
  std::size_t refit_path(std::span<const std::uint32_t> entries, EntryBox&& entry_box,
                         MovedBox&& moved_box, const BvhConfig& config, OnChange&& on_change,
                         Prefetch&& prefetch_entry);
  template <class EntryBox, class OnChange, class Prefetch>
  std::size_t refit_path(std::span<const std::uint32_t> entries, EntryBox&& entry_box,
                         const BvhConfig& config, OnChange&& on_change,
                         Prefetch&& prefetch_entry) {
    return refit_path(
        entries, entry_box, [&](std::size_t i) { return entry_box(entries[i]); }, config,
        on_change, prefetch_entry);
  }
  template <class EntryBox, class OnChange>
  std::size_t refit_path(std::span<const std::uint32_t> entries, EntryBox&& entry_box,
                         const BvhConfig& config, OnChange&& on_change) {
    return refit_path(entries, entry_box, config, on_change, [](std::uint32_t, int) {});
  }

  // From this many entries on, refit_sweep() runs its ranges on all of
  // TBB's threads.
  static constexpr std::size_t kParallelSweep = 65536;
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
  // The same, the entries' boxes asked for a block of whole slots at a
  // time (some 64 entries), so that the caller can make many at once:
  //   void entry_boxes(std::uint32_t begin, std::uint32_t end,
  //                    const std::uint8_t* want, Aabb* out)
  // sets out[e - begin] for each entry e in [begin, end) with
  // want[e - begin] != 0 (the entries of the block's changed slots).
  template <class Changed, class EntryBoxes>
  SweepResult refit_sweep_blocks(Changed&& changed, EntryBoxes&& entry_boxes,
                                 const BvhConfig& config);

  // The traversal loop: visits every leaf slot whose box the ray meets
  // within [ray.tmin, tmax], nearest box first, where tmax starts at
  // ray.tmax, with
  //   bool leaf(std::uint32_t entry, float& tmax)
  // called for each entry of the leaf (primitive id: prim_id(entry)); it
  // may set tmax, the bound of the boxes still to visit, from the best t
  // found so far, and returns true to stop the whole traversal (any-hit
  // queries). Box tests are inclusive (tnear <=
  // tmax), so a primitive at exactly the best t is still offered to the
  // callback: ties are the callback's to break. A leaf callable as
  //   bool leaf(wide_detail::LeafRun run, float& tmax)
  // is called once per leaf slot instead, with its run of entries
  // run.index .. run.index + run.count - 1 (either width; the mesh
  // trees' triangles, four per SIMD test).
  template <class Leaf>
  TraversalStats traverse(const Ray& ray, Leaf&& leaf) const;
  // Which node test traverse() and traverse_interleaved() run: `test`, or
  // the best below it that the CPU allows (AVX-512 needs the CPU's
  // AVX-512 F, VL, DQ and BW, AVX2 its AVX2). traverse_interleaved() runs
  // AVX-512 on 16-wide trees only (8-wide ones take SSE there). Set once by
  // the tree's owner (the Picker, from PickerConfig::isa); never while
  // queries run. The same leaves and hits on every one.
  void set_node_test(NodeTest test);
  NodeTest node_test() const { return node_test_; }
  // Whether traverse() fetches the nodes of the slots it pushes as it
  // pushes them, so that they are in cache when it pops them: for a tree
  // far larger than the caches, where an incoherent ray's popped node is
  // a miss (the owner decides; the Picker from four times
  // PickerConfig::batch_interleave_bytes). On a smaller tree the fetches
  // cost coherent rays more than they save incoherent ones. The same
  // leaves and hits either way. Set once by the tree's owner, never while
  // queries run.
  void set_fetch_pushed(bool fetch) { fetch_pushed_ = fetch; }
  bool fetch_pushed() const { return fetch_pushed_; }
#if RAYPICK_WIDE_AVX2
  // traverse() with the AVX2 node test (node_test() kAvx2): the same nodes
  // and leaves, in the same order, as under the SSE test.
  template <class Leaf>
  RAYPICK_TARGET_AVX2 TraversalStats traverse_avx2(const Ray& ray, Leaf&& leaf) const;
#endif
#if RAYPICK_WIDE_AVX512
  // traverse() with AVX-512 (node_test() kAvx512): 16 slots per test, or
  // 8 with AVX-512VL's masks and compress. A single hit slot is visited
  // next, else the nearest, and the others pushed in slot order: the same
  // leaves as under the SSE test, in another order.
  template <class Leaf>
  RAYPICK_TARGET_AVX512 TraversalStats traverse_avx512(const Ray& ray, Leaf&& leaf) const;
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
  static constexpr int kPacket = 32;

  // traverse() for many rays, kPacket consecutive rays at a time walking
  // the tree together when they are coherent (see packet_coherent()), or
  // the first kPacket / 2 of them when only those are: one
  // stack of (node, rays still in it), each node fetched once per packet
  // and its used slots tested against the packet's rays, packet_lanes()
  // rays per SIMD operation, with each ray's own arithmetic of test_node()
  // (so each ray meets exactly the boxes it meets under traverse()) and its
  // own tmax.
  // Children are visited nearest first by the nearest entry among the rays
  // that hit them; an entry popped later goes on only with the rays that
  // still reach it (tnear <= their tmax). Each ray is offered every leaf
  // slot that traverse() could offer it with the same or a larger tmax, in
  // another order: the caller's callback must not depend on the order (a
  // closest hit under a total tie order does not). Rays that cannot walk
  // in a packet run traverse() one by one. Calls
  //   void leaf(std::size_t ray, std::uint32_t entry, float& tmax)
  // with `ray` an index into `rays`; the leaf cannot stop the traversal.
  template <class Leaf>
  void traverse_packets(std::span<const Ray> rays, Leaf&& leaf) const;
  // The same, each leaf entry of a packet offered once to all of its rays
  // that reach it, as
  //   void packet_leaf(std::size_t base, std::uint32_t entry, std::uint32_t mask,
  //                    wide_detail::PacketRays& p)
  // for the rays base + k, k in `mask`, whose p.tmax[k] it may lower (one
  // SIMD test for them all); leaf() still serves the rays that walk alone.
  template <class Leaf, class PacketLeaf>
  void traverse_packets(std::span<const Ray> rays, Leaf&& leaf, PacketLeaf&& packet_leaf) const;
  // The same, the groups that cannot walk as a packet (a last group of one
  // ray, rays not coherent or not all is_valid()) left to the caller, as
  //   void diverged(std::size_t base, std::size_t n)
  // for the rays base .. base + n - 1 (a batch gathers them to walk
  // interleaved). The groups' coherence is tested here. `stack`:
  // the walk's room, one per thread, reused from call to call.
  template <class PacketLeaf, class Diverged>
  void traverse_coherent(std::span<const Ray> rays, PacketLeaf&& packet_leaf,
                         Diverged&& diverged, const wide_detail::PacketStack<W>& stack) const;
  // Rays per SIMD operation in traverse_packets(): 4
  // (SSE, the default), 8 (AVX2) or 16 (AVX-512, half the packet); a
  // width the CPU lacks falls back to the next narrower (to 4 in a Clang
  // build: see RAYPICK_PACKET_AVX). Set once by the
  // tree's owner, never while queries run. The same leaves and tmax per
  // ray at every width.
  void set_packet_lanes(int lanes);
  int packet_lanes() const { return packet_lanes_; }

  // Whether rays (1 to kPacket) walk as one packet in traverse_packets():
  // each is_valid(), and they share their direction signs (required), and their origins lie
  // within 1/64 of the tree's box's largest side of the first one's and
  // their directions within an angle of sine 1/4 (about 14.5 degrees, not
  // its supplement: the shared signs make the angle acute) of the first
  // one's (rays whose paths through the tree mostly overlap). The packet
  // loop's own test (wide_detail::lanes_coherent), 4 rays per operation;
  // false where there are no packets (no SSE).
  static bool packet_coherent(std::span<const Ray> rays, float extent);

 private:
  // A slot's SAH weight: traversal_cost for an inner slot,
  // intersection_cost * count for a leaf slot, 0 for an unused one.
  static double slot_weight(const Node& n, int slot, const BvhConfig& config) {
    if (n.is_leaf(slot)) return double(config.intersection_cost) * n.count[slot];
    return n.is_inner(slot) ? double(config.traversal_cost) : 0.0;
  }
  // Recomputes every inner slot's box bottom-up from the leaf slots';
  // returns the SAH sum. O(nodes).
  double refit_inner(const BvhConfig& config);
  bool first_of_slot(std::size_t e) const {
    return e == 0 || e == entry_place_.size() || entry_place_[e - 1] != entry_place_[e];
  }

#if RAYPICK_PACKET_AVX
  template <class PacketLeaf, class Diverged>
  RAYPICK_TARGET_AVX2 void traverse_packets_avx2(std::span<const Ray> rays,
                                                 PacketLeaf& packet_leaf, Diverged& diverged,
                                                 wide_detail::PacketEntry* stack) const;
  template <class PacketLeaf, class Diverged>
  RAYPICK_TARGET_AVX512 void traverse_packets_avx512(std::span<const Ray> rays,
                                                     PacketLeaf& packet_leaf, Diverged& diverged,
                                                     wide_detail::PacketEntry* stack) const;
#endif
  // traverse_coherent() with Lanes' arithmetic (wide_packets.h).
  template <class Lanes, class PacketLeaf, class Diverged>
  RAYPICK_GEOMETRY_INLINE void packets(std::span<const Ray> rays, PacketLeaf& packet_leaf,
                                       Diverged& diverged, wide_detail::PacketEntry* stack) const;

  friend struct WideBvhInternals;  // tests/support/bvh_oracle.h

  compiler::HugeVector<Node> nodes_;
  // Empty means the identity (entry e is primitive e), which saves the
  // array for a caller that numbers its primitives in entry order.
  std::vector<std::uint32_t> prim_ids_;
  // Where the refits find things, as places (above): each node's parent
  // slot (the root's: place(0, 0)) and each entry's leaf slot.
  std::vector<std::uint32_t> parent_;
  std::vector<std::uint32_t> entry_place_;
  NodeTest node_test_ = NodeTest::kSse;  // see set_node_test()
  bool fetch_pushed_ = false;            // see set_fetch_pushed()
  int packet_lanes_ = 4;  // see set_packet_lanes()
  // refit_path()'s scratch, all zero between calls: per node, its slots
  // still to recompute, and a bit per node, set while it waits.
  using SlotMask = std::conditional_t<(W > 8), std::uint16_t, std::uint8_t>;
  std::vector<SlotMask> dirty_slots_;
  std::vector<std::uint64_t> dirty_bits_;
  std::vector<std::uint64_t> leaf_keys_;  // node, slot, entry of moved entries
  std::vector<std::uint64_t> leaf_keys_scratch_;
};

using WideBvh = WideBvhOf<8>;
using WideBvh16 = WideBvhOf<16>;

template <int W>
inline void WideBvhOf<W>::set_node_test(NodeTest test) {
  if (test == NodeTest::kAvx512 && !compiler::cpu_has_avx512()) {
    test = NodeTest::kAvx2;
  }
  if (test == NodeTest::kAvx2 && !compiler::cpu_has_avx2()) test = NodeTest::kSse;
  node_test_ = test;
}

template <int W>
inline void WideBvhOf<W>::set_packet_lanes(int lanes) {
#if RAYPICK_PACKET_AVX
  packet_lanes_ = lanes >= 16 && compiler::cpu_has_avx512() ? 16
                  : lanes >= 8 && compiler::cpu_has_avx2()  ? 8
                                                            : 4;
#else
  (void)lanes;
  packet_lanes_ = 4;
#endif
}

template <int W>
inline Aabb WideBvhOf<W>::bounds() const { return nodes_.empty() ? Aabb{} : nodes_[0].box(); }

template <int W>
template <class EntryBox, class MovedBox, class OnChange, class Prefetch>
std::size_t WideBvhOf<W>::refit_path(std::span<const std::uint32_t> entries, EntryBox&& entry_box,
                                     MovedBox&& moved_box, const BvhConfig& config,
                                     OnChange&& on_change, Prefetch&& prefetch_entry) {
  if (nodes_.empty() || entries.empty()) return 0;
  auto prefetch_node = [&](std::uint32_t node) { compiler::prefetch_lines(nodes_[node]); };
  const double root_before = nodes_[0].box().half_area();
  bool root_changed = false;
  std::size_t updated = 0;
  if (dirty_slots_.size() != nodes_.size()) {
    dirty_slots_.assign(nodes_.size(), 0);
    dirty_bits_.assign((nodes_.size() + 63) / 64, 0);
  }
  // Marks a parent slot to recompute; its node is visited after every node
  // with a larger index (its children among them).
  auto mark = [&](std::uint32_t node, int slot) {
    if (dirty_slots_[node] == 0) {
      prefetch_node(node);
      dirty_bits_[node / 64] |= std::uint64_t{1} << (node % 64);
    }
    dirty_slots_[node] |= static_cast<SlotMask>(1u << slot);
  };
  // A slot box recomputed: true when it changed.
  auto set_slot = [&](Node& n, int slot, const Aabb& b) {
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
      mark(place_node(parent_[node]), place_slot(parent_[node]));
    }
  };
  // The moved entries' keys in descending order of their leaf slots'
  // places, so that each slot is met once; their nodes, entries and
  // their slots' other entries are prefetched a few keys ahead: at a
  // million objects every one of them is a cache miss. A key: the
  // entry's place above its index in `entries`.
  std::vector<std::uint64_t>& keys = leaf_keys_;
  keys.clear();
  // entry_place_ read at random: fetched 16 entries ahead.
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i + 16 < entries.size()) compiler::prefetch(&entry_place_[entries[i + 16]]);
    keys.push_back(std::uint64_t{entry_place_[entries[i]]} << 32 | i);
  }
  sort_places_descending(keys, leaf_keys_scratch_,
                         std::bit_width(nodes_.size() - 1) + kSlotBits);
  // Keys ahead: an entry and its node at kAhead, the slot's other
  // entries (read from the node) at 2/3 of it, their objects' records
  // (read from their leaf copies) at 1/3 (boxes-1M, 1% moved: 12 against
  // 8 took a twelfth off the commit).
  constexpr std::size_t kAhead = 12;
  auto node_of = [](std::uint64_t k) { return place_node(static_cast<std::uint32_t>(k >> 32)); };
  auto slot_of = [](std::uint64_t k) { return place_slot(static_cast<std::uint32_t>(k >> 32)); };
  auto index_of = [](std::uint64_t k) { return static_cast<std::uint32_t>(k); };
  auto entry_of = [&](std::uint64_t k) { return entries[index_of(k)]; };
  // The other entries of key i's slot, once its node has arrived.
  auto prefetch_others = [&](std::size_t i, int stage) {
    const Node& n = nodes_[node_of(keys[i])];
    const int slot = slot_of(keys[i]);
    const std::uint32_t own = entry_of(keys[i]);
    for (std::uint32_t k = n.child[slot]; k < n.child[slot] + n.count[slot]; ++k) {
      if (k != own) prefetch_entry(k, stage);
    }
  };
  for (std::size_t i = 0; i < std::min(keys.size(), 2 * kAhead); ++i) {
    prefetch_entry(entry_of(keys[i]), 0);
    if (i < kAhead) {
      prefetch_entry(entry_of(keys[i]), 1);
      prefetch_node(node_of(keys[i]));
    }
  }
  // Key i's turn has come: what keys further on will read, fetched.
  auto prefetch_ahead = [&](std::size_t i) {
    if (i + 2 * kAhead < keys.size()) prefetch_entry(entry_of(keys[i + 2 * kAhead]), 0);
    if (i + kAhead < keys.size()) {
      prefetch_entry(entry_of(keys[i + kAhead]), 1);
      prefetch_node(node_of(keys[i + kAhead]));
    }
    if (i + 2 * kAhead / 3 < keys.size()) prefetch_others(i + 2 * kAhead / 3, 2);
    if (i + kAhead / 3 < keys.size()) prefetch_others(i + kAhead / 3, 3);
  };
  // Then every node with a moved entry's leaf slot or a marked inner slot,
  // each once, largest index first: a node marks only its parent, a
  // smaller index, so the order never passes a node still to come. The
  // collapse numbers each subtree's nodes just after its root, so in this
  // descending order a node comes right after its subtree, and its inner
  // slots are recomputed soon after its children were, while their lines
  // are still in cache (not for the few top nodes of a large tree, which
  // its collapse numbers apart from their subtrees). The next node is the
  // larger of the next key's and the highest marked one (bits at or below
  // the word `word` - 1: every node above the last one done is done). (A
  // max-heap of the marked nodes did the same in this order, its sifts a
  // fifth of a commit's instructions.)
  std::size_t i = 0;
  std::size_t word = node_of(keys.front()) / 64 + 1;
  for (;;) {
    // The highest marked node, looked for down to the next key's word.
    const std::size_t floor_word = i < keys.size() ? node_of(keys[i]) / 64 : 0;
    while (word > floor_word && dirty_bits_[word - 1] == 0) --word;
    bool have = false;
    std::uint32_t node = 0;
    if (word > floor_word) {
      node = static_cast<std::uint32_t>((word - 1) * 64 + 63 -
                                        std::countl_zero(dirty_bits_[word - 1]));
      have = true;
    }
    if (i < keys.size() && (!have || node_of(keys[i]) >= node)) {
      node = node_of(keys[i]);
      have = true;
    }
    if (!have) break;
    Node& n = nodes_[node];
    bool changed = false;
    // Its moved entries' leaf slots, each once, however many of its
    // entries moved: a slot's keys are adjacent.
    while (i < keys.size() && node_of(keys[i]) == node) {
      const int slot = slot_of(keys[i]);
      std::size_t last = i;
      Aabb b;
      for (; last < keys.size() && keys[last] >> 32 == keys[i] >> 32; ++last) {
        prefetch_ahead(last);
        b.extend(moved_box(index_of(keys[last])));
      }
      for (std::uint32_t k = n.child[slot]; k < n.child[slot] + n.count[slot]; ++k) {
        bool moved = false;
        for (std::size_t j = i; j < last; ++j) moved = moved || entry_of(keys[j]) == k;
        if (!moved) b.extend(entry_box(k));
      }
      changed = set_slot(n, slot, b) || changed;
      i = last;
    }
    // Its marked inner slots: their children have larger indices, so they
    // are up to date.
    std::uint64_t& bits = dirty_bits_[node / 64];
    const std::uint64_t bit = std::uint64_t{1} << (node % 64);
    if ((bits & bit) != 0) {
      bits &= ~bit;
      for (unsigned m = dirty_slots_[node]; m != 0; m &= m - 1) {
        const int slot = std::countr_zero(m);
        changed = set_slot(n, slot, nodes_[n.child[slot]].box()) || changed;
      }
      dirty_slots_[node] = 0;
    }
    // Ancestors depend only on this node's box: unchanged slots, no walk up.
    if (changed) changed_node(node);
    word = node / 64 + 1;
  }
  if (root_changed) {
    // The root's own term of the SAH sum (its visit, weighted by its area,
    // as in sah_sum()) follows the root's box.
    on_change(double(config.traversal_cost), root_before, double(nodes_[0].box().half_area()));
  }
  return updated;
}

template <int W>
template <class Changed, class EntryBox>
typename WideBvhOf<W>::SweepResult WideBvhOf<W>::refit_sweep(Changed&& changed, EntryBox&& entry_box,
                                          const BvhConfig& config) {
  return refit_sweep_blocks(
      changed,
      [&](std::uint32_t begin, std::uint32_t end, const std::uint8_t* want, Aabb* out) {
        for (std::uint32_t e = begin; e < end; ++e) {
          if (want[e - begin] != 0) out[e - begin] = entry_box(e);
        }
      },
      config);
}

template <int W>
template <class Changed, class EntryBoxes>
typename WideBvhOf<W>::SweepResult WideBvhOf<W>::refit_sweep_blocks(Changed&& changed,
                                                                    EntryBoxes&& entry_boxes,
                                                                    const BvhConfig& config) {
  SweepResult result;
  if (nodes_.empty()) return result;
  const std::size_t entries = entry_place_.size();
  std::atomic<std::size_t> leaf_slots{0};
  constexpr std::size_t kBlock = 64;  // entries per call of entry_boxes, at least
  auto sweep_range = [&](std::size_t begin, std::size_t end) {
    // Ranges are moved to slot boundaries, so that each slot's entries
    // belong to one range only.
    while (!first_of_slot(begin)) ++begin;
    while (!first_of_slot(end)) ++end;
    std::size_t slots = 0;
    // A block's wants and boxes; longer only for a slot of over kBlock
    // entries (a leaf slot holds at most max_leaf_size).
    std::vector<std::uint8_t> want(2 * kBlock);
    std::vector<Aabb> boxes(2 * kBlock);
    for (std::size_t b = begin; b < end;) {
      std::size_t stop = std::min(b + kBlock, end);
      while (!first_of_slot(stop)) ++stop;
      if (stop - b > want.size()) {
        want.resize(stop - b);
        boxes.resize(stop - b);
      }
      // Each slot's entries, found from the entry arrays (read in order)
      // rather than the node (a cache miss): wanted when one changed.
      bool any_block = false;
      for (std::size_t e = b; e < stop;) {
        std::size_t last = e + 1;
        bool any = changed(static_cast<std::uint32_t>(e));
        for (; !first_of_slot(last); ++last) {
          any = changed(static_cast<std::uint32_t>(last)) || any;
        }
        std::fill(want.begin() + (e - b), want.begin() + (last - b), std::uint8_t{any});
        any_block = any_block || any;
        e = last;
      }
      if (any_block) {
        entry_boxes(static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(stop), want.data(),
                    boxes.data());
        for (std::size_t e = b; e < stop;) {
          std::size_t last = e + 1;
          while (!first_of_slot(last)) ++last;
          if (want[e - b] != 0) {
            Aabb box;
            for (std::size_t k = e; k < last; ++k) box.extend(boxes[k - b]);
            nodes_[place_node(entry_place_[e])].set_slot_box(place_slot(entry_place_[e]), box);
            ++slots;
          }
          // The box rows of the slot a block ahead, which a later block
          // writes (the nodes are met in about the entries' order): two
          // rows to a cache line (W 8) or one (W 16).
          if (e + kBlock < end) {
            const std::uint32_t ahead = entry_place_[e + kBlock];
            const Node& nd = nodes_[place_node(ahead)];
            constexpr int kRowsPerLine = 64 / int(sizeof nd.bounds[0]);
            for (int r = 0; r < 6; r += kRowsPerLine) {
              compiler::prefetch(&nd.bounds[r][place_slot(ahead)]);
            }
          }
          e = last;
        }
      }
      b = stop;
    }
    leaf_slots += slots;
  };
  if (entries >= kParallelSweep) {
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

}  // namespace raypick

#include "wide_traverse.h"
#include "wide_packets.h"
