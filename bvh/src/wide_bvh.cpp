#include "wide_bvh.h"

#include "raypick/core/assert.h"
#include "raypick/core/hit.h"

#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace raypick {

void sort_places_descending(std::vector<std::uint64_t>& keys,
                            std::vector<std::uint64_t>& scratch, int place_bits) {
  constexpr int kDigitBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kDigitBits;
  scratch.resize(keys.size());
  std::vector<std::uint64_t>* from = &keys;
  std::vector<std::uint64_t>* to = &scratch;
  for (int shift = 32; shift < 32 + place_bits; shift += kDigitBits) {
    std::uint32_t start[kBuckets] = {};
    for (std::uint64_t k : *from) ++start[(k >> shift) & (kBuckets - 1)];
    // Largest digit first: each bucket starts after the larger ones.
    std::uint32_t at = 0;
    for (std::size_t d = kBuckets; d-- > 0;) {
      const std::uint32_t count = start[d];
      start[d] = at;
      at += count;
    }
    for (std::uint64_t k : *from) (*to)[start[(k >> shift) & (kBuckets - 1)]++] = k;
    std::swap(from, to);
  }
  if (from != &keys) keys.swap(scratch);
}

namespace {

template <int W>
void clear_slot(WideNodeOf<W>& n, int s) {
  n.set_slot_box(s, Aabb{});
  n.child[s] = WideNodeOf<W>::kInvalidSlot;
  n.count[s] = 0;
}

// A binary node to turn into the wide node at index `wide` of its region.
struct Work {
  std::uint32_t binary;
  std::uint32_t wide;
};

// Trees with at least this many binary nodes collapse their subtrees below
// the top kTopLevels wide levels as parallel tasks.
constexpr std::size_t kParallelNodes = 16384;
constexpr int kTopLevels = 2;

// The arrays a collapse fills (the tree's; places as WideBvhOf::place):
// entry_place already sized, one per entry.
template <int W>
struct Arrays {
  compiler::HugeVector<WideNodeOf<W>>& nodes;
  std::vector<std::uint32_t>& parent;
  std::vector<std::uint32_t>& entry_place;
};

// The 16-slot collapse's SAH table: for each binary node n and k slots,
// g(n, k), the least SAH cost of covering n's subtree by at most k of the
// binary tree's nodes as the slots of one wide node: either n itself as
// one slot, or n opened and its two children's subtrees sharing the k
// slots. As a slot, a binary leaf costs intersection_cost * count * area,
// an inner node traversal_cost * area plus g(n, W) (the node it becomes).
// Areas are not normalized: only comparisons matter. A subtree of L leaves
// never uses more than L slots, so n keeps min(W, L) values (k = 1 first:
// n as a slot): a few per primitive, not W per binary node. Beside each
// value, the left child's share of the best split for those k slots, so
// that open() reads it rather than searching again.
template <int W>
class SahTable {
 public:
  SahTable(const Bvh& bvh, const std::vector<std::uint32_t>& below, const BvhConfig& config)
      : bvh_(bvh) {
    compiler::resize_huge(at_, bvh.nodes.size());
    std::uint32_t total = 0;
    for (std::size_t i = 0; i < bvh.nodes.size(); ++i) {
      const auto cap = static_cast<std::uint32_t>(std::min<std::uint32_t>(W, below[i]));
      at_[i] = {total, cap};
      total += cap;
    }
    compiler::resize_huge(table_, total);
    compiler::resize_huge(share_, total);
    // Children come after their parents: one backward pass, through
    // memory from the back. (Filling subtrees in parallel, each
    // walked children first with a stack, read the nodes in an order the
    // caches did not follow: boxes-1M, one thread, 228 against 165 ms for
    // the whole collapse, and no faster on two threads.)
    for (std::size_t i = bvh.nodes.size(); i-- > 0;) fill(i, config);
  }

  // Node i's values g(i, 1..cap(i)) from its children's (filled before).
  void fill(std::size_t i, const BvhConfig& config) {
    const BvhNode& n = bvh_.nodes[i];
    float* g = &table_[at_[i].offset];  // g[k - 1] holds g(i, k)
    if (n.is_leaf()) {
      g[0] = config.intersection_cost * float(n.count) * n.bounds.half_area();
      return;
    }
    // The best split for every k at once, over the children's values read
    // once: k <= c <= cl + cr, so no share needs clamping. The first share
    // of the least cost, as a search over increasing shares keeps it.
    std::uint8_t* share = &share_[at_[i].offset];
    const Place l = at_[n.index], r = at_[n.index + 1];
    const int c = static_cast<int>(at_[i].cap);
    const int cl = static_cast<int>(l.cap), cr = static_cast<int>(r.cap);
    const float* gl = &table_[l.offset];
    const float* gr = &table_[r.offset];
    for (int k = 2; k <= c; ++k) {
      // Share 1 when no cost is below infinity (costs that overflow), as
      // the search this replaces kept it: never a share of no slots.
      float best = kInfinity;
      int best_j = 1;
      for (int j = std::max(1, k - cr); j <= std::min(k - 1, cl); ++j) {
        const float cost = gl[j - 1] + gr[k - j - 1];
        best_j = cost < best ? j : best_j;
        best = std::min(best, cost);
      }
      g[k - 1] = best;
      share[k - 1] = static_cast<std::uint8_t>(best_j);
    }
    const float slot = config.traversal_cost * n.bounds.half_area() + g[c - 1];
    g[0] = slot;
    for (int k = 2; k <= c; ++k) g[k - 1] = std::min(g[k - 1], slot);
  }

  // Appends to items the binary nodes that cover inner node b's subtree
  // by at most W slots at the least cost (b opened); returns their count.
  // The share is the fill's for min(k, cap(b)) slots: with k <= W that is
  // min(k, cl + cr), as many as the children can use (more would cost the
  // same).
  int open(std::uint32_t b, int k, std::uint32_t* items) const {
    const BvhNode& n = bvh_.nodes[b];
    // The children's pair is read next: as slots (their boxes) or opened.
    compiler::prefetch(&bvh_.nodes[n.index]);
    const int left_k = share_[at_[b].offset + std::min(k, int(at_[b].cap)) - 1];
    const int l = cover(n.index, left_k, items);
    return l + cover(n.index + 1, k - left_k, items + l);
  }

 private:
  // Subtree b by at most k slots: b itself, or b opened. A binary leaf
  // is the one node with a single value (an inner node has two leaves
  // below it at least): told from at_ alone, without reading the node.
  int cover(std::uint32_t b, int k, std::uint32_t* items) const {
    const Place p = at_[b];
    const float* g = &table_[p.offset];
    if (p.cap == 1 || k == 1 || g[0] <= g[std::min(k, int(p.cap)) - 1]) {
      items[0] = b;
      return 1;
    }
    return open(b, k, items);
  }

  // Per binary node: where its values start in table_ and share_, and how
  // many it keeps (min(W, leaves below)); one read for both.
  struct Place {
    std::uint32_t offset;
    std::uint32_t cap;
  };
  const Bvh& bvh_;
  std::vector<Place> at_;
  std::vector<float> table_;
  std::vector<std::uint8_t> share_;  // table_'s entries' best left shares (k >= 2)
};

// The collapse. Wide nodes are made in regions, each numbered from 0 depth
// first on one thread: region 0 holds the top levels (the whole tree when
// it is small), every other region one subtree below them, collapsed as a
// TBB task. Inner slots point into their own region, except that a top
// node's slot may point to another region's root (a link). The final array
// is the regions one after another: the numbering does not depend on the
// number of threads, and children still come after their parents.
template <int W>
class Collapser {
 public:
  using Node = WideNodeOf<W>;
  Collapser(const Bvh& bvh, const BvhConfig& config) : bvh_(bvh), config_(config) {}

  void run(const Arrays<W>& out) {
    // Leaf slots each binary node's subtree needs (a leaf: one); children
    // come after their parents, so one backward pass.
    compiler::resize_huge(below_, bvh_.nodes.size());
    for (std::size_t i = bvh_.nodes.size(); i-- > 0;) {
      const BvhNode& n = bvh_.nodes[i];
      below_[i] = n.is_leaf() ? 1u : below_[n.index] + below_[n.index + 1];
    }
    if constexpr (W == 16) sah_.emplace(bvh_, below_, config_);
    const bool parallel = bvh_.nodes.size() >= kParallelNodes;
    regions_.emplace_back();
    // At most one wide node per inner binary node; untouched capacity costs
    // no memory.
    regions_[0].nodes.reserve(parallel ? 16 : bvh_.nodes.size() / 2 + 1);
    regions_[0].nodes.emplace_back();
    top(0, {0, 0}, parallel ? 0 : -1);
    if (regions_.size() > 1) {
      tbb::task_group group;
      for (std::size_t r = 1; r < regions_.size(); ++r) {
        group.run([this, r] { walk(regions_[r]); });
      }
      group.wait();
    }
    // Each region's offset in the final array.
    std::vector<std::uint32_t> offset(regions_.size() + 1, 0);
    for (std::size_t r = 0; r < regions_.size(); ++r) {
      offset[r + 1] = offset[r] + static_cast<std::uint32_t>(regions_[r].nodes.size());
    }
    out.nodes.resize(offset.back());  // HugeAllocator maps and hints a large array
    out.parent.resize(offset.back());
    out.parent[0] = WideBvhOf<W>::place(0, 0);
    // Copy the regions into place, the children and entries renumbered:
    // in parallel, each node writing its own slots' children and entries.
    auto place = [&](std::size_t r) {
      const std::vector<Node>& src = regions_[r].nodes;
      for (std::size_t i = 0; i < src.size(); ++i) {
        const auto at = static_cast<std::uint32_t>(offset[r] + i);
        Node& n = out.nodes[at];
        n = src[i];
        for (int s = 0; s < W; ++s) {
          if (n.is_leaf(s)) {
            for (std::uint32_t e = n.child[s]; e < n.child[s] + n.count[s]; ++e) {
              out.entry_place[e] = WideBvhOf<W>::place(at, s);
            }
          } else if (n.is_inner(s)) {
            const std::uint32_t linked = r == 0 ? linked_region(at, s) : 0;
            n.child[s] = linked != 0 ? offset[linked] : n.child[s] + offset[r];
            out.parent[n.child[s]] = WideBvhOf<W>::place(at, s);
          }
        }
      }
    };
    if (regions_.size() == 1) {
      place(0);  // a small tree: here, without the scheduler
    } else {
      tbb::parallel_for(std::size_t{0}, regions_.size(), place);
    }
  }

 private:
  struct Region {
    std::uint32_t root = 0;  // binary node of the region's root
    std::vector<Node> nodes;
  };
  // A top node's slot that points to another region's root.
  struct Link {
    std::uint32_t node;
    int slot;
    std::uint32_t region;
  };
  // The region a top node's slot links to, or 0 when the slot points into
  // region 0 (no region links to region 0). A few dozen links at most.
  std::uint32_t linked_region(std::uint32_t node, int slot) const {
    for (const Link& l : links_) {
      if (l.node == node && l.slot == slot) return l.region;
    }
    return 0;
  }

  // Region 0 from `job` down: depth first, except that at level `split`
  // (when >= 0) the inner children become regions of their own.
  void top(int level, Work job, int split) {
    if (split < 0) {
      regions_[0].root = job.binary;
      walk(regions_[0]);
      return;
    }
    Work kids[W];
    const int k = fill(regions_[0].nodes, job, kids);
    Node& n = regions_[0].nodes[job.wide];
    for (int i = 0; i < k; ++i) {
      if (level + 1 < kTopLevels) {
        top(level + 1, kids[i], split);
        continue;
      }
      // The last top level: the child's slot links to a new region; the
      // node fill() made for it in region 0 is dropped (it is the last).
      int slot = 0;
      while (!(n.is_inner(slot) && n.child[slot] == kids[i].wide)) ++slot;
      links_.push_back({job.wide, slot, static_cast<std::uint32_t>(regions_.size())});
      Region& r = regions_.emplace_back();
      r.root = kids[i].binary;
    }
    if (level + 1 >= kTopLevels) {
      // fill() appended k nodes for the children: drop them again.
      regions_[0].nodes.resize(regions_[0].nodes.size() - static_cast<std::size_t>(k));
    }
  }

  // A region, on this thread: depth first from its root (node 0) with a
  // fixed stack (each step pops one node and pushes at most W; the depth
  // is at most kBvhMaxDepth).
  void walk(Region& region) {
    if (region.nodes.empty()) {
      // At most one wide node per inner binary node: fewer than the
      // subtree's primitives, whose entries are one contiguous run.
      region.nodes.reserve(std::max<std::uint32_t>(1, entries_under(region.root)));
      region.nodes.emplace_back();
    }
    Work stack[(W - 1) * (kBvhMaxDepth + 1) + 1];
    int top = 0;
    stack[top++] = {region.root, 0};
    while (top > 0) {
      const Work w = stack[--top];
      top += fill(region.nodes, w, stack + top);
    }
  }

  // The number of entries under binary node `b`: from its leftmost leaf's
  // first entry to its rightmost leaf's last.
  std::uint32_t entries_under(std::uint32_t b) const {
    std::uint32_t lo = b, hi = b;
    while (!bvh_.nodes[lo].is_leaf()) lo = bvh_.nodes[lo].index;
    while (!bvh_.nodes[hi].is_leaf()) hi = bvh_.nodes[hi].index + 1;
    return bvh_.nodes[hi].index + bvh_.nodes[hi].count - bvh_.nodes[lo].index;
  }

  // Writes wide node job.wide of `nodes`. With 16 slots, they are the SAH
  // table's cover of binary node job.binary. With 8, the node takes binary
  // node job.binary's children and keeps opening inner ones until it has W
  // slots: the largest (by area) of the subtrees that need more than kWidth
  // leaf slots first; when none is left, the largest small subtree that
  // still fits here whole; then it stops, so that each small subtree left
  // becomes one full child node. Appends a node to `nodes` for each inner child and
  // returns them (at most W) in `kids`, in slot order. Leaf slots
  // hold their entries (child, count) as in the binary tree.
  int fill(std::vector<Node>& nodes, Work job, Work* kids) const {
    const Bvh& bvh = bvh_;
    // The binary nodes this wide node's slots stand for.
    std::uint32_t items[W];
    // Each item's half area if it is an inner node (to be opened), else -1.
    float open_area[W];
    // Each item's leaf slots needed (below_), read once.
    std::uint32_t below[W];
    int count = 0;
    // Binary node `item` as item i.
    auto set = [&](int i, std::uint32_t item) {
      const BvhNode& c = bvh.nodes[item];
      // An inner item is opened here or in a node below: its children
      // (one pair) are read then.
      if (!c.is_leaf()) compiler::prefetch(&bvh.nodes[c.index]);
      open_area[i] = c.is_leaf() ? -1.0f : c.bounds.half_area();
      below[i] = below_[item];
      items[i] = item;
    };
    auto add = [&](std::uint32_t item) { set(count++, item); };
    const BvhNode& b = bvh.nodes[job.binary];
    if (b.is_leaf()) {
      items[count++] = job.binary;  // a tree that is a single leaf
    } else if constexpr (W == 16) {
      count = sah_->open(job.binary, W, items);
    } else {
      add(b.index);
      add(b.index + 1);
      constexpr auto kWidth = static_cast<std::uint32_t>(W);
      while (count < W) {
        // In one scan: the largest inner item needing more than kWidth
        // leaf slots, and the largest that still fits here whole (taken
        // only when there is no such big one). Ties go to the first.
        int big = -1, small = -1;
        float big_area = -1.0f, small_area = -1.0f;
        for (int i = 0; i < count; ++i) {
          const float area = open_area[i];
          if (area < 0.0f) continue;  // a leaf
          if (below[i] > kWidth) {
            if (area > big_area) {
              big = i;
              big_area = area;
            }
          } else if (static_cast<std::uint32_t>(count - 1) + below[i] <= kWidth &&
                     area > small_area) {
            small = i;
            small_area = area;
          }
        }
        const int best = big >= 0 ? big : small;
        if (best < 0) break;
        const std::uint32_t open = items[best];
        // The opened node's first child takes its slot; the second is
        // appended.
        const std::uint32_t first = bvh.nodes[open].index;
        set(best, first);
        add(first + 1);
      }
    }
    int k = 0;
    for (int s = 0; s < W; ++s) {
      if (s >= count) {
        clear_slot(nodes[job.wide], s);
        continue;
      }
      const BvhNode& c = bvh.nodes[items[s]];
      std::uint32_t child = c.index;
      if (!c.is_leaf()) {
        child = static_cast<std::uint32_t>(nodes.size());
        // A reference into `nodes` would not survive this: index again below.
        nodes.emplace_back();
        kids[k++] = {items[s], child};
      }
      Node& n = nodes[job.wide];
      n.set_slot_box(s, c.bounds);
      n.child[s] = child;
      n.count[s] = c.count;
    }
    return k;
  }

  const Bvh& bvh_;
  const BvhConfig& config_;
  std::vector<std::uint32_t> below_;  // leaf slots under each binary node
  std::optional<SahTable<W>> sah_;    // 16 slots only
  std::vector<Region> regions_;
  std::vector<Link> links_;
};

}  // namespace

template <int W>
WideBvhOf<W> WideBvhOf<W>::collapse(const Bvh& bvh, const BvhConfig& config) {
  WideBvhOf w;
  if (bvh.empty()) return w;
  w.prim_ids_ = bvh.prim_ids;
  w.entry_place_.resize(w.prim_ids_.size());
  Collapser<W>(bvh, config).run({w.nodes_, w.parent_, w.entry_place_});
  RAYPICK_ASSERT(w.nodes_.size() <= kMaxNodes, "a tree of 2^28 nodes or more");
  return w;
}

template <int W>
void WideBvhOf<W>::save_shape(std::string& out) const {
  saved::append(out, static_cast<std::uint64_t>(entry_count()));
  saved::append(out, static_cast<std::uint64_t>(nodes_.size()));
  for (const Node& n : nodes_) {
    saved::append(out, n.child, W);
    saved::append(out, n.count, W);
  }
  saved::append(out, static_cast<std::uint8_t>(prim_ids_.empty() ? 0 : 1));
  saved::append(out, prim_ids_.data(), prim_ids_.size());
}

template <int W>
std::optional<WideBvhOf<W>> WideBvhOf<W>::load_shape(saved::Bytes& in, std::size_t prims,
                                                     std::uint32_t max_leaf, std::string& why) {
  constexpr std::size_t kNodeBytes = 2 * W * sizeof(std::uint32_t);
  const auto entries = in.read<std::uint64_t>();
  const auto nodes = in.read<std::uint64_t>();
  if (!in.ok()) {
    why = "the tree's counts are cut off";
    return std::nullopt;
  }
  if (entries != prims) {
    why = "the tree holds " + std::to_string(entries) + " primitives, the scene " +
          std::to_string(prims);
    return std::nullopt;
  }
  // A wide node has at least two used slots, but for a root over one leaf.
  if ((nodes == 0) != (entries == 0) || nodes > std::max<std::uint64_t>(entries, 1) ||
      nodes > kMaxNodes ||
      !in.holds(nodes, kNodeBytes)) {
    why = "a tree of " + std::to_string(nodes) + " nodes over " + std::to_string(entries) +
          " primitives";
    return std::nullopt;
  }
  WideBvhOf w;
  w.nodes_.resize(nodes);
  w.parent_.assign(nodes, kInvalidId);
  w.entry_place_.assign(entries, kInvalidId);
  std::vector<std::uint8_t> depth(nodes, 0);
  auto bad = [&](std::size_t node, const std::string& what) {
    why = "tree node " + std::to_string(node) + ": " + what;
    return std::nullopt;
  };
  for (std::size_t i = 0; i < nodes; ++i) {
    Node& n = w.nodes_[i];
    in.read(n.child, W);
    in.read(n.count, W);
    if (i != 0 && w.parent_[i] == kInvalidId) return bad(i, "no slot points to it");
    for (int s = 0; s < W; ++s) {
      n.set_slot_box(s, Aabb{});
      if (n.is_leaf(s)) {
        const std::uint64_t first = n.child[s];
        if (first > entries || n.count[s] > entries - first) {
          return bad(i, "a leaf slot beyond the primitives");
        }
        if (n.count[s] > max_leaf) return bad(i, "a leaf slot larger than a build makes");
        for (std::uint64_t e = first; e < first + n.count[s]; ++e) {
          if (w.entry_place_[e] != kInvalidId) return bad(i, "a primitive in two leaves");
          w.entry_place_[e] = place(static_cast<std::uint32_t>(i), s);
        }
      } else if (n.is_inner(s)) {
        const std::uint32_t c = n.child[s];
        if (c <= i || c >= nodes) return bad(i, "a child out of order");
        if (w.parent_[c] != kInvalidId) return bad(c, "a child of two slots");
        if (depth[i] + 1 > kBvhMaxDepth) return bad(c, "deeper than the traversal allows");
        w.parent_[c] = place(static_cast<std::uint32_t>(i), s);
        depth[c] = static_cast<std::uint8_t>(depth[i] + 1);
      }
    }
  }
  if (nodes != 0) w.parent_[0] = place(0, 0);
  for (std::size_t e = 0; e < entries; ++e) {
    if (w.entry_place_[e] == kInvalidId) {
      why = "primitive " + std::to_string(e) + " is in no leaf";
      return std::nullopt;
    }
  }
  const auto has_ids = in.read<std::uint8_t>();
  if (has_ids > 1 || (has_ids == 1 && !in.holds(entries, sizeof(std::uint32_t)))) {
    why = "the tree's primitive ids are cut off";
    return std::nullopt;
  }
  if (has_ids == 1) {
    w.prim_ids_.resize(entries);
    in.read(w.prim_ids_.data(), entries);
    std::vector<bool> seen(entries, false);
    for (const std::uint32_t id : w.prim_ids_) {
      if (id >= entries || seen[id]) {
        why = "the tree's primitive ids are not each primitive once";
        return std::nullopt;
      }
      seen[id] = true;
    }
  }
  if (!in.ok()) {
    why = "the tree is cut off";
    return std::nullopt;
  }
  return w;
}

template <int W>
double WideBvhOf<W>::refit_inner(const BvhConfig& config) {
  if (nodes_.empty()) return 0.0;
  double sah = 0.0;
  // Children come after their parents: one backward pass sees every child
  // before its parent.
  for (std::size_t i = nodes_.size(); i-- > 0;) {
    Node& n = nodes_[i];
    for (int s = 0; s < W; ++s) {
      if (n.is_inner(s)) n.set_slot_box(s, nodes_[n.child[s]].box());
    }
    float area[W];
    n.half_areas(area);
    for (int s = 0; s < W; ++s) sah += slot_weight(n, s, config) * area[s];
  }
  return sah + double(config.traversal_cost) * nodes_[0].box().half_area();
}

template <int W>
double WideBvhOf<W>::sah_sum(const BvhConfig& config) const {
  if (nodes_.empty()) return 0.0;
  double sah = double(config.traversal_cost) * nodes_[0].box().half_area();
  for (const Node& n : nodes_) {
    for (int s = 0; s < W; ++s) {
      sah += slot_weight(n, s, config) * n.slot_box(s).half_area();
    }
  }
  return sah;
}

template <int W>
std::size_t WideBvhOf<W>::memory_bytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  return bytes(nodes_) + bytes(prim_ids_) + bytes(parent_) + bytes(entry_place_);
}

template <int W>
BvhStats WideBvhOf<W>::stats(const BvhConfig& config) const {
  BvhStats s;
  if (nodes_.empty()) return s;
  s.nodes = nodes_.size();
  s.primitives = entry_count();
  s.min_leaf_size = ~0u;
  const double root_area = double(nodes_[0].box().half_area());
  // The root is always visited: traversal_cost, whatever its area.
  s.sah_cost = config.traversal_cost +
               (sah_sum(config) - config.traversal_cost * root_area) /
                   std::max(root_area, 1e-30);
  std::vector<int> depth(nodes_.size(), 0);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    s.max_depth = std::max(s.max_depth, depth[i]);
    for (int k = 0; k < W; ++k) {
      if (n.is_leaf(k)) {
        ++s.leaves;
        s.min_leaf_size = std::min(s.min_leaf_size, n.count[k]);
        s.max_leaf_size = std::max(s.max_leaf_size, n.count[k]);
      } else if (n.is_inner(k)) {
        depth[n.child[k]] = depth[i] + 1;
      }
    }
  }
  s.mean_leaf_size = double(s.primitives) / double(std::max<std::size_t>(s.leaves, 1));
  return s;
}

template class WideBvhOf<8>;
template class WideBvhOf<16>;

}  // namespace raypick
