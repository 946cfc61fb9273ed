#include "embree_bench.h"

#include "embree_util.h"

#include <embree3/rtcore.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace raypick::tools {

namespace {

constexpr auto check = check_embree;

// ---- obb mode: what the user geometry's callbacks read, by primID =
// object id: the world box (bounds callback) and a 64-byte record with the
// object's frame (origin and inverse 3x3) and the mesh, whose bounds are the
// local box (intersect callback) -- the same leaf data raypick's top level
// reads.
struct ObbRecord {
  LocalFrame frame;
  std::uint32_t mesh;         // kInvalidId: singular matrix, never hit
  std::uint32_t object_mesh;  // the object's mesh either way
};
struct alignas(64) PaddedRecord : ObbRecord {};
static_assert(sizeof(PaddedRecord) == 64);

struct ObbData {
  std::vector<Aabb> local;           // by mesh
  std::vector<PaddedRecord> records; // by object
  // By object, the translations' part beyond float; empty when none has
  // one (as the Picker's).
  std::vector<glm::vec3> low;
  std::vector<Aabb> world;           // by object, padded as raypick's
  glm::vec3 pad_centre{0.0f};        // as the Picker's: padding_centre()
  // As Picker's commit: raypick's Obb::make, padded_world_box.
  void set(std::uint32_t id, const glm::mat4& matrix, const glm::vec3& l = glm::vec3{0.0f}) {
    PaddedRecord& r = records[id];
    // As the Picker: only a low part that can matter (significant_low).
    const Obb obb = Obb::make(local[r.object_mesh], matrix, l);
    if (!low.empty() || obb.origin_low != glm::vec3{0.0f}) {
      low.resize(records.size(), glm::vec3{0.0f});
      low[id] = obb.origin_low;
    }
    r.frame = obb.frame;
    r.mesh = obb.invertible ? r.object_mesh : kInvalidId;
    world[id] = padded_world_box(obb, pad_centre);
  }
};

void obb_bounds(const RTCBoundsFunctionArguments* args) {
  const auto& data = *static_cast<const ObbData*>(args->geometryUserPtr);
  const Aabb& b = data.world[args->primID];
  // An empty box (lower > upper: the OBB cannot be hit) is not valid for
  // Embree, which then leaves the primitive out of its BVH.
  RTCBounds* o = args->bounds_o;
  o->lower_x = b.min.x;
  o->lower_y = b.min.y;
  o->lower_z = b.min.z;
  o->upper_x = b.max.x;
  o->upper_y = b.max.y;
  o->upper_z = b.max.z;
}

void obb_intersect(const RTCIntersectFunctionNArguments* args) {
  const auto& data = *static_cast<const ObbData*>(args->geometryUserPtr);
  const ObbRecord& rec = data.records[args->primID];
  if (rec.mesh == kInvalidId) return;
  const Aabb& local = data.local[rec.mesh];
  const unsigned n = args->N;
  RTCRayN* rays = RTCRayHitN_RayN(args->rayhit, n);
  RTCHitN* hits = RTCRayHitN_HitN(args->rayhit, n);
  for (unsigned k = 0; k < n; ++k) {
    if (!args->valid[k]) continue;
    Ray ray;
    ray.org = {RTCRayN_org_x(rays, n, k), RTCRayN_org_y(rays, n, k),
               RTCRayN_org_z(rays, n, k)};
    ray.dir = {RTCRayN_dir_x(rays, n, k), RTCRayN_dir_y(rays, n, k),
               RTCRayN_dir_z(rays, n, k)};
    ray.tmin = RTCRayN_tnear(rays, n, k);
    float& tfar = RTCRayN_tfar(rays, n, k);
    ray.tmax = tfar;
    // raypick's leaf test, with the best t so far as the limit, exactly as
    // Picker's traversal calls it.
    const bool low = !data.low.empty() && data.low[args->primID] != glm::vec3{0.0f};
    const float t = low ? obb_entry(rec.frame, data.low[args->primID], local, ray, tfar)
                        : obb_entry(rec.frame, local, ray, tfar);
    if (t == kInfinity) continue;
    unsigned& prim = RTCHitN_primID(hits, n, k);
    // Embree's node tests are inclusive, so an equal t reaches here; the
    // contract gives it to the lower object id. A miss so far has
    // primID = RTC_INVALID_GEOMETRY_ID, the largest id.
    if (t < tfar || (t == tfar && args->primID < prim)) {
      tfar = t;
      prim = args->primID;
      RTCHitN_geomID(hits, n, k) = args->geomID;
      RTCHitN_instID(hits, n, k, 0) = args->context->instID[0];
      RTCHitN_u(hits, n, k) = 0.0f;
      RTCHitN_v(hits, n, k) = 0.0f;
      RTCHitN_Ng_x(hits, n, k) = 0.0f;
      RTCHitN_Ng_y(hits, n, k) = 0.0f;
      RTCHitN_Ng_z(hits, n, k) = 1.0f;
    }
  }
}

// ---- mesh mode: a child scene of one triangle geometry (data copied).
RTCScene make_mesh_child(RTCDevice device, const Mesh& mesh) {
  return make_triangle_scene(device, mesh.positions, mesh.triangles,
                             RTC_SCENE_FLAG_NONE, RTC_BUILD_QUALITY_MEDIUM);
}

}  // namespace

// ---------------------------------------------------------- EmbreeDevice

EmbreeDevice::EmbreeDevice(int threads) {
  const std::string config = "threads=" + std::to_string(threads < 1 ? 1 : threads);
  device_ = rtcNewDevice(config.c_str());
  if (!device_) throw std::runtime_error("Embree: rtcNewDevice failed");
}

EmbreeDevice::~EmbreeDevice() {
  if (device_) rtcReleaseDevice(device_);
}

const char* EmbreeDevice::version() { return RTC_VERSION_STRING; }

// ------------------------------------------------------ EmbreeBenchScene

struct EmbreeBenchScene::Impl {
  PickMode mode;
  RTCDevice device = nullptr;
  RTCScene top = nullptr;
  // obb mode
  ObbData obb;                 // the callbacks' data
  RTCGeometry user = nullptr;  // the one user geometry (our reference)
  // mesh mode
  std::vector<RTCScene> children;      // by mesh; nullptr for an empty mesh
  std::vector<RTCGeometry> instances;  // by object id; nullptr if left out
};

const char* embree_build_name(EmbreeBuild build) {
  switch (build) {
    case EmbreeBuild::kStatic: return "static";
    case EmbreeBuild::kDynamicLow: return "dynamic low";
    case EmbreeBuild::kDynamicRefit: return "dynamic refit";
  }
  return "?";
}

EmbreeBenchScene::EmbreeBenchScene(const EmbreeDevice& device,
                                   const Scene& scene, PickMode mode, EmbreeBuild build)
    : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.mode = mode;
  im.device = device.get();
  im.top = rtcNewScene(im.device);
  const bool dynamic = build != EmbreeBuild::kStatic;
  rtcSetSceneFlags(im.top, dynamic ? RTC_SCENE_FLAG_DYNAMIC : RTC_SCENE_FLAG_NONE);
  rtcSetSceneBuildQuality(im.top, dynamic ? RTC_BUILD_QUALITY_LOW : RTC_BUILD_QUALITY_MEDIUM);
  if (mode == PickMode::kObb) {
    im.obb.local.resize(scene.meshes.size());
    for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
      im.obb.local[m] = scene.meshes[m].triangle_bounds();
    }
    const std::size_t n = scene.objects.size();
    im.obb.records.resize(n);
    im.obb.world.resize(n);
    im.obb.pad_centre = padding_centre(scene.objects);
    for (std::size_t i = 0; i < n; ++i) {
      im.obb.records[i].object_mesh = scene.objects[i].mesh;
      im.obb.set(static_cast<std::uint32_t>(i), scene.objects[i].matrix,
                 scene.objects[i].translation_low);
    }
    im.user = rtcNewGeometry(im.device, RTC_GEOMETRY_TYPE_USER);
    rtcSetGeometryUserPrimitiveCount(im.user,
                                     static_cast<unsigned>(n));
    rtcSetGeometryUserData(im.user, &im.obb);
    rtcSetGeometryBoundsFunction(im.user, obb_bounds, nullptr);
    rtcSetGeometryIntersectFunction(im.user, obb_intersect);
    if (dynamic) {
      rtcSetGeometryBuildQuality(im.user, build == EmbreeBuild::kDynamicRefit
                                              ? RTC_BUILD_QUALITY_REFIT
                                              : RTC_BUILD_QUALITY_LOW);
    }
    rtcCommitGeometry(im.user);
    rtcAttachGeometry(im.top, im.user);
  } else {
    im.children.resize(scene.meshes.size(), nullptr);
    im.instances.resize(scene.objects.size(), nullptr);
    for (std::size_t i = 0; i < scene.objects.size(); ++i) {
      const Object& obj = scene.objects[i];
      const Mesh& mesh = scene.meshes[obj.mesh];
      if (mesh.triangles.empty() || !instance_invertible(obj.matrix)) continue;
      RTCScene& child = im.children[obj.mesh];
      if (!child) child = make_mesh_child(im.device, mesh);
      // Kept for set_matrix; the scene holds it too; released in ~.
      im.instances[i] = attach_instance(im.device, im.top, child, obj.matrix,
                                        static_cast<unsigned>(i));
    }
  }
  rtcCommitScene(im.top);
  check(im.device, "building the bench scene");
}

EmbreeBenchScene::~EmbreeBenchScene() {
  if (!impl_) return;
  Impl& im = *impl_;
  if (im.top) rtcReleaseScene(im.top);
  if (im.user) rtcReleaseGeometry(im.user);
  for (RTCGeometry g : im.instances) {
    if (g) rtcReleaseGeometry(g);
  }
  for (RTCScene s : im.children) {
    if (s) rtcReleaseScene(s);
  }
}

Hit EmbreeBenchScene::intersect(const Ray& ray) const {
  const RTCRayHit rh = intersect1(impl_->top, ray);
  Hit hit;
  if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return hit;
  hit.t = rh.ray.tfar;
  if (impl_->mode == PickMode::kObb) {
    hit.object = rh.hit.primID;
  } else {
    hit.object = rh.hit.instID[0];
    hit.triangle = rh.hit.primID;
    hit.u = rh.hit.u;
    hit.v = rh.hit.v;
  }
  return hit;
}

std::vector<Hit> EmbreeBenchScene::intersect_batch(
    std::span<const Ray> rays) const {
  std::vector<Hit> out(rays.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rays.size(), 256),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t i = range.begin(); i != range.end(); ++i) {
                        out[i] = intersect(rays[i]);
                      }
                    });
  return out;
}

std::vector<Hit> EmbreeBenchScene::intersect_packets(
    std::span<const Ray> rays, std::span<const std::uint32_t> lanes,
    bool coherent) const {
  constexpr std::size_t kLanes = 16;
  std::vector<Hit> out(rays.size());
  const std::size_t packets = lanes.size() / kLanes;
  const RTCScene top = impl_->top;
  const bool obb = impl_->mode == PickMode::kObb;
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, packets, 16),
      [&](const tbb::blocked_range<std::size_t>& range) {
        RTCIntersectContext context;
        rtcInitIntersectContext(&context);
        context.flags = coherent ? RTC_INTERSECT_CONTEXT_FLAG_COHERENT
                                 : RTC_INTERSECT_CONTEXT_FLAG_INCOHERENT;
        alignas(64) int valid[kLanes];
        alignas(64) RTCRayHit16 rh;
        for (std::size_t p = range.begin(); p != range.end(); ++p) {
          const std::uint32_t* index = lanes.data() + p * kLanes;
          for (std::size_t k = 0; k < kLanes; ++k) {
            const bool on = index[k] != kNoRay;
            valid[k] = on ? -1 : 0;
            const Ray& ray = rays[on ? index[k] : 0];
            rh.ray.org_x[k] = ray.org.x;
            rh.ray.org_y[k] = ray.org.y;
            rh.ray.org_z[k] = ray.org.z;
            rh.ray.dir_x[k] = ray.dir.x;
            rh.ray.dir_y[k] = ray.dir.y;
            rh.ray.dir_z[k] = ray.dir.z;
            rh.ray.tnear[k] = ray.tmin;
            rh.ray.tfar[k] = ray.tmax;
            rh.ray.time[k] = 0.0f;
            rh.ray.mask[k] = 0xFFFFFFFFu;
            rh.ray.id[k] = 0;
            rh.ray.flags[k] = 0;
            rh.hit.geomID[k] = RTC_INVALID_GEOMETRY_ID;
            rh.hit.primID[k] = RTC_INVALID_GEOMETRY_ID;
            rh.hit.instID[0][k] = RTC_INVALID_GEOMETRY_ID;
          }
          rtcIntersect16(valid, top, &context, &rh);
          for (std::size_t k = 0; k < kLanes; ++k) {
            if (index[k] == kNoRay || rh.hit.geomID[k] == RTC_INVALID_GEOMETRY_ID) {
              continue;
            }
            Hit& hit = out[index[k]];
            hit.t = rh.ray.tfar[k];
            if (obb) {
              hit.object = rh.hit.primID[k];
            } else {
              hit.object = rh.hit.instID[0][k];
              hit.triangle = rh.hit.primID[k];
              hit.u = rh.hit.u[k];
              hit.v = rh.hit.v[k];
            }
          }
        }
      });
  check(impl_->device, "rtcIntersect16");
  return out;
}

std::vector<std::uint32_t> tile_lanes(int width, int height) {
  std::vector<std::uint32_t> lanes;
  for (int ty = 0; ty < height; ty += 4) {
    for (int tx = 0; tx < width; tx += 4) {
      for (int dy = 0; dy < 4; ++dy) {
        for (int dx = 0; dx < 4; ++dx) {
          const int x = tx + dx, y = ty + dy;
          lanes.push_back(x < width && y < height
                              ? static_cast<std::uint32_t>(y) *
                                        static_cast<std::uint32_t>(width) +
                                    static_cast<std::uint32_t>(x)
                              : kNoRay);
        }
      }
    }
  }
  return lanes;
}

std::vector<std::uint32_t> block_lanes(std::size_t count) {
  std::vector<std::uint32_t> lanes((count + 15) / 16 * 16, kNoRay);
  for (std::size_t i = 0; i < count; ++i) {
    lanes[i] = static_cast<std::uint32_t>(i);
  }
  return lanes;
}

void EmbreeBenchScene::set_matrix(std::uint32_t id, const glm::mat4& matrix) {
  Impl& im = *impl_;
  if (im.mode == PickMode::kObb) {
    im.obb.set(id, matrix);
    return;
  }
  RTCGeometry inst = im.instances[id];
  if (!inst) return;
  rtcSetGeometryTransform(inst, 0, RTC_FORMAT_FLOAT4X4_COLUMN_MAJOR,
                          &matrix[0][0]);
  rtcCommitGeometry(inst);
}

void EmbreeBenchScene::commit() {
  Impl& im = *impl_;
  if (im.user) rtcCommitGeometry(im.user);
  rtcCommitScene(im.top);
  check(im.device, "recommitting the bench scene");
}

std::size_t EmbreeBenchScene::user_data_bytes() const {
  const ObbData& d = impl_->obb;
  return d.local.capacity() * sizeof(Aabb) +
         d.records.capacity() * sizeof(PaddedRecord) +
         d.world.capacity() * sizeof(Aabb);
}

}  // namespace raypick::tools
