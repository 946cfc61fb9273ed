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

}  // namespace

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
