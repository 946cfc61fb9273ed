// Small Embree helpers shared by the validation reference and the bench.
#pragma once

#include <embree3/rtcore.h>

#include "raypick/core/ray.h"

#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include <span>

namespace raypick::tools {

// Throws std::runtime_error naming `what` when the device reports an error.
void check_embree(RTCDevice device, const char* what);

// A committed scene of one triangle geometry holding a copy of the mesh,
// with `point_query` as the geometry's point-query callback (none when
// null).
RTCScene make_triangle_scene(RTCDevice device,
                             std::span<const glm::vec3> positions,
                             std::span<const glm::uvec3> triangles,
                             RTCSceneFlags flags, RTCBuildQuality quality,
                             RTCPointQueryFunction point_query = nullptr);

// Whether Embree can instance under `matrix`: core's is_invertible, the
// test by which raypick never hits a singular object.
bool instance_invertible(const glm::mat4& matrix);

// A committed instance of `child` under `matrix`, attached to `top` as
// geometry `id` (so hits report instID[0] = id). The caller owns the
// returned reference (the scene holds one too).
RTCGeometry attach_instance(RTCDevice device, RTCScene top, RTCScene child,
                            const glm::mat4& matrix, unsigned id);

// An RTCRayHit for rtcIntersect1: the ray over [tmin, tmax], all mask bits,
// no hit yet (geomID, primID and instID[0] invalid).
RTCRayHit make_rayhit(const Ray& ray);

// rtcIntersect1 of `ray` in the committed `scene` (a default context): the
// RTCRayHit as Embree leaves it, geomID RTC_INVALID_GEOMETRY_ID on a miss.
RTCRayHit intersect1(RTCScene scene, const Ray& ray);

}  // namespace raypick::tools
