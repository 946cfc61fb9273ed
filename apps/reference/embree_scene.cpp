#include "embree_scene.h"

#include "embree_util.h"

#include "raypick/core/obb.h"

#include <embree3/rtcore.h>

#include <glm/ext/matrix_double4x4.hpp>
#include <glm/matrix.hpp>
#include <glm/vec3.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace raypick::tools {

struct EmbreeScene::Impl {
  PickMode mode;
  RTCDevice device = nullptr;
  RTCScene top = nullptr;
  std::vector<RTCScene> children;  // by mesh; nullptr for an empty mesh
};

namespace {

RTCScene make_child(RTCDevice device, std::span<const glm::vec3> positions,
                    std::span<const glm::uvec3> triangles) {
  return make_triangle_scene(device, positions, triangles,
                             RTC_SCENE_FLAG_ROBUST, RTC_BUILD_QUALITY_MEDIUM);
}

// The box as core's 12 triangles.
RTCScene make_box_child(RTCDevice device, const Aabb& box) {
  const Mesh m = box_mesh(box);
  return make_child(device, m.positions, m.triangles);
}

// A new buffer of `geom` holding `values`, each as three T in a row (x, y, z).
template <class T, class Vec3>
void set_triples(RTCGeometry geom, RTCBufferType type, RTCFormat format,
                 std::span<const Vec3> values) {
  auto* out = static_cast<T*>(
      rtcSetNewGeometryBuffer(geom, type, 0, format, 3 * sizeof(T), values.size()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    for (int k = 0; k < 3; ++k) out[3 * i + k] = values[i][k];
  }
}

}  // namespace

void check_embree(RTCDevice device, const char* what) {
  const RTCError err = rtcGetDeviceError(device);
  if (err != RTC_ERROR_NONE) {
    throw std::runtime_error(std::string("Embree error ") +
                             std::to_string(static_cast<int>(err)) + " in " +
                             what);
  }
}

RTCScene make_triangle_scene(RTCDevice device,
                             std::span<const glm::vec3> positions,
                             std::span<const glm::uvec3> triangles,
                             RTCSceneFlags flags, RTCBuildQuality quality,
                             RTCPointQueryFunction point_query) {
  RTCScene scene = rtcNewScene(device);
  rtcSetSceneFlags(scene, flags);
  rtcSetSceneBuildQuality(scene, quality);
  RTCGeometry geom = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
  set_triples<float>(geom, RTC_BUFFER_TYPE_VERTEX, RTC_FORMAT_FLOAT3, positions);
  set_triples<unsigned>(geom, RTC_BUFFER_TYPE_INDEX, RTC_FORMAT_UINT3, triangles);
  if (point_query) rtcSetGeometryPointQueryFunction(geom, point_query);
  rtcCommitGeometry(geom);
  rtcAttachGeometry(scene, geom);
  rtcReleaseGeometry(geom);
  rtcCommitScene(scene);
  return scene;
}

bool instance_invertible(const glm::mat4& matrix) {
  return is_invertible(glm::mat4x3{matrix});
}

RTCGeometry attach_instance(RTCDevice device, RTCScene top, RTCScene child,
                            const glm::mat4& matrix, unsigned id) {
  RTCGeometry inst = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_INSTANCE);
  rtcSetGeometryInstancedScene(inst, child);
  rtcSetGeometryTransform(inst, 0, RTC_FORMAT_FLOAT4X4_COLUMN_MAJOR,
                          &matrix[0][0]);
  rtcCommitGeometry(inst);
  rtcAttachGeometryByID(top, inst, id);
  return inst;
}

RTCRayHit make_rayhit(const Ray& ray) {
  RTCRayHit rh{};
  rh.ray.org_x = ray.org.x;
  rh.ray.org_y = ray.org.y;
  rh.ray.org_z = ray.org.z;
  rh.ray.dir_x = ray.dir.x;
  rh.ray.dir_y = ray.dir.y;
  rh.ray.dir_z = ray.dir.z;
  rh.ray.tnear = ray.tmin;
  rh.ray.tfar = ray.tmax;
  rh.ray.mask = 0xFFFFFFFFu;
  rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
  rh.hit.primID = RTC_INVALID_GEOMETRY_ID;
  rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
  return rh;
}

RTCRayHit intersect1(RTCScene scene, const Ray& ray) {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  RTCRayHit rh = make_rayhit(ray);
  rtcIntersect1(scene, &context, &rh);
  return rh;
}

EmbreeScene::EmbreeScene(const Scene& scene, PickMode mode)
    : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.mode = mode;
  im.device = rtcNewDevice(nullptr);
  if (!im.device) throw std::runtime_error("Embree: rtcNewDevice failed");
  im.top = rtcNewScene(im.device);
  rtcSetSceneFlags(im.top, RTC_SCENE_FLAG_ROBUST);
  im.children.resize(scene.meshes.size(), nullptr);
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    const Mesh& mesh = scene.meshes[m];
    if (mesh.triangles.empty()) continue;
    im.children[m] = mode == PickMode::kObb
                         ? make_box_child(im.device, mesh.triangle_bounds())
                         : make_child(im.device, mesh.positions, mesh.triangles);
  }
  for (std::size_t i = 0; i < scene.objects.size(); ++i) {
    const Object& obj = scene.objects[i];
    RTCScene child = im.children[obj.mesh];
    if (!child || !instance_invertible(obj.matrix)) continue;
    rtcReleaseGeometry(attach_instance(im.device, im.top, child, obj.matrix,
                                       static_cast<unsigned>(i)));
  }
  rtcCommitScene(im.top);
  check_embree(im.device, "building the reference scene");
}

EmbreeScene::~EmbreeScene() {
  if (!impl_) return;
  if (impl_->top) rtcReleaseScene(impl_->top);
  for (RTCScene s : impl_->children) {
    if (s) rtcReleaseScene(s);
  }
  if (impl_->device) rtcReleaseDevice(impl_->device);
}

Hit EmbreeScene::intersect(const Ray& ray) const {
  const RTCRayHit rh = intersect1(impl_->top, ray);
  Hit hit;
  if (rh.hit.geomID != RTC_INVALID_GEOMETRY_ID) {
    hit.object = rh.hit.instID[0];
    hit.t = rh.ray.tfar;
    if (impl_->mode == PickMode::kMesh) {
      hit.triangle = rh.hit.primID;
      hit.u = rh.hit.u;
      hit.v = rh.hit.v;
    }
  }
  return hit;
}

}  // namespace raypick::tools
