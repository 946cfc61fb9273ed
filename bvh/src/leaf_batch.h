// The leaf copies' frames and padded world boxes of many moved objects at
// once: what a commit after many moves computes for each of them
// (make_local_frame() and pad_transformed_box()), several objects per SIMD
// operation, each lane bit for bit the one-object code's answer. Private to
// the library.
#pragma once

#include "raypick/core/aabb.h"
#include "raypick/core/obb.h"

#include <glm/mat4x3.hpp>
#include <glm/vec3.hpp>

#include <cstddef>

namespace raypick {

// Objects per call of leaf_frames_and_boxes().
inline constexpr std::size_t kLeafBatch = 8;

// For objects k < n (n <= kLeafBatch), each placed by *m[k] over the local
// box *local[k]: make_local_frame(*m[k], *frames[k]) and into boxes[k]
// pad_transformed_box(*m[k], *local[k], centre), or, where `low` is not
// null and low[k] is not zero (an object placed beyond float: its low
// part), pad(shift_outward(transform_aabb(*m[k], *local[k]), low[k]),
// centre), as the Picker's padded_box(). Only for the objects whose frame
// is invertible and whose box takes the one-object code's ordinary path (a
// local box not empty, no NaN on the way, no shifted bound at zero or
// beyond the floats; a world box that overflows to infinity is kept, the
// same bits). The others are left untouched and come back as bits (bit k:
// object k), for the caller to make one at a time; so are frames[k] and
// boxes[k] for k >= n.
// `lanes` is the Picker's packet width (its ISA, chosen once): 16 runs the
// eight objects in one AVX-512 pass where the CPU has it, 8 (or 16 without
// AVX-512) in one AVX2 pass, the doubles four per operation; otherwise
// every object comes back, to the one-object code (SSE2).
unsigned leaf_frames_and_boxes(int lanes, std::size_t n, const glm::mat4x3* const* m,
                               const Aabb* const* local, const glm::vec3* low,
                               const glm::vec3& centre, LocalFrame* const* frames,
                               Aabb* boxes);

}  // namespace raypick
