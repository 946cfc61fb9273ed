// Picker::select(): marquee selection. The top level is culled against the
// region's planes; objects whose boxes straddle the region get exact tests
// in double precision (core's touches() and plane tests).
#include "picker_impl.h"

#include <glm/geometric.hpp>

#include <algorithm>
#include <cmath>

namespace raypick {
namespace {

enum class Side { kOutside, kInside, kStraddle };

// Where the box is against the region's planes: outside when it lies
// strictly outside one plane, inside when it lies inside all of them.
// Conservative for the boxes it is given: the top level's are padded
// beyond what they hold.
Side classify(const Aabb& b, const Frustum& region) {
  bool inside = true;
  for (const Plane& pl : region.planes) {
    // The box's corners farthest along and against the normal.
    glm::dvec3 hi, lo;
    for (int a = 0; a < 3; ++a) {
      const bool pos = pl.n[a] >= 0.0;
      hi[a] = pos ? b.max[a] : b.min[a];
      lo[a] = pos ? b.min[a] : b.max[a];
    }
    if (pl.eval(hi) < 0.0) return Side::kOutside;
    inside = inside && pl.eval(lo) >= 0.0;
  }
  return inside ? Side::kInside : Side::kStraddle;
}

// The region's planes carried into the frame of the affine map m:
// dot(n, m(q)) + d = dot(A^T n, q) + dot(n, t) + d.
std::array<Plane, 5> local_planes(const Frustum& region, const glm::dmat4x3& m) {
  std::array<Plane, 5> out;
  for (int k = 0; k < 5; ++k) {
    const Plane& pl = region.planes[k];
    for (int c = 0; c < 3; ++c) out[k].n[c] = glm::dot(pl.n, m[c]);
    out[k].d = glm::dot(pl.n, m[3]) + pl.d;
  }
  return out;
}

// True when a mesh-BVH box (local space, padded) lies strictly outside one
// of the local planes by more than the planes' rounding.
bool outside_local(const Aabb& b, const std::array<Plane, 5>& planes) {
  for (const Plane& pl : planes) {
    glm::dvec3 hi;
    double scale = std::abs(pl.d);
    for (int a = 0; a < 3; ++a) {
      hi[a] = pl.n[a] >= 0.0 ? b.max[a] : b.min[a];
      scale += std::abs(pl.n[a] * hi[a]);
    }
    if (pl.eval(hi) < -1e-12 * scale) return true;
  }
  return false;
}

// A zero-area triangle, as the watertight test sees it: never hit. The
// double differences and products of float coordinates are exact here
// unless the coordinates' magnitudes are far apart.
bool degenerate(const glm::vec3& a, const glm::vec3& b, const glm::vec3& c) {
  const glm::dvec3 da(a);
  return glm::cross(glm::dvec3(b) - da, glm::dvec3(c) - da) == glm::dvec3(0.0);
}

glm::dvec3 to_world(const glm::dmat4x3& m, const glm::vec3& q) {
  return m[3] + m[0] * double(q.x) + m[1] * double(q.y) + m[2] * double(q.z);
}

}  // namespace

bool PickerCore::select_entry(std::uint32_t entry, const Frustum& region,
                          SelectRule rule, PickMode mode,
                          std::vector<std::uint8_t>& hittable) const {
  const LeafObb& leaf = leaf_[entry];
  const ObjectRec& o = objects_[leaf.object];
  const MeshAccel& mesh = meshes_[o.mesh];
  if (mode == PickMode::kMesh) {
    // An object whose triangles are all degenerate can never be hit.
    std::uint8_t& h = hittable[o.mesh];
    if (h == 0) {
      h = 2;
      for (const glm::uvec3& t : mesh.triangles) {
        if (!degenerate(mesh.positions[t.x], mesh.positions[t.y], mesh.positions[t.z])) {
          h = 1;
          break;
        }
      }
    }
    if (h == 2) return false;
  }
  // In double, the translation's low part added (an object placed beyond
  // float).
  const glm::dmat4x3 w = world_matrix(leaf.object);
  const std::array<glm::dvec3, 8> corners = box_corners(w, mesh.bounds);
  bool all_in = true;
  for (const glm::dvec3& c : corners) all_in = all_in && region.contains(c);
  if (mode == PickMode::kObb) {
    return rule == SelectRule::kContain ? all_in : all_in || box_touches(region, w, mesh.bounds);
  }
  if (rule == SelectRule::kContain) {
    // The used vertices lie in the OBB: all its corners inside settles it.
    if (all_in) return true;
    for (const glm::uvec3& t : mesh.triangles) {
      for (int k = 0; k < 3; ++k) {
        if (!region.contains(to_world(w, mesh.positions[t[k]]))) return false;
      }
    }
    return true;
  }
  if (all_in) return true;
  if (!box_touches(region, w, mesh.bounds)) return false;
  auto tri_touches = [&](const glm::vec3& a, const glm::vec3& b, const glm::vec3& c) {
    return !degenerate(a, b, c) && triangle_touches(region, to_world(w, a), to_world(w, b),
                            to_world(w, c));
  };
  if (!mesh.bvh_built) {
    for (const glm::uvec3& t : mesh.triangles) {
      if (tri_touches(mesh.positions[t.x], mesh.positions[t.y], mesh.positions[t.z])) {
        return true;
      }
    }
    return false;
  }
  // The mesh's BVH, culled by the planes in its own frame.
  const std::array<Plane, 5> planes = local_planes(region, w);
  return mesh.with_bvh([&](const auto& tree) {
    using Node = typename std::decay_t<decltype(tree)>::Node;
    std::uint32_t stack[kBvhMaxDepth * Node::kWidth + 8];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const Node& n = tree.nodes()[stack[--top]];
      for (int s = 0; s < Node::kWidth; ++s) {
        if (!n.is_leaf(s) && !n.is_inner(s)) continue;
        if (outside_local(n.slot_box(s), planes)) continue;
        if (n.is_inner(s)) {
          stack[top++] = n.child[s];
          continue;
        }
        for (std::uint32_t e = n.child[s]; e < n.child[s] + n.count[s]; ++e) {
          const auto& v = mesh.verts[e];
          if (tri_touches(v[0], v[1], v[2])) return true;
        }
      }
    }
    return false;
  });
}

std::vector<std::uint32_t> PickerCore::select(const Frustum& region, SelectRule rule,
                                          const QueryOptions& options) const {
  std::vector<std::uint32_t> out;
  if (with_top([](const auto& top) { return top.empty(); })) return out;
  // Each node pushes at most kWidth children and the tree's depth is bounded.
  std::vector<std::uint32_t> stack;
  std::vector<std::uint32_t> inside;  // subtrees wholly inside the region
  stack.push_back(0);
  std::vector<std::uint8_t> hittable(options.mode == PickMode::kMesh ? meshes_.size() : 0, 0);
  auto take = [&](std::uint32_t e) {
    if (!accepts(leaf_[e], options)) return;
    // Mesh mode: an object with only degenerate triangles is never taken,
    // which select_entry decides (cached per mesh) before anything else.
    if (options.mode == PickMode::kMesh &&
        hittable[objects_[leaf_[e].object].mesh] != 1) {
      // Unknown or not hittable: select_entry settles it (inside: true).
      if (!select_entry(e, region, SelectRule::kContain, options.mode, hittable)) return;
    }
    out.push_back(leaf_[e].object);
  };
  with_top([&](const auto& top) {
    constexpr int kWidth = std::decay_t<decltype(top)>::kWidth;
    while (!stack.empty()) {
      const auto& n = top.nodes()[stack.back()];
      stack.pop_back();
      for (int s = 0; s < kWidth; ++s) {
        if (!n.is_leaf(s) && !n.is_inner(s)) continue;
        const Side side = classify(n.slot_box(s), region);
        if (side == Side::kOutside) continue;
        if (n.is_inner(s)) {
          (side == Side::kInside ? inside : stack).push_back(n.child[s]);
          continue;
        }
        for (std::uint32_t e = n.child[s]; e < n.child[s] + n.count[s]; ++e) {
          // An inside slot box holds the OBB and so every vertex: both rules
          // hold in both modes.
          if (side == Side::kInside) {
            take(e);
            continue;
          }
          if (!accepts(leaf_[e], options)) continue;
          // The entry's own padded box first: most entries of a straddling
          // slot are wholly in or out.
          const Side own = classify(entry_box(e), region);
          if (own == Side::kInside) {
            take(e);
          } else if (own == Side::kStraddle &&
                     select_entry(e, region, rule, options.mode, hittable)) {
            out.push_back(leaf_[e].object);
          }
        }
      }
    }
    // Subtrees inside: every entry under them.
    while (!inside.empty()) {
      const auto& n = top.nodes()[inside.back()];
      inside.pop_back();
      for (int s = 0; s < kWidth; ++s) {
        if (n.is_inner(s)) inside.push_back(n.child[s]);
        if (!n.is_leaf(s)) continue;
        for (std::uint32_t e = n.child[s]; e < n.child[s] + n.count[s]; ++e) take(e);
      }
    }
  });
  // Ids ascending: a sort for a few, a pass over a bitmap for many.
  if (out.size() < objects_.size() / 32) {
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<std::uint8_t> in(objects_.size(), 0);
  for (std::uint32_t id : out) in[id] = 1;
  std::size_t k = 0;
  for (std::uint32_t id = 0; id < in.size(); ++id) {
    if (in[id]) out[k++] = id;
  }
  return out;
}

}  // namespace raypick
