// The builder's split choice on small ranges (build.cpp's exact sweep),
// against hand-computed splits and a brute force over every plane.
#include "test_util.h"

#include "binary_bvh.h"

#include <algorithm>
#include <random>

using namespace raypick;

namespace {

std::vector<glm::vec3> centers_of(const std::vector<Aabb>& boxes) {
  std::vector<glm::vec3> c;
  for (const Aabb& b : boxes) c.push_back(b.center());
  return c;
}

// Primitives under a node.
std::uint32_t prims_under(const Bvh& bvh, std::uint32_t node) {
  const BvhNode& n = bvh.nodes[node];
  if (n.is_leaf()) return n.count;
  return prims_under(bvh, n.index) + prims_under(bvh, n.index + 1);
}

Aabb box_of(const std::vector<Aabb>& boxes, const std::vector<std::uint32_t>& ids) {
  Aabb b;
  for (std::uint32_t i : ids) b.extend(boxes[i]);
  return b;
}

}  // namespace

TEST_CASE("a small range is split between the two nearer boxes and the far one") {
  // Along x: [0, 1], [1.5, 2.5] and [10, 11]. Splitting off the far box
  // costs 1 + (2.5 * 2 + 1 * 1) / 11 in x-lengths (unit y and z); the
  // other plane, 1 + (1 + 9.5 * 2) / 11, is dearer.
  const std::vector<Aabb> boxes = {Aabb{{0, 0, 0}, {1, 1, 1}},
                                   Aabb{{1.5f, 0, 0}, {2.5f, 1, 1}},
                                   Aabb{{10, 0, 0}, {11, 1, 1}}};
  BvhConfig config;
  config.max_leaf_size = 1;
  const Bvh bvh = build_bvh(boxes, config);
  REQUIRE_FALSE(bvh.nodes[0].is_leaf());
  const BvhNode& a = bvh.nodes[bvh.nodes[0].index];
  const BvhNode& b = bvh.nodes[bvh.nodes[0].index + 1];
  const BvhNode& pair = a.is_leaf() ? b : a;
  const BvhNode& single = a.is_leaf() ? a : b;
  REQUIRE(single.is_leaf());
  CHECK(single.count == 1);
  CHECK(bvh.prim_ids[single.index] == 2);
  CHECK(pair.bounds.min.x == 0.0f);
  CHECK(pair.bounds.max.x == 2.5f);
}

TEST_CASE("the root of a small random set is split where the exact SAH cost is lowest") {
  // Brute force: every plane between two different centers on each axis,
  // costed as the builder does (traversal 1, intersection 1, areas relative
  // to the root's). The builder's root split must cost the minimum.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int round = 0; round < 200; ++round) {
    const std::size_t n = 2 + round % 7;  // 2..8 primitives: the sweep's ranges
    std::vector<Aabb> boxes(n);
    for (Aabb& b : boxes) {
      const glm::vec3 c{u(rng) * 10.0f, u(rng) * 10.0f, u(rng) * 10.0f};
      const glm::vec3 e{0.1f + u(rng), 0.1f + u(rng), 0.1f + u(rng)};
      b = Aabb{c - e, c + e};
    }
    const std::vector<glm::vec3> centers = centers_of(boxes);
    BvhConfig config;
    config.max_leaf_size = 1;  // the root is always split
    const Bvh bvh = build_bvh(boxes, config);
    REQUIRE_FALSE(bvh.nodes[0].is_leaf());
    const float root_area = bvh.nodes[0].bounds.half_area();
    auto cost = [&](const Aabb& l, std::size_t nl, const Aabb& r, std::size_t nr) {
      return 1.0 + (double(l.half_area()) * double(nl) + double(r.half_area()) * double(nr)) /
                       double(root_area);
    };
    const BvhNode& l = bvh.nodes[bvh.nodes[0].index];
    const BvhNode& r = bvh.nodes[bvh.nodes[0].index + 1];
    const double built = cost(l.bounds, prims_under(bvh, bvh.nodes[0].index), r.bounds,
                              prims_under(bvh, bvh.nodes[0].index + 1));
    double best = 1e30;
    for (int axis = 0; axis < 3; ++axis) {
      std::vector<std::uint32_t> order(n);
      for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return centers[a][axis] < centers[b][axis];
      });
      for (std::size_t k = 1; k < n; ++k) {
        if (!(centers[order[k - 1]][axis] < centers[order[k]][axis])) continue;
        const std::vector<std::uint32_t> left(order.begin(), order.begin() + long(k));
        const std::vector<std::uint32_t> right(order.begin() + long(k), order.end());
        best = std::min(best, cost(box_of(boxes, left), k, box_of(boxes, right), n - k));
      }
    }
    CAPTURE(round);
    CHECK(built == doctest::Approx(best).epsilon(1e-5));
  }
}
