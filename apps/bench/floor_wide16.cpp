// The 16-wide prototype's trees (floor_wide16.h): today's 8-wide top level
// widened, and a binary tree collapsed by the SAH (the library's).
#include "floor_wide16.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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

}  // namespace

Wide16 collapse16(const Bvh& binary, float traversal_cost, float intersection_cost) {
  BvhConfig config;
  config.traversal_cost = traversal_cost;
  config.intersection_cost = intersection_cost;
  const WideBvh16 tree = WideBvh16::collapse(binary, config);
  Wide16 out;
  out.nodes.assign(tree.nodes().begin(), tree.nodes().end());
  std::size_t used = 0;
  for (const Node16& n : out.nodes) {
    for (int s = 0; s < Node16::kWidth; ++s) used += n.is_leaf(s) || n.is_inner(s) ? 1 : 0;
  }
  out.slots_used = mean_slots(used, out);
  return out;
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

}  // namespace raypick::floorq

namespace raypick::floorq {

QWide16 quantize16(const Wide16& tree) {
  QWide16 out;
  out.nodes.resize(tree.nodes.size());
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    const Node16& n = tree.nodes[i];
    QNode16& qn = out.nodes[i];
    qn = QNode16{};
    const unsigned used = n.used_slots();
    qn.used = used;
    const Aabb box = n.box();
    for (int a = 0; a < 3; ++a) {
      const float lo = used != 0 ? box.min[a] : 0.0f;
      const float hi = used != 0 ? box.max[a] : 0.0f;
      // The quantum: 255 of them from lo reach hi in float arithmetic.
      float scale = (hi - lo) / 255.0f;
      while (lo + 255.0f * scale < hi) scale = std::nextafter(scale, kInfinity);
      qn.origin[a] = lo;
      qn.scale[a] = scale;
      for (int s = 0; s < QNode16::kWidth; ++s) {
        if ((used >> s & 1u) == 0) {
          qn.q[a][s] = 255;  // an inverted box (the used mask drops it anyway)
          qn.q[3 + a][s] = 0;
          continue;
        }
        // Rounded outward: the planes' points lo + q * scale, as computed
        // here, hold the slot's box.
        int qlo = 0, qhi = 0;
        if (scale > 0.0f) {
          qlo = std::clamp(static_cast<int>(std::floor((n.bounds[a][s] - lo) / scale)), 0, 255);
          qhi = std::clamp(static_cast<int>(std::ceil((n.bounds[3 + a][s] - lo) / scale)), 0, 255);
          while (qlo > 0 && lo + float(qlo) * scale > n.bounds[a][s]) --qlo;
          while (qhi < 255 && lo + float(qhi) * scale < n.bounds[3 + a][s]) ++qhi;
        }
        qn.q[a][s] = static_cast<std::uint8_t>(qlo);
        qn.q[3 + a][s] = static_cast<std::uint8_t>(qhi);
      }
    }
    for (int s = 0; s < QNode16::kWidth; ++s) {
      if ((used >> s & 1u) == 0) continue;
      if (n.child[s] > QNode16::kIndexMask || n.count[s] >= 32u) {
        throw std::runtime_error("quantize16: a slot's index or count does not fit");
      }
      qn.child[s] = n.child[s] | n.count[s] << QNode16::kCountShift;
    }
  }
  return out;
}

}  // namespace raypick::floorq
