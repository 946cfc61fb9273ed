// Compiled with -mavx2 (apps/CMakeLists.txt): the AVX2 policy's query.
#include "floor_qbvh.h"

namespace raypick::floorq {

float leaf_avx2(const QBvh& tree, std::uint32_t first, std::uint32_t count, const Ray& ray,
                float tmax);

Hit intersect_avx2(const QBvh& tree, const Ray& ray, TraversalStats* stats) {
  return intersect_obb<IsaAvx2>(tree, ray, stats);
}

Hit intersect_folded(const QBvh& tree, const Ray& ray, TraversalStats* stats) {
  return intersect_obb<IsaAvx2Folded>(tree, ray, stats);
}

TraversalStats walk_folded(const QBvh& tree, const Ray& ray) {
  return traverse<IsaAvx2Folded>(tree, ray,
                                 [](std::uint32_t, std::uint32_t, float&) { return false; });
}

TraversalStats walk_avx2(const QBvh& tree, const Ray& ray) {
  return traverse<IsaAvx2>(tree, ray, [](std::uint32_t, std::uint32_t, float&) { return false; });
}

TraversalStats walk_leaves_avx2(const QBvh& tree, const Ray& ray) {
  return traverse<IsaAvx2>(tree, ray, [&](std::uint32_t first, std::uint32_t count, float& tmax) {
    asm volatile("" : : "x"(leaf_avx2(tree, first, count, ray, tmax)));
    return false;
  });
}

float leaf_avx2(const QBvh& tree, std::uint32_t first, std::uint32_t count, const Ray& ray,
                float tmax) {
  float best = kInfinity;
  const std::uint32_t end = first + count;
  for (std::uint32_t b = first / 8; b * 8 < end; ++b) {
    const std::uint32_t lo = std::max(first, b * 8) - b * 8;
    const std::uint32_t hi = std::min(end, b * 8 + 8) - b * 8;
    const unsigned lanes = ((1u << hi) - 1u) & ~((1u << lo) - 1u);
    std::uint32_t object = kInvalidId;
    best = std::min(best, IsaAvx2::test_obbs(tree.blocks[b], lanes, ray, tmax, object));
  }
  return best;
}

}  // namespace raypick::floorq
