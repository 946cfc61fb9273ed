// Small Embree helpers shared by the validation reference and the bench.
#pragma once

#include <embree3/rtcore.h>

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

}  // namespace raypick::tools
