#include "embree_points.h"

#include "embree_util.h"

#include "raypick/core/closest_point.h"
#include "raypick/core/obb.h"

#include <embree3/rtcore.h>

#include <glm/mat3x3.hpp>
#include <glm/matrix.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace raypick::tools {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One object as the point queries see it: its matrix in double, its local
// box and triangles.
struct Target {
  std::uint32_t id;
  glm::dmat3 linear;
  glm::dvec3 origin;
  const Mesh* mesh;
  Aabb local;

  glm::dvec3 apply(const glm::vec3& v) const { return linear * glm::dvec3(v) + origin; }
};

// The best answer so far, with the contract's ties.
struct Best {
  double d2 = kInf;
  PointHit hit;

  void offer(double d2_new, std::uint32_t object, std::uint32_t triangle, const TrianglePoint& t) {
    if (d2_new > d2) return;
    if (d2_new == d2 && (object > hit.object || (object == hit.object && triangle >= hit.triangle))) {
      return;
    }
    d2 = d2_new;
    hit.object = object;
    hit.triangle = triangle;
    hit.point = t.point;
    hit.u = t.u;
    hit.v = t.v;
  }
};

// Measures one object exactly, as the contract says, into best.
void measure(const Target& t, const glm::dvec3& p, PickMode mode, Best& best) {
  if (mode == PickMode::kMesh) {
    const Mesh& m = *t.mesh;
    for (std::uint32_t k = 0; k < m.triangles.size(); ++k) {
      const glm::uvec3& tr = m.triangles[k];
      const TrianglePoint tp = closest_point_on_triangle(
          p, t.apply(m.positions[tr.x]), t.apply(m.positions[tr.y]), t.apply(m.positions[tr.z]));
      best.offer(tp.distance2, t.id, k, tp);
    }
    return;
  }
  const glm::dvec3 x = glm::inverse(t.linear) * (p - t.origin);
  bool in = true;
  for (int a = 0; a < 3; ++a) {
    in = in && x[a] >= double(t.local.min[a]) && x[a] <= double(t.local.max[a]);
  }
  if (in) {
    best.offer(0.0, t.id, kInvalidId, TrianglePoint{p, 0.0, 0.0, 0.0});
    return;
  }
  glm::dvec3 corner[8];
  for (int i = 0; i < 8; ++i) corner[i] = t.apply(box_corner(t.local, i));
  for (const glm::uvec3& tr : box_triangles()) {
    const TrianglePoint tp = closest_point_on_triangle(p, corner[tr.x], corner[tr.y], corner[tr.z]);
    best.offer(tp.distance2, t.id, kInvalidId, TrianglePoint{tp.point, 0.0, 0.0, 0.0});
  }
}

// The objects that can be nearest: invertible matrix, some triangle.
std::vector<Target> targets_of(const Scene& scene) {
  std::vector<Target> out;
  for (std::uint32_t id = 0; id < scene.objects.size(); ++id) {
    const Object& o = scene.objects[id];
    const Mesh& mesh = scene.meshes[o.mesh];
    if (mesh.triangles.empty() || !is_invertible(glm::mat4x3(o.matrix))) continue;
    out.push_back({id,
                   glm::dmat3(glm::dvec3(o.matrix[0]), glm::dvec3(o.matrix[1]),
                              glm::dvec3(o.matrix[2])),
                   glm::dvec3(o.matrix[3]), &mesh, mesh.triangle_bounds()});
  }
  return out;
}

// The target's world box: its 8 placed corners in double, rounded outward
// to float, grown by a relative 2^-20 for the rounding of the query's own
// float sphere.
Aabb world_box(const Target& t) {
  glm::dvec3 lo{kInf}, hi{-kInf};
  for (int i = 0; i < 8; ++i) {
    const glm::dvec3 c = t.apply(box_corner(t.local, i));
    lo = glm::min(lo, c);
    hi = glm::max(hi, c);
  }
  const double slack = std::max({glm::length(lo), glm::length(hi), glm::length(hi - lo)}) * 0x1p-20;
  return Aabb{glm::vec3(lo - slack), glm::vec3(hi + slack)};
}

}  // namespace

struct EmbreePointScene::Impl {
  PickMode mode;
  RTCScene scene = nullptr;
  std::vector<Target> targets;  // by primitive id
  std::vector<Aabb> boxes;      // by primitive id
};

namespace {

// What a query carries through rtcPointQuery.
struct QueryState {
  const std::vector<Target>* targets;
  PickMode mode;
  glm::dvec3 p;
  Best best;
};

void bounds_of(const RTCBoundsFunctionArguments* args) {
  const auto* boxes = static_cast<const std::vector<Aabb>*>(args->geometryUserPtr);
  const Aabb& b = (*boxes)[args->primID];
  args->bounds_o->lower_x = b.min.x;
  args->bounds_o->lower_y = b.min.y;
  args->bounds_o->lower_z = b.min.z;
  args->bounds_o->upper_x = b.max.x;
  args->bounds_o->upper_y = b.max.y;
  args->bounds_o->upper_z = b.max.z;
}

bool query_object(RTCPointQueryFunctionArguments* args) {
  auto* state = static_cast<QueryState*>(args->userPtr);
  const double before = state->best.d2;
  measure((*state->targets)[args->primID], state->p, state->mode, state->best);
  if (!(state->best.d2 < before)) return false;
  // The sphere shrinks to the best distance, rounded up, plus the float
  // query point's own rounding.
  const double r = std::sqrt(state->best.d2) * (1.0 + 0x1p-20) +
                   std::max({std::abs(state->p.x), std::abs(state->p.y), std::abs(state->p.z)}) *
                       0x1p-22;
  args->query->radius = std::nextafter(static_cast<float>(r), INFINITY);
  return true;
}

}  // namespace

EmbreePointScene::EmbreePointScene(RTCDeviceTy* device, const Scene& scene, PickMode mode)
    : impl_(std::make_unique<Impl>()) {
  impl_->mode = mode;
  impl_->targets = targets_of(scene);
  for (const Target& t : impl_->targets) impl_->boxes.push_back(world_box(t));
  impl_->scene = rtcNewScene(device);
  rtcSetSceneFlags(impl_->scene, RTC_SCENE_FLAG_ROBUST);
  RTCGeometry geom = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_USER);
  rtcSetGeometryUserPrimitiveCount(geom, static_cast<unsigned>(impl_->targets.size()));
  rtcSetGeometryUserData(geom, &impl_->boxes);
  rtcSetGeometryBoundsFunction(geom, bounds_of, nullptr);
  rtcSetGeometryPointQueryFunction(geom, query_object);
  rtcCommitGeometry(geom);
  rtcAttachGeometry(impl_->scene, geom);
  rtcReleaseGeometry(geom);
  rtcCommitScene(impl_->scene);
  check_embree(device, "building the point-query scene");
}

EmbreePointScene::~EmbreePointScene() {
  if (impl_->scene) rtcReleaseScene(impl_->scene);
}

PointHit EmbreePointScene::closest_point(const glm::dvec3& p, double max_distance) const {
  QueryState state{&impl_->targets, impl_->mode, p, Best{}};
  if (!(max_distance >= 0.0)) return state.best.hit;
  state.best.d2 = max_distance * max_distance;
  RTCPointQuery query;
  query.x = static_cast<float>(p.x);
  query.y = static_cast<float>(p.y);
  query.z = static_cast<float>(p.z);
  query.radius = std::isinf(max_distance)
                     ? INFINITY
                     : std::nextafter(static_cast<float>(max_distance * (1.0 + 0x1p-20)), INFINITY);
  query.time = 0.0f;
  RTCPointQueryContext context;
  rtcInitPointQueryContext(&context);
  rtcPointQuery(impl_->scene, &query, &context, nullptr, &state);
  if (state.best.hit.hit()) state.best.hit.distance = std::sqrt(state.best.d2);
  return state.best.hit;
}

PointHit brute_closest_point(const Scene& scene, const glm::dvec3& p, PickMode mode,
                             double max_distance) {
  Best best;
  if (!(max_distance >= 0.0)) return best.hit;
  best.d2 = max_distance * max_distance;
  for (const Target& t : targets_of(scene)) measure(t, p, mode, best);
  if (best.hit.hit()) best.hit.distance = std::sqrt(best.d2);
  return best.hit;
}

}  // namespace raypick::tools
