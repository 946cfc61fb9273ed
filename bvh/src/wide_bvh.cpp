#include "wide_bvh.h"

#include <algorithm>

#if RAYPICK_WIDE_SSE
#include <emmintrin.h>
#endif

namespace raypick {
namespace {

void clear_slot(WideNode& n, int s) {
  n.set_slot_box(s, Aabb{});
  n.child[s] = WideNode::kInvalidSlot;
  n.count[s] = 0;
}

}  // namespace

WideBvh WideBvh::collapse(const Bvh& bvh) {
  WideBvh w;
  if (bvh.empty()) return w;
  w.prim_ids_ = bvh.prim_ids;
  w.entry_node_.assign(w.prim_ids_.size(), 0);
  w.entry_slot_.assign(w.prim_ids_.size(), 0);
  w.nodes_.reserve(bvh.nodes.size() / 2 + 1);
  w.nodes_.emplace_back();
  w.parent_.push_back(0);
  w.parent_slot_.push_back(0);
  struct Work {
    std::uint32_t binary;
    std::uint32_t wide;
  };
  // Leaf slots each binary node's subtree needs (a leaf: one).
  std::vector<std::uint32_t> below(bvh.nodes.size());
  for (std::size_t i = bvh.nodes.size(); i-- > 0;) {
    const BvhNode& n = bvh.nodes[i];
    below[i] = n.is_leaf() ? 1u : below[n.index] + below[n.index + 1];
  }
  std::vector<Work> todo{{0, 0}};
  while (!todo.empty()) {
    const Work job = todo.back();
    todo.pop_back();
    // The binary nodes this wide node's slots stand for: start from the
    // children and keep opening the largest inner one until there are kWidth.
    std::uint32_t items[WideNode::kWidth];
    // Each item's half area if it is an inner node (to be opened), else -1.
    float open_area[WideNode::kWidth];
    int count = 0;
    auto add = [&](std::uint32_t item) {
      const BvhNode& c = bvh.nodes[item];
      open_area[count] = c.is_leaf() ? -1.0f : c.bounds.half_area();
      items[count++] = item;
    };
    const BvhNode& b = bvh.nodes[job.binary];
    if (b.is_leaf()) {
      items[count++] = job.binary;  // a tree that is a single leaf
    } else {
      add(b.index);
      add(b.index + 1);
      while (count < WideNode::kWidth) {
        // Open the largest subtree too big for one node; else the largest
        // small one that fits here whole; else stop: each small subtree
        // left becomes one child node, filled.
        int best = -1;
        float best_area = -1.0f;
        for (int i = 0; i < count; ++i) {
          if (open_area[i] >= 0.0f && below[items[i]] > std::uint32_t(WideNode::kWidth) &&
              open_area[i] > best_area) {
            best = i;
            best_area = open_area[i];
          }
        }
        if (best < 0) {
          for (int i = 0; i < count; ++i) {
            if (open_area[i] >= 0.0f &&
                count - 1 + below[items[i]] <= std::uint32_t(WideNode::kWidth) &&
                open_area[i] > best_area) {
              best = i;
              best_area = open_area[i];
            }
          }
        }
        if (best < 0) break;
        const std::uint32_t open = items[best];
        // The opened node's first child takes its slot; the second is
        // appended.
        const BvhNode& o = bvh.nodes[open];
        const std::uint32_t first = o.index;
        open_area[best] = bvh.nodes[first].is_leaf() ? -1.0f
                                                     : bvh.nodes[first].bounds.half_area();
        items[best] = first;
        add(o.index + 1);
      }
    }
    for (int s = 0; s < WideNode::kWidth; ++s) {
      WideNode& n = w.nodes_[job.wide];
      if (s >= count) {
        clear_slot(n, s);
        continue;
      }
      const BvhNode& c = bvh.nodes[items[s]];
      n.set_slot_box(s, c.bounds);
      if (c.is_leaf()) {
        n.child[s] = c.index;
        n.count[s] = c.count;
        for (std::uint32_t e = c.index; e < c.index + c.count; ++e) {
          w.entry_node_[e] = job.wide;
          w.entry_slot_[e] = static_cast<std::uint8_t>(s);
        }
      } else {
        const auto child = static_cast<std::uint32_t>(w.nodes_.size());
        n.child[s] = child;
        n.count[s] = 0;
        // n is a reference into w.nodes_: done with it before growing.
        w.nodes_.emplace_back();
        w.parent_.push_back(job.wide);
        w.parent_slot_.push_back(static_cast<std::uint8_t>(s));
        todo.push_back({items[s], child});
      }
    }
  }
  // The reserve above is an upper bound; most trees use far fewer nodes.
  w.nodes_.shrink_to_fit();
  w.parent_.shrink_to_fit();
  w.parent_slot_.shrink_to_fit();
  return w;
}

#if RAYPICK_WIDE_SSE
namespace {

// Aabb::half_area() of each of a node's 8 slot boxes, in lanes: 0 for an
// empty box, else d.x d.y + d.y d.z + d.z d.x, in that order (the same
// bits).
void slot_half_areas(const WideNode& n, float out[WideNode::kWidth]) {
  for (int h = 0; h < WideNode::kWidth; h += 4) {
    __m128 d[3];
    __m128 filled = _mm_castsi128_ps(_mm_set1_epi32(-1));
    for (int a = 0; a < 3; ++a) {
      const __m128 lo = _mm_load_ps(n.bounds[a] + h);
      const __m128 hi = _mm_load_ps(n.bounds[3 + a] + h);
      d[a] = _mm_sub_ps(hi, lo);
      filled = _mm_and_ps(filled, _mm_cmple_ps(lo, hi));
    }
    const __m128 area = _mm_add_ps(_mm_add_ps(_mm_mul_ps(d[0], d[1]), _mm_mul_ps(d[1], d[2])),
                                   _mm_mul_ps(d[2], d[0]));
    _mm_storeu_ps(out + h, _mm_and_ps(area, filled));
  }
}

}  // namespace
#endif

double WideBvh::refit_inner(const BvhConfig& config) {
  if (nodes_.empty()) return 0.0;
  double sah = 0.0;
  // Children come after their parents: one backward pass sees every child
  // before its parent.
  for (std::size_t i = nodes_.size(); i-- > 0;) {
    WideNode& n = nodes_[i];
    for (int s = 0; s < WideNode::kWidth; ++s) {
      if (n.is_inner(s)) n.set_slot_box(s, nodes_[n.child[s]].box());
    }
#if RAYPICK_WIDE_SSE
    // The areas in lanes, summed in slot order as below.
    float area[WideNode::kWidth];
    slot_half_areas(n, area);
    for (int s = 0; s < WideNode::kWidth; ++s) sah += slot_weight(n, s, config) * area[s];
#else
    for (int s = 0; s < WideNode::kWidth; ++s) {
      sah += slot_weight(n, s, config) * n.slot_box(s).half_area();
    }
#endif
  }
  return sah + double(config.traversal_cost) * nodes_[0].box().half_area();
}

double WideBvh::sah_sum(const BvhConfig& config) const {
  if (nodes_.empty()) return 0.0;
  double sah = double(config.traversal_cost) * nodes_[0].box().half_area();
  for (const WideNode& n : nodes_) {
    for (int s = 0; s < WideNode::kWidth; ++s) {
      sah += slot_weight(n, s, config) * n.slot_box(s).half_area();
    }
  }
  return sah;
}

std::size_t WideBvh::memory_bytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  return bytes(nodes_) + bytes(prim_ids_) + bytes(parent_) + bytes(parent_slot_) +
         bytes(entry_node_) + bytes(entry_slot_);
}

BvhStats WideBvh::stats(const BvhConfig& config) const {
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
    const WideNode& n = nodes_[i];
    s.max_depth = std::max(s.max_depth, depth[i]);
    for (int k = 0; k < WideNode::kWidth; ++k) {
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

}  // namespace raypick
