// Widening today's 8-wide top level into 16-wide nodes (floor_wide16.h).
#include "floor_wide16.h"

#include <algorithm>

namespace raypick::floorq {
namespace {

struct Slot {
  Aabb box;
  std::uint32_t child;
  std::uint32_t count;
};

float half_area(const Aabb& b) {
  const glm::vec3 d = b.max - b.min;
  return d.x * d.y + d.y * d.z + d.z * d.x;
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
        const float a = half_area(slots[s].box);
        if (a > best_area) {
          best_area = a;
          best = static_cast<int>(s);
        }
      }
      if (best < 0) break;
      const std::vector<Slot> opened = used_slots(from_[slots[best].child]);
      slots.erase(slots.begin() + best);
      slots.insert(slots.end(), opened.begin(), opened.end());
    }
    const auto self = static_cast<std::uint32_t>(out_.nodes.size());
    out_.nodes.emplace_back();
    used_ += slots.size();
    for (int s = 0; s < Node16::kWidth; ++s) {
      Node16& n = out_.nodes[self];
      if (s >= static_cast<int>(slots.size())) {
        for (int a = 0; a < 3; ++a) {
          n.bounds[a][s] = kInfinity;
          n.bounds[3 + a][s] = -kInfinity;
        }
        n.child[s] = WideNode::kInvalidSlot;
        n.count[s] = 0;
        continue;
      }
      for (int a = 0; a < 3; ++a) {
        n.bounds[a][s] = slots[s].box.min[a];
        n.bounds[3 + a][s] = slots[s].box.max[a];
      }
      n.count[s] = slots[s].count;
      n.child[s] = slots[s].child;
    }
    // Children after the parent (out_.nodes may move: index, not reference).
    for (std::size_t s = 0; s < slots.size(); ++s) {
      if (slots[s].count == 0) {
        const std::uint32_t c = widen(slots[s].child);
        out_.nodes[self].child[s] = c;
      }
    }
    return self;
  }

  Wide16 finish() {
    if (!out_.nodes.empty()) out_.slots_used = double(used_) / double(out_.nodes.size());
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
// binary tree's cuts: G[n][k] is the least cost of covering subtree n by
// at most k slots of one node, either n itself as a slot (slot_cost) or n
// opened and its two children's subtrees sharing the k slots. A slot
// costs intersection_cost * count * area for a binary leaf, and
// traversal_cost * area + G[n][16] for an inner node (the node it opens
// to). Areas relative to nothing: only comparisons matter.
class SahCollapser {
 public:
  static constexpr int kW = Node16::kWidth;
  SahCollapser(const Bvh& bvh, float traversal_cost, float intersection_cost)
      : bvh_(bvh), g_(bvh.nodes.size() * (kW + 1)), slot_(bvh.nodes.size()) {
    for (std::size_t i = bvh.nodes.size(); i-- > 0;) {
      const BvhNode& n = bvh.nodes[i];
      const float area = half_area(n.bounds);
      float* g = &g_[i * (kW + 1)];
      if (n.is_leaf()) {
        slot_[i] = intersection_cost * float(n.count) * area;
        for (int k = 1; k <= kW; ++k) g[k] = slot_[i];
        continue;
      }
      for (int k = 2; k <= kW; ++k) g[k] = split_cost(n, k, nullptr);
      slot_[i] = traversal_cost * area + g[kW];
      g[1] = slot_[i];
      for (int k = 2; k <= kW; ++k) g[k] = std::min(g[k], slot_[i]);
    }
  }

  std::uint32_t collapse(std::uint32_t index) {
    std::vector<std::uint32_t> slots;
    if (bvh_.nodes[index].is_leaf()) {
      slots.push_back(index);
    } else {
      open(index, kW, slots);
    }
    const auto self = static_cast<std::uint32_t>(out_.nodes.size());
    out_.nodes.emplace_back();
    used_ += slots.size();
    for (int s = 0; s < kW; ++s) {
      Node16& n = out_.nodes[self];
      if (s >= static_cast<int>(slots.size())) {
        for (int a = 0; a < 3; ++a) {
          n.bounds[a][s] = kInfinity;
          n.bounds[3 + a][s] = -kInfinity;
        }
        n.child[s] = WideNode::kInvalidSlot;
        n.count[s] = 0;
        continue;
      }
      const BvhNode& b = bvh_.nodes[slots[s]];
      for (int a = 0; a < 3; ++a) {
        n.bounds[a][s] = b.bounds.min[a];
        n.bounds[3 + a][s] = b.bounds.max[a];
      }
      n.count[s] = b.count;
      n.child[s] = b.index;
    }
    for (std::size_t s = 0; s < slots.size(); ++s) {
      if (!bvh_.nodes[slots[s]].is_leaf()) {
        const std::uint32_t c = collapse(slots[s]);
        out_.nodes[self].child[s] = c;
      }
    }
    return self;
  }

  Wide16 finish() {
    if (!out_.nodes.empty()) out_.slots_used = double(used_) / double(out_.nodes.size());
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

  // Appends the slots covering subtree `index` with at most k slots.
  void cover(std::uint32_t index, int k, std::vector<std::uint32_t>& slots) const {
    const BvhNode& n = bvh_.nodes[index];
    if (n.is_leaf() || k == 1 || slot_[index] <= g(index, k)) {
      slots.push_back(index);
      return;
    }
    open(index, k, slots);
  }
  void open(std::uint32_t index, int k, std::vector<std::uint32_t>& slots) const {
    const BvhNode& n = bvh_.nodes[index];
    int left_k = 1;
    split_cost(n, k, &left_k);
    cover(n.index, left_k, slots);
    cover(n.index + 1, k - left_k, slots);
  }

  const Bvh& bvh_;
  std::vector<float> g_;      // (kW + 1) per binary node, [1..kW] used
  std::vector<float> slot_;   // each binary node's cost as one slot
  Wide16 out_;
  std::size_t used_ = 0;
};

}  // namespace

Wide16 collapse16(const Bvh& binary, float traversal_cost, float intersection_cost) {
  SahCollapser c(binary, traversal_cost, intersection_cost);
  if (!binary.nodes.empty()) c.collapse(0);
  return c.finish();
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
