// Small Embree helpers shared by the validation reference and the bench.
#pragma once

#include <embree3/rtcore.h>

#include "raypick/core/ray.h"

#include <glm/vec3.hpp>

#include <span>

namespace raypick::tools {

// Throws std::runtime_error naming `what` when the device reports an error.
void check_embree(RTCDevice device, const char* what);

// A committed scene of one triangle geometry holding a copy of the mesh.
RTCScene make_triangle_scene(RTCDevice device,
                             std::span<const glm::vec3> positions,
                             std::span<const glm::uvec3> triangles,
                             RTCSceneFlags flags, RTCBuildQuality quality);

// An RTCRayHit for rtcIntersect1: the ray over [tmin, tmax], all mask bits,
// no hit yet (geomID, primID and instID[0] invalid).
RTCRayHit make_rayhit(const Ray& ray);

}  // namespace raypick::tools
