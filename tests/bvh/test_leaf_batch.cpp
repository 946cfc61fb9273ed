// The commit's batch of leaf frames and padded boxes (bvh/src/leaf_batch.h)
// against make_local_frame() and the Picker's padded boxes (low parts
// too), object by object and bit for bit, on matrices and boxes that
// stress them.
#include <doctest/doctest.h>

#include "compiler.h"
#include "support/frame_oracle.h"
#include "leaf_batch.h"
#include "padding.h"
#include "raypick/core/obb.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>

using namespace raypick;

namespace {

// A local box: ordinary most of the time, else flat on an axis, a point,
// empty, huge, or with a NaN or an infinite bound.
Aabb stress_box(std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  Aabb b;
  for (int a = 0; a < 3; ++a) {
    const float x = u(rng), y = u(rng);
    b.min[a] = std::min(x, y);
    b.max[a] = std::max(x, y);
  }
  const int axis = int(rng() % 3);
  switch (rng() % 14) {
    case 0: b.max[axis] = b.min[axis]; break;
    case 1: b.max = b.min; break;
    case 2: std::swap(b.min[axis], b.max[axis]); break;  // empty (unless equal)
    case 3: b = Aabb{}; break;
    case 4: b.min *= 1e30f; b.max *= 1e30f; break;
    case 5: b.max[axis] = std::numeric_limits<float>::quiet_NaN(); break;
    case 6: b.min[axis] = -std::numeric_limits<float>::infinity(); break;
    case 7: b.min[axis] = -0.0f; b.max[axis] = 0.0f; break;  // flat at zero, signs apart
    case 8: b.min[axis] = 0.0f; b.max[axis] = -0.0f; break;   // equal: not empty
    case 9: b = Aabb{glm::vec3{-0.0f}, glm::vec3{0.0f}}; break;  // a point at the origin
    default: break;
  }
  return b;
}

}  // namespace

#if RAYPICK_PACKET_AVX
constexpr bool kBatchBuilt = true;
#else
constexpr bool kBatchBuilt = false;  // Clang, or not x86: the one-object code only
#endif

TEST_CASE("the commit's batch of leaf frames and padded boxes equals the one-object code bit for bit") {
  // Each ISA's lanes (the Picker's packet width): the SSE2 width hands
  // every object back; 8 runs the AVX2 batch, 16 the AVX-512 one (the AVX2
  // one on a CPU without AVX-512), where the CPU has them.
  for (const int lanes : {4, 8, 16}) {
    CAPTURE(lanes);
    const bool batched =
        kBatchBuilt && lanes >= 8 &&
        (compiler::cpu_has_avx2() || (lanes == 16 && compiler::cpu_has_avx512()));
    std::mt19937_64 rng(2611);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    int kept = 0, kept_low = 0, back_count = 0;
    for (int round = 0; round < 6000; ++round) {
      const int kind = round % 6;
      const std::size_t n = 1 + rng() % kLeafBatch;
      glm::mat4x3 m[kLeafBatch];
      Aabb local[kLeafBatch];
      const glm::mat4x3* mp[kLeafBatch];
      const Aabb* lp[kLeafBatch];
      LocalFrame frames[kLeafBatch];
      LocalFrame* fp[kLeafBatch];
      Aabb boxes[kLeafBatch];
      // One box for all (the usual case: instances of one mesh) or one each.
      const bool shared = rng() % 2 == 0;
      for (std::size_t k = 0; k < n; ++k) {
        m[k] = test::stress_matrix(rng, kind);
        local[k] = stress_box(rng);
        mp[k] = &m[k];
        lp[k] = shared ? &local[0] : &local[k];
        fp[k] = &frames[k];
      }
      // Half the rounds give low parts (objects placed beyond float): none,
      // an ordinary one (a fraction of a float ulp of the translation), one
      // on a single axis, one that moves a bound to exactly zero, or one
      // that moves the box beyond the floats.
      glm::vec3 low[kLeafBatch];
      const bool with_low = round % 2 == 1;
      for (std::size_t k = 0; k < n; ++k) {
        low[k] = glm::vec3{0.0f};
        if (!with_low) continue;
        const glm::vec3 t = m[k][3];
        switch (rng() % 6) {
          case 0: break;
          case 1: low[k][int(rng() % 3)] = u(rng) * 1e-3f; break;
          case 2: {
            const Aabb box = transform_aabb(m[k], *lp[k]);
            if (!box.empty()) low[k].y = -box.min.y;
            break;
          }
          case 3: low[k] = glm::vec3{3e38f}; break;
          default:
            for (int a = 0; a < 3; ++a) low[k][a] = u(rng) * 1e-7f * (std::fabs(t[a]) + 1.0f);
            break;
        }
      }
      // The scene's centre: often the origin (a box at zero then has a zero
      // margin term), else anywhere near.
      const glm::vec3 centre =
          round % 3 == 0 ? glm::vec3{0.0f} : glm::vec3{u(rng), u(rng), u(rng)} * 100.0f;
      // Garbage first: a lane handed back, or past n, must be left as it was.
      std::memset(static_cast<void*>(frames), 0x5A, sizeof frames);
      std::memset(static_cast<void*>(boxes), 0xA5, sizeof boxes);
      unsigned char frame_garbage[sizeof(LocalFrame)], box_garbage[sizeof(Aabb)];
      std::memset(frame_garbage, 0x5A, sizeof frame_garbage);
      std::memset(box_garbage, 0xA5, sizeof box_garbage);
      const unsigned back =
          leaf_frames_and_boxes(lanes, n, mp, lp, with_low ? low : nullptr, centre, fp, boxes);
      CAPTURE(round);
      REQUIRE((back >> n) == 0u);
      for (std::size_t k = n; k < kLeafBatch; ++k) {
        REQUIRE(std::memcmp(&frames[k], frame_garbage, sizeof frame_garbage) == 0);
        REQUIRE(std::memcmp(&boxes[k], box_garbage, sizeof box_garbage) == 0);
      }
      for (std::size_t k = 0; k < n; ++k) {
        CAPTURE(k);
        LocalFrame want_frame;
        const bool invertible = make_local_frame(*mp[k], want_frame);
        // As the Picker's padded_box().
        const bool shifted = low[k] != glm::vec3{0.0f};
        const Aabb want_box =
            shifted ? pad(shift_outward(transform_aabb(*mp[k], *lp[k]), low[k]), centre)
                    : pad_transformed_box(*mp[k], *lp[k], centre);
        if ((back >> k) & 1u) {
          ++back_count;
          REQUIRE(std::memcmp(&frames[k], frame_garbage, sizeof frame_garbage) == 0);
          REQUIRE(std::memcmp(&boxes[k], box_garbage, sizeof box_garbage) == 0);
          // Handed back only where the one-object code takes another branch.
          if (batched) {
            auto finite = [](const Aabb& b) {
              return !b.empty() && std::isfinite(b.min.x) && std::isfinite(b.min.y) &&
                     std::isfinite(b.min.z) && std::isfinite(b.max.x) &&
                     std::isfinite(b.max.y) && std::isfinite(b.max.z);
            };
            // A shifted bound at zero is std::nextafter's case apart.
            const Aabb moved = transform_aabb(*mp[k], *lp[k]);
            bool at_zero = false;
            for (int a = 0; a < 3; ++a) {
              at_zero = at_zero || moved.min[a] + low[k][a] == 0.0f ||
                        moved.max[a] + low[k][a] == 0.0f;
            }
            CHECK_FALSE((invertible && finite(*lp[k]) && finite(want_box) &&
                         !(shifted && at_zero)));
          }
          continue;
        }
        ++kept;
        kept_low += shifted ? 1 : 0;
        REQUIRE(invertible);
        REQUIRE(std::memcmp(&frames[k], &want_frame, sizeof want_frame) == 0);
        REQUIRE(std::memcmp(&boxes[k], &want_box, sizeof want_box) == 0);
      }
    }
    if (batched) {
      // Most objects are ordinary: the batch made them.
      CHECK(kept > 10000);
      CHECK(kept_low > 3000);
      CHECK(back_count > 0);
    } else {
      MESSAGE("lanes " << lanes << ": every object is handed back to the one-object code");
      CHECK(kept == 0);
    }
  }
}

TEST_CASE("the batch's outward step is std::nextafter's at subnormals and the float range's ends") {
  // Unit boxes [0, 1]^3, each placed by a translation and moved by a low
  // part so that a shifted bound lands on a case apart: a subnormal (up
  // and down), FLT_MAX stepped up to +inf, -FLT_MAX stepped down to -inf,
  // beyond the floats (handed back), exactly zero (handed back). The low
  // part moves every axis: the others sit away from zero.
  const float big = std::numeric_limits<float>::max();
  struct Case {
    glm::vec3 t, low;
    bool back;
  };
  const Case cases[] = {
      {{0.0f, 0.0f, 5.0f}, {1e-40f, -1e-40f, 0.0f}, false},
      {{big - 1.0f, 5.0f, 5.0f}, {-1e30f, 0.0f, 0.0f}, false},
      {{3e38f, 5.0f, 5.0f}, {3e38f, 0.0f, 0.0f}, true},
      {{-big, 5.0f, 5.0f}, {-1e30f, 0.0f, 0.0f}, false},
      {{-1.0f, 2.0f, 5.0f}, {1.0f, 0.0f, 0.0f}, true},
  };
  constexpr std::size_t n = std::size(cases);
  const Aabb unit{glm::vec3{0.0f}, glm::vec3{1.0f}};
  glm::mat4x3 m[n];
  const glm::mat4x3* mp[n];
  const Aabb* lp[n];
  glm::vec3 low[n];
  LocalFrame frames[n];
  LocalFrame* fp[n];
  Aabb boxes[n];
  for (std::size_t k = 0; k < n; ++k) {
    m[k] = glm::mat4x3(1.0f);
    m[k][3] = cases[k].t;
    mp[k] = &m[k];
    lp[k] = &unit;
    low[k] = cases[k].low;
    fp[k] = &frames[k];
  }
  const glm::vec3 centre{0.0f};
  for (const int lanes : {8, 16}) {
    CAPTURE(lanes);
    if (!kBatchBuilt || !compiler::cpu_has_avx2()) {
      MESSAGE("no AVX2 here: the batch is not built or cannot run");
      break;
    }
    const unsigned back = leaf_frames_and_boxes(lanes, n, mp, lp, low, centre, fp, boxes);
    for (std::size_t k = 0; k < n; ++k) {
      CAPTURE(k);
      CHECK(((back >> k) & 1u) == (cases[k].back ? 1u : 0u));
      if ((back >> k) & 1u) continue;
      const Aabb want = pad(shift_outward(transform_aabb(m[k], unit), low[k]), centre);
      CHECK(std::memcmp(&boxes[k], &want, sizeof want) == 0);
    }
  }
}
