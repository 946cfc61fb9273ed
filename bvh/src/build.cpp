#include "raypick/bvh/bvh.h"

#include "raypick/core/assert.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace raypick {
namespace {

int ceil_log2(std::size_t n) {
  return n <= 1 ? 0 : static_cast<int>(std::bit_width(n - 1));
}

struct Bin {
  Aabb bounds;
  std::uint32_t count = 0;
};

// A finished split: primitives [begin, mid) go left, [mid, end) right.
struct Task {
  std::uint32_t node;
  std::uint32_t begin;
  std::uint32_t end;
  int depth;
};

class Builder {
 public:
  Builder(std::span<const Aabb> boxes, std::span<const glm::vec3> centers,
          const BvhConfig& config)
      : boxes_(boxes), centers_(centers), config_(config) {}

  Bvh run() {
    Bvh bvh;
    const std::size_t n = boxes_.size();
    if (n == 0) return bvh;
    RAYPICK_ASSERT(n < (std::size_t{1} << 31), "too many primitives");
    bvh.prim_ids.resize(n);
    std::iota(bvh.prim_ids.begin(), bvh.prim_ids.end(), 0u);
    ids_ = bvh.prim_ids.data();
    nodes_ = &bvh.nodes;
    nodes_->reserve(2 * n);
    nodes_->push_back({});
    std::vector<Task> todo{{0, 0, static_cast<std::uint32_t>(n), 0}};
    while (!todo.empty()) {
      const Task task = todo.back();
      todo.pop_back();
      split(task, todo);
    }
    nodes_->shrink_to_fit();
    return bvh;
  }

 private:
  void split(const Task& task, std::vector<Task>& todo) {
    Aabb bounds, centroid_bounds;
    for (std::uint32_t i = task.begin; i < task.end; ++i) {
      bounds.extend(boxes_[ids_[i]]);
      centroid_bounds.extend(centers_[ids_[i]]);
    }
    BvhNode& node = (*nodes_)[task.node];
    node.bounds = bounds;
    const std::uint32_t count = task.end - task.begin;
    const float leaf_cost = config_.intersection_cost * count;

    std::uint32_t mid = 0;
    const bool sah_allowed =
        task.depth + 1 + ceil_log2(count) <= kBvhMaxDepth;
    if (sah_allowed) {
      float best_cost = 0.0f;
      mid = sah_split(task, bounds, centroid_bounds, best_cost);
      if (mid != 0 && count <= config_.max_leaf_size &&
          best_cost >= leaf_cost) {
        mid = 0;  // testing all primitives is no dearer than splitting
      }
    }
    if (mid == 0) {
      if (count <= config_.max_leaf_size) {
        node.index = task.begin;
        node.count = count;
        return;
      }
      mid = median_split(task, centroid_bounds);
    }
    const auto left = static_cast<std::uint32_t>(nodes_->size());
    // node is a reference into nodes_: write it before growing the vector.
    node.index = left;
    node.count = 0;
    nodes_->push_back({});
    nodes_->push_back({});
    todo.push_back({left + 1, mid, task.end, task.depth + 1});
    todo.push_back({left, task.begin, mid, task.depth + 1});
  }

  // Binned SAH over all three axes. Returns the partition point of the best
  // split (and its cost), or 0 when no bin boundary separates the centers.
  std::uint32_t sah_split(const Task& task, const Aabb& bounds,
                          const Aabb& centroid_bounds, float& best_cost) {
    const std::uint32_t nbins = std::clamp(config_.bins, 2u, 64u);
    Bin bins[64];
    float right_area[64];
    int best_axis = -1;
    std::uint32_t best_bin = 0;
    best_cost = kInfinity;
    const float inv_area = 1.0f / std::max(bounds.half_area(), 1e-30f);
    for (int axis = 0; axis < 3; ++axis) {
      const float lo = centroid_bounds.min[axis];
      const float extent = centroid_bounds.max[axis] - lo;
      if (!(extent > 0.0f)) continue;
      const float scale = static_cast<float>(nbins) / extent;
      for (std::uint32_t b = 0; b < nbins; ++b) bins[b] = {};
      for (std::uint32_t i = task.begin; i < task.end; ++i) {
        const std::uint32_t b = bin_of(centers_[ids_[i]][axis], lo, scale,
                                       nbins);
        bins[b].bounds.extend(boxes_[ids_[i]]);
        ++bins[b].count;
      }
      // Sweep from the right, then from the left, evaluating each of the
      // nbins - 1 planes between bins.
      Aabb acc;
      for (std::uint32_t b = nbins - 1; b > 0; --b) {
        acc.extend(bins[b].bounds);
        right_area[b] = acc.half_area();
      }
      acc = Aabb{};
      std::uint32_t left_count = 0;
      for (std::uint32_t b = 0; b + 1 < nbins; ++b) {
        acc.extend(bins[b].bounds);
        left_count += bins[b].count;
        const std::uint32_t right_count =
            (task.end - task.begin) - left_count;
        if (left_count == 0 || right_count == 0) continue;
        const float cost =
            config_.traversal_cost +
            config_.intersection_cost * inv_area *
                (acc.half_area() * static_cast<float>(left_count) +
                 right_area[b + 1] * static_cast<float>(right_count));
        if (cost < best_cost) {
          best_cost = cost;
          best_axis = axis;
          best_bin = b;
        }
      }
    }
    if (best_axis < 0) return 0;
    const float lo = centroid_bounds.min[best_axis];
    const float scale = static_cast<float>(nbins) /
                        (centroid_bounds.max[best_axis] - lo);
    std::uint32_t* first = ids_ + task.begin;
    std::uint32_t* last = ids_ + task.end;
    std::uint32_t* middle =
        std::partition(first, last, [&](std::uint32_t id) {
          return bin_of(centers_[id][best_axis], lo, scale, nbins) <=
                 best_bin;
        });
    return static_cast<std::uint32_t>(middle - ids_);
  }

  // Splits at the median primitive along the widest centroid axis (by
  // index when all centers coincide). Always leaves two non-empty halves.
  std::uint32_t median_split(const Task& task, const Aabb& centroid_bounds) {
    const glm::vec3 extent = centroid_bounds.max - centroid_bounds.min;
    int axis = 0;
    if (extent.y > extent[axis]) axis = 1;
    if (extent.z > extent[axis]) axis = 2;
    const std::uint32_t mid = task.begin + (task.end - task.begin) / 2;
    std::nth_element(ids_ + task.begin, ids_ + mid, ids_ + task.end,
                     [&](std::uint32_t a, std::uint32_t b) {
                       const float ca = centers_[a][axis];
                       const float cb = centers_[b][axis];
                       return ca != cb ? ca < cb : a < b;
                     });
    return mid;
  }

  static std::uint32_t bin_of(float c, float lo, float scale,
                              std::uint32_t nbins) {
    const float f = (c - lo) * scale;
    const auto b = f > 0.0f ? static_cast<std::uint32_t>(f) : 0u;
    return std::min(b, nbins - 1);
  }

  std::span<const Aabb> boxes_;
  std::span<const glm::vec3> centers_;
  BvhConfig config_;
  std::uint32_t* ids_ = nullptr;
  std::vector<BvhNode>* nodes_ = nullptr;
};

}  // namespace

Bvh build_bvh(std::span<const Aabb> boxes, std::span<const glm::vec3> centers,
              const BvhConfig& config) {
  RAYPICK_ASSERT(boxes.size() == centers.size(),
                 "one center per box is required");
  RAYPICK_ASSERT(config.max_leaf_size >= 1, "max_leaf_size must be >= 1");
  return Builder(boxes, centers, config).run();
}

BvhStats Bvh::stats(const BvhConfig& config) const {
  BvhStats s;
  if (nodes.empty()) return s;
  s.nodes = nodes.size();
  s.primitives = prim_ids.size();
  s.min_leaf_size = ~0u;
  const double root_area = std::max(nodes[0].bounds.half_area(), 1e-30f);
  struct Item {
    std::uint32_t node;
    int depth;
  };
  std::vector<Item> todo{{0, 0}};
  while (!todo.empty()) {
    const Item it = todo.back();
    todo.pop_back();
    const BvhNode& n = nodes[it.node];
    const double rel = n.bounds.half_area() / root_area;
    s.max_depth = std::max(s.max_depth, it.depth);
    if (n.is_leaf()) {
      ++s.leaves;
      s.min_leaf_size = std::min(s.min_leaf_size, n.count);
      s.max_leaf_size = std::max(s.max_leaf_size, n.count);
      s.sah_cost += config.intersection_cost * n.count * rel;
    } else {
      s.sah_cost += config.traversal_cost * rel;
      todo.push_back({n.index, it.depth + 1});
      todo.push_back({n.index + 1, it.depth + 1});
    }
  }
  s.mean_leaf_size = static_cast<double>(s.primitives) /
                     static_cast<double>(s.leaves);
  return s;
}

void Bvh::refit(std::span<const Aabb> boxes) {
  for (std::size_t i = nodes.size(); i-- > 0;) {
    BvhNode& n = nodes[i];
    Aabb b;
    if (n.is_leaf()) {
      for (std::uint32_t k = 0; k < n.count; ++k) {
        b.extend(boxes[prim_ids[n.index + k]]);
      }
    } else {
      b = nodes[n.index].bounds;
      b.extend(nodes[n.index + 1].bounds);
    }
    n.bounds = b;
  }
}

}  // namespace raypick
