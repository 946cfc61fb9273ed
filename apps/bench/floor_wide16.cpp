// The 16-wide prototype's trees (floor_wide16.h): today's 8-wide top level
// widened, and a binary tree collapsed by the SAH.
#include "floor_wide16.h"

#include <algorithm>

namespace raypick::floorq {
namespace {

struct Slot {
  Aabb box;
  std::uint32_t child;  // inner: the source tree's node (renumbered later)
  std::uint32_t count;  // 0: inner; else the leaf's entries
};

// Appends a node holding `slots` (unused slots empty) to out; returns its
// index. Inner slots keep the source tree's node until the caller sets
// the child's new index.
std::uint32_t append_node(Wide16& out, const std::vector<Slot>& slots) {
  const auto self = static_cast<std::uint32_t>(out.nodes.size());
  Node16& n = out.nodes.emplace_back();
  for (int s = 0; s < Node16::kWidth; ++s) {
    const bool used = s < static_cast<int>(slots.size());
    for (int a = 0; a < 3; ++a) {
      n.bounds[a][s] = used ? slots[s].box.min[a] : kInfinity;
      n.bounds[3 + a][s] = used ? slots[s].box.max[a] : -kInfinity;
    }
    n.child[s] = used ? slots[s].child : WideNode::kInvalidSlot;
    n.count[s] = used ? slots[s].count : 0;
  }
  return self;
}

double mean_slots(std::size_t slots, const Wide16& w) {
  return w.nodes.empty() ? 0.0 : double(slots) / double(w.nodes.size());
}

class Widener {
 public:
  explicit Widener(std::span<const WideNode> from) : from_(from) {}

  // Widens 8-wide node `index` (and its subtree); returns its new index.
  std::uint32_t widen(std::uint32_t index) {
    std::vector<Slot> slots = used_slots(from_[index]);
    // Open the largest inner slot whose children still fit, until none does.
    for (;;) {
      int best = -1;
      float best_area = -1.0f;
      for (std::size_t s = 0; s < slots.size(); ++s) {
        if (slots[s].count != 0) continue;
        const std::size_t k = used_slots(from_[slots[s].child]).size();
        if (slots.size() - 1 + k > Node16::kWidth) continue;
        if (slots[s].box.half_area() > best_area) {
          best_area = slots[s].box.half_area();
          best = static_cast<int>(s);
        }
      }
      if (best < 0) break;
      const std::vector<Slot> opened = used_slots(from_[slots[best].child]);
      slots.erase(slots.begin() + best);
      slots.insert(slots.end(), opened.begin(), opened.end());
    }
    const std::uint32_t self = append_node(out_, slots);
    used_ += slots.size();
    // Children after the parent (out_.nodes may move: index, not reference).
    for (std::size_t s = 0; s < slots.size(); ++s) {
      if (slots[s].count == 0) out_.nodes[self].child[s] = widen(slots[s].child);
    }
    return self;
  }

  Wide16 finish() {
    out_.slots_used = mean_slots(used_, out_);
    return std::move(out_);
  }

 private:
  static std::vector<Slot> used_slots(const WideNode& n) {
    std::vector<Slot> out;
    for (int s = 0; s < WideNode::kWidth; ++s) {
      if (n.is_leaf(s) || n.is_inner(s)) out.push_back({n.slot_box(s), n.child[s], n.count[s]});
    }
    return out;
  }

  std::span<const WideNode> from_;
  Wide16 out_;
  std::size_t used_ = 0;
};

// Collapses a binary tree into Node16s by the SAH, exactly over the
// binary tree's cuts: g(n, k) is the least cost of covering subtree n by
// at most k slots of one node, either n itself as a slot (slot_) or n
// opened and its two children's subtrees sharing the k slots. A slot
// costs intersection_cost * count * area for a binary leaf, and
// traversal_cost * area + g(n, 16) for an inner node (the node it opens
// to). Areas are not normalized: only comparisons matter.
class SahCollapser {
 public:
  static constexpr int kW = Node16::kWidth;
  SahCollapser(const Bvh& bvh, float traversal_cost, float intersection_cost)
      : bvh_(bvh), g_(bvh.nodes.size() * (kW + 1)), slot_(bvh.nodes.size()) {
    // Children come after their parents: one backward pass.
    for (std::size_t i = bvh.nodes.size(); i-- > 0;) {
      const BvhNode& n = bvh.nodes[i];
      float* g = &g_[i * (kW + 1)];
      if (n.is_leaf()) {
        slot_[i] = intersection_cost * float(n.count) * n.bounds.half_area();
        std::fill(g + 1, g + kW + 1, slot_[i]);
        continue;
      }
      for (int k = 2; k <= kW; ++k) g[k] = split_cost(n, k, nullptr);
      slot_[i] = traversal_cost * n.bounds.half_area() + g[kW];
      g[1] = slot_[i];
      for (int k = 2; k <= kW; ++k) g[k] = std::min(g[k], slot_[i]);
    }
  }

  std::uint32_t collapse(std::uint32_t index) {
    std::vector<std::uint32_t> cover_set;  // binary nodes
    if (bvh_.nodes[index].is_leaf()) {
      cover_set.push_back(index);
    } else {
      open(index, kW, cover_set);
    }
    std::vector<Slot> slots;
    for (std::uint32_t b : cover_set) {
      const BvhNode& n = bvh_.nodes[b];
      slots.push_back({n.bounds, n.is_leaf() ? n.index : b, n.count});
    }
    const std::uint32_t self = append_node(out_, slots);
    used_ += slots.size();
    for (std::size_t s = 0; s < slots.size(); ++s) {
      if (slots[s].count == 0) out_.nodes[self].child[s] = collapse(slots[s].child);
    }
    return self;
  }

  Wide16 finish() {
    out_.slots_used = mean_slots(used_, out_);
    return std::move(out_);
  }

 private:
  float g(std::uint32_t n, int k) const { return g_[std::size_t{n} * (kW + 1) + k]; }

  // The least cost of inner node n opened into at most k >= 2 slots; the
  // left child's share in *left_k.
  float split_cost(const BvhNode& n, int k, int* left_k) const {
    float best = kInfinity;
    for (int j = 1; j < k; ++j) {
      const float c = g(n.index, j) + g(n.index + 1, k - j);
      if (c < best) {
        best = c;
        if (left_k) *left_k = j;
      }
    }
    return best;
  }

  // Appends the binary nodes covering subtree `index` with at most k slots.
  void cover(std::uint32_t index, int k, std::vector<std::uint32_t>& out) const {
    if (bvh_.nodes[index].is_leaf() || k == 1 || slot_[index] <= g(index, k)) {
      out.push_back(index);
      return;
    }
    open(index, k, out);
  }
  void open(std::uint32_t index, int k, std::vector<std::uint32_t>& out) const {
    const BvhNode& n = bvh_.nodes[index];
    int left_k = 1;
    split_cost(n, k, &left_k);
    cover(n.index, left_k, out);
    cover(n.index + 1, k - left_k, out);
  }

  const Bvh& bvh_;
  std::vector<float> g_;     // kW + 1 per binary node, [1..kW] used
  std::vector<float> slot_;  // each binary node's cost as one slot
  Wide16 out_;
  std::size_t used_ = 0;
};

}  // namespace

Wide16 collapse16(const Bvh& binary, float traversal_cost, float intersection_cost) {
  SahCollapser c(binary, traversal_cost, intersection_cost);
  if (!binary.nodes.empty()) c.collapse(0);
  return c.finish();
}

double sah_cost(const Wide16& tree, float traversal_cost, float intersection_cost) {
  double cost = 0.0;
  for (const Node16& n : tree.nodes) {
    for (int s = 0; s < Node16::kWidth; ++s) {
      if (n.count[s] == 0 && n.child[s] == WideNode::kInvalidSlot) continue;
      const Aabb box{{n.bounds[0][s], n.bounds[1][s], n.bounds[2][s]},
                     {n.bounds[3][s], n.bounds[4][s], n.bounds[5][s]}};
      cost += double(box.half_area()) *
              (n.count[s] != 0 ? double(intersection_cost) * n.count[s] : double(traversal_cost));
    }
  }
  return cost;
}

Wide16 widen16(const WideBvh& top) {
  Widener w(top.nodes());
  if (!top.nodes().empty()) w.widen(0);
  return w.finish();
}

bool cpu_has_avx512() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
  }();
  return has;
}

}  // namespace raypick::floorq
