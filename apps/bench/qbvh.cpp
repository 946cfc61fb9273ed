#include "qbvh.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace raypick {
namespace {

// The per-axis step of a node spanning [lo, hi]: the smallest float s found
// from (hi - lo) / 255 upward for which QNode::bound(lo, s, 255) >= hi, so
// that quantum 255 reaches the node's max as the tests compute it.
float axis_scale(float lo, float hi) {
  if (!(hi > lo)) return 0.0f;
  float s = (hi - lo) / 255.0f;
  if (s == 0.0f) s = std::numeric_limits<float>::denorm_min();
  while (QNode::bound(lo, s, 255) < hi) s = std::nextafter(s, std::numeric_limits<float>::infinity());
  return s;
}

// The largest quantum whose bound is <= v (v >= origin: quantum 0 is the
// origin itself).
std::uint8_t quantize_down(float origin, float scale, float v) {
  if (scale == 0.0f) return 0;
  float q = std::floor((v - origin) / scale);
  q = std::min(255.0f, std::max(0.0f, q));
  auto k = static_cast<int>(q);
  while (k > 0 && QNode::bound(origin, scale, static_cast<std::uint8_t>(k)) > v) --k;
  while (k < 255 && QNode::bound(origin, scale, static_cast<std::uint8_t>(k + 1)) <= v) ++k;
  return static_cast<std::uint8_t>(k);
}

// The smallest quantum whose bound is >= v (v <= the node's max: quantum
// 255 reaches it).
std::uint8_t quantize_up(float origin, float scale, float v) {
  if (scale == 0.0f) return 0;
  float q = std::ceil((v - origin) / scale);
  q = std::min(255.0f, std::max(0.0f, q));
  auto k = static_cast<int>(q);
  while (k < 255 && QNode::bound(origin, scale, static_cast<std::uint8_t>(k)) < v) ++k;
  while (k > 0 && QNode::bound(origin, scale, static_cast<std::uint8_t>(k - 1)) >= v) --k;
  return static_cast<std::uint8_t>(k);
}

}  // namespace

QBvh QBvh::from_wide(const WideBvh& wide) {
  QBvh out;
  out.entries = wide.entry_count();
  out.nodes.resize(wide.nodes().size());
  for (std::size_t i = 0; i < wide.nodes().size(); ++i) {
    const WideNode& w = wide.nodes()[i];
    QNode& q = out.nodes[i];
    std::memset(&q, 0, sizeof q);
    const Aabb box = w.box();
    for (int a = 0; a < 3; ++a) {
      q.origin[a] = box.min[a];
      q.scale[a] = axis_scale(box.min[a], box.max[a]);
    }
    for (int s = 0; s < QNode::kWidth; ++s) {
      q.child[s] = w.child[s];
      q.count[s] = static_cast<std::uint8_t>(w.count[s]);
      const bool used = w.child[s] != WideNode::kInvalidSlot;
      if (!used) {
        for (int a = 0; a < 3; ++a) {
          q.lo[a][s] = 255;
          q.hi[a][s] = 0;
        }
        continue;
      }
      q.used |= static_cast<std::uint8_t>(1u << s);
      const Aabb b = w.slot_box(s);
      for (int a = 0; a < 3; ++a) {
        q.lo[a][s] = quantize_down(q.origin[a], q.scale[a], b.min[a]);
        q.hi[a][s] = quantize_up(q.origin[a], q.scale[a], b.max[a]);
      }
    }
  }
  out.blocks.resize((out.entries + ObbBlock::kLanes - 1) / ObbBlock::kLanes);
  std::memset(out.blocks.data(), 0, out.blocks.size() * sizeof(ObbBlock));
  return out;
}

void QBvh::set_entry(std::uint32_t e, const LocalFrame& frame, const Aabb& local,
                     std::uint32_t object) {
  ObbBlock& b = blocks[e / ObbBlock::kLanes];
  const int k = static_cast<int>(e % ObbBlock::kLanes);
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 3; ++r) b.linear[3 * c + r][k] = frame.linear[c][r];
    b.origin[c][k] = frame.origin[c];
    b.lo[c][k] = local.min[c];
    b.hi[c][k] = local.max[c];
  }
  b.object[k] = object;
}

}  // namespace raypick
