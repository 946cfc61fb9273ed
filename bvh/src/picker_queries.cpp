// The Picker's ray queries: the nearest hit, any hit, all hits and batches,
// over the top level and, in mesh mode, each object's triangle tree; and
// the explicit instances of PickerCore's query templates (Ray and RayD).
#include "packet_obb.h"
#include "picker_impl.h"
#include "triangle4.h"

#include "raypick/core/assert.h"
#include "raypick/core/ray_triangle.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <optional>

namespace raypick {

namespace {

// Tie order within one object: nearer t, then lower triangle id.
bool better_in_object(float t, std::uint32_t tri, const Hit& best) {
  return t < best.t || (t == best.t && tri < best.triangle);
}

}  // namespace

namespace {

// The ray the top level's box tests use: a RayD's origin rounded to float.
// The world boxes are padded by at least 2 ulps of their coordinates, more
// than that rounding (half an ulp of the origin's) unless the origin's
// coordinates are over 4 times the box's, where that rounding is an ulp or
// two of the distance, within the contract's tolerance.
const Ray& traversal_ray(const Ray& ray) { return ray; }
Ray traversal_ray(const RayD& ray) { return to_float(ray); }

}  // namespace

// The nearest hit on one top-level leaf object with t <= tmax (any hit when
// kAny): the OBB test on the leaf's own copy of the object's frame, or the
// object's triangles.
template <bool kAny, class R>
RAYPICK_HOT_INLINE Hit PickerCore::leaf_hit(const LeafObb& leaf, const R& ray, float tmax,
                     PickMode mode) const {
  if (mode == PickMode::kMesh) return mesh_hit<kAny>(leaf, ray, tmax);
  Hit best;
  if (leaf.mesh == kInvalidId) return best;  // singular matrix
  // obb_entry's steps, the ray carried by carry().
  Ray r = carry(leaf, ray);
  r.tmax = tmax;
  const float t = slab_entry(RayInv(r), meshes_[leaf.mesh].bounds);
  if (t != kInfinity) {
    best.object = leaf.object;
    best.t = t;
  }
  return best;
}

// The nearest triangle hit on one object with t <= tmax (any hit when
// kAny), the ray carried into the mesh's frame by the leaf's frame.
template <bool kAny, class R>
Hit PickerCore::mesh_hit(const LeafObb& leaf, const R& ray, float tmax) const {
  if (leaf.mesh == kInvalidId) return Hit{};  // singular matrix
  // Two bounds. The triangle tests take hits up to tmax, then the best t
  // so far (inclusive, so that ties reach better_in_object()). The box
  // walk goes a little further (mesh_walk_reach): a triangle's float t can
  // round a few ulps below the exact hit, and so below the float entry of
  // its own leaf's box, which a walk bounded by that t would cull. This
  // lost ties to the higher id, and could lose a nearer triangle.
  Ray local = carry(leaf, ray);
  local.tmax = mesh_walk_reach(tmax);
  return mesh_walk<kAny>(leaf, local, tmax);
}

template <bool kAny>
Hit PickerCore::mesh_walk(const LeafObb& leaf, const Ray& local, float tmax) const {
  Hit best;
  const MeshAccel& mesh = meshes_[leaf.mesh];
  RAYPICK_ASSERT(mesh.bvh_built, "mesh mode needs PickerConfig::mesh_mode");
  const std::uint32_t id = leaf.object;
  float test_tmax = tmax;
  // A direction (or origin) that overflows float in the object's frame (a
  // huge world direction under an inverse scale above 1) has no float ray
  // to walk: its inverse would be 0, every unused slot's infinite planes
  // would give 0 * inf = NaN, which the slab test ignores, and the walk
  // would follow them. That object is a miss (docs/precision.md).
  for (int a = 0; a < 3; ++a) {
    if (!std::isfinite(local.dir[a]) || !std::isfinite(local.org[a])) return best;
  }
  // The triangle test's ray, made at the first leaf the ray reaches: many
  // rays that enter an object's box reach none (a crowd's figures fill a
  // small part of their boxes), and it costs three divisions.
  std::optional<TriangleRay> tri_ray;
  // The triangle's hit, when it is better than best.
  auto keep = [&](std::uint32_t entry, float t, float u, float v, float& walk_tmax) {
    // The id (a read of another array) only for a hit.
    const std::uint32_t tri = mesh.prim_id(entry);
    if (!better_in_object(t, tri, best)) return false;
    best.object = id;
    best.t = t;
    best.triangle = tri;
    best.u = u;
    best.v = v;
    test_tmax = t;
    walk_tmax = mesh_walk_reach(t);
    return true;
  };
  // A leaf's triangles four at a time, each lane intersect_triangle()'s
  // answer (triangle4.h). A lane's hit is against the tmax the four
  // started with: better_in_object() then keeps the nearest of them under
  // the same total order as one at a time. The step stays a call: inlined
  // into the mesh tree's walk, it made that loop slower (crowd-300 camera
  // 51 -> 56 ns per ray, idle, with the one-triangle step).
  auto leaf_run = [&](wide_detail::LeafRun run, float& walk_tmax) RAYPICK_NOINLINE {
    if (!tri_ray) tri_ray.emplace(local.org, local.dir);
    for (std::uint32_t first = 0; first < run.count; first += 4) {
      const std::uint32_t base = run.index + first;
      const unsigned n = std::min<std::uint32_t>(4, run.count - first);
#if RAYPICK_WIDE_SSE
      const Triangle4Hits h4 =
          intersect_triangles4(*tri_ray, &mesh.verts[base], n, local.tmin, test_tmax);
      for (unsigned m = h4.hit; m != 0; m &= m - 1) {
        const int k = std::countr_zero(m);
        if (keep(base + k, h4.t[k], h4.u[k], h4.v[k], walk_tmax) && kAny) return true;
      }
      unsigned redo = h4.redo;
#else
      unsigned redo = (1u << n) - 1u;
#endif
      for (; redo != 0; redo &= redo - 1) {
        const std::uint32_t entry = base + std::countr_zero(redo);
        const std::array<glm::vec3, 3>& v = mesh.verts[entry];
        const TriangleHit h =
            intersect_triangle(*tri_ray, v[0], v[1], v[2], local.tmin, test_tmax);
        if (h.hit && keep(entry, h.t, h.u, h.v, walk_tmax) && kAny) return true;
      }
    }
    return false;
  };
  mesh.with_bvh([&](const auto& tree) { tree.traverse(local, leaf_run); });
  return best;
}

template <class R>
RAYPICK_HOT_INLINE bool PickerCore::closest_leaf(std::uint32_t entry, const R& ray,
                          const QueryOptions& options, float& tmax,
                          Hit& best) const {
  const LeafObb& leaf = leaf_[entry];
  if (!accepts(leaf, options)) return false;
  const Hit h = leaf_hit<false>(leaf, ray, tmax, options.mode);
  keep_if_closer(h, tmax, best);
  return false;
}

template <class R>
PickResult PickerCore::intersect(const R& ray, const QueryOptions& options) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(),
                 "commit() the picker before querying it");
  PickResult r;
  // A bad ray is the host's input, not a bug of ours: a miss, never an abort.
  if (!is_valid(ray)) return r;
  r.stats = with_top([&](const auto& top) {
    return top.traverse(traversal_ray(ray), [&](std::uint32_t entry, float& tmax) {
      return closest_leaf(entry, ray, options, tmax, r.hit);
    });
  });
  return r;
}


template <class R>
bool PickerCore::occluded(const R& ray, const QueryOptions& options) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(),
                 "commit() the picker before querying it");
  bool found = false;
  if (!is_valid(ray)) return found;
  with_top([&](const auto& top) {
    top.traverse(traversal_ray(ray), [&](std::uint32_t entry, float& tmax) {
      const LeafObb& leaf = leaf_[entry];
      if (!accepts(leaf, options)) return false;
      found = leaf_hit<true>(leaf, ray, tmax, options.mode).hit();
      return found;
    });
  });
  return found;
}


template <class R>
std::vector<Hit> PickerCore::intersect_all(const R& ray, const QueryOptions& options,
                                            std::size_t limit) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(),
                 "commit() the picker before querying it");
  std::vector<Hit> hits;
  if (!is_valid(ray)) return hits;
  with_top([&](const auto& top) {
    top.traverse(traversal_ray(ray), [&](std::uint32_t entry, float& tmax) {
      const LeafObb& leaf = leaf_[entry];
      if (!accepts(leaf, options)) return false;
      const Hit h = leaf_hit<false>(leaf, ray, tmax, options.mode);
      if (h.hit()) hits.push_back(h);
      return false;
    });
  });
  std::sort(hits.begin(), hits.end(), closer);
  if (hits.size() > limit) hits.resize(limit);
  return hits;
}


template <class R>
std::vector<Hit> PickerCore::intersect_batch(std::span<const R> rays,
                                              const QueryOptions& options) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(),
                 "commit() the picker before querying it");
  std::vector<Hit> out(rays.size());
  with_top([&](const auto& top) { batch(top, rays, options, out); });
  return out;
}

template <class R>
std::vector<Hit> PickerCore::intersect_image(std::span<const R> rays, std::size_t width,
                                              const QueryOptions& options) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(),
                 "commit() the picker before querying it");
  std::vector<Hit> out(rays.size());
  with_top([&](const auto& top) {
    // Tiles pay where the tree exceeds the caches (a tile's rays share
    // more of its nodes than a row's: boxes-1M 1024x1024, one thread,
    // 5.3 -> 6.8 and 6.1 -> 8.3 Mrays/s). A tree in cache gained no more
    // than gathering the tiles cost (boxes-10k +3%, crowd-10k 0, crowd-300
    // -8%): there, and for rows narrower than a tile or a single row, the
    // rays run as a batch in their own order.
    if (width < 4 || rays.size() <= width || !batch_interleaves(top)) {
      batch(top, rays, options, out);
    } else {
      image(top, rays, width, options, out);
    }
  });
  return out;
}

template <class Tree, class R>
void PickerCore::batch(const Tree& top, std::span<const R> rays, const QueryOptions& options,
                       std::vector<Hit>& out) const {
  const bool interleave = batch_interleaves(top);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rays.size(), 1024),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      const compiler::DefaultFpMode fp_mode;
                      // A tree in cache: the range in parts of 64 rays, each
                      // read just before its walks, not 1,024 checked at
                      // once, which left the ray array's misses to the check
                      // alone (crowd-300, 400,000 incoherent rays, one
                      // thread: 13.0 -> 14.1 Mrays/s; the check is now the
                      // packets' own, in SIMD).
                      const std::size_t chunk = interleave ? range.size() : 64;
                      const wide_detail::PacketStack<Tree::kWidth> stack;
                      for (std::size_t b = range.begin(); b < range.end(); b += chunk) {
                        const std::size_t n = std::min(chunk, range.end() - b);
                        batch_part(top, rays.subspan(b, n), out.data() + b, options, interleave,
                                   stack);
                      }
                    });
}

template <class Tree, class R>
void PickerCore::image(const Tree& top, std::span<const R> rays, std::size_t width,
                       const QueryOptions& options, std::vector<Hit>& out) const {
  const bool interleave = batch_interleaves(top);
  // Bands of 4 rows; each task gathers its bands' rays tile by tile (4x4
  // pixels, left to right; a last narrower tile or shorter band as it
  // comes), answers them as a batch's part and puts each answer back in
  // its pixel's place.
  const std::size_t rows = (rays.size() + width - 1) / width;
  const std::size_t bands = (rows + 3) / 4;
  const std::size_t grain = std::max<std::size_t>(1, 1024 / (4 * width));
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, bands, grain),
      [&](const tbb::blocked_range<std::size_t>& range) {
        const compiler::DefaultFpMode fp_mode;
        std::vector<R> local;
        std::vector<Hit> hits;
        const wide_detail::PacketStack<Tree::kWidth> stack;
        local.reserve(4 * width);
        // Calls at(k, i) for the band's rays in tile order: k counts
        // them, i is the ray's index in `rays`.
        auto each_in_tiles = [&](std::size_t band, auto&& at) {
          std::size_t k = 0;
          for (std::size_t x0 = 0; x0 < width; x0 += 4) {
            const std::size_t x1 = std::min(x0 + 4, width);
            for (std::size_t y = 4 * band; y < 4 * band + 4; ++y) {
              for (std::size_t x = x0; x < x1; ++x) {
                const std::size_t i = y * width + x;
                if (i < rays.size()) at(k++, i);
              }
            }
          }
        };
        for (std::size_t band = range.begin(); band != range.end(); ++band) {
          local.clear();
          each_in_tiles(band, [&](std::size_t, std::size_t i) { local.push_back(rays[i]); });
          hits.assign(local.size(), Hit{});
          batch_part(top, std::span<const R>(local), hits.data(), options, interleave, stack);
          each_in_tiles(band, [&](std::size_t k, std::size_t i) { out[i] = hits[k]; });
        }
      });
}

template <class Tree, class R>
void PickerCore::batch_part(const Tree& top, std::span<const R> part, Hit* hits,
                            const QueryOptions& options, bool interleave,
                            const wide_detail::PacketStack<Tree::kWidth>& stack) const {
  // Coherent groups of rays walk as packets (below); the others one at a
  // time or, on a large tree, interleaved (batch_interleaves()).
  constexpr int kInFlight = 32;
  // The traversal takes float rays; the leaves read part[i]. A bad ray
  // (not is_valid) is answered as a miss: a packet with one walks ray by
  // ray (traverse_coherent), and the walks below skip it. Float rays walk
  // as they are (no pass over them first: that check cost more than a
  // packet's SIMD one); a RayD walks its origin rounded to float, a bad
  // one stands as a ray that reaches nothing (t in [0, -1]), which is not
  // is_valid either and so is skipped too.
  // The part's answers, made long before (the batch's vector, out of
  // cache by now) and read by every leaf's comparison: fetched first, for
  // writing (camera batches, one thread: boxes-10k +8 to +12%, crowd-300
  // +7 to +11%).
  {
    const auto begin = reinterpret_cast<std::uintptr_t>(hits);
    const auto end = reinterpret_cast<std::uintptr_t>(hits + part.size());
    for (std::uintptr_t a = begin & ~std::uintptr_t{63}; a < end; a += 64) {
      compiler::prefetch_for_write(reinterpret_cast<const void*>(a));
    }
  }
  std::vector<Ray> rounded;
  std::span<const Ray> node_rays;
  if constexpr (std::is_same_v<R, Ray>) {
    node_rays = part;
  } else {
    rounded.reserve(part.size());
    for (const R& ray : part) {
      rounded.push_back(is_valid(ray) ? traversal_ray(ray)
                                      : Ray{glm::vec3{0.0f}, glm::vec3{0.0f, 0.0f, 1.0f},
                                            0.0f, -1.0f});
    }
    node_rays = rounded;
  }
  // Coherent groups of consecutive rays (a camera's pixels along a
  // row) walk the tree as packets; the others go to `diverged`. A
  // packet's rays meet an object in one SIMD test where they can (below),
  // else one ray at a time.
  // `diverged` is type-erased (a std::ref to the caller's lambda: no
  // allocation), so the packet walks are compiled once per batch_part()
  // instance (tree width and ray type), not once for each way a batch
  // walks its other rays; one indirect call per group of up to kPacket rays.
  auto packets = [&](const std::function<void(std::size_t, std::size_t)>& diverged) {
    const int lanes = top.packet_lanes();
    auto packet = [&](std::size_t base, std::uint32_t entry, std::uint32_t mask,
                      wide_detail::PacketRays& p) {
      const LeafObb& leaf = leaf_[entry];
      // Float rays and an object without a low part: one SIMD test for all
      // the packet's rays that reach the leaf. In obb mode it is the
      // answer (obb_entry's arithmetic lane by lane). In mesh mode it keeps
      // the rays that can meet the object's tree at all: the test against
      // the tree's box (its root's slots' union, padding included) with
      // the walk's tmax (mesh_walk_reach). A ray it rejects meets no box
      // of the tree under mesh_hit()'s walk: the same carried ray
      // (carry()'s arithmetic), the same tmin and tmax, the same slab
      // steps (NaN ignored alike), and each slot's planes lie within the
      // box's, so its interval within the box's (x -> fl(fl(x - o) * inv)
      // is monotone). The rays it keeps walk the tree one at a time (a
      // packet walk of the mesh trees lost: "What was tried").
      if (std::is_same_v<R, Ray> && leaf.mesh != kInvalidId &&
          (low_.empty() || low_[leaf.object] == glm::vec3{0.0f})) {
        const bool mesh_mode = options.mode == PickMode::kMesh;
        const MeshAccel& mesh = meshes_[leaf.mesh];
        RAYPICK_ASSERT(!mesh_mode || mesh.bvh_built, "mesh mode needs PickerConfig::mesh_mode");
        // The leaf accepted (mask, filter) once for all its rays.
        if (!accepts(leaf, options)) return;
        alignas(64) float t[wide_detail::kPacketRays];
        // In mesh mode the rays as the test carried them (carry()'s
        // arithmetic): each passing ray's walk starts from its own.
        alignas(64) float carried[6 * wide_detail::kPacketRays];
        const Aabb box = mesh_mode ? mesh.with_bvh([](const auto& tree) { return tree.bounds(); })
                                   : mesh.bounds;
        for (std::uint32_t in = wide_detail::packet_obb_entries(
                 lanes, leaf.frame, box, p, mask, t,
                 /*reach=*/mesh_mode, mesh_mode ? carried : nullptr);
             in != 0; in &= in - 1) {
          const int k = std::countr_zero(in);
          Hit h;
          if (mesh_mode) {
            constexpr int kRow = wide_detail::kPacketRays;
            Ray local;
            for (int a = 0; a < 3; ++a) {
              local.org[a] = carried[a * kRow + k];
              local.dir[a] = carried[(3 + a) * kRow + k];
            }
            local.tmin = p.tmin[k];
            local.tmax = mesh_walk_reach(p.tmax[k]);
            h = mesh_walk<false>(leaf, local, p.tmax[k]);
          } else {
            h.object = leaf.object;
            h.t = t[k];
          }
          keep_if_closer(h, p.tmax[k], hits[base + k]);
        }
        return;
      }
      for (; mask != 0; mask &= mask - 1) {
        const int k = std::countr_zero(mask);
        closest_leaf(entry, part[base + k], options, p.tmax[k], hits[base + k]);
      }
    };
    top.traverse_coherent(node_rays, packet, diverged, stack);
  };
  // Several rays in flight, each leaf's run of copies prefetched; `at`
  // maps an index into the rays walked to one into part (and hits).
  auto interleaved = [&](std::span<const Ray> walked, auto at) {
    top.template traverse_interleaved<kInFlight>(
        walked,
        [&](std::size_t i, std::uint32_t entry, float& tmax) {
          const std::size_t r = at(i);
          return closest_leaf(entry, part[r], options, tmax, hits[r]);
        },
        [&](std::uint32_t first, std::uint32_t count) {
          // Every cache line of the leaf's run of copies.
          const auto begin = reinterpret_cast<std::uintptr_t>(&leaf_[first]);
          const auto end = reinterpret_cast<std::uintptr_t>(&leaf_[first + count]);
          for (std::uintptr_t p = begin & ~std::uintptr_t{63}; p < end; p += 64) {
            compiler::prefetch(reinterpret_cast<const void*>(p));
          }
        });
  };
  // Rays base .. base + n - 1 of node_rays, one at a time.
  const auto one_at_a_time = [&](std::size_t base, std::size_t n) {
    for (std::size_t i = base; i < base + n; ++i) {
      if (!is_valid(node_rays[i])) continue;
      top.traverse(node_rays[i], [&](std::uint32_t entry, float& tmax) {
        return closest_leaf(entry, part[i], options, tmax, hits[i]);
      });
    }
  };
  if (!interleave) {
    // A small tree, 8 or 16 wide: coherent groups as packets, the
    // other rays one at a time.
    packets(std::ref(one_at_a_time));
    return;
  }
  // A large tree: its coherent groups of kPacket rays walk as
  // packets (each node fetched once for the group), then the other
  // rays, gathered, walk interleaved. (A task's range is not bounded
  // by the grain size: TBB's default partitioner hands out larger
  // ones.)
  std::vector<std::uint32_t> rest;
  auto gather = [&](std::size_t base, std::size_t n) {
    for (std::size_t i = base; i < base + n; ++i) {
      if (is_valid(node_rays[i])) rest.push_back(static_cast<std::uint32_t>(i));
    }
  };
  packets(std::ref(gather));
  if (rest.size() == node_rays.size()) {
    interleaved(node_rays, [](std::size_t i) { return i; });
  } else if (!rest.empty()) {
    std::vector<Ray> walked;
    walked.reserve(rest.size());
    for (const std::uint32_t i : rest) walked.push_back(node_rays[i]);
    interleaved(walked, [&](std::size_t i) { return std::size_t{rest[i]}; });
  }
}


glm::vec3 PickerCore::world_normal(const Hit& hit) const {
  if (!hit.hit() || hit.triangle == kInvalidId) return glm::vec3{0.0f};
  const ObjectRec& obj = objects_[hit.object];
  const MeshAccel& mesh = meshes_[obj.mesh];
  const glm::uvec3& idx = mesh.triangles[hit.triangle];
  const glm::vec3 p0 = mesh.positions[idx.x];
  const glm::vec3 n_local =
      glm::cross(mesh.positions[idx.y] - p0, mesh.positions[idx.z] - p0);
  // cross(M e1, M e2) = det(M) * M^-T * cross(e1, e2): the inverse
  // transpose alone would flip the normal of a mirrored object.
  const Obb obb = make_obb(hit.object);
  const glm::mat3 m{obb.to_world};
  const glm::mat3 inv_t = glm::transpose(obb.frame.linear);
  glm::vec3 n = inv_t * n_local;
  if (glm::determinant(m) < 0.0f) n = -n;
  const float len = glm::length(n);
  return len > 0.0f ? n / len : glm::vec3{0.0f};
}

Aabb PickerCore::world_box(std::uint32_t id) const {
  RAYPICK_ASSERT(id < objects_.size(), "object id out of range");
  if (!objects_[id].alive) return Aabb{};
  return padded_world_box(make_obb(id), pad_centre_);
}

std::size_t PickerCore::memory_bytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  std::size_t n = bytes(objects_) + bytes(user_data_) + bytes(meshes_) + bytes(leaf_) +
                  bytes(moved_) + bytes(dirty_) + bytes(moved_entries_) + bytes(moved_boxes_) +
                  bytes(low_) +
                  with_top([](const auto& top) { return top.memory_bytes(); });
  for (const MeshAccel& m : meshes_) {
    n += bytes(m.owned_positions) + bytes(m.owned_triangles) + bytes(m.verts) +
         m.tri_boxes.bytes() + m.with_bvh([](const auto& tree) { return tree.memory_bytes(); });
  }
  return n;
}

// The query templates' instances: the Picker's calls below, and the
// library's tests and tools, which drive a PickerCore directly.
template PickResult PickerCore::intersect(const Ray&, const QueryOptions&) const;
template PickResult PickerCore::intersect(const RayD&, const QueryOptions&) const;
template bool PickerCore::occluded(const Ray&, const QueryOptions&) const;
template bool PickerCore::occluded(const RayD&, const QueryOptions&) const;
template std::vector<Hit> PickerCore::intersect_all(const Ray&, const QueryOptions&,
                                                    std::size_t) const;
template std::vector<Hit> PickerCore::intersect_all(const RayD&, const QueryOptions&,
                                                    std::size_t) const;
template std::vector<Hit> PickerCore::intersect_batch(std::span<const Ray>,
                                                      const QueryOptions&) const;
template std::vector<Hit> PickerCore::intersect_batch(std::span<const RayD>,
                                                      const QueryOptions&) const;
template std::vector<Hit> PickerCore::intersect_image(std::span<const Ray>, std::size_t,
                                                      const QueryOptions&) const;
template std::vector<Hit> PickerCore::intersect_image(std::span<const RayD>, std::size_t,
                                                      const QueryOptions&) const;

// Every query runs in the default floating-point mode whatever its caller's
// (compiler::DefaultFpMode): a host that set flush-to-zero (as games and
// audio hosts do) would otherwise flush a huge direction's denormal inverse
// to 0, and 0 times an unused slot's infinite planes is NaN, which the
// slab test ignores: the walk would follow slots past the nodes. Answers
// are then the same in any mode (denormals-are-zero would change them too).
PickResult Picker::intersect_stats(const Ray& ray, const QueryOptions& options) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->intersect(ray, options);
}
PickResult Picker::intersect_stats(const RayD& ray, const QueryOptions& options) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->intersect(ray, options);
}
bool Picker::occluded(const Ray& ray, const QueryOptions& options) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->occluded(ray, options);
}
bool Picker::occluded(const RayD& ray, const QueryOptions& options) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->occluded(ray, options);
}
std::vector<Hit> Picker::intersect_all(const Ray& ray, const QueryOptions& options,
                                       std::size_t limit) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->intersect_all(ray, options, limit);
}
std::vector<Hit> Picker::intersect_all(const RayD& ray, const QueryOptions& options,
                                       std::size_t limit) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->intersect_all(ray, options, limit);
}
std::vector<Hit> Picker::intersect_batch(std::span<const Ray> rays,
                                         const QueryOptions& options) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->intersect_batch(rays, options);
}
std::vector<Hit> Picker::intersect_batch(std::span<const RayD> rays,
                                         const QueryOptions& options) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->intersect_batch(rays, options);
}
std::vector<Hit> Picker::intersect_image(std::span<const Ray> rays, std::size_t width,
                                         const QueryOptions& options) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->intersect_image(rays, width, options);
}
std::vector<Hit> Picker::intersect_image(std::span<const RayD> rays, std::size_t width,
                                         const QueryOptions& options) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->intersect_image(rays, width, options);
}
std::vector<std::uint32_t> Picker::select(const Frustum& region, SelectRule rule,
                                          const QueryOptions& options) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->select(region, rule, options);
}
glm::vec3 Picker::world_normal(const Hit& hit) const {
  const compiler::DefaultFpMode fp_mode;
  return impl_->world_normal(hit);
}

}  // namespace raypick
