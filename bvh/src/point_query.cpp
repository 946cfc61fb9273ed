// Point queries: the object nearest to a point (Picker::closest_point).
#include "compiler.h"
#include "picker_impl.h"
#include "point_keys.h"
#include "triangle_points.h"

#include "raypick/core/assert.h"
#include "raypick/core/closest_point.h"

#include <glm/geometric.hpp>
#include <glm/mat3x3.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <queue>
#include <span>
#include <type_traits>
#include <vector>

namespace raypick {
namespace {

using point_keys::float_down;
using point_keys::float_up;
using point_keys::RoundedPoint;
using point_keys::slot_keys;

// Squared distance from p to the box, 0 inside or on it; +inf for an empty
// box. In double from the float box, so a lower bound of the distance to
// anything the box contains.
double box_distance2(const Aabb& b, const glm::dvec3& p) {
  if (b.empty()) return std::numeric_limits<double>::infinity();
  double d2 = 0.0;
  for (int a = 0; a < 3; ++a) {
    const double d = std::max({double(b.min[a]) - p[a], 0.0, p[a] - double(b.max[a])});
    d2 += d * d;
  }
  return d2;
}

// An object's matrix in double (exact from its float entries).
struct Placement {
  glm::dmat3 linear;
  glm::dvec3 origin;

  // m's translation plus its low part (Object::translation_low).
  explicit Placement(const glm::dmat4x3& m) : linear(m[0], m[1], m[2]), origin(m[3]) {}
  glm::dvec3 apply(const glm::vec3& v) const { return linear * glm::dvec3(v) + origin; }
  // The world box of the local box (not empty), by the abs-matrix method
  // in double: centre wc, half extents we, widened by a relative 2^-40 so
  // that the rounding of the sums (a few double ulps) never leaves a
  // corner outside: [lo, hi] contains the placed box.
  struct Bounds {
    glm::dvec3 wc, we, lo, hi;
  };
  Bounds world_bounds(const Aabb& local) const {
    const glm::dvec3 c = (glm::dvec3(local.min) + glm::dvec3(local.max)) * 0.5;
    const glm::dvec3 e = (glm::dvec3(local.max) - glm::dvec3(local.min)) * 0.5;
    Bounds b{linear * c + origin, glm::dvec3(0.0), {}, {}};
    for (int col = 0; col < 3; ++col) {
      for (int r = 0; r < 3; ++r) b.we[r] += std::abs(linear[col][r]) * e[col];
    }
    const glm::dvec3 slack = (glm::abs(b.wc) + b.we) * 0x1p-40;
    b.lo = b.wc - b.we - slack;
    b.hi = b.wc + b.we + slack;
    return b;
  }
  // world_bounds() rounded outward to float: it contains the placed box,
  // so its distance bounds the distance to the triangles.
  Aabb world_box(const Aabb& local) const {
    if (local.empty()) return local;
    const Bounds b = world_bounds(local);
    // Rounded to float (outward past the float range's ends), then a step
    // outward where the rounding went inward.
    constexpr float kMax = std::numeric_limits<float>::max();
    Aabb out;
    for (int a = 0; a < 3; ++a) {
      out.min[a] = b.lo[a] > double(kMax) ? kMax : point_keys::nearest_float(b.lo[a]);
      out.max[a] = b.hi[a] < -double(kMax) ? -kMax : point_keys::nearest_float(b.hi[a]);
      if (double(out.min[a]) > b.wc[a] - b.we[a]) out.min[a] = std::nextafter(out.min[a], -INFINITY);
      if (double(out.max[a]) < b.wc[a] + b.we[a]) out.max[a] = std::nextafter(out.max[a], INFINITY);
    }
    return out;
  }
};

// The best answer so far, in the contract's order: distance, then object
// id, then triangle id.
struct Best {
  double d2;
  PointHit hit;

  bool better(double candidate_d2, std::uint32_t object, std::uint32_t triangle) const {
    if (candidate_d2 != d2) return candidate_d2 < d2;
    if (object != hit.object) return object < hit.object;
    return triangle < hit.triangle;
  }
  void take(double candidate_d2, std::uint32_t object, const TrianglePoint& t,
            std::uint32_t triangle) {
    d2 = candidate_d2;
    hit.object = object;
    hit.triangle = triangle;
    hit.point = t.point;
    hit.u = t.u;
    hit.v = t.v;
  }
};

// The first of the 12 lanes of `faces` whose squared distance is the least
// (NaN lanes never), or -1 when every lane is NaN. Without a branch on the
// distances: a minimum, then the lanes equal to it.
int first_nearest(const triangle_points::Nearest4 (&faces)[3]) {
  double least = std::numeric_limits<double>::infinity();
  for (const auto& near : faces) {
    for (const double d2 : near.d2) least = d2 < least ? d2 : least;  // NaN: false
  }
  unsigned equal = 0;
  for (int g = 0; g < 3; ++g) {
    for (int l = 0; l < 4; ++l) equal |= unsigned(faces[g].d2[l] == least) << (4 * g + l);
  }
  return equal != 0 ? std::countr_zero(equal) : -1;
}

// How far a distance measured on triangles within `box` may round below
// the exact one: 2^-36 of the size of the coordinates involved (p's and the
// box's), far above their double rounding. A box exactly as far as its
// object (a corner on its face) must not be skipped against a best
// distance that rounded a hair below, or a tie at that distance is lost.
double rounding_margin(const glm::dvec3& lo, const glm::dvec3& hi, const glm::dvec3& p) {
  double size = 0.0;
  for (int a = 0; a < 3; ++a) {
    size = std::max({size, std::abs(p[a]), std::abs(lo[a]), std::abs(hi[a])});
  }
  return size * 0x1p-36;
}
double rounding_margin(const Aabb& box, const glm::dvec3& p) {
  return rounding_margin(glm::dvec3(box.min), glm::dvec3(box.max), p);
}

// Whether everything in the box `local` placed by `place` lies farther
// from p than sqrt(best_d2), by more than the rounding margin, measured on
// its double world bounds: inside world_box() and as much a lower bound,
// with no rounding to float.
bool beyond_best(const Placement& place, const Aabb& local, const glm::dvec3& p, double best_d2) {
  if (local.empty()) return true;
  const Placement::Bounds b = place.world_bounds(local);
  double d2 = 0.0;
  for (int a = 0; a < 3; ++a) {
    const double d = std::max({b.lo[a] - p[a], 0.0, p[a] - b.hi[a]});
    d2 += d * d;
  }
  return std::sqrt(d2) > std::sqrt(best_d2) + rounding_margin(b.lo, b.hi, p);
}

// Whether the point queries measure p (kMaxPointCoordinate; NaN is not).
bool measurable(const glm::dvec3& p) {
  for (int a = 0; a < 3; ++a) {
    if (!(std::abs(p[a]) <= kMaxPointCoordinate)) return false;
  }
  return true;
}

// Whether p lies inside or on the box `local` placed by `place`: its local
// coordinates, solved in double by the 3x3 inverse, within the box (a box
// of zero extent on an axis holds the points of its plane only up to the
// rounding of the solve; the faces' triangles measure those anyway).
bool inside(const Placement& place, const Aabb& local, const glm::dvec3& p) {
  const double det = glm::determinant(place.linear);
  if (!(std::abs(det) > 0.0) || !std::isfinite(det)) return false;
  const glm::dvec3 x = glm::inverse(place.linear) * (p - place.origin);
  for (int a = 0; a < 3; ++a) {
    if (!(x[a] >= double(local.min[a]) && x[a] <= double(local.max[a]))) return false;
  }
  return true;
}

// The walk (best_first, below) orders and prunes slots by float keys
// (point_keys.h) through a `Bound`: keys(node, out) fills a node's keys,
// threshold(d2) turns the best squared distance so far into the largest
// key a slot that could still hold a nearer or equally near point can
// have. kSorted: whether a node's kept slots wait sorted by key.

// The world metric: p's distance to the world slot boxes of the top level
// (padded, so they hold their objects).
struct WorldBound {
  static constexpr bool kSorted = false;
  RoundedPoint point;

  explicit WorldBound(const glm::dvec3& p) : point(p) {}
  template <int W>
  void keys(const WideNodeOf<W>& node, float* out) const { slot_keys(node, point.pf, out); }
  float threshold(double best_d2) const {
    return best_d2 < 0.0 ? -std::numeric_limits<float>::infinity()
                         : point.threshold(std::sqrt(best_d2));
  }
};

// A mesh tree's local slot boxes, each carried to a world box by `place`
// (Placement::world_box): exact double world distances, the key each one
// rounded down to float and the threshold the best distance widened by the
// rounding margin of the mesh's world box (as beyond_best), rounded up.
struct PlacedBound {
  static constexpr bool kSorted = true;
  const Placement& place;
  glm::dvec3 p;
  double margin;  // rounding_margin of the mesh's world box

  template <int W>
  void keys(const WideNodeOf<W>& node, float* out) const {
    for (int s = 0; s < W; ++s) {
      if (node.child[s] == WideNodeOf<W>::kInvalidSlot) {
        out[s] = std::numeric_limits<float>::infinity();
        continue;
      }
      const double d2 = box_distance2(place.world_box(node.slot_box(s)), p);
      out[s] = std::isnan(d2) ? 0.0f : float_down(d2);  // NaN: kept, measured exactly
    }
  }
  float threshold(double best_d2) const {
    if (best_d2 < 0.0) return -std::numeric_limits<float>::infinity();
    const double r = std::sqrt(best_d2) + margin;
    return float_up(r * r);
  }
  // Triangles e .. e + 3 of a leaf: all kept. A key here would place each
  // triangle's box in the world in double, about half of what measuring
  // the triangle costs, to prune about half of them: no gain.
  unsigned triangles_within(const point_keys::TriangleBoxes&, std::size_t, float) const {
    return 0xFu;
  }
};

// Lower bounds of the world distance measured in the mesh's own frame, far
// cheaper than carrying each box to the world: with world = L x + o and q
// the local point of p, |L x + o - p| = |L (x - q)| >= sigma |x - q|, sigma
// at most the smallest singular value of L: the square root of a lower
// bound of the smallest eigenvalue of G = L^T L: Gershgorin's disc bound
// where it is within 2^-10 of G's smallest diagonal entry (below), else the
// closed form. The closed form for a
// symmetric 3x3 rounds badly where two eigenvalues nearly meet (up to
// about 1.5e-8 of the spread), so its value is lowered by 2^-20 and
// checked (G minus it positive definite by its leading minors), or where
// that fails lowered by 1% (at condition 100 or less the error is below
// 1.5e-4 of it) and checked again, else the boxes are placed in the world
// instead (PlacedBound). (The bound prunes by it: 1% looser halves the
// speed of points near surfaces.) q is known up to `q_slack` (the
// inverse's and the product's rounding, bounded with a wide margin), and
// each placed vertex up to `world_slack` (its double rounding), so a slot
// at local distance dl lies at least
//   sigma (dl - q_slack) - world_slack
// from p in the world. The threshold inverts that for the best distance
// (widened by a relative 2^-30 for the rounding of the candidates' own
// distances) and hands the local radius to RoundedPoint. Not `usable` for
// a matrix that is singular or whose condition exceeds 100, or when the
// check fails.
struct LocalBound {
  static constexpr bool kSorted = true;
  RoundedPoint point{glm::dvec3(0.0)};
  double sigma = 0.0;
  double q_slack = 0.0;
  double world_slack = 0.0;
  bool usable = false;

  // The smallest eigenvalue of the symmetric matrix a (trigonometric form
  // of the characteristic cubic's roots).
  static double smallest_eigenvalue(const glm::dmat3& a) {
    const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
    const double mean = (a[0][0] + a[1][1] + a[2][2]) / 3.0;
    const double d0 = a[0][0] - mean, d1 = a[1][1] - mean, d2 = a[2][2] - mean;
    const double spread2 = d0 * d0 + d1 * d1 + d2 * d2 + 2.0 * off;
    if (!(spread2 > 0.0)) return mean;  // a multiple of the identity
    const double spread = std::sqrt(spread2 / 6.0);
    const glm::dmat3 b = (a - glm::dmat3(mean)) * (1.0 / spread);
    const double r = std::clamp(glm::determinant(b) / 2.0, -1.0, 1.0);
    const double phi = std::acos(r) / 3.0;
    return mean + 2.0 * spread * std::cos(phi + 2.0943951023931957);  // + 2 pi / 3
  }

  LocalBound(const Placement& place, const Aabb& mesh_box, const glm::dvec3& p) {
    const double det = glm::determinant(place.linear);
    if (!(std::abs(det) > 0.0) || !std::isfinite(det) || mesh_box.empty()) return;
    const glm::dmat3 gram = glm::transpose(place.linear) * place.linear;
    const double trace = gram[0][0] + gram[1][1] + gram[2][2];
    // A value below G's smallest eigenvalue: G - (value + 2^-40 trace) I
    // positive definite by its leading minors, the 2^-40 of the trace far
    // above the rounding of G and of the minors, so that a check passed by
    // rounding alone still leaves G - value I positive definite.
    const auto below = [&](double value) {
      const glm::dmat3 m = gram - glm::dmat3(value + trace * 0x1p-40);
      const double minor2 = m[0][0] * m[1][1] - m[0][1] * m[1][0];
      return value > 0.0 && m[0][0] > 0.0 && minor2 > 0.0 && glm::determinant(m) > 0.0;
    };
    // First Gershgorin's disc bound, which for a rotation and a uniform
    // scale (G nearly a multiple of I, the common case) or an axis-aligned
    // scale is within a hair of the smallest eigenvalue and costs no
    // trigonometry; where the off-diagonal entries loosen it by more than
    // 2^-10, the closed form. Lowered by 2^-39 of the trace, far more than
    // the rounding of G's entries and of the sums, it is a lower bound as
    // it stands; the check below confirms it (an exact bound would fail it
    // without the lowering).
    double smallest = std::numeric_limits<double>::infinity(), diagonal = smallest;
    for (int i = 0; i < 3; ++i) {
      const double off = std::abs(gram[(i + 1) % 3][i]) + std::abs(gram[(i + 2) % 3][i]);
      smallest = std::min(smallest, gram[i][i] - off);
      diagonal = std::min(diagonal, gram[i][i]);
    }
    smallest -= trace * 0x1p-39;
    if (!(smallest >= diagonal * (1.0 - 0x1p-10)) || !below(smallest)) {
      const double estimate = smallest_eigenvalue(gram);
      smallest = estimate * (1.0 - 0x1p-20);  // the closed form is usually this close
      if (!below(smallest)) {
        smallest = estimate * 0.99;  // two nearly equal: its worst rounding
        if (!below(smallest)) return;
      }
    }
    // The largest eigenvalue is at most the trace: condition^2 <= 1e4.
    if (!(trace < 1e4 * smallest)) return;
    const glm::dmat3 inv = glm::inverse(place.linear);
    const glm::dvec3 d = p - place.origin;
    const glm::dvec3 q = inv * d;
    point = RoundedPoint(q);
    sigma = std::sqrt(smallest);
    const double q_size = std::max({std::abs(q.x), std::abs(q.y), std::abs(q.z)});
    q_slack = (glm::length(d) / sigma + q_size) * 0x1p-30;
    double v_size = 0.0, o_size = 0.0;
    for (int a = 0; a < 3; ++a) {
      v_size = std::max({v_size, std::abs(double(mesh_box.min[a])), std::abs(double(mesh_box.max[a]))});
      o_size = std::max(o_size, std::abs(place.origin[a]));
    }
    world_slack = (std::sqrt(trace) * v_size + o_size) * 0x1p-44;
    usable = std::isfinite(q_slack) && std::isfinite(world_slack) && std::isfinite(sigma) &&
             std::isfinite(point.e);
  }

  template <int W>
  void keys(const WideNodeOf<W>& node, float* out) const { slot_keys(node, point.pf, out); }
  float threshold(double best_d2) const {
    if (best_d2 < 0.0) return -std::numeric_limits<float>::infinity();
    const double world = std::sqrt(best_d2) * (1.0 + 0x1p-30) + world_slack;
    return point.threshold(world / sigma + q_slack);
  }
  // Triangles e .. e + 3 of a leaf whose own boxes' keys are within
  // `limit` (a threshold()), a bit each: keys() on the triangles' boxes.
  unsigned triangles_within(const point_keys::TriangleBoxes& boxes, std::size_t e,
                            float limit) const {
    return point_keys::triangle_keys_within(boxes, e, point.pf, limit);
  }
};

// A mesh's slot keys for p: in its frame where the matrix allows
// (LocalBound), else each box placed in the world (PlacedBound).
template <class Walk>
void walk_mesh_slots(const Placement& place, const Aabb& mesh_box, const glm::dvec3& p,
                     Walk&& walk) {
  const LocalBound local(place, mesh_box, p);
  if (local.usable) {
    walk(local);
  } else {
    walk(PlacedBound{place, p, rounding_margin(place.world_box(mesh_box), p)});
  }
}

// best_first's default for a leaf slot pushed: nothing fetched ahead.
struct NoLeafFetch {
  void operator()(std::uint32_t, std::uint32_t) const {}
};

// An open item of the walk: a node (count == 0) or a leaf slot's run of
// entries [index, index + count), with its slot's key.
struct Open {
  float key;
  std::uint32_t index;
  std::uint32_t count;
};

// The number of bits set in x (< 2^16), by table: the library's baseline
// target has no popcount instruction.
inline int bit_count(unsigned x) {
  static constexpr auto kTable = [] {
    std::array<std::uint8_t, 256> t{};
    for (int i = 0; i < 256; ++i) t[std::size_t(i)] = std::uint8_t(std::popcount(unsigned(i)));
    return t;
  }();
  return kTable[x & 0xFFu] + kTable[(x >> 8) & 0xFFu];
}

// A bit for each of the W keys above k (equal: equal to k).
template <int W>
unsigned compare_keys(const float* key, float k, bool equal) {
#if RAYPICK_WIDE_SSE
  const __m128 v = _mm_set1_ps(k);
  unsigned out = 0;
  for (int h = 0; h < W; h += 4) {
    const __m128 row = _mm_load_ps(key + h);
    out |= unsigned(_mm_movemask_ps(equal ? _mm_cmpeq_ps(row, v) : _mm_cmpgt_ps(row, v))) << h;
  }
  return out;
#else
  unsigned out = 0;
  for (int s = 0; s < W; ++s) out |= unsigned(equal ? key[s] == k : key[s] > k) << s;
  return out;
#endif
}

// The slot of the smallest key among the slots `within` (not 0), the
// lowest such slot where keys are equal.
template <int W>
int nearest_slot(const float* key, unsigned within) {
#if RAYPICK_WIDE_SSE
  // A lane mask per 4-bit group of `within`.
  alignas(16) static constexpr std::uint32_t kLanes[16][4] = {
      {0, 0, 0, 0}, {~0u, 0, 0, 0}, {0, ~0u, 0, 0}, {~0u, ~0u, 0, 0},
      {0, 0, ~0u, 0}, {~0u, 0, ~0u, 0}, {0, ~0u, ~0u, 0}, {~0u, ~0u, ~0u, 0},
      {0, 0, 0, ~0u}, {~0u, 0, 0, ~0u}, {0, ~0u, 0, ~0u}, {~0u, ~0u, 0, ~0u},
      {0, 0, ~0u, ~0u}, {~0u, 0, ~0u, ~0u}, {0, ~0u, ~0u, ~0u}, {~0u, ~0u, ~0u, ~0u}};
  const __m128 inf = _mm_set1_ps(std::numeric_limits<float>::infinity());
  __m128 least = inf;
  for (int h = 0; h < W; h += 4) {
    const __m128 keep = _mm_load_ps(reinterpret_cast<const float*>(kLanes[(within >> h) & 0xFu]));
    const __m128 row = _mm_load_ps(key + h);
    least = _mm_min_ps(least, _mm_or_ps(_mm_and_ps(keep, row), _mm_andnot_ps(keep, inf)));
  }
  least = _mm_min_ps(least, _mm_shuffle_ps(least, least, _MM_SHUFFLE(1, 0, 3, 2)));
  least = _mm_min_ps(least, _mm_shuffle_ps(least, least, _MM_SHUFFLE(2, 3, 0, 1)));
  return std::countr_zero(compare_keys<W>(key, _mm_cvtss_f32(least), true) & within);
#else
  int nearest = std::countr_zero(within);
  for (within &= within - 1; within != 0; within &= within - 1) {
    const int s = std::countr_zero(within);
    if (key[s] < key[nearest]) nearest = s;
  }
  return nearest;
#endif
}

// The slots of `node` whose keys are at most `threshold`, a bit each.
template <int W>
unsigned slots_within(const WideNodeOf<W>& node, const float* key, float threshold) {
#if RAYPICK_WIDE_SSE
  const __m128 t = _mm_set1_ps(threshold);
  unsigned within = 0;
  for (int h = 0; h < W; h += 4) {
    within |= unsigned(_mm_movemask_ps(_mm_cmple_ps(_mm_loadu_ps(key + h), t))) << h;
  }
  return within & node.used_slots();
#else
  unsigned within = 0;
  for (int s = 0; s < W; ++s) within |= unsigned(key[s] <= threshold) << s;
  return within & node.used_slots();
#endif
}

// Nearest-first over a wide tree, depth first: of a node's kept slots the
// nearest is popped next, the others wait on the stack (sorted by key
// where Bound::kSorted, else in slot order), `bound` giving the keys and
// thresholds; leaf(first, count) for each leaf slot whose key is within
// the threshold of best_d2() (inclusive: equal distances are kept for the
// tie rule): the first leaf as the first descent reaches it, the others
// when they are popped. Depth first reaches a leaf at once, so the best
// distance shrinks before most slots are looked at; a fixed stack and the
// descent's path on the thread's stack (about 5 KB at 16 wide), no
// allocation. With fetch_leaf, every slot pushed has its memory fetched
// ahead while the walk measures what it popped before: a node's lines
// here, fetch_leaf(first, count) a leaf slot's entries (the caller's
// records).
template <class Node, class Bound, class BestD2, class Leaf, class FetchLeaf = NoLeafFetch>
void best_first(std::span<const Node> nodes, const Bound& bound, BestD2&& best_d2, Leaf&& leaf,
                FetchLeaf&& fetch_leaf = {}) {
  if (nodes.empty()) return;
  constexpr int kWidth = Node::kWidth;
  // Each level leaves at most kWidth - 1 siblings behind.
  constexpr std::size_t kStack = std::size_t(wide_detail::kStackSizeOf<kWidth>);
  Open stack[kStack];
  std::size_t top = 0;
  // The threshold, recomputed when the best distance changes.
  double seen = std::numeric_limits<double>::quiet_NaN();
  float threshold = 0.0f;
  const auto current = [&] {
    const double d2 = best_d2();
    if (!(d2 == seen)) {
      seen = d2;
      threshold = bound.threshold(d2);
    }
    return threshold;
  };
  // Starts loading what slot s of `node` leads to, before it is popped:
  // only where the caller fetches its leaves (closest_point's top level).
  // A mesh's tree is not fetched: its instances share it, and fetching
  // there cost about 4M more instructions over 20,000 crowd-300 points.
  const auto fetch_ahead = [&](const Node& node, int s) {
    if constexpr (!std::is_same_v<std::decay_t<FetchLeaf>, NoLeafFetch>) {
      if (node.count[s] == 0) {
        compiler::prefetch_lines(nodes[node.child[s]]);
      } else {
        fetch_leaf(node.child[s], node.count[s]);
      }
    }
  };
  // Pushes a node's slots `within` (their keys in `key`), the nearest on
  // top so that it is popped first.
  const auto push = [&](const Node& node, const float* key, unsigned within) {
    static_assert(kWidth <= wide_detail::kStackSizeOf<kWidth>);
    RAYPICK_ASSERT(top + std::size_t(kWidth) <= kStack, "point query stack overflow");
    if constexpr (Bound::kSorted) {
      // The kept slots sorted by key, farthest first: each slot's place is
      // the number of kept slots farther than it (or as far and before
      // it), by SIMD compares, no branch on the keys.
      const unsigned kept = within;
      const int n = bit_count(kept);
      for (; within != 0; within &= within - 1) {
        const int s = std::countr_zero(within);
        const unsigned farther = compare_keys<kWidth>(key, key[s], false);
        const unsigned same = compare_keys<kWidth>(key, key[s], true) & ((1u << s) - 1u);
        stack[top + std::size_t(bit_count((farther | same) & kept))] =
            Open{key[s], node.child[s], node.count[s]};
        fetch_ahead(node, s);
      }
      top += std::size_t(n);
    } else {
      // In slot order, the nearest swapped to the top; the others wait
      // unsorted (by the time they are popped, the best distance has
      // usually pruned them).
      std::size_t nearest = top;
      float nearest_key = std::numeric_limits<float>::infinity();
      for (; within != 0; within &= within - 1) {
        const int s = std::countr_zero(within);
        if (key[s] < nearest_key) {
          nearest_key = key[s];
          nearest = top;
        }
        stack[top++] = Open{key[s], node.child[s], node.count[s]};
        fetch_ahead(node, s);
      }
      std::swap(stack[nearest], stack[top - 1]);
    }
  };
  // First down the nearest slots to a leaf, whose measure usually gives
  // the rest of the walk a finite best distance (not where masks or a
  // bound on the distance leave it out). The nodes on the way keep their
  // keys; then, from the root down, each pushes its other slots within
  // that distance, so the first leaf's siblings are popped first and no
  // node is visited twice.
  struct Step {
    alignas(16) float key[kWidth];
    std::uint32_t index;
    int taken;  // the slot the descent took
  };
  Step path[kBvhMaxDepth + 1];
  int depth = 0;
  for (std::uint32_t index = 0;;) {
    RAYPICK_ASSERT(depth <= kBvhMaxDepth, "point query path too deep");
    Step& step = path[depth];
    const Node& node = nodes[index];
    bound.keys(node, step.key);
    const unsigned within = slots_within(node, step.key, current());
    if (within == 0) break;
    const int nearest = nearest_slot<kWidth>(step.key, within);
    step.index = index;
    step.taken = nearest;
    ++depth;
    if (node.count[nearest] != 0) {
      leaf(node.child[nearest], node.count[nearest]);
      break;
    }
    index = node.child[nearest];
  }
  for (int d = 0; d < depth; ++d) {
    const Node& node = nodes[path[d].index];
    const unsigned within = slots_within(node, path[d].key, current()) & ~(1u << path[d].taken);
    if (within != 0) push(node, path[d].key, within);
  }
  while (top > 0) {
    const Open item = stack[--top];
    if (item.key > current()) continue;
    if (item.count != 0) {
      leaf(item.index, item.count);
      continue;
    }
    const Node& node = nodes[item.index];
    alignas(16) float key[kWidth];
    bound.keys(node, key);
    const unsigned within = slots_within(node, key, current());
    if (within != 0) push(node, key, within);
  }
}

// How deep p lies in the box `local` placed by `place`, measured in the
// world: the distance to the nearest of its six face planes (for a
// parallelepiped, the distance to its surface from inside). p inside.
double box_depth(const Placement& place, const Aabb& local, const glm::dvec3& p) {
  const glm::dmat3 inv = glm::inverse(place.linear);
  const glm::dvec3 x = inv * (p - place.origin);
  double depth = std::numeric_limits<double>::infinity();
  for (int a = 0; a < 3; ++a) {
    // Local coordinate a grows by |row a of inv| per world unit across
    // the face planes.
    const double rate = glm::length(glm::dvec3(inv[0][a], inv[1][a], inv[2][a]));
    const double gap = std::min(x[a] - double(local.min[a]), double(local.max[a]) - x[a]);
    depth = std::min(depth, std::max(gap, 0.0) / rate);
  }
  return depth;
}

// How near to a surface counts as on it, squared, for an object whose
// world box is `box`: 2^-36 of the box's size plus its distance from the
// origin, far below the float precision of the vertices, so that a point
// the user puts on a face (0.1 rounds) counts, and only such points.
double surface_tolerance2(const Aabb& box) {
  double size = 0.0;
  for (int a = 0; a < 3; ++a) {
    size = std::max({size, std::abs(double(box.min[a])), std::abs(double(box.max[a])),
                     double(box.max[a]) - double(box.min[a])});
  }
  const double tol = size * 0x1p-36;
  return tol * tol;
}

// Whether p lies on one of the triangles of `mesh` placed by `place`: a
// closest point (measured as closest_point measures) within tol2.
template <class MeshAccel>
bool on_surface(const MeshAccel& mesh, const Placement& place, const glm::dvec3& p, double tol2) {
  bool found = false;
  auto test = [&](const glm::vec3& a, const glm::vec3& b, const glm::vec3& c) {
    if (!found) {
      found = closest_point_on_triangle(p, place.apply(a), place.apply(b), place.apply(c))
                  .distance2 <= tol2;
    }
  };
  if (!mesh.bvh_built) {
    for (const glm::uvec3& t : mesh.triangles) {
      test(mesh.positions[t.x], mesh.positions[t.y], mesh.positions[t.z]);
    }
    return found;
  }
  walk_mesh_slots(place, mesh.bounds, p, [&](const auto& bound) {
    mesh.with_bvh([&](const auto& tree) {
      best_first(tree.nodes(), bound, [&] { return found ? -1.0 : tol2; },
                 [&](std::uint32_t first, std::uint32_t count) {
                   for (std::uint32_t e = first; e < first + count; ++e) {
                     test(mesh.verts[e][0], mesh.verts[e][1], mesh.verts[e][2]);
                   }
                 });
    });
  });
  return found;
}

// The generalized winding number of `mesh` placed by `place` at p: its
// triangles' solid angles, in world space, over 4 pi.
template <class MeshAccel>
double winding(const MeshAccel& mesh, const Placement& place, const glm::dvec3& p) {
  double sum = 0.0;
  for (const glm::uvec3& t : mesh.triangles) {
    sum += solid_angle(p, place.apply(mesh.positions[t.x]), place.apply(mesh.positions[t.y]),
                       place.apply(mesh.positions[t.z]));
  }
  return sum / (4.0 * std::numbers::pi);
}

// query(points[i]) for every point, in parallel over blocks of `grain`
// points: the batch form of a point query.
template <class Result, class Query>
std::vector<Result> each_point(std::span<const glm::dvec3> points, std::size_t grain,
                               const Query& query) {
  std::vector<Result> out(points.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, points.size(), grain),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      // A worker thread may carry another library's mode.
                      const compiler::DefaultFpMode fp_mode;
                      for (std::size_t i = r.begin(); i != r.end(); ++i) out[i] = query(points[i]);
                    });
  return out;
}

// Calls entries(first, count) for each top-level leaf slot of `core` whose
// padded world box holds p, and for any other within the rounding of p to
// float (the callers test each entry exactly; its own box may not hold p).
template <class Entries>
void slots_holding(const PickerCore& core, const glm::dvec3& p, Entries&& entries) {
  core.with_top([&](const auto& top) {
    best_first(top.nodes(), WorldBound(p), [] { return 0.0; }, entries);
  });
}

}  // namespace

std::uint32_t PickerCore::containing_object(const glm::dvec3& p,
                                              const QueryOptions& options) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(), "commit() the picker before querying it");
  if (!measurable(p)) return kInvalidId;
  std::uint32_t found = kInvalidId;
  // Every entry whose padded world box holds p (distance 0).
  slots_holding(*this, p, [&](std::uint32_t first, std::uint32_t count) {
    for (std::uint32_t e = first; e < first + count; ++e) {
      const LeafObb& leaf = leaf_[e];
      if (leaf.mesh == kInvalidId || leaf.object >= found || !accepts(leaf, options)) continue;
      const Placement place(world_matrix(leaf.object));
      const MeshAccel& mesh = meshes_[leaf.mesh];
      if (options.mode == PickMode::kObb) {
        if (inside(place, mesh.bounds, p)) found = leaf.object;
        continue;
      }
      const Aabb box = place.world_box(mesh.bounds);
      const double tol2 = surface_tolerance2(box);
      if (box_distance2(box, p) > tol2) continue;
      if (on_surface(mesh, place, p, tol2) || std::abs(winding(mesh, place, p)) >= 0.5) {
        found = leaf.object;
      }
    }
  });
  return found;
}

double PickerCore::signed_distance(const glm::dvec3& p, const QueryOptions& options,
                                     double max_distance) const {
  const double inf = std::numeric_limits<double>::infinity();
  if (options.mode == PickMode::kMesh) {
    const PointHit h = closest_point(p, options, max_distance);
    const bool in = containing_object(p, options) != kInvalidId;
    return in ? -h.distance : h.distance;
  }
  // obb mode: outside every box, the distance to the nearest; inside, minus
  // the depth in the box that holds p deepest.
  if (!measurable(p) || !(max_distance >= 0.0)) {
    return inf;
  }
  double deepest = -1.0;
  slots_holding(*this, p, [&](std::uint32_t first, std::uint32_t count) {
    for (std::uint32_t e = first; e < first + count; ++e) {
      const LeafObb& leaf = leaf_[e];
      if (leaf.mesh == kInvalidId || !accepts(leaf, options)) continue;
      const Placement place(world_matrix(leaf.object));
      const Aabb& local = meshes_[leaf.mesh].bounds;
      if (inside(place, local, p)) deepest = std::max(deepest, box_depth(place, local, p));
    }
  });
  if (deepest >= 0.0) return deepest <= max_distance ? -deepest : -inf;
  return closest_point(p, options, max_distance).distance;
}

double PickerCore::winding_number(std::uint32_t id, const glm::dvec3& p) const {
  if (id >= objects_.size() || !objects_[id].alive || !measurable(p)) return 0.0;
  const ObjectRec& rec = objects_[id];
  return winding(meshes_[rec.mesh], Placement(world_matrix(id)), p);
}

PointHit PickerCore::closest_point(const glm::dvec3& p, const QueryOptions& options,
                                     double max_distance) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(), "commit() the picker before querying it");
  Best best{std::numeric_limits<double>::infinity(), PointHit{}};
  if (!measurable(p) || !(max_distance >= 0.0)) {
    return best.hit;
  }
  best.d2 = squared_limit(max_distance);  // +inf stays +inf
  if (with_top([](const auto& top) { return top.empty(); })) return best.hit;

  const triangle_points::Measure4 measure4 = triangle_points::measure4_for(avx2());
  // One object: its OBB or its triangles, in world space.
  // shared: the entry shares its leaf slot's box with others, so its own
  // box may be farther.
  auto visit_object = [&](std::uint32_t entry, bool shared) {
    const LeafObb& leaf = leaf_[entry];
    if (leaf.mesh == kInvalidId || !accepts(leaf, options)) return;
    const MeshAccel& mesh = meshes_[leaf.mesh];
    const Placement place(world_matrix(leaf.object));
    // A leaf slot's box holds all its entries: this object's own box may
    // be farther than the best so far (beyond its rounding margin).
    if (shared && beyond_best(place, mesh.bounds, p, best.d2)) return;
    if (options.mode == PickMode::kObb) {
      const Aabb& local = mesh.bounds;
      if (inside(place, local, p)) {
        if (best.better(0.0, leaf.object, kInvalidId)) {
          best.take(0.0, leaf.object, TrianglePoint{p, 0.0, 0.0, 0.0}, kInvalidId);
        }
        return;
      }
      // Outside: the nearest point of the box's surface, its 12 triangles
      // (box_mesh's faces) placed in the world, four at a time. All 12
      // belong to one object, so only the first of the nearest can pass
      // better(): taken face by face in their order, the same face would
      // win.
      triangle_points::Nearest4 faces[3];
      measure4.box(p, place.linear, place.origin, local, faces);
      const int face = first_nearest(faces);
      if (face >= 0) {
        const triangle_points::Nearest4& near = faces[face / 4];
        const int l = face % 4;
        if (best.better(near.d2[l], leaf.object, kInvalidId)) {
          best.take(near.d2[l], leaf.object, TrianglePoint{near.lane(l).point, 0.0, 0.0, 0.0},
                    kInvalidId);
        }
      }
      return;
    }
    auto visit_triangle = [&](std::uint32_t tri, const glm::vec3& a, const glm::vec3& b,
                              const glm::vec3& c) {
      const TrianglePoint tp =
          closest_point_on_triangle(p, place.apply(a), place.apply(b), place.apply(c));
      if (best.better(tp.distance2, leaf.object, tri)) best.take(tp.distance2, leaf.object, tp, tri);
    };
    if (!mesh.bvh_built) {
      // A picker built without mesh trees: every triangle.
      for (std::uint32_t t = 0; t < mesh.triangles.size(); ++t) {
        const glm::uvec3& idx = mesh.triangles[t];
        visit_triangle(t, mesh.positions[idx.x], mesh.positions[idx.y], mesh.positions[idx.z]);
      }
      return;
    }
    // Nearest-first over the mesh's tree, by lower bounds of the world
    // distance to each local box.
    walk_mesh_slots(place, mesh.bounds, p, [&](const auto& bound) {
      // A leaf's triangles first meet the keys of their own boxes, four
      // at a time (in the mesh's frame; placed in the world, none):
      // each measured only within the best distance's threshold
      // (inclusive, for ties), recomputed when the best changes (a lane
      // tested against an older, larger one is measured for nothing,
      // never skipped wrongly).
      double seen = std::numeric_limits<double>::quiet_NaN();
      float limit = 0.0f;
      auto leaf_triangles = [&](std::uint32_t first, std::uint32_t count) {
        const std::uint32_t end = first + count;
        for (std::uint32_t e = first; e < end; e += 4) {
          unsigned lanes = end - e >= 4 ? 0xFu : (1u << (end - e)) - 1u;
          // A single triangle lies in its slot's (padded) box,
          // whose key was just tested.
          if (count >= 2) {
            if (!(best.d2 == seen)) {
              seen = best.d2;
              limit = bound.threshold(seen);
            }
            lanes &= bound.triangles_within(mesh.tri_boxes, e, limit);
          }
          if (lanes == 0) continue;
          if ((lanes & (lanes - 1)) == 0) {
            const std::uint32_t t = e + std::uint32_t(std::countr_zero(lanes));
            const auto& v = mesh.verts[t];
            visit_triangle(mesh.prim_id(t), v[0], v[1], v[2]);
            continue;
          }
          // Two or more: four at a time (a lane left out
          // measures a copy of the first kept one, unread).
          triangle_points::Floats4 tris;
          const int first_lane = std::countr_zero(lanes);
          for (int l = 0; l < 4; ++l) {
            const int from = (lanes >> l) & 1u ? l : first_lane;
            const auto& v = mesh.verts[e + std::uint32_t(from)];
            tris.set(l, v[0], v[1], v[2]);
          }
          triangle_points::Nearest4 near;
          measure4.place_nearest(p, place.linear, place.origin, tris, near);
          for (lanes &= near.within(best.d2); lanes != 0; lanes &= lanes - 1) {
            const int l = std::countr_zero(lanes);
            const std::uint32_t tri = mesh.prim_id(e + std::uint32_t(l));
            if (best.better(near.d2[l], leaf.object, tri)) {
              best.take(near.d2[l], leaf.object, near.lane(l), tri);
            }
          }
        }
      };
      mesh.with_bvh([&](const auto& tree) {
        best_first(tree.nodes(), bound, [&] { return best.d2; }, leaf_triangles);
      });
    });
  };

  // Nearest-first over the top level by the distance to the padded world
  // boxes (which contain the objects).
  with_top([&](const auto& top) {
    best_first(top.nodes(), WorldBound(p), [&] { return best.d2; },
               [&](std::uint32_t first, std::uint32_t count) {
                 for (std::uint32_t e = first; e < first + count; ++e) visit_object(e, count > 1);
               },
               [&](std::uint32_t first, std::uint32_t count) {
                 for (std::uint32_t e = first; e < first + count; ++e) compiler::prefetch(&leaf_[e]);
               });
  });
  if (best.hit.hit()) best.hit.distance = std::sqrt(best.d2);
  return best.hit;
}

// In the default floating-point mode, as the ray queries (picker_queries.cpp).
PointHit Picker::closest_point(const glm::dvec3& p, const QueryOptions& options,
                               double max_distance) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->closest_point(p, options, max_distance);
}

std::vector<PointHit> Picker::closest_points(std::span<const glm::dvec3> points,
                                             const QueryOptions& options,
                                             double max_distance) const {
  const compiler::DefaultFpMode fp_mode;
  return each_point<PointHit>(points, 256, [&](const glm::dvec3& p) {
    return impl_->closest_point(p, options, max_distance);
  });
}

double Picker::distance(const glm::dvec3& p, const QueryOptions& options,
                        double max_distance) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->closest_point(p, options, max_distance).distance;
}

std::uint32_t Picker::containing_object(const glm::dvec3& p, const QueryOptions& options) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->containing_object(p, options);
}

bool Picker::contains(const glm::dvec3& p, const QueryOptions& options) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->containing_object(p, options) != kInvalidId;
}

double Picker::signed_distance(const glm::dvec3& p, const QueryOptions& options,
                               double max_distance) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->signed_distance(p, options, max_distance);
}

double Picker::winding_number(std::uint32_t object, const glm::dvec3& p) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->winding_number(object, p);
}

std::vector<std::uint32_t> Picker::containing_objects(std::span<const glm::dvec3> points,
                                                      const QueryOptions& options) const {
  const compiler::DefaultFpMode fp_mode;
  return each_point<std::uint32_t>(
      points, 64, [&](const glm::dvec3& p) { return impl_->containing_object(p, options); });
}

std::vector<double> Picker::signed_distances(std::span<const glm::dvec3> points,
                                             const QueryOptions& options,
                                             double max_distance) const {
  const compiler::DefaultFpMode fp_mode;
  return each_point<double>(points, 64, [&](const glm::dvec3& p) {
    return impl_->signed_distance(p, options, max_distance);
  });
}

}  // namespace raypick
