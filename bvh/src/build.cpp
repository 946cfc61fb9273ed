#include "binary_bvh.h"
#include "compiler.h"

#include "raypick/core/assert.h"
#include "raypick/core/ray.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_group.h>

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>
#include <numeric>
#include <stdexcept>

namespace raypick {
namespace {

int ceil_log2(std::size_t n) {
  return n <= 1 ? 0 : static_cast<int>(std::bit_width(n - 1));
}

// Four floats: one SSE register where SSE2 is there (every x86-64), four
// scalars elsewhere, with the same IEEE results either way.
struct V4 {
#if defined(__SSE2__) || defined(_M_X64)
  __m128 v;
  static V4 load(const float* p) { return {_mm_loadu_ps(p)}; }
  static V4 splat(float x) { return {_mm_set1_ps(x)}; }
  friend V4 min(V4 a, V4 b) { return {_mm_min_ps(a.v, b.v)}; }
  friend V4 max(V4 a, V4 b) { return {_mm_max_ps(a.v, b.v)}; }
  friend V4 operator+(V4 a, V4 b) { return {_mm_add_ps(a.v, b.v)}; }
  friend V4 operator-(V4 a, V4 b) { return {_mm_sub_ps(a.v, b.v)}; }
  friend V4 operator*(V4 a, V4 b) { return {_mm_mul_ps(a.v, b.v)}; }
  // The first three lanes, the fourth cleared.
  V4 xyz() const {
    return {_mm_and_ps(v, _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1)))};
  }
  void store(float* p) const { _mm_storeu_ps(p, v); }
  // dx * dy + dy * dz + dz * dx of d = hi - lo, summed in that order.
  friend float half_area(V4 lo, V4 hi) {
    const __m128 d = _mm_sub_ps(hi.v, lo.v);
    const __m128 p = _mm_mul_ps(d, _mm_shuffle_ps(d, d, _MM_SHUFFLE(3, 0, 2, 1)));
    const __m128 s = _mm_add_ss(p, _mm_shuffle_ps(p, p, _MM_SHUFFLE(3, 3, 3, 1)));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehl_ps(p, p)));
  }
#else
  float v[4];
  static V4 load(const float* p) { return {{p[0], p[1], p[2], p[3]}}; }
  static V4 splat(float x) { return {{x, x, x, x}}; }
  template <class F>
  static V4 map(V4 a, V4 b, F f) {
    return {{f(a.v[0], b.v[0]), f(a.v[1], b.v[1]), f(a.v[2], b.v[2]), f(a.v[3], b.v[3])}};
  }
  // As _mm_min_ps / _mm_max_ps: the second operand when either is NaN.
  friend V4 min(V4 a, V4 b) { return map(a, b, [](float x, float y) { return x < y ? x : y; }); }
  friend V4 max(V4 a, V4 b) { return map(a, b, [](float x, float y) { return x > y ? x : y; }); }
  friend V4 operator+(V4 a, V4 b) { return map(a, b, [](float x, float y) { return x + y; }); }
  friend V4 operator-(V4 a, V4 b) { return map(a, b, [](float x, float y) { return x - y; }); }
  friend V4 operator*(V4 a, V4 b) { return map(a, b, [](float x, float y) { return x * y; }); }
  V4 xyz() const { return {{v[0], v[1], v[2], 0.0f}}; }
  void store(float* p) const { for (int k = 0; k < 4; ++k) p[k] = v[k]; }
  friend float half_area(V4 lo, V4 hi) {
    const float dx = hi.v[0] - lo.v[0], dy = hi.v[1] - lo.v[1], dz = hi.v[2] - lo.v[2];
    return dx * dy + dy * dz + dz * dx;
  }
#endif
};

// A primitive as the builder moves it: its box and its id in one 32-byte
// record, two to a cache line, so that every pass over a range reads memory
// front to back instead of through an id array. Its center, the point it is
// binned by, is (lo + hi) * 0.5 as Aabb::center() computes it, bit for bit.
struct alignas(16) PrimRef {
  float lo[4];  // lo[3] is 0
  float hi[3];
  std::uint32_t id;

  V4 lo4() const { return V4::load(lo); }
  // hi with its fourth lane cleared (the id's bits, as a float a denormal,
  // which arithmetic on that lane would pay a microcode assist for).
#if defined(__SSE2__) || defined(_M_X64)
  V4 hi4() const { return V4::load(hi).xyz(); }  // one load of the 16 bytes at hi
#else
  V4 hi4() const { return {{hi[0], hi[1], hi[2], 0.0f}}; }
#endif
  V4 center() const { return center_of(lo4(), hi4()); }
  // The center formula, for passes that hold the box's rows already
  // (and, one axis at a time, for the median split).
  static V4 center_of(V4 plo, V4 phi) { return (plo + phi) * V4::splat(0.5f); }
  float center(int axis) const { return (lo[axis] + hi[axis]) * 0.5f; }
};
static_assert(sizeof(PrimRef) == 32);

// An open box and centroid box, as four-float rows (the fourth lane is
// ignored).
struct Bounds4 {
  V4 lo = V4::splat(kInfinity), hi = V4::splat(-kInfinity);
  V4 clo = V4::splat(kInfinity), chi = V4::splat(-kInfinity);

  void add(const PrimRef& r) {
    const V4 plo = r.lo4(), phi = r.hi4();
    const V4 c = PrimRef::center_of(plo, phi);
    lo = min(lo, plo);
    hi = max(hi, phi);
    clo = min(clo, c);
    chi = max(chi, c);
  }
  void merge(const Bounds4& b) {
    lo = min(lo, b.lo);
    hi = max(hi, b.hi);
    clo = min(clo, b.clo);
    chi = max(chi, b.chi);
  }
  Aabb box() const { return to_aabb(lo, hi); }
  // As box().half_area(): 0 when empty.
  float half_area() const {
    float x[4], y[4];
    lo.store(x);
    hi.store(y);
    if (!(x[0] <= y[0] && x[1] <= y[1] && x[2] <= y[2])) return 0.0f;
    const float dx = y[0] - x[0], dy = y[1] - x[1], dz = y[2] - x[2];
    return dx * dy + dy * dz + dz * dx;
  }
  Aabb centroids() const { return to_aabb(clo, chi); }
  static Aabb to_aabb(V4 a, V4 b) {
    float x[4], y[4];
    a.store(x);
    b.store(y);
    // min > max on some axis: the empty box, in Aabb's own form.
    const Aabb out{{x[0], x[1], x[2]}, {y[0], y[1], y[2]}};
    return out.empty() ? Aabb{} : out;
  }
};

// A bin of sah_split: the box of its primitives (their centroid box is
// not needed to choose a split; the partition computes the sides'). Trivially
// constructible on purpose: an array of them is left uninitialized, and
// sah_split empties only the bins it uses.
struct Bin {
  V4 lo, hi;
  std::uint32_t count;
};

// The bins of all three axes. clear() empties the first nbins of each: most
// calls are on small ranges, where clearing 3 x 64 bins would cost more than
// the binning. Every bin in use starts empty, so that adding a primitive
// needs no branch on whether it is the bin's first (that branch mispredicts
// on the small ranges that make most calls).
struct BinSet {
  Bin bin[3][64];

  void clear(std::uint32_t nbins) {
    for (auto& axis : bin) {
      for (std::uint32_t b = 0; b < nbins; ++b) {
        axis[b].lo = V4::splat(kInfinity);
        axis[b].hi = V4::splat(-kInfinity);
        axis[b].count = 0;
      }
    }
  }
  void merge(const BinSet& o, std::uint32_t nbins) {
    for (int a = 0; a < 3; ++a) {
      for (std::uint32_t b = 0; b < nbins; ++b) {
        bin[a][b].lo = min(bin[a][b].lo, o.bin[a][b].lo);
        bin[a][b].hi = max(bin[a][b].hi, o.bin[a][b].hi);
        bin[a][b].count += o.bin[a][b].count;
      }
    }
  }
};

// A range of primitives to turn into the subtree at `node`, with their box
// and centroid box (known from the parent's split) and the buffer that holds
// them (0: refs_, 1: spare_; a binned split moves a range to the other).
struct Task {
  std::uint32_t node;
  std::uint32_t begin;
  std::uint32_t end;
  int depth;
  int buffer;
  Bounds4 bounds;
};

// Passes over ranges are cut into chunks of this many primitives.
constexpr std::uint32_t kParallelGrain = 4096;

// Subtrees at least this large are built as parallel TBB tasks: small
// enough that two threads share a 10,000-primitive tree evenly although
// SAH splits are rarely even. (Under ThreadSanitizer the tests cap TBB at
// one thread, tests/test_main.cpp: it cannot see TBB's task hand-over.)
constexpr std::uint32_t kParallelTask = 1024;

// Ranges at least this large are binned in parallel chunks of
// kParallelGrain primitives.
constexpr std::uint32_t kParallelBinMin = 2 * kParallelGrain;

// Ranges of at most this many primitives are split by an exact sweep over
// their centers sorted on each axis instead of by bins: most calls are on
// such small ranges, where binning and sweeping the bins cost more than
// sorting a few primitives, and the exact sweep finds a split at least as
// good. (Up to 16 cost more instructions than binning them into 4 to 8
// bins: docs/performance.md, "What was tried".)
constexpr std::uint32_t kSweepMax = 8;

class Builder {
 public:
  Builder(std::span<const Aabb> boxes, const BvhConfig& config)
      : boxes_(boxes),
        config_(config),
        block_shift_(std::countr_zero(std::bit_ceil(std::clamp(config.leaf_block, 1u, 16u)))) {}

  Bvh run() {
    Bvh bvh;
    const std::size_t n = boxes_.size();
    if (n == 0) return bvh;
    RAYPICK_ASSERT(n < (std::size_t{1} << 31), "too many primitives");
    // Uninitialized: every record is written just below (a vector would
    // clear them first). The spare buffer receives the ranges that binned
    // splits partition; a build of at most kSweepMax primitives never bins
    // and needs none.
    refs_ = std::make_unique_for_overwrite<PrimRef[]>(n);
    compiler::advise_huge_pages(refs_.get(), n * sizeof(PrimRef));
    if (n > kSweepMax) {
      spare_ = std::make_unique_for_overwrite<PrimRef[]>(n);
      compiler::advise_huge_pages(spare_.get(), n * sizeof(PrimRef));
    }
    // The records and the root's bounds, in parallel: min and max are
    // exact, so the bounds do not depend on how the range is cut.
    const auto count = static_cast<std::uint32_t>(n);
    Task root{0, 0, count, 0, 0, {}};
    auto fill = [this](const tbb::blocked_range<std::uint32_t>& range, Bounds4 b) {
      for (std::uint32_t i = range.begin(); i != range.end(); ++i) {
        PrimRef& r = refs_[i];
        for (int a = 0; a < 3; ++a) {
          r.lo[a] = boxes_[i].min[a];
          r.hi[a] = boxes_[i].max[a];
        }
        r.lo[3] = 0.0f;
        r.id = i;
        b.add(r);
      }
      return b;
    };
    // A single chunk (a small tree) runs here, without the scheduler.
    const tbb::blocked_range<std::uint32_t> all(0, count, kParallelGrain);
    root.bounds = all.is_divisible() ? tbb::parallel_reduce(all, Bounds4{}, fill,
                                                            [](Bounds4 a, const Bounds4& b) {
                                                              a.merge(b);
                                                              return a;
                                                            })
                                     : fill(all, Bounds4{});
    // A binary tree over n leaves of >= 1 primitive has at most 2n - 1
    // nodes: allocate them all and hand out pairs with an atomic counter,
    // so parallel subtrees never move the array.
    compiler::resize_huge(bvh.nodes, 2 * n - 1);
    nodes_ = bvh.nodes.data();
    next_ = 1;
    // Every leaf writes the ids of its own range.
    bvh.prim_ids.resize(n);
    prim_ids_ = bvh.prim_ids.data();
    build(root);
    bvh.nodes.resize(next_.load());
    // No shrink_to_fit: the unused tail (about a fifth) is never touched
    // again, while a shrink would copy every node into fresh pages. Callers
    // that collapse the tree drop it anyway.
    return bvh;
  }

 private:
  PrimRef* buffer(int b) const { return b == 0 ? refs_.get() : spare_.get(); }

  // The SAH's count for a leaf of n primitives: its started blocks, or n
  // itself in the instances of the split searches for blocks of one (the
  // default), whose loops then run as they did before blocks existed.
  template <bool kBlocks = true>
  float blocks(std::uint32_t n) const {
    if constexpr (!kBlocks) return static_cast<float>(n);
    return static_cast<float>((n + (1u << block_shift_) - 1) >> block_shift_);
  }

  void build(Task task) {
    for (;;) {
      Task l, r;
      if (!split(task, l, r)) return;  // a leaf
      if (task.end - task.begin >= kParallelTask) {
        tbb::task_group group;
        group.run([this, l] { build(l); });
        build(r);
        // wait() rethrows a task's exception. Cancelled from outside (an
        // enclosing TBB context), the left subtree may never have been
        // built: its node would still read as an inner node at index 0, a
        // cycle, so the build throws rather than return such a tree.
        if (group.wait() == tbb::task_group_status::canceled) {
          throw std::runtime_error("BVH build cancelled");
        }
        return;
      }
      build(l);
      task = r;  // the right child in this loop, without recursion
    }
  }

  // Makes task.node a leaf (returns false) or an inner node whose children
  // are allocated and described by l and r (returns true).
  bool split(const Task& task, Task& l, Task& r) {
    BvhNode& node = nodes_[task.node];
    node.bounds = task.bounds.box();
    const std::uint32_t count = task.end - task.begin;
    if (count == 1) return make_leaf(task, node);  // nothing to split

    const Aabb& bounds = node.bounds;
    const Aabb centroid_bounds = task.bounds.centroids();
    const float leaf_cost = config_.intersection_cost * blocks(count);
    // No split can cost less than a node's visit (costs are not negative):
    // where that alone costs as much as the leaf, the leaf wins without a
    // search, as the rule below would decide after one (which would also
    // have sorted the range: the primitives keep their order here).
    if (count <= config_.max_leaf_size && config_.traversal_cost >= leaf_cost) {
      return make_leaf(task, node);
    }
    std::uint32_t mid = 0;
    int child_buffer = task.buffer;
    const bool sah_allowed =
        task.depth + 1 + ceil_log2(count) <= kBvhMaxDepth;
    if (sah_allowed) {
      float best_cost = 0.0f;
      if (count <= kSweepMax) {
        mid = block_shift_ == 0
                  ? sweep_split<false>(task, bounds, centroid_bounds, best_cost, l.bounds, r.bounds)
                  : sweep_split<true>(task, bounds, centroid_bounds, best_cost, l.bounds, r.bounds);
      } else {
        mid = block_shift_ == 0
                  ? sah_split<false>(task, bounds, centroid_bounds, best_cost, l.bounds, r.bounds)
                  : sah_split<true>(task, bounds, centroid_bounds, best_cost, l.bounds, r.bounds);
        if (mid != 0) child_buffer = 1 - task.buffer;
      }
      if (mid != 0 && count <= config_.max_leaf_size &&
          best_cost >= leaf_cost) {
        // Testing all primitives is no dearer than splitting. A binned
        // split left its source as it was: the leaf's primitives are
        // still there.
        mid = 0;
        child_buffer = task.buffer;
      }
    }
    if (mid == 0) {
      if (count <= config_.max_leaf_size) return make_leaf(task, node);
      mid = median_split(task, centroid_bounds);
      const PrimRef* p = buffer(task.buffer);
      l.bounds = r.bounds = Bounds4{};
      for (std::uint32_t i = task.begin; i < mid; ++i) l.bounds.add(p[i]);
      for (std::uint32_t i = mid; i < task.end; ++i) r.bounds.add(p[i]);
    }
    node.index = next_.fetch_add(2);
    node.count = 0;
    l.node = node.index;
    l.begin = task.begin;
    l.end = mid;
    l.depth = task.depth + 1;
    l.buffer = child_buffer;
    r.node = node.index + 1;
    r.begin = mid;
    r.end = task.end;
    r.depth = task.depth + 1;
    r.buffer = child_buffer;
    return true;
  }

  bool make_leaf(const Task& task, BvhNode& node) {
    node.index = task.begin;
    node.count = task.end - task.begin;
    const PrimRef* p = buffer(task.buffer);
    for (std::uint32_t i = task.begin; i < task.end; ++i) prim_ids_[i] = p[i].id;
    return false;
  }

  // The bin of each axis for a center: floor((c - lo) * scale) clamped to
  // [0, nbins - 1]; the same arithmetic for binning and partitioning.
  static V4 bins_of(V4 center, V4 lo, V4 scale, V4 last) {
    return min(max((center - lo) * scale, V4::splat(0.0f)), last);
  }

  // Adds the primitives [begin, end) of `p` to the bins of their centers.
  static void bin_range(const PrimRef* p, std::uint32_t begin, std::uint32_t end, V4 lo,
                        V4 sc, V4 last, BinSet& bins) {
    for (std::uint32_t i = begin; i < end; ++i) {
      const PrimRef& r = p[i];
      const V4 plo = r.lo4(), phi = r.hi4();
      float f[4];
      bins_of(PrimRef::center_of(plo, phi), lo, sc, last).store(f);
      for (int axis = 0; axis < 3; ++axis) {
        Bin& b = bins.bin[axis][static_cast<std::uint32_t>(f[axis])];
        ++b.count;
        b.lo = min(b.lo, plo);
        b.hi = max(b.hi, phi);
      }
    }
  }

  // Binned SAH over all three axes in one pass over the primitives. Returns
  // the partition point of the best split (and its cost, and the two
  // sides' bounds), having moved the range to the other buffer left side
  // first, or 0 (the range left where it was) when no bin boundary
  // separates the centers.
  template <bool kBlocks>
  std::uint32_t sah_split(const Task& task, const Aabb& bounds,
                          const Aabb& centroid_bounds, float& best_cost,
                          Bounds4& left, Bounds4& right) {
    // config.bins, but no more than half the range's primitives (and at
    // least 4): on a range of 9 to 31 primitives the sweeps over the bins
    // cost more than the binning, and fewer planes cost the SAH little
    // (the Wuson model's tree 0.03% more, boxes-10k's top level 0.05%, for
    // 9% and 7% fewer instructions in build_bvh).
    const std::uint32_t nbins =
        std::clamp(std::min(config_.bins, std::max((task.end - task.begin) / 2, 4u)), 2u, 64u);
    float scale[4] = {0.0f, 0.0f, 0.0f, 0.0f};
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
    const float lo_f[4] = {centroid_bounds.min.x, centroid_bounds.min.y,
                           centroid_bounds.min.z, 0.0f};
    const V4 lo = V4::load(lo_f), sc = V4::load(scale);
    const V4 last = V4::splat(static_cast<float>(nbins - 1));
    const PrimRef* src = buffer(task.buffer);
    BinSet bins;  // only the bins in use are emptied
    bins.clear(nbins);
    if (task.end - task.begin >= kParallelBinMin) {
      // A large range (the top levels, before the subtrees run as tasks):
      // its chunks binned in parallel, their bins merged. Counts add and
      // boxes take min and max, both exact: the same bins as one pass.
      bins = tbb::parallel_reduce(
          tbb::blocked_range<std::uint32_t>(task.begin, task.end, kParallelGrain), bins,
          [&](const tbb::blocked_range<std::uint32_t>& range, BinSet acc) {
            bin_range(src, range.begin(), range.end(), lo, sc, last, acc);
            return acc;
          },
          [nbins](BinSet a, const BinSet& b) {
            a.merge(b, nbins);
            return a;
          });
    } else {
      bin_range(src, task.begin, task.end, lo, sc, last, bins);
    }
    const float inv_area = 1.0f / std::max(bounds.half_area(), 1e-30f);
    // The three axes swept side by side: three independent chains of
    // min/max instead of one after another. No branch on empty bins
    // either: an empty bin (lo = +inf, hi = -inf, count 0) leaves the
    // running boxes and counts as they were, so the plane after it costs
    // what the plane before it did and never wins (strict <: the earlier
    // plane wins ties, as across axes the lower axis does). An axis whose
    // centers coincide has every primitive in bin 0: no plane of it has
    // both sides non-empty.
    float right_area[3][64];
    std::uint32_t right_count[3][64];
    {
      V4 acc_lo[3], acc_hi[3];
      std::uint32_t n_right[3] = {0, 0, 0};
      for (int axis = 0; axis < 3; ++axis) {
        acc_lo[axis] = V4::splat(kInfinity);
        acc_hi[axis] = V4::splat(-kInfinity);
      }
      for (std::uint32_t b = nbins - 1; b > 0; --b) {
        for (int axis = 0; axis < 3; ++axis) {
          const Bin& bin = bins.bin[axis][b];
          acc_lo[axis] = min(acc_lo[axis], bin.lo);
          acc_hi[axis] = max(acc_hi[axis], bin.hi);
          n_right[axis] += bin.count;
          right_area[axis][b] = half_area(acc_lo[axis], acc_hi[axis]);
          right_count[axis][b] = n_right[axis];
        }
      }
    }
    float axis_cost[3] = {kInfinity, kInfinity, kInfinity};
    std::uint32_t axis_bin[3] = {0, 0, 0};
    {
      V4 acc_lo[3], acc_hi[3];
      std::uint32_t n_left[3] = {0, 0, 0};
      for (int axis = 0; axis < 3; ++axis) {
        acc_lo[axis] = V4::splat(kInfinity);
        acc_hi[axis] = V4::splat(-kInfinity);
      }
      for (std::uint32_t b = 0; b + 1 < nbins; ++b) {
        for (int axis = 0; axis < 3; ++axis) {
          const Bin& bin = bins.bin[axis][b];
          acc_lo[axis] = min(acc_lo[axis], bin.lo);
          acc_hi[axis] = max(acc_hi[axis], bin.hi);
          n_left[axis] += bin.count;
          const std::uint32_t n_r = right_count[axis][b + 1];
          const float cost =
              config_.traversal_cost +
              config_.intersection_cost * inv_area *
                  (half_area(acc_lo[axis], acc_hi[axis]) * blocks<kBlocks>(n_left[axis]) +
                   right_area[axis][b + 1] * blocks<kBlocks>(n_r));
          if (n_left[axis] != 0 && n_r != 0 && cost < axis_cost[axis]) {
            axis_cost[axis] = cost;
            axis_bin[axis] = b;
          }
        }
      }
    }
    int best_axis = -1;
    std::uint32_t best_bin = 0;
    for (int axis = 0; axis < 3; ++axis) {
      if (axis_cost[axis] < best_cost) {
        best_cost = axis_cost[axis];
        best_axis = axis;
        best_bin = axis_bin[axis];
      }
    }
    if (best_axis < 0) return 0;
    // Partition into the other buffer, the left side from the front and the
    // right side from the back, taking each side's box and centroid box on
    // the way: the one pass over the range that the split needs anyway. No
    // branch depends on the side (a primitive's side is as good as random,
    // and a branch on it mispredicted half the time): the side picks the
    // store's address and the bounds it widens.
    PrimRef* dst = buffer(1 - task.buffer);
    std::uint32_t l = task.begin, r = task.end;
    Bounds4 side[2];
    for (std::uint32_t i = task.begin; i < task.end; ++i) {
      const PrimRef& p = src[i];
      float f[4];
      bins_of(p.center(), lo, sc, last).store(f);
      // 1 to the right, 0 to the left, in integer arithmetic: a compiler
      // would turn a conditional choice back into a branch.
      const std::uint32_t to_right = static_cast<std::uint32_t>(f[best_axis]) > best_bin;
      const std::uint32_t mask = 0u - to_right;
      dst[(l & ~mask) | ((r - 1) & mask)] = p;
      l += 1 - to_right;
      r -= to_right;
      side[to_right].add(p);
    }
    left = side[0];
    right = side[1];
    return l;
  }

  // How many of the kSweepMax keys (cs[j], ids[j]) are below key i (ids
  // are distinct, so the keys of a range rank 0, 1, ... in order).
  static std::uint32_t keys_below(const float* cs, const std::int32_t* ids, std::uint32_t i) {
    static_assert(kSweepMax % 4 == 0, "4-lane comparisons");
#if defined(__SSE2__) || defined(_M_X64)
    const __m128 c = _mm_set1_ps(cs[i]);
    const __m128i id = _mm_set1_epi32(ids[i]);
    // Bits set in a 4-bit mask.
    constexpr std::uint8_t kBits[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
    std::uint32_t n = 0;
    for (std::uint32_t at = 0; at < kSweepMax; at += 4) {
      const __m128 cj = _mm_load_ps(cs + at);
      const __m128i idj = _mm_load_si128(reinterpret_cast<const __m128i*>(ids + at));
      const __m128 tie = _mm_and_ps(_mm_cmpeq_ps(cj, c), _mm_castsi128_ps(_mm_cmplt_epi32(idj, id)));
      n += kBits[_mm_movemask_ps(_mm_or_ps(_mm_cmplt_ps(cj, c), tie))];
    }
    return n;
#else
    std::uint32_t n = 0;
    for (std::uint32_t j = 0; j < kSweepMax; ++j) {
      n += (cs[j] < cs[i] || (cs[j] == cs[i] && ids[j] < ids[i])) ? 1 : 0;
    }
    return n;
#endif
  }

  // The primitives of p[0, count) in insertion order by (center cs, id):
  // sweep_split's order where a center is NaN (its comparisons all false,
  // so the order is some permutation, never a repeated rank).
  static void insertion_order(const float* cs, const PrimRef* p, std::uint32_t count,
                              std::uint8_t* o) {
    for (std::uint32_t i = 0; i < count; ++i) {
      const float c = cs[i];
      const std::uint32_t id = p[i].id;
      std::uint32_t j = i;
      for (; j > 0; --j) {
        const std::uint8_t q = o[j - 1];
        if (cs[q] < c || (cs[q] == c && p[q].id < id)) break;
        o[j] = o[j - 1];
      }
      o[j] = static_cast<std::uint8_t>(i);
    }
  }

  // The SAH split of a small range (count <= kSweepMax) by an exact sweep:
  // on each axis the primitives sorted by center (then id), every plane
  // between two different centers evaluated with the same cost as
  // sah_split. Reorders the range in place so that the left side comes
  // first. Returns the partition point (and cost and the sides' bounds), or
  // 0 when the centers coincide on every axis.
  template <bool kBlocks>
  std::uint32_t sweep_split(const Task& task, const Aabb& bounds,
                            const Aabb& centroid_bounds, float& best_cost,
                            Bounds4& left, Bounds4& right) {
    const std::uint32_t count = task.end - task.begin;
    PrimRef* p = buffer(task.buffer) + task.begin;
    const float inv_area = 1.0f / std::max(bounds.half_area(), 1e-30f);
    if (count == 2) return pair_split(task, p, centroid_bounds, inv_area, best_cost, left, right);
    // Centers by axis and ids, padded to kSweepMax with keys that sort
    // after every primitive's.
    alignas(16) float center[3][kSweepMax];
    alignas(16) std::int32_t ids[kSweepMax];
    for (std::uint32_t i = 0; i < kSweepMax; ++i) {
      float c[4] = {kInfinity, kInfinity, kInfinity, kInfinity};
      if (i < count) p[i].center().store(c);
      for (int axis = 0; axis < 3; ++axis) center[axis][i] = c[axis];
      ids[i] = i < count ? static_cast<std::int32_t>(p[i].id) : INT32_MAX;
    }
    std::uint8_t order[3][kSweepMax];
    float right_area[kSweepMax];
    best_cost = kInfinity;
    int best_axis = -1;
    std::uint32_t best_k = 0;
    for (int axis = 0; axis < 3; ++axis) {
      if (!(centroid_bounds.max[axis] > centroid_bounds.min[axis])) continue;
      std::uint8_t* o = order[axis];
      const float* cs = center[axis];
      // Sorted by (center, id), with no branch on the data: each
      // primitive's place is the number of keys below its own. A NaN
      // center (an empty box, or one reaching infinity) is below no key and
      // no key is below it, so ranks would repeat: such a range is sorted
      // by insertion, as before ranks, into some order of all its
      // primitives.
      bool nan = false;
      for (std::uint32_t i = 0; i < count; ++i) nan = nan || cs[i] != cs[i];
      if (nan) {
        insertion_order(cs, p, count, o);
      } else {
        for (std::uint32_t i = 0; i < count; ++i) o[keys_below(cs, ids, i)] = static_cast<std::uint8_t>(i);
      }
      // right_area[k]: the box of o[k..count). Boxes only: the centroid
      // bounds are needed for the chosen split alone.
      V4 lo = V4::splat(kInfinity), hi = V4::splat(-kInfinity);
      for (std::uint32_t k = count - 1; k > 0; --k) {
        lo = min(lo, p[o[k]].lo4());
        hi = max(hi, p[o[k]].hi4());
        right_area[k] = half_area(lo, hi);
      }
      lo = V4::splat(kInfinity);
      hi = V4::splat(-kInfinity);
      float axis_cost = kInfinity;
      std::uint32_t axis_k = 0;
      for (std::uint32_t k = 1; k < count; ++k) {
        lo = min(lo, p[o[k - 1]].lo4());
        hi = max(hi, p[o[k - 1]].hi4());
        const float cost =
            config_.traversal_cost +
            config_.intersection_cost * inv_area *
                (half_area(lo, hi) * blocks<kBlocks>(k) +
                 right_area[k] * blocks<kBlocks>(count - k));
        // Only planes between different centers, as bins can place; the
        // choice in integer masks, not branches (which plane wins is as
        // good as random, and a compiler turns conditional choices back
        // into branches).
        const bool take = (cs[o[k - 1]] < cs[o[k]]) & (cost < axis_cost);
        const std::uint32_t mask = 0u - static_cast<std::uint32_t>(take);
        axis_cost = std::bit_cast<float>((std::bit_cast<std::uint32_t>(cost) & mask) |
                                         (std::bit_cast<std::uint32_t>(axis_cost) & ~mask));
        axis_k = (k & mask) | (axis_k & ~mask);
      }
      if (axis_cost < best_cost) {
        best_cost = axis_cost;
        best_axis = axis;
        best_k = axis_k;
      }
    }
    if (best_axis < 0) return 0;
    PrimRef sorted[kSweepMax];
    left = right = Bounds4{};
    for (std::uint32_t k = 0; k < count; ++k) {
      sorted[k] = p[order[best_axis][k]];
      (k < best_k ? left : right).add(sorted[k]);
    }
    std::copy(sorted, sorted + count, p);
    return task.begin + best_k;
  }

  // sweep_split of two primitives (its most common range), in closed form:
  // on every axis where their centers differ the one plane between them
  // costs the same (the two boxes' areas, summed in either order), so the
  // first such axis wins, the lower center going left.
  std::uint32_t pair_split(const Task& task, PrimRef* p, const Aabb& centroid_bounds,
                           float inv_area, float& best_cost, Bounds4& left, Bounds4& right) {
    int axis = 0;
    while (axis < 3 && !(centroid_bounds.max[axis] > centroid_bounds.min[axis])) ++axis;
    best_cost = kInfinity;
    if (axis == 3) return 0;
    // The cost (the same in either order). Not below infinity (NaN, from a
    // box reaching infinity): no split, as the sweep would find none.
    const float cost = config_.traversal_cost +
                       config_.intersection_cost * inv_area *
                           (half_area(p[0].lo4(), p[0].hi4()) * 1.0f +
                            half_area(p[1].lo4(), p[1].hi4()) * 1.0f);
    if (!(cost < kInfinity)) return 0;
    best_cost = cost;
    float c0[4], c1[4];
    p[0].center().store(c0);
    p[1].center().store(c1);
    if (c1[axis] < c0[axis]) std::swap(p[0], p[1]);
    left = right = Bounds4{};
    left.add(p[0]);
    right.add(p[1]);
    return task.begin + 1;
  }

  // Splits at the median primitive along the widest centroid axis (by id
  // when centers coincide), in place. Always leaves two non-empty halves.
  std::uint32_t median_split(const Task& task, const Aabb& centroid_bounds) {
    const glm::vec3 extent = centroid_bounds.max - centroid_bounds.min;
    int axis = 0;
    if (extent.y > extent[axis]) axis = 1;
    if (extent.z > extent[axis]) axis = 2;
    const std::uint32_t mid = task.begin + (task.end - task.begin) / 2;
    PrimRef* p = buffer(task.buffer);
    std::nth_element(p + task.begin, p + mid, p + task.end,
                     [&](const PrimRef& a, const PrimRef& b) {
                       const float ca = a.center(axis), cb = b.center(axis);
                       return ca != cb ? ca < cb : a.id < b.id;
                     });
    return mid;
  }

  std::span<const Aabb> boxes_;
  BvhConfig config_;
  int block_shift_;  // log2 of the leaf block
  std::unique_ptr<PrimRef[]> refs_, spare_;
  BvhNode* nodes_ = nullptr;
  std::uint32_t* prim_ids_ = nullptr;
  std::atomic<std::uint32_t> next_{0};
};

}  // namespace

Bvh build_bvh(std::span<const Aabb> boxes, const BvhConfig& config) {
  RAYPICK_ASSERT(config.max_leaf_size >= 1, "max_leaf_size must be >= 1");
  return Builder(boxes, config).run();
}

}  // namespace raypick
