// Point queries: the object nearest to a point (Picker::closest_point).
#include "picker_impl.h"

#include "raypick/core/assert.h"
#include "raypick/core/closest_point.h"

#include <glm/geometric.hpp>
#include <glm/mat3x3.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <queue>
#include <span>
#include <vector>

namespace raypick {
namespace {

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
  // The world box of the local box, by the abs-matrix method in double: it
  // contains the placed box up to double rounding (far below the boxes'
  // float padding), so its distance bounds the distance to the triangles.
  Aabb world_box(const Aabb& local) const {
    if (local.empty()) return local;
    const glm::dvec3 c = (glm::dvec3(local.min) + glm::dvec3(local.max)) * 0.5;
    const glm::dvec3 e = (glm::dvec3(local.max) - glm::dvec3(local.min)) * 0.5;
    glm::dvec3 wc = linear * c + origin, we{0.0};
    for (int col = 0; col < 3; ++col) {
      for (int r = 0; r < 3; ++r) we[r] += std::abs(linear[col][r]) * e[col];
    }
    // Widened by a relative 2^-40 so that the rounding of the sums above
    // (a few double ulps) never leaves a corner outside.
    const glm::dvec3 slack = (glm::abs(wc) + we) * 0x1p-40;
    Aabb out;
    out.min = glm::vec3(wc - we - slack);
    out.max = glm::vec3(wc + we + slack);
    // Rounding to float outward.
    for (int a = 0; a < 3; ++a) {
      if (double(out.min[a]) > wc[a] - we[a]) out.min[a] = std::nextafter(out.min[a], -INFINITY);
      if (double(out.max[a]) < wc[a] + we[a]) out.max[a] = std::nextafter(out.max[a], INFINITY);
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

// The squared distances from p to a node's W world slot boxes, in double
// from the float boxes (lower bounds of the distance to anything inside);
// +inf for empty slots. One pass the compiler vectorizes.
template <int W>
void world_slot_distances2(const WideNodeOf<W>& node, const glm::dvec3& p, double* out) {
#if RAYPICK_WIDE_SSE
  // Two slots per SSE2 double register; the same operations, in the same
  // order, as the scalar loop below, so the same bits.
  __m128d sum[W / 2];
  for (auto& v : sum) v = _mm_setzero_pd();
  for (int a = 0; a < 3; ++a) {
    const __m128d pa = _mm_set1_pd(p[a]);
    for (int h = 0; h < W / 4; ++h) {
      const __m128 lo = _mm_load_ps(node.bounds[a] + 4 * h);
      const __m128 hi = _mm_load_ps(node.bounds[3 + a] + 4 * h);
      const __m128d lo_pair[2] = {_mm_cvtps_pd(lo), _mm_cvtps_pd(_mm_movehl_ps(lo, lo))};
      const __m128d hi_pair[2] = {_mm_cvtps_pd(hi), _mm_cvtps_pd(_mm_movehl_ps(hi, hi))};
      for (int k = 0; k < 2; ++k) {
        const __m128d below = _mm_sub_pd(lo_pair[k], pa);
        const __m128d above = _mm_sub_pd(pa, hi_pair[k]);
        const __m128d gap = _mm_max_pd(_mm_max_pd(below, above), _mm_setzero_pd());
        sum[2 * h + k] = _mm_add_pd(sum[2 * h + k], _mm_mul_pd(gap, gap));
      }
    }
  }
  for (int k = 0; k < W / 2; ++k) _mm_storeu_pd(out + 2 * k, sum[k]);
#else
  for (int s = 0; s < W; ++s) out[s] = 0.0;
  for (int a = 0; a < 3; ++a) {
    for (int s = 0; s < W; ++s) {
      const double below = double(node.bounds[a][s]) - p[a];
      const double above = p[a] - double(node.bounds[3 + a][s]);
      const double d = below > above ? below : above;
      const double gap = d > 0.0 ? d : 0.0;
      out[s] += gap * gap;
    }
  }
#endif
}

// The same for a mesh tree's local slot boxes, each carried to a world box
// by `place` (Placement::world_box), so that the world distance bounds the
// world distance to the triangles inside.
template <class Place>
void placed_slot_distances2(const WideNode& node, const Place& place, const glm::dvec3& p,
                            double* out) {
  for (int s = 0; s < WideNode::kWidth; ++s) {
    out[s] = node.child[s] == WideNode::kInvalidSlot
                 ? std::numeric_limits<double>::infinity()
                 : box_distance2(place.world_box(node.slot_box(s)), p);
  }
}

// The same lower bounds measured in the mesh's own frame, far cheaper than
// carrying each box to the world: with world = L x + o and q the local
// point of p, |L x + o - p| = |L (x - q)| >= sigma |x - q|, sigma at most
// the smallest singular value of L: the square root of a lower bound of
// the smallest eigenvalue of G = L^T L. The closed form for a symmetric 3x3
// rounds badly where two eigenvalues nearly meet (up to about 1.5e-8 of
// the spread), so its value is lowered by 2^-20 and checked (G minus it
// positive definite by its leading minors), or where that fails lowered
// by 1% (at condition 100 or less the error is below 1.5e-4 of it) and
// checked again, else the boxes are placed in the world instead. (The
// bound prunes by it: 1% looser halves the speed of points near
// surfaces.) q is known up to `q_slack` (the inverse's
// and the product's rounding, bounded with a wide margin), and each placed
// vertex up to `world_slack` (its double rounding), so the bound is
//   (sigma (dist(q, box) - q_slack) - world_slack)^2, or 0,
// shrunk by a relative 2^-40 for the rounding of the candidates' own
// distances. Not `usable` (the caller then places each box) for a matrix
// that is singular or whose condition exceeds 100, or when the check fails.
struct LocalBound {
  glm::dvec3 q{0.0};
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
    const double estimate = smallest_eigenvalue(gram);
    double smallest = estimate * (1.0 - 0x1p-20);  // the closed form is usually this close
    if (!below(smallest)) {
      smallest = estimate * 0.99;  // two nearly equal: its worst rounding
      if (!below(smallest)) return;
    }
    // The largest eigenvalue is at most the trace: condition^2 <= 1e4.
    if (!(trace < 1e4 * smallest)) return;
    const glm::dmat3 inv = glm::inverse(place.linear);
    const glm::dvec3 d = p - place.origin;
    q = inv * d;
    sigma = std::sqrt(smallest);
    const double q_size = std::max({std::abs(q.x), std::abs(q.y), std::abs(q.z)});
    q_slack = (glm::length(d) / sigma + q_size) * 0x1p-30;
    double v_size = 0.0, o_size = 0.0;
    for (int a = 0; a < 3; ++a) {
      v_size = std::max({v_size, std::abs(double(mesh_box.min[a])), std::abs(double(mesh_box.max[a]))});
      o_size = std::max(o_size, std::abs(place.origin[a]));
    }
    world_slack = (std::sqrt(trace) * v_size + o_size) * 0x1p-44;
    usable = std::isfinite(q_slack) && std::isfinite(world_slack) && std::isfinite(sigma);
  }

  void slot_distances2(const WideNode& node, double* out) const {
    world_slot_distances2(node, q, out);  // the same box distance, in the mesh's frame
    for (int s = 0; s < WideNode::kWidth; ++s) {
      if (out[s] == std::numeric_limits<double>::infinity()) continue;
      const double d = sigma * (std::sqrt(out[s]) - q_slack) - world_slack;
      out[s] = d > 0.0 ? d * d * (1.0 - 0x1p-40) : 0.0;
    }
  }
};

// A mesh's slot distances for p: in its frame where the matrix allows
// (LocalBound), else each box placed in the world.
template <class Walk>
void walk_mesh_slots(const Placement& place, const Aabb& mesh_box, const glm::dvec3& p,
                     Walk&& walk) {
  const LocalBound local(place, mesh_box, p);
  if (local.usable) {
    walk([&](const WideNode& node, double* d2) { local.slot_distances2(node, d2); });
  } else {
    walk([&](const WideNode& node, double* d2) { placed_slot_distances2(node, place, p, d2); });
  }
}

// An open item of the walk: a node (count == 0) or a leaf slot's run of
// entries [index, index + count), with its box's squared distance.
struct Open {
  double d2;
  std::uint32_t index;
  std::uint32_t count;
};

// Nearest-first over a wide tree, depth first: a node's slots in order of
// their box distance (nearest on top of the stack), slot_distances2(node,
// d2) filling d2[s] with slot s's box distance squared (any value for
// unused slots), leaf(first, count) for each leaf slot whose box is within
// best_d2() (inclusive: equal distances are kept for the tie rule) when it
// is popped. Depth first reaches a leaf at once, so the best distance
// shrinks before most slots are looked at; a fixed stack, no allocation.
template <class Node, class SlotDistances2, class BestD2, class Leaf>
void best_first(std::span<const Node> nodes, SlotDistances2&& slot_distances2,
                BestD2&& best_d2, Leaf&& leaf) {
  if (nodes.empty()) return;
  constexpr int kWidth = Node::kWidth;
  // Each level leaves at most kWidth - 1 siblings behind.
  constexpr std::size_t kStack = std::size_t(wide_detail::kStackSizeOf<kWidth>);
  Open stack[kStack];
  std::size_t top = 0;
  stack[top++] = {0.0, 0, 0};
  while (top > 0) {
    const Open item = stack[--top];
    if (item.d2 > best_d2()) continue;
    if (item.count != 0) {
      leaf(item.index, item.count);
      continue;
    }
    const Node& node = nodes[item.index];
    double d2[kWidth];
    slot_distances2(node, d2);
    // The kept slots, sorted by distance, farthest first (insertion sort
    // of at most kWidth), pushed so the nearest is popped first.
    Open kept[kWidth];
    int n = 0;
    const double bound = best_d2();
    for (int s = 0; s < kWidth; ++s) {
      if (node.child[s] == Node::kInvalidSlot || d2[s] > bound) continue;
      const Open o{d2[s], node.child[s], node.is_inner(s) ? 0u : node.count[s]};
      int k = n++;
      while (k > 0 && kept[k - 1].d2 < o.d2) {
        kept[k] = kept[k - 1];
        --k;
      }
      kept[k] = o;
    }
    RAYPICK_ASSERT(top + std::size_t(n) <= kStack, "point query stack overflow");
    for (int k = 0; k < n; ++k) stack[top++] = kept[k];
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
  walk_mesh_slots(place, mesh.bounds, p, [&](auto&& slot_distances2) {
    best_first(mesh.bvh.nodes(), slot_distances2, [&] { return found ? -1.0 : tol2; },
               [&](std::uint32_t first, std::uint32_t count) {
                 for (std::uint32_t e = first; e < first + count; ++e) {
                   test(mesh.verts[e][0], mesh.verts[e][1], mesh.verts[e][2]);
                 }
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
                      for (std::size_t i = r.begin(); i != r.end(); ++i) out[i] = query(points[i]);
                    });
  return out;
}

// Calls entries(first, count) for each top-level leaf slot of `core` whose
// padded world box holds p (its entries' boxes may not).
template <class Entries>
void slots_holding(const PickerCore& core, const glm::dvec3& p, Entries&& entries) {
  core.with_top([&](const auto& top) {
    best_first(
        top.nodes(), [&](const auto& node, double* d2) { world_slot_distances2(node, p, d2); },
        [] { return 0.0; }, entries);
  });
}

}  // namespace

std::uint32_t PickerCore::containing_object(const glm::dvec3& p,
                                              const QueryOptions& options) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(), "commit() the picker before querying it");
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) return kInvalidId;
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
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z) ||
      !(max_distance >= 0.0)) {
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
  if (id >= objects_.size() || !objects_[id].alive) return 0.0;
  const ObjectRec& rec = objects_[id];
  return winding(meshes_[rec.mesh], Placement(world_matrix(id)), p);
}

PointHit PickerCore::closest_point(const glm::dvec3& p, const QueryOptions& options,
                                     double max_distance) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(), "commit() the picker before querying it");
  Best best{std::numeric_limits<double>::infinity(), PointHit{}};
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z) ||
      !(max_distance >= 0.0)) {
    return best.hit;
  }
  best.d2 = max_distance * max_distance;  // +inf stays +inf
  if (with_top([](const auto& top) { return top.empty(); })) return best.hit;

  // One object: its OBB or its triangles, in world space.
  // shared: the entry shares its leaf slot's box with others, so its own
  // box may be farther.
  auto visit_object = [&](std::uint32_t entry, bool shared) {
    const LeafObb& leaf = leaf_[entry];
    if (leaf.mesh == kInvalidId || !accepts(leaf, options)) return;
    const MeshAccel& mesh = meshes_[leaf.mesh];
    const Placement place(world_matrix(leaf.object));
    // A leaf slot's box holds all its entries: this object's own box may
    // be farther than the best so far.
    if (shared && box_distance2(place.world_box(mesh.bounds), p) > best.d2) return;
    if (options.mode == PickMode::kObb) {
      const Aabb& local = mesh.bounds;
      if (inside(place, local, p)) {
        if (best.better(0.0, leaf.object, kInvalidId)) {
          best.take(0.0, leaf.object, TrianglePoint{p, 0.0, 0.0, 0.0}, kInvalidId);
        }
        return;
      }
      // Outside: the nearest point of the box's surface, its 12 triangles
      // (box_mesh's faces) placed in the world.
      glm::dvec3 corner[8];
      for (int i = 0; i < 8; ++i) corner[i] = place.apply(box_corner(local, i));
      for (const glm::uvec3& t : box_triangles()) {
        const TrianglePoint tp = closest_point_on_triangle(p, corner[t.x], corner[t.y], corner[t.z]);
        if (best.better(tp.distance2, leaf.object, kInvalidId)) {
          best.take(tp.distance2, leaf.object, TrianglePoint{tp.point, 0.0, 0.0, 0.0}, kInvalidId);
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
    // Best-first over the mesh's tree, by lower bounds of the world
    // distance to each local box.
    walk_mesh_slots(place, mesh.bounds, p, [&](auto&& slot_distances2) {
      best_first(mesh.bvh.nodes(), slot_distances2, [&] { return best.d2; },
                 [&](std::uint32_t first, std::uint32_t count) {
                   for (std::uint32_t e = first; e < first + count; ++e) {
                     const auto& v = mesh.verts[e];
                     visit_triangle(mesh.bvh.prim_id(e), v[0], v[1], v[2]);
                   }
                 });
    });
  };

  // Best-first over the top level by the distance to the padded world
  // boxes (which contain the objects).
  with_top([&](const auto& top) {
    best_first(
        top.nodes(), [&](const auto& node, double* d2) { world_slot_distances2(node, p, d2); }, [&] { return best.d2; },
        [&](std::uint32_t first, std::uint32_t count) {
          for (std::uint32_t e = first; e < first + count; ++e) visit_object(e, count > 1);
        });
  });
  if (best.hit.hit()) best.hit.distance = std::sqrt(best.d2);
  return best.hit;
}

PointHit Picker::closest_point(const glm::dvec3& p, const QueryOptions& options,
                               double max_distance) const {
  return impl_->closest_point(p, options, max_distance);
}

std::vector<PointHit> Picker::closest_points(std::span<const glm::dvec3> points,
                                             const QueryOptions& options,
                                             double max_distance) const {
  return each_point<PointHit>(points, 256, [&](const glm::dvec3& p) {
    return impl_->closest_point(p, options, max_distance);
  });
}

double Picker::distance(const glm::dvec3& p, const QueryOptions& options,
                        double max_distance) const {
  return impl_->closest_point(p, options, max_distance).distance;
}

std::uint32_t Picker::containing_object(const glm::dvec3& p, const QueryOptions& options) const {
  return impl_->containing_object(p, options);
}

bool Picker::contains(const glm::dvec3& p, const QueryOptions& options) const {
  return impl_->containing_object(p, options) != kInvalidId;
}

double Picker::signed_distance(const glm::dvec3& p, const QueryOptions& options,
                               double max_distance) const {
  return impl_->signed_distance(p, options, max_distance);
}

double Picker::winding_number(std::uint32_t object, const glm::dvec3& p) const {
  return impl_->winding_number(object, p);
}

std::vector<std::uint32_t> Picker::containing_objects(std::span<const glm::dvec3> points,
                                                      const QueryOptions& options) const {
  return each_point<std::uint32_t>(
      points, 64, [&](const glm::dvec3& p) { return impl_->containing_object(p, options); });
}

std::vector<double> Picker::signed_distances(std::span<const glm::dvec3> points,
                                             const QueryOptions& options,
                                             double max_distance) const {
  return each_point<double>(points, 64, [&](const glm::dvec3& p) {
    return impl_->signed_distance(p, options, max_distance);
  });
}

}  // namespace raypick
