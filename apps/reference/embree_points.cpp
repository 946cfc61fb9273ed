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
#include <stdexcept>
#include <string>
#include <tuple>
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

// The best answer so far, in the contract's order: distance, then object
// id, then triangle id.
struct Best {
  double d2 = kInf;
  PointHit hit;

  // Takes the candidate when it comes first in that order; true when it
  // did.
  bool offer(double d2_new, std::uint32_t object, std::uint32_t triangle, const TrianglePoint& t) {
    const auto now = std::tie(d2, hit.object, hit.triangle);
    if (!(std::tie(d2_new, object, triangle) < now)) return false;
    hit = PointHit{object, triangle, kInf, t.point, t.u, t.v};
    d2 = d2_new;
    return true;
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
                   o.translation(), &mesh, mesh.triangle_bounds()});
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
  std::vector<RTCScene> children;  // kInstanced: by mesh; nullptr when unused
  std::vector<Target> targets;     // by primitive id (kFlat), instance id (kInstanced)
  std::vector<Aabb> boxes;         // kFlat: by primitive id
  // The query radius: the best distance times (1 + rel), plus abs times
  // the larger of reach and the query point's largest |coordinate|.
  double rel = 0x1p-20;
  double abs = 0x1p-22;
  double reach = 0.0;
};

namespace {

double max_abs(const glm::dvec3& v) { return std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)}); }

// A query radius of at least d (1 + rel) + slack, as a float.
float widened_radius(double d, double rel, double slack) {
  return std::nextafter(static_cast<float>(d * (1.0 + rel) + slack), INFINITY);
}

// What a query carries through rtcPointQuery.
struct QueryState {
  const std::vector<Target>* targets;
  PickMode mode;
  glm::dvec3 p;
  double rel, slack;  // the radius' widening (Impl)
  Best best;

  // After a callback measured: the sphere shrinks to the best distance,
  // widened; true when it did.
  bool shrink(RTCPointQueryFunctionArguments* args, double before) const {
    if (!(best.d2 < before)) return false;  // a tie won leaves the radius
    args->query->radius = widened_radius(std::sqrt(best.d2), rel, slack);
    return true;
  }
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

// kFlat: one object, measured whole.
bool query_object(RTCPointQueryFunctionArguments* args) {
  auto* state = static_cast<QueryState*>(args->userPtr);
  const double before = state->best.d2;
  measure((*state->targets)[args->primID], state->p, state->mode, state->best);
  return state->shrink(args, before);
}

// kInstanced: one triangle of one instance, measured in world space as
// raypick measures it.
bool query_triangle(RTCPointQueryFunctionArguments* args) {
  auto* state = static_cast<QueryState*>(args->userPtr);
  const Target& t = (*state->targets)[args->context->instID[0]];
  const glm::uvec3& tr = t.mesh->triangles[args->primID];
  const TrianglePoint tp = closest_point_on_triangle(state->p, t.apply(t.mesh->positions[tr.x]),
                                                     t.apply(t.mesh->positions[tr.y]),
                                                     t.apply(t.mesh->positions[tr.z]));
  const double before = state->best.d2;
  state->best.offer(tp.distance2, t.id, args->primID, tp);
  return state->shrink(args, before);
}

// Within a relative 2^-18, whether the matrix's 3x3 part is s times an
// orthogonal matrix: its columns orthogonal and of equal length.
bool is_similarity(const glm::dmat3& m) {
  const glm::dmat3 g = glm::transpose(m) * m;
  const double s2 = (g[0][0] + g[1][1] + g[2][2]) / 3.0;
  if (!(s2 > 0.0) || !std::isfinite(s2)) return false;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      if (!(std::abs(g[i][j] - (i == j ? s2 : 0.0)) <= s2 * 0x1p-18)) return false;
    }
  }
  return true;
}

// kInstanced: the triangle geometries and their instances in impl.scene.
void build_instanced(RTCDevice device, const Scene& scene, EmbreePointScene::Impl& im);

// kFlat: the one user geometry of world boxes in impl.scene.
void build_flat(RTCDevice device, EmbreePointScene::Impl& im) {
  for (const Target& t : im.targets) im.boxes.push_back(world_box(t));
  rtcSetSceneFlags(im.scene, RTC_SCENE_FLAG_ROBUST);
  RTCGeometry geom = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_USER);
  rtcSetGeometryUserPrimitiveCount(geom, static_cast<unsigned>(im.targets.size()));
  rtcSetGeometryUserData(geom, &im.boxes);
  rtcSetGeometryBoundsFunction(geom, bounds_of, nullptr);
  rtcSetGeometryPointQueryFunction(geom, query_object);
  rtcCommitGeometry(geom);
  rtcAttachGeometry(im.scene, geom);
  rtcReleaseGeometry(geom);
}

}  // namespace

std::string instanced_points_refusal(const Scene& scene) {
  for (const Target& t : targets_of(scene)) {
    if (!is_similarity(t.linear)) {
      return "object " + std::to_string(t.id) +
             "'s matrix is not a similarity (rotation, uniform scale, translation): Embree "
             "carries a point query into an instance as a sphere only for those";
    }
  }
  return "";
}

namespace {

void build_instanced(RTCDevice device, const Scene& scene, EmbreePointScene::Impl& im) {
  im.children.assign(scene.meshes.size(), nullptr);
  im.rel = 0x1p-16;
  im.abs = 0x1p-18;
  // Embree 3.13 tests an instance's nodes against the world radius as it
  // stood when the query entered the instance, not scaled into the
  // instance's space (its PointQueryContext keeps query_ws->radius), so
  // under a matrix that shrinks (scale < 1) it culls triangles within the
  // sphere. Each mesh is given to Embree scaled by a power of two k at most
  // the scale of every object that instances it, and each matrix's linear
  // part by 1/k (both exact in float): every instance then enlarges, and
  // the unscaled radius errs on the large side. The callback still measures
  // the scene's own triangles and matrices.
  const auto scale_of = [](const Target& t) {
    return std::sqrt((glm::dot(t.linear[0], t.linear[0]) + glm::dot(t.linear[1], t.linear[1]) +
                      glm::dot(t.linear[2], t.linear[2])) / 3.0);
  };
  std::vector<double> smallest(scene.meshes.size(), kInf);
  for (const Target& t : im.targets) {
    double& s = smallest[scene.objects[t.id].mesh];
    s = std::min(s, scale_of(t));
  }
  for (std::uint32_t k = 0; k < im.targets.size(); ++k) {
    const Target& t = im.targets[k];
    const std::uint32_t m = scene.objects[t.id].mesh;
    const float down = std::exp2(std::floor(std::log2(smallest[m])));
    if (!im.children[m]) {
      std::vector<glm::vec3> scaled(t.mesh->positions);
      for (glm::vec3& v : scaled) v *= down;
      im.children[m] = make_triangle_scene(device, scaled, t.mesh->triangles, RTC_SCENE_FLAG_NONE,
                                           RTC_BUILD_QUALITY_MEDIUM, query_triangle);
    }
    glm::mat4 matrix = scene.objects[t.id].matrix;
    for (int c = 0; c < 3; ++c) matrix[c] /= down;
    rtcReleaseGeometry(attach_instance(device, im.scene, im.children[m], matrix, k));
    const Aabb box = world_box(t);
    im.reach = std::max({im.reach, max_abs(glm::dvec3(box.min)), max_abs(glm::dvec3(box.max))});
  }
}

}  // namespace

EmbreePointScene::EmbreePointScene(RTCDeviceTy* device, const Scene& scene, PickMode mode,
                                   PointLayout layout)
    : impl_(std::make_unique<Impl>()) {
  if (layout == PointLayout::kInstanced) {
    std::string why = mode == PickMode::kMesh ? instanced_points_refusal(scene)
                                              : "the instanced layout is for mesh mode";
    if (!why.empty()) throw std::invalid_argument(why);
  }
  Impl& im = *impl_;
  im.mode = mode;
  im.targets = targets_of(scene);
  im.scene = rtcNewScene(device);
  if (layout == PointLayout::kInstanced) {
    build_instanced(device, scene, im);
  } else {
    build_flat(device, im);
  }
  rtcCommitScene(im.scene);
  check_embree(device, "building the point-query scene");
}

EmbreePointScene::~EmbreePointScene() {
  if (impl_->scene) rtcReleaseScene(impl_->scene);
  for (RTCScene s : impl_->children) {
    if (s) rtcReleaseScene(s);
  }
}

PointHit EmbreePointScene::closest_point(const glm::dvec3& p, double max_distance) const {
  const Impl& im = *impl_;
  QueryState state{&im.targets, im.mode, p, im.rel, std::max(im.reach, max_abs(p)) * im.abs, Best{}};
  if (!(max_distance >= 0.0)) return state.best.hit;
  state.best.d2 = squared_limit(max_distance);
  RTCPointQuery query;
  query.x = static_cast<float>(p.x);
  query.y = static_cast<float>(p.y);
  query.z = static_cast<float>(p.z);
  query.radius = std::isinf(max_distance) ? INFINITY : widened_radius(max_distance, state.rel, state.slack);
  query.time = 0.0f;
  RTCPointQueryContext context;
  rtcInitPointQueryContext(&context);
  rtcPointQuery(im.scene, &query, &context, nullptr, &state);
  if (state.best.hit.hit()) state.best.hit.distance = std::sqrt(state.best.d2);
  return state.best.hit;
}

PointHit brute_closest_point(const Scene& scene, const glm::dvec3& p, PickMode mode,
                             double max_distance) {
  Best best;
  if (!(max_distance >= 0.0)) return best.hit;
  best.d2 = squared_limit(max_distance);
  for (const Target& t : targets_of(scene)) measure(t, p, mode, best);
  if (best.hit.hit()) best.hit.distance = std::sqrt(best.d2);
  return best.hit;
}

}  // namespace raypick::tools
