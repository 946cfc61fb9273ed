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

// The primitives under a node, by id.
void ids_under(const Bvh& bvh, std::uint32_t node, std::vector<std::uint32_t>& out) {
  const BvhNode& n = bvh.nodes[node];
  if (n.is_leaf()) {
    for (std::uint32_t k = 0; k < n.count; ++k) out.push_back(bvh.prim_ids[n.index + k]);
    return;
  }
  ids_under(bvh, n.index, out);
  ids_under(bvh, n.index + 1, out);
}

// The SAH cost of splitting `boxes` into `left` and `right` as the builder
// costs it (traversal 1; intersection 1 per started block of `block`),
// relative to the area of all of them.
double split_cost(const std::vector<Aabb>& boxes, const std::vector<std::uint32_t>& left,
                  const std::vector<std::uint32_t>& right, std::uint32_t block) {
  Aabb all;
  for (const Aabb& b : boxes) all.extend(b);
  auto blocks = [&](std::size_t k) { return double((k + block - 1) / block); };
  return 1.0 + (double(box_of(boxes, left).half_area()) * blocks(left.size()) +
                double(box_of(boxes, right).half_area()) * blocks(right.size())) /
                   double(all.half_area());
}

// The brute force's cheapest split: on each axis, `order[axis]` holding
// the ids sorted by center, every plane between two different centers
// that has a multiple of `step` centers on its left.
double cheapest_split(const std::vector<Aabb>& boxes, const std::vector<std::uint32_t> (&order)[3],
                      std::uint32_t block, std::size_t step = 1) {
  const std::vector<glm::vec3> centers = centers_of(boxes);
  double best = 1e30;
  for (int axis = 0; axis < 3; ++axis) {
    const std::vector<std::uint32_t>& o = order[axis];
    for (std::size_t k = step; k < o.size(); k += step) {
      if (!(centers[o[k - 1]][axis] < centers[o[k]][axis])) continue;
      const std::vector<std::uint32_t> left(o.begin(), o.begin() + long(k));
      const std::vector<std::uint32_t> right(o.begin() + long(k), o.end());
      best = std::min(best, split_cost(boxes, left, right, block));
    }
  }
  return best;
}

// The cost of the root split the builder makes (max_leaf_size 1: the root
// is always split).
double built_root_cost(const std::vector<Aabb>& boxes, std::uint32_t block) {
  BvhConfig config;
  config.max_leaf_size = 1;
  config.leaf_block = block;
  const Bvh bvh = build_bvh(boxes, config);
  REQUIRE_FALSE(bvh.nodes[0].is_leaf());
  std::vector<std::uint32_t> left, right;
  ids_under(bvh, bvh.nodes[0].index, left);
  ids_under(bvh, bvh.nodes[0].index + 1, right);
  return split_cost(boxes, left, right, block);
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
  // costed as the builder does (traversal 1, intersection 1 per started
  // block of leaf_block primitives, areas relative to the root's). The
  // builder's root split must cost the minimum.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int round = 0; round < 600; ++round) {
    const std::size_t n = 2 + round % 7;  // 2..8 primitives: the sweep's ranges
    const std::uint32_t block = 1u << (round / 7 % 3);  // 1, 2, 4
    std::vector<Aabb> boxes(n);
    for (Aabb& b : boxes) {
      const glm::vec3 c{u(rng) * 10.0f, u(rng) * 10.0f, u(rng) * 10.0f};
      const glm::vec3 e{0.1f + u(rng), 0.1f + u(rng), 0.1f + u(rng)};
      b = Aabb{c - e, c + e};
    }
    const std::vector<glm::vec3> centers = centers_of(boxes);
    std::vector<std::uint32_t> order[3];
    for (int axis = 0; axis < 3; ++axis) {
      order[axis].resize(n);
      for (std::uint32_t i = 0; i < n; ++i) order[axis][i] = i;
      std::sort(order[axis].begin(), order[axis].end(), [&](std::uint32_t a, std::uint32_t b) {
        return centers[a][axis] < centers[b][axis];
      });
    }
    const double built = built_root_cost(boxes, block);
    const double best = cheapest_split(boxes, order, block);
    CAPTURE(round);
    CAPTURE(block);
    CHECK(built == doctest::Approx(best).epsilon(1e-5));
  }
}

TEST_CASE("a binned root split costs the SAH minimum over its bins' planes") {
  // 2P primitives (more than the sweep's 8: binned, into min(16, 2P / 2)
  // = P bins) whose centers lie on each axis in P pairs: for a
  // permutation's rank r, at (2 floor(r / 2) + 0.25 (r % 2)) w, so that bin
  // j holds exactly pair j (P bins over [0, (2P - 1.75) w]: 2j w and
  // (2j + 0.25) w fall in [j, j + 1) bin widths, the last pair's second
  // clamped into bin P - 1) and the bins' planes are the planes after an
  // even number of centers. The builder's root split must cost the brute
  // force's minimum over those planes, with 5, 10 and 16 bins, the leaves
  // costed per block of 1, 2 and 4.
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<float> u(0.05f, 0.9f);
  for (int round = 0; round < 270; ++round) {
    const std::uint32_t block = 1u << (round % 3);
    const std::size_t n = std::size_t{2} * (round / 3 % 3 == 0 ? 5 : round / 3 % 3 == 1 ? 10 : 16);
    CAPTURE(n);
    std::vector<std::uint32_t> perm[3];
    for (auto& p : perm) {
      p.resize(n);
      for (std::uint32_t k = 0; k < n; ++k) p[k] = k;
      std::shuffle(p.begin(), p.end(), rng);
    }
    std::vector<Aabb> boxes(n);
    for (std::size_t i = 0; i < n; ++i) {
      glm::vec3 c, e;
      for (int a = 0; a < 3; ++a) {
        const std::uint32_t r = perm[a][i];
        c[a] = (float(2 * (r / 2)) + 0.25f * float(r % 2)) * 2.0f;
        e[a] = u(rng);
      }
      boxes[i] = Aabb{c - e, c + e};
    }
    // Sorted by center on each axis: by the permutation's rank.
    std::vector<std::uint32_t> order[3];
    for (int axis = 0; axis < 3; ++axis) {
      order[axis].resize(n);
      for (std::uint32_t i = 0; i < n; ++i) order[axis][perm[axis][i]] = i;
    }
    const double built = built_root_cost(boxes, block);
    const double best = cheapest_split(boxes, order, block, 2);
    CAPTURE(round);
    CAPTURE(block);
    CHECK(built == doctest::Approx(best).epsilon(1e-5));
  }
}

TEST_CASE("leaves are costed per block: four far-apart boxes stay one leaf of four") {
  // Along x: four unit boxes 10 apart (root 31 x 1 x 1, half area
  // 31 + 1 + 31 = 63). With leaf_block 1 a leaf of four costs 4, and the
  // middle split costs 1 + (23 * 2 + 23 * 2) / 63 = 2.46: a split. With
  // leaf_block 4 the leaf costs 1, and no split costs less than the node's
  // visit (1): one leaf. leaf_block is rounded up to a power of two and
  // clamped to 1..16: 3 acts as 4, 0 as 1, 1000 as 16.
  std::vector<Aabb> boxes;
  for (int i = 0; i < 4; ++i) {
    boxes.push_back(Aabb{{10.0f * i, 0, 0}, {10.0f * i + 1, 1, 1}});
  }
  BvhConfig config;  // max_leaf_size 4
  CHECK_FALSE(build_bvh(boxes, config).nodes[0].is_leaf());
  config.leaf_block = 0;
  CHECK_FALSE(build_bvh(boxes, config).nodes[0].is_leaf());
  for (const std::uint32_t block : {3u, 4u, 1000u}) {
    CAPTURE(block);
    config.leaf_block = block;
    const Bvh bvh = build_bvh(boxes, config);
    REQUIRE(bvh.nodes[0].is_leaf());
    CHECK(bvh.nodes[0].count == 4);
    CHECK(bvh.nodes.size() == 1);
  }
  // Eight such boxes with leaves of up to eight: a block of 16 takes all
  // eight in one leaf, a block of 4 (3 rounded up) two leaves of four.
  for (int i = 4; i < 8; ++i) boxes.push_back(Aabb{{10.0f * i, 0, 0}, {10.0f * i + 1, 1, 1}});
  config.max_leaf_size = 8;
  config.leaf_block = 1000;
  CHECK(build_bvh(boxes, config).nodes.size() == 1);
  config.leaf_block = 3;
  const Bvh two = build_bvh(boxes, config);
  REQUIRE(two.nodes.size() == 3);
  CHECK(two.nodes[1].count == 4);
  CHECK(two.nodes[2].count == 4);
}

TEST_CASE("with leaf_block 4, no inner node holds four primitives or fewer") {
  // 2,000 random boxes. Every range of at most max_leaf_size (4)
  // primitives costs one block as a leaf, no more than any split: it must
  // be a leaf. With leaf_block 1 many such ranges are split (the same
  // boxes).
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(0.0f, 100.0f);
  std::vector<Aabb> boxes(2000);
  for (Aabb& b : boxes) {
    const glm::vec3 c{u(rng), u(rng), u(rng)};
    b = Aabb{c, c + glm::vec3{1.0f}};
  }
  auto small_inner = [](const Bvh& bvh) {
    std::size_t k = 0;
    for (std::uint32_t i = 0; i < bvh.nodes.size(); ++i) {
      if (!bvh.nodes[i].is_leaf() && prims_under(bvh, i) <= 4) ++k;
    }
    return k;
  };
  BvhConfig config;
  CHECK(small_inner(build_bvh(boxes, config)) > 100);
  config.leaf_block = 4;
  const Bvh bvh = build_bvh(boxes, config);
  CHECK(small_inner(bvh) == 0);
  CHECK(prims_under(bvh, 0) == 2000);
}
