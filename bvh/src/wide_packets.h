// The wide tree's packets: kPacket coherent rays walking the tree together
// (WideBvhOf::traverse_packets). Included by wide_bvh.h.
#pragma once

#include "wide_bvh.h"

namespace raypick {

template <int W>
inline bool WideBvhOf<W>::packet_coherent(std::span<const Ray> rays, float extent) {
  const Ray& r0 = rays[0];
  const glm::vec3 d0 = r0.dir / glm::length(r0.dir);
  const float origin_limit = extent * (1.0f / 64.0f);
  for (const Ray& r : rays) {
    const glm::vec3 d = r.dir / glm::length(r.dir);
    for (int a = 0; a < 3; ++a) {
      if (std::signbit(r.dir[a]) != std::signbit(r0.dir[a])) return false;
      // Written so that NaN fails.
      if (!(std::abs(d[a] - d0[a]) <= 0.25f)) return false;
      if (!(std::abs(r.org[a] - r0.org[a]) <= origin_limit)) return false;
    }
  }
  return true;
}

template <int W>
template <class Leaf>
void WideBvhOf<W>::traverse_packets(std::span<const Ray> rays, Leaf&& leaf) const {
  using namespace wide_detail;
  if (nodes_.empty() || rays.empty()) return;
#if RAYPICK_WIDE_SSE
  constexpr int kGroups = kPacket / 4;
  static_assert(kPacket % 4 == 0 && kPacket <= 32, "packet masks are 32-bit, groups of 4");
  // A stack entry: a node or a leaf's run, the rays that entered its box
  // and where each of them entered it.
  struct PEntry {
    alignas(16) float tn[kPacket];
    std::uint32_t index;
    std::uint32_t count;
    std::uint32_t mask;
  };
  // On the heap: kStackSizeOf<W> entries of 80 bytes could strain a small
  // thread stack.
  const auto stack = std::make_unique_for_overwrite<PEntry[]>(kStackSizeOf<W>);
  const Aabb root = bounds();
  const glm::vec3 size = root.max - root.min;
  const float extent = std::max(size.x, std::max(size.y, size.z));
  alignas(16) float org[3][kPacket], inv[3][kPacket], tmin[kPacket], tmax[kPacket];
  alignas(16) float slot_tn[W][kPacket];
  for (std::size_t base = 0; base < rays.size(); base += kPacket) {
    const std::size_t n = std::min<std::size_t>(kPacket, rays.size() - base);
    const std::span<const Ray> group = rays.subspan(base, n);
    if (n == 1 || !packet_coherent(group, extent)) {
      for (std::size_t i = 0; i < n; ++i) {
        traverse(group[i], [&](std::uint32_t entry, float& t) {
          leaf(base + i, entry, t);
          return false;
        });
      }
      continue;
    }
    // Every ray shares the first one's direction signs.
    int near_row[3], far_row[3];
    for (int a = 0; a < 3; ++a) {
      const bool neg = std::signbit(group[0].dir[a]);
      near_row[a] = neg ? 3 + a : a;
      far_row[a] = neg ? a : 3 + a;
    }
    for (int k = 0; k < kPacket; ++k) {
      if (k < static_cast<int>(n)) {
        const RayInv ri(group[k]);
        for (int a = 0; a < 3; ++a) {
          org[a][k] = ri.org[a];
          inv[a][k] = ri.inv_dir[a];
        }
        tmin[k] = ri.tmin;
        tmax[k] = ri.tmax;
      } else {
        // Padding lanes: never in a mask; finite values only.
        for (int a = 0; a < 3; ++a) org[a][k] = inv[a][k] = 0.0f;
        tmin[k] = tmax[k] = 0.0f;
      }
    }
    bool one_origin = true;
    for (std::size_t k = 1; k < n; ++k) {
      for (int a = 0; a < 3; ++a) {
        one_origin = one_origin && std::bit_cast<std::uint32_t>(org[a][k]) ==
                                       std::bit_cast<std::uint32_t>(org[a][0]);
      }
    }
    const std::uint32_t all = n == 32 ? 0xFFFFFFFFu : (1u << n) - 1u;
    int top = 0;
    std::uint32_t cur_index = 0, cur_count = 0, cur_mask = all;
    for (;;) {
      if (cur_count != 0) {
        for (std::uint32_t m = cur_mask; m != 0; m &= m - 1) {
          const int k = std::countr_zero(m);
          for (std::uint32_t i = 0; i < cur_count; ++i) leaf(base + k, cur_index + i, tmax[k]);
        }
      } else {
        const Node& nd = nodes_[cur_index];
        // Used slots: child != kInvalidSlot.
        const __m128i ones = _mm_set1_epi32(-1);
        unsigned unused = 0;
        for (int h = 0; h < W; h += 4) {
          unused |= static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(
                        _mm_load_si128(reinterpret_cast<const __m128i*>(nd.child + h)), ones))))
                    << h;
        }
        unsigned groups = 0;
        for (int g = 0; g < kGroups; ++g) {
          if ((cur_mask >> (4 * g)) & 0xFu) groups |= 1u << g;
        }
        std::uint32_t slot_mask[W];
        float key[W];
        unsigned hit_slots = 0;
        // The slots' tests, four rays per operation; with one origin for
        // the packet, each plane's (bound - origin) is the same for every
        // ray and computed once (the same value as lane by lane).
        auto test_slots = [&]<bool kOneOrigin>() {
          for (unsigned used = ~unused & ((1u << W) - 1u); used != 0; used &= used - 1) {
            const int s = std::countr_zero(used);
            __m128 bn[3], bf[3];
            for (int a = 0; a < 3; ++a) {
              if constexpr (kOneOrigin) {
                bn[a] = _mm_set1_ps(nd.bounds[near_row[a]][s] - org[a][0]);
                bf[a] = _mm_set1_ps(nd.bounds[far_row[a]][s] - org[a][0]);
              } else {
                bn[a] = _mm_set1_ps(nd.bounds[near_row[a]][s]);
                bf[a] = _mm_set1_ps(nd.bounds[far_row[a]][s]);
              }
            }
            std::uint32_t m = 0;
            for (unsigned gs = groups; gs != 0; gs &= gs - 1) {
              const int g = std::countr_zero(gs);
              // test_node()'s arithmetic, lane by lane.
              __m128 t_near = _mm_load_ps(tmin + 4 * g), t_far = _mm_load_ps(tmax + 4 * g);
              for (int a = 0; a < 3; ++a) {
                const __m128 i = _mm_load_ps(inv[a] + 4 * g);
                __m128 dn = bn[a], df = bf[a];
                if constexpr (!kOneOrigin) {
                  const __m128 o = _mm_load_ps(org[a] + 4 * g);
                  dn = _mm_sub_ps(dn, o);
                  df = _mm_sub_ps(df, o);
                }
                t_near = _mm_max_ps(_mm_mul_ps(dn, i), t_near);
                t_far = _mm_min_ps(_mm_mul_ps(df, i), t_far);
              }
              const __m128 h = _mm_cmple_ps(t_near, t_far);
              _mm_store_ps(slot_tn[s] + 4 * g, t_near);
              m |= static_cast<std::uint32_t>(_mm_movemask_ps(h)) << (4 * g);
            }
            m &= cur_mask;
            slot_mask[s] = m;
            if (m != 0) {
              hit_slots |= 1u << s;
              // The order's key: where the first ray that hits enters.
              key[s] = slot_tn[s][std::countr_zero(m)];
            }
          }
        };
        if (one_origin) {
          test_slots.template operator()<true>();
        } else {
          test_slots.template operator()<false>();
        }
        if (hit_slots != 0) {
          // Sort the hit slots by descending key; push all but the last.
          int order[W];
          int k = 0;
          for (unsigned hs = hit_slots; hs != 0; hs &= hs - 1) {
            const int s = std::countr_zero(hs);
            int j = k++;
            while (j > 0 && key[order[j - 1]] < key[s]) {
              order[j] = order[j - 1];
              --j;
            }
            order[j] = s;
          }
          for (int j = 0; j + 1 < k; ++j) {
            const int s = order[j];
            PEntry& e = stack[top++];
            for (int g = 0; g < kGroups; ++g) {
              _mm_store_ps(e.tn + 4 * g, _mm_load_ps(slot_tn[s] + 4 * g));
            }
            e.index = nd.child[s];
            e.count = nd.count[s];
            e.mask = slot_mask[s];
          }
          const int s = order[k - 1];
          cur_index = nd.child[s];
          cur_count = nd.count[s];
          cur_mask = slot_mask[s];
          continue;
        }
      }
      // Pop the next entry some ray can still reach.
      bool found = false;
      while (top > 0) {
        const PEntry& e = stack[--top];
        std::uint32_t m = 0;
        for (int g = 0; g < kGroups; ++g) {
          m |= static_cast<std::uint32_t>(_mm_movemask_ps(
                   _mm_cmple_ps(_mm_load_ps(e.tn + 4 * g), _mm_load_ps(tmax + 4 * g))))
               << (4 * g);
        }
        m &= e.mask;
        if (m != 0) {
          cur_index = e.index;
          cur_count = e.count;
          cur_mask = m;
          found = true;
          break;
        }
      }
      if (!found) break;
    }
  }
#else
  for (std::size_t i = 0; i < rays.size(); ++i) {
    traverse(rays[i], [&](std::uint32_t entry, float& t) {
      leaf(i, entry, t);
      return false;
    });
  }
#endif
}

}  // namespace raypick
