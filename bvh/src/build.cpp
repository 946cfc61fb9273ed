#include "raypick/bvh/bvh.h"

#include "raypick/core/assert.h"

#include <tbb/task_group.h>

#include <algorithm>
#include <atomic>
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

// A range of primitives to turn into the subtree at `node`.
struct Task {
  std::uint32_t node;
  std::uint32_t begin;
  std::uint32_t end;
  int depth;
};

// Subtrees at least this large are built as parallel TBB tasks.
constexpr std::uint32_t kParallelGrain = 4096;

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
    // A binary tree over n leaves of >= 1 primitive has at most 2n - 1
    // nodes: allocate them all and hand out pairs with an atomic counter,
    // so parallel subtrees never move the array.
    bvh.nodes.resize(2 * n - 1);
    nodes_ = bvh.nodes.data();
    next_ = 1;
    build({0, 0, static_cast<std::uint32_t>(n), 0});
    bvh.nodes.resize(next_.load());
    bvh.nodes.shrink_to_fit();
    return bvh;
  }

 private:
  void build(Task task) {
    for (;;) {
      std::uint32_t mid = 0;
      if (!split(task, mid)) return;  // a leaf
      const std::uint32_t left = nodes_[task.node].index;
      const Task l{left, task.begin, mid, task.depth + 1};
      const Task r{left + 1, mid, task.end, task.depth + 1};
      if (task.end - task.begin >= kParallelGrain) {
        tbb::task_group group;
        group.run([this, l] { build(l); });
        build(r);
        group.wait();
        return;
      }
      build(l);
      task = r;  // the right child in this loop, without recursion
    }
  }

  // Makes task.node a leaf (returns false) or an inner node whose children
  // are allocated and whose primitives [begin, mid) go left (returns true).
  bool split(const Task& task, std::uint32_t& mid) {
    Aabb bounds, centroid_bounds;
    for (std::uint32_t i = task.begin; i < task.end; ++i) {
      bounds.extend(boxes_[ids_[i]]);
      centroid_bounds.extend(centers_[ids_[i]]);
    }
    BvhNode& node = nodes_[task.node];
    node.bounds = bounds;
    const std::uint32_t count = task.end - task.begin;
    const float leaf_cost = config_.intersection_cost * count;

    mid = 0;
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
        return false;
      }
      mid = median_split(task, centroid_bounds);
    }
    node.index = next_.fetch_add(2);
    node.count = 0;
    return true;
  }

  // Binned SAH over all three axes in one pass over the primitives. Returns
  // the partition point of the best split (and its cost), or 0 when no bin
  // boundary separates the centers.
  std::uint32_t sah_split(const Task& task, const Aabb& bounds,
                          const Aabb& centroid_bounds, float& best_cost) {
    const std::uint32_t nbins = std::clamp(config_.bins, 2u, 64u);
    Bin bins[3][64];
    glm::vec3 scale{0.0f};
    bool any = false;
    for (int axis = 0; axis < 3; ++axis) {
      const float extent = centroid_bounds.max[axis] - centroid_bounds.min[axis];
      if (extent > 0.0f) {
        scale[axis] = static_cast<float>(nbins) / extent;
        any = true;
      }
    }
    best_cost = kInfinity;
    if (!any) return 0;
    const glm::vec3 lo = centroid_bounds.min;
    for (std::uint32_t i = task.begin; i < task.end; ++i) {
      const std::uint32_t id = ids_[i];
      const Aabb& box = boxes_[id];
      const glm::vec3& c = centers_[id];
      for (int axis = 0; axis < 3; ++axis) {
        Bin& b = bins[axis][bin_of(c[axis], lo[axis], scale[axis], nbins)];
        b.bounds.extend(box);
        ++b.count;
      }
    }
    int best_axis = -1;
    std::uint32_t best_bin = 0;
    const float inv_area = 1.0f / std::max(bounds.half_area(), 1e-30f);
    float right_area[64];
    std::uint32_t right_count[64];
    for (int axis = 0; axis < 3; ++axis) {
      if (scale[axis] == 0.0f) continue;
      // Sweep from the right, then from the left, evaluating each of the
      // nbins - 1 planes between bins.
      Aabb acc;
      std::uint32_t n_right = 0;
      for (std::uint32_t b = nbins - 1; b > 0; --b) {
        acc.extend(bins[axis][b].bounds);
        n_right += bins[axis][b].count;
        right_area[b] = acc.half_area();
        right_count[b] = n_right;
      }
      acc = Aabb{};
      std::uint32_t left_count = 0;
      for (std::uint32_t b = 0; b + 1 < nbins; ++b) {
        acc.extend(bins[axis][b].bounds);
        left_count += bins[axis][b].count;
        const std::uint32_t n_r = right_count[b + 1];
        if (left_count == 0 || n_r == 0) continue;
        const float cost =
            config_.traversal_cost +
            config_.intersection_cost * inv_area *
                (acc.half_area() * static_cast<float>(left_count) +
                 right_area[b + 1] * static_cast<float>(n_r));
        if (cost < best_cost) {
          best_cost = cost;
          best_axis = axis;
          best_bin = b;
        }
      }
    }
    if (best_axis < 0) return 0;
    std::uint32_t* first = ids_ + task.begin;
    std::uint32_t* last = ids_ + task.end;
    std::uint32_t* middle =
        std::partition(first, last, [&](std::uint32_t id) {
          return bin_of(centers_[id][best_axis], lo[best_axis],
                        scale[best_axis], nbins) <= best_bin;
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
  BvhNode* nodes_ = nullptr;
  std::atomic<std::uint32_t> next_{0};
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
