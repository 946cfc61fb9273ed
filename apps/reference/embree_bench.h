// Embree's best configuration for picking, raced against raypick by
// `raypick bench` (docs/performance.md). Unlike EmbreeScene (validate's reference, which
// sees each OBB as 12 robust triangles), this is built for speed and, in obb
// mode, for answers identical to raypick's:
//
// - obb mode: ONE scene holding ONE user geometry with a primitive per
//   object (primID = object id). The bounds callback gives the object's OBB
//   world box (the abs-matrix method, padded by the same few ulps as
//   raypick's top level); the intersect callback runs raypick's own leaf
//   test, raypick::obb_entry (the ray carried into the box's frame by the
//   object's LocalFrame, then the slab test), and keeps the nearer hit, equal t
//   going to the lower object id. So both compute the same t for every
//   ray and object, and must pick the same object at the same t.
// - mesh mode: each mesh one triangle geometry in its own child scene;
//   each object an instance of its mesh's child scene, attached under its
//   object id (instID = object id, primID = triangle id).
//
// Scenes use RTC_SCENE_FLAG_NONE (not ROBUST) and RTC_BUILD_QUALITY_MEDIUM
// (Embree's defaults). Queries are rtcIntersect1; batches run
// tbb::parallel_for over blocks of 256 rays, each ray an rtcIntersect1;
// packet batches run tbb::parallel_for over packets of 16 rays, each an
// rtcIntersect16 (obb mode: the intersect callback then sees N = 16 lanes
// and runs obb_entry on each valid one).
#pragma once

#include "raypick/bvh/picker.h"
#include "raypick/core/hit.h"
#include "raypick/core/obb.h"
#include "raypick/core/ray.h"
#include "raypick/core/scene.h"

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

struct RTCDeviceTy;  // Embree's device, as <embree3/rtcore_device.h> names it

namespace raypick::tools {

// One Embree device, configured "threads=T" (T = 1 unless asked), which
// also caps TBB's parallelism while it lives (Embree's TBB task scheduler
// installs a tbb::global_control). Create it once, outside timed regions.
class EmbreeDevice {
 public:
  explicit EmbreeDevice(int threads = 1);
  ~EmbreeDevice();
  EmbreeDevice(const EmbreeDevice&) = delete;
  EmbreeDevice& operator=(const EmbreeDevice&) = delete;
  RTCDeviceTy* get() const { return device_; }
  // The Embree version this was built against, e.g. "3.13.5".
  static const char* version();

 private:
  RTCDeviceTy* device_ = nullptr;
};

// The scene in Embree's best configuration for `mode` (see above). The
// constructor is the build (what bench times): geometries created, data
// copied, scenes committed. Objects that can never be hit (empty mesh,
// singular matrix) are left out. Throws std::runtime_error on an Embree
// error. The device must outlive the scene.
// How the scene is built for updates (the dynamic frame row tries each):
//   kStatic        a static scene of build quality MEDIUM (what every other
//                  row uses): a commit rebuilds the whole scene;
//   kDynamicLow    RTC_SCENE_FLAG_DYNAMIC, scene and geometries of build
//                  quality LOW (Embree's two-level mode for partial updates);
//   kDynamicRefit  as kDynamicLow, with the obb mode's user geometry of
//                  build quality REFIT (its BVH refitted, not rebuilt; mesh
//                  mode's instances have no BVH of their own: as kDynamicLow).
enum class EmbreeBuild { kStatic, kDynamicLow, kDynamicRefit };
const char* embree_build_name(EmbreeBuild build);

class EmbreeBenchScene {
 public:
  EmbreeBenchScene(const EmbreeDevice& device, const Scene& scene,
                   PickMode mode, EmbreeBuild build = EmbreeBuild::kStatic);
  ~EmbreeBenchScene();
  EmbreeBenchScene(const EmbreeBenchScene&) = delete;
  EmbreeBenchScene& operator=(const EmbreeBenchScene&) = delete;

  // The nearest hit (rtcIntersect1) in [ray.tmin, ray.tmax]: object and t;
  // in mesh mode also triangle, u, v. Thread-safe between commits.
  Hit intersect(const Ray& ray) const;

  // intersect() for every ray, rtcIntersect1 under tbb::parallel_for
  // (blocks of 256 rays) on as many threads as TBB is allowed.
  std::vector<Hit> intersect_batch(std::span<const Ray> rays) const;

  // intersect() for every ray by Embree's packet API: rtcIntersect16 on
  // the packets `lanes` lists, 16 ray indices each (kNoRay: an inactive
  // lane), under tbb::parallel_for (blocks of 16 packets). `coherent` sets
  // RTC_INTERSECT_CONTEXT_FLAG_COHERENT (camera tiles), otherwise
  // INCOHERENT. Rays that no packet lists keep a miss.
  std::vector<Hit> intersect_packets(std::span<const Ray> rays,
                                     std::span<const std::uint32_t> lanes,
                                     bool coherent) const;

  // Moves an object (takes effect at commit()): obb mode recomputes its
  // inverse and world box (raypick's Obb::make, as Picker::commit does);
  // mesh mode sets the instance's transform and commits that geometry.
  // Objects left out at build are ignored.
  void set_matrix(std::uint32_t id, const glm::mat4& matrix);

  // Recommits after moves. Embree cannot refit a scene's BVH here: obb
  // mode recommits the user geometry (bounds callback for every primitive)
  // and rebuilds the scene; mesh mode rebuilds the top level over the
  // instances (the child scenes are unchanged).
  void commit();

  // Bytes of the arrays this class keeps for Embree's callbacks, outside
  // Embree: in obb mode 88 bytes per object, a 64-byte record (the
  // object's frame, mesh: what raypick's leaf copies hold) and the padded world box
  // (which the bounds callback needs at every rebuild); 0 in mesh mode,
  // where Embree holds everything.
  std::size_t user_data_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Packet lanes for intersect_packets. An inactive lane.
inline constexpr std::uint32_t kNoRay = 0xFFFFFFFFu;
// 4x4 pixel tiles of a width x height image whose rays are in row-major
// order (as make_camera_rays makes them), tiles themselves row-major; lanes
// past the image's right or bottom edge are kNoRay.
std::vector<std::uint32_t> tile_lanes(int width, int height);
// Consecutive blocks of 16 rays (the last one padded with kNoRay).
std::vector<std::uint32_t> block_lanes(std::size_t count);

}  // namespace raypick::tools
