#include "picker_impl.h"

#include "raypick/core/assert.h"
#include "raypick/core/ray_triangle.h"

#if RAYPICK_WIDE_SSE
#include <emmintrin.h>
#endif

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <glm/matrix.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <new>
#include <type_traits>

// The per-leaf steps of the traversal loops: inlined into them, which the
// compiler's size heuristics would not always do.
#if defined(__GNUC__)
#define RAYPICK_HOT_INLINE [[gnu::always_inline]] inline
#define RAYPICK_NOINLINE __attribute__((noinline))
#else
#define RAYPICK_HOT_INLINE inline
#define RAYPICK_NOINLINE
#endif

namespace raypick {
namespace {

// Pads a box by a few float ulps. World boxes come from a rounded matrix
// product while the leaf tests carry the ray into local space with other
// roundings, and the triangle test computes t its own way; without a margin
// a grazing ray could be culled by a node test and lose a hit the exact leaf
// test would find. Those roundings are relative to the box's size and to
// the ray's distance, for which the box's distance from `centre` (the middle
// of the scene, where rays come from) stands in: 2^-18 of the larger. The
// float box itself is rounded to its coordinates (transform_aabb adds the
// translation once, then the extent): at least 2^-22 of the largest, 2 ulps
// or more. Measured from a centre rather than from the
// world origin, a scene far from the origin is not padded by ulps of its
// coordinates (1.1 units at 3e5, where 0.07 suffice), which would slow
// picking there. The margin is the same on every axis: a box flat on an
// axis (a quad at z = 0) must be padded there too, since the triangle test
// may place the hit an ulp beyond the plane the slab test computes.
constexpr float kRel = 1.0f / (1 << 18);     // about 32 ulps
constexpr float kCoord = 1.0f / (1 << 22);   // 2 to 4 ulps

Aabb pad(const Aabb& box, const glm::vec3& centre = glm::vec3{0.0f}) {
  if (box.empty()) return box;
  const glm::vec3 ext = box.max - box.min;
  float m = std::max({ext.x, ext.y, ext.z});
  float c = 0.0f;
  for (int a = 0; a < 3; ++a) {
    m = std::max({m, std::fabs(box.min[a] - centre[a]), std::fabs(box.max[a] - centre[a])});
    c = std::max({c, std::fabs(box.min[a]), std::fabs(box.max[a])});
  }
  const glm::vec3 margin{std::max(m * kRel, c * kCoord)};
  return Aabb{box.min - margin, box.max + margin};
}

// The mean of translations, summed in double in the order given.
struct CentreSum {
  glm::dvec3 sum{0.0};
  std::size_t count = 0;
  void add(const glm::vec3& t) {
    sum += glm::dvec3{t};
    ++count;
  }
  glm::vec3 centre() const {
    return count == 0 ? glm::vec3{0.0f} : glm::vec3{sum / double(count)};
  }
};

// Storage for n elements of a trivially copyable T, left uninitialized:
// for arrays that a parallel loop fills before anything reads them (a
// vector would first write every element on one thread).
template <class T>
class Uninitialized {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  explicit Uninitialized(std::size_t n)
      : data_(static_cast<T*>(::operator new(std::max<std::size_t>(n, 1) * sizeof(T),
                                             std::align_val_t{alignof(T)}))) {}
  ~Uninitialized() { ::operator delete(data_, std::align_val_t{alignof(T)}); }
  Uninitialized(const Uninitialized&) = delete;
  Uninitialized& operator=(const Uninitialized&) = delete;

  T& operator[](std::size_t i) { return data_[i]; }
  T* get() { return data_; }

 private:
  T* data_;
};

// Objects per task of the rebuild's per-object loops.
constexpr std::uint32_t kObjectGrain = 2048;

}  // namespace

glm::vec3 padding_centre(std::span<const Object> objects) {
  CentreSum c;
  for (const Object& o : objects) c.add(glm::vec3{o.matrix[3]});
  return c.centre();
}

Aabb padded_world_box(const Obb& obb, const glm::vec3& centre) {
  return pad(obb.world_bounds(), centre);
}


namespace {

// Tie order within one object: nearer t, then lower triangle id.
bool better_in_object(float t, std::uint32_t tri, const Hit& best) {
  return t < best.t || (t == best.t && tri < best.triangle);
}

}  // namespace

void Picker::Impl::load(const Scene& scene) {
  RAYPICK_ASSERT(validate_scene(scene).empty(), "scene is not valid");
  meshes_.reserve(scene.meshes.size());
  for (const Mesh& m : scene.meshes) add_mesh(m.positions, m.triangles, Storage::kCopy);
  objects_.reserve(scene.objects.size());
  for (const Object& o : scene.objects) add_object(o.mesh, o.matrix, o.mask, nullptr);
  commit(CommitMode::kRebuild);
}

std::uint32_t Picker::Impl::add_mesh(std::span<const glm::vec3> positions,
                               std::span<const glm::uvec3> triangles,
                               Storage storage) {
  MeshAccel& m = meshes_.emplace_back();
  if (storage == Storage::kCopy) {
    m.owned_positions.assign(positions.begin(), positions.end());
    m.owned_triangles.assign(triangles.begin(), triangles.end());
    m.positions = m.owned_positions;
    m.triangles = m.owned_triangles;
  } else {
    m.positions = positions;
    m.triangles = triangles;
  }
  for (const glm::uvec3& t : m.triangles) {
    for (int k = 0; k < 3; ++k) {
      RAYPICK_ASSERT(t[k] < m.positions.size(), "triangle index out of range");
      m.bounds.extend(m.positions[t[k]]);
    }
  }
  return static_cast<std::uint32_t>(meshes_.size() - 1);
}

std::uint32_t Picker::Impl::add_object(std::uint32_t mesh, const glm::mat4& matrix,
                                 std::uint32_t mask, void* user_data) {
  RAYPICK_ASSERT(mesh < meshes_.size(), "mesh id out of range");
  ObjectRec& o = objects_.emplace_back();
  o.to_world = glm::mat4x3(matrix);
  o.mesh = mesh;
  o.mask = mask;
  const std::uint32_t id = static_cast<std::uint32_t>(objects_.size() - 1);
  if (user_data != nullptr) {
    // Allocated on first use: scenes without user data pay nothing.
    user_data_.resize(id + 1, nullptr);
    user_data_[id] = user_data;
  }
  structure_dirty_ = true;
  return id;
}

void Picker::Impl::remove_object(std::uint32_t id) {
  RAYPICK_ASSERT(id < objects_.size() && objects_[id].alive,
                 "object id out of range or already removed");
  objects_[id].alive = false;
  structure_dirty_ = true;
}

void Picker::Impl::set_matrix(std::uint32_t id, const glm::mat4& matrix) {
  RAYPICK_ASSERT(id < objects_.size() && objects_[id].alive,
                 "object id out of range or removed");
  ObjectRec& o = objects_[id];
  o.to_world = glm::mat4x3(matrix);
  if (o.prim == kInvalidId) {
    // Not in the tree (it could not be hit at the last build): only a
    // rebuild can add it.
    if (!make_obb(o).world_bounds().empty()) structure_dirty_ = true;
    return;
  }
  // The inverse, world box and leaf copy are recomputed at commit, where
  // many moves are taken in the tree's order.
  if (moved_[o.prim] == 0) {
    moved_[o.prim] = 1;
    dirty_.push_back(id);
  }
}

Obb Picker::Impl::make_obb(const ObjectRec& o) const {
  return Obb::make(meshes_[o.mesh].bounds, glm::mat4(o.to_world));
}

#if RAYPICK_WIDE_SSE
namespace {

// pad(transform_aabb(m, local), centre), bit for bit, with x, y and z in
// three lanes of SSE registers (the fourth is unused): each lane does the
// scalar code's operations in its order (0 + m0 c0 + m1 c1 + m2 c2, the
// translation added last), and the margin's maxima are folded in the
// scalar order, so even NaN and infinite boxes come out the same. About a
// third of the scalar code's instructions; it runs for every moved object.
Aabb pad_transformed_box(const glm::mat4x3& m, const Aabb& local, const glm::vec3& centre) {
  if (local.empty()) return Aabb{};
  // Columns 0-2 as 4 floats each (the 4th lane is the next column's x);
  // the translation from floats 8-11, shifted down one lane.
  const float* f = &m[0].x;
  const __m128 c0 = _mm_loadu_ps(f), c1 = _mm_loadu_ps(f + 3), c2 = _mm_loadu_ps(f + 6);
  const __m128 t8 = _mm_loadu_ps(f + 8);
  const __m128 t = _mm_shuffle_ps(t8, t8, _MM_SHUFFLE(3, 3, 2, 1));
  const __m128 lo = _mm_loadu_ps(&local.min.x);  // min.xyz, max.x
  const __m128 hi8 = _mm_loadu_ps(&local.min.z);  // min.z, max.xyz
  const __m128 hi = _mm_shuffle_ps(hi8, hi8, _MM_SHUFFLE(3, 3, 2, 1));
  const __m128 half = _mm_set1_ps(0.5f);
  const __m128 c = _mm_mul_ps(_mm_add_ps(lo, hi), half);  // local.center()
  const __m128 e = _mm_mul_ps(_mm_sub_ps(hi, lo), half);  // local.half_extent()
  const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF));
  __m128 offset = _mm_setzero_ps();
  __m128 extent = _mm_setzero_ps();
  auto column = [&](__m128 col, __m128 cc, __m128 ee) {
    offset = _mm_add_ps(offset, _mm_mul_ps(col, cc));
    extent = _mm_add_ps(extent, _mm_mul_ps(_mm_and_ps(col, abs_mask), ee));
  };
  column(c0, _mm_shuffle_ps(c, c, 0x00), _mm_shuffle_ps(e, e, 0x00));
  column(c1, _mm_shuffle_ps(c, c, 0x55), _mm_shuffle_ps(e, e, 0x55));
  column(c2, _mm_shuffle_ps(c, c, 0xAA), _mm_shuffle_ps(e, e, 0xAA));
  const __m128 mid = _mm_add_ps(t, offset);
  const __m128 bmin = _mm_sub_ps(mid, extent);
  const __m128 bmax = _mm_add_ps(mid, extent);
  // pad(box, centre): if box.empty() (NaN included), the box unpadded.
  if ((_mm_movemask_ps(_mm_cmple_ps(bmin, bmax)) & 7) != 7) {
    alignas(16) float mn[4], mx[4];
    _mm_store_ps(mn, bmin);
    _mm_store_ps(mx, bmax);
    return Aabb{{mn[0], mn[1], mn[2]}, {mx[0], mx[1], mx[2]}};
  }
  const __m128 cen = _mm_setr_ps(centre.x, centre.y, centre.z, 0.0f);
  const __m128 ext = _mm_sub_ps(bmax, bmin);
  const __m128 dmin = _mm_and_ps(_mm_sub_ps(bmin, cen), abs_mask);
  const __m128 dmax = _mm_and_ps(_mm_sub_ps(bmax, cen), abs_mask);
  const __m128 amax = _mm_max_ps(_mm_and_ps(bmin, abs_mask), _mm_and_ps(bmax, abs_mask));
  // The margin's two maxima. Their terms are +0 or positive (never -0:
  // ext is +0 when min == max) or NaN (inf - inf): without a NaN, any order
  // of taking the maximum gives the same bits, so lanes are folded at once;
  // with one, pad()'s order of std::max decides which NaN comes out, and
  // pad() itself runs.
  // (_mm_max_ps hides a NaN in its first operand: the terms are checked.)
  const __m128 nan = _mm_or_ps(_mm_cmpunord_ps(ext, dmin), _mm_cmpunord_ps(dmax, amax));
  if ((_mm_movemask_ps(nan) & 7) != 0) {
    alignas(16) float mn[4], mx[4];
    _mm_store_ps(mn, bmin);
    _mm_store_ps(mx, bmax);
    return pad(Aabb{{mn[0], mn[1], mn[2]}, {mx[0], mx[1], mx[2]}}, centre);
  }
  const __m128 terms = _mm_max_ps(ext, _mm_max_ps(dmin, dmax));
  auto fold3 = [](__m128 v) {  // max of lanes 0-2, in lane 0
    return _mm_max_ss(_mm_max_ss(v, _mm_shuffle_ps(v, v, 1)), _mm_shuffle_ps(v, v, 2));
  };
  const float r = _mm_cvtss_f32(fold3(terms));
  const float a = std::max(0.0f, _mm_cvtss_f32(fold3(amax)));
  const __m128 margin = _mm_set1_ps(std::max(r * kRel, a * kCoord));
  alignas(16) float mn[4], mx[4];
  _mm_store_ps(mn, _mm_sub_ps(bmin, margin));
  _mm_store_ps(mx, _mm_add_ps(bmax, margin));
  return Aabb{{mn[0], mn[1], mn[2]}, {mx[0], mx[1], mx[2]}};
}

}  // namespace
#endif

Aabb Picker::Impl::padded_box(const ObjectRec& o) const {
#if RAYPICK_WIDE_SSE
  return pad_transformed_box(o.to_world, meshes_[o.mesh].bounds, pad_centre_);
#else
  return pad(transform_aabb(o.to_world, meshes_[o.mesh].bounds), pad_centre_);
#endif
}

Aabb Picker::Impl::make_leaf(std::uint32_t id, LeafObb& l) const {
  // As make_obb() and padded_world_box(), without the Obb's full matrices:
  // this runs for every object at a build and every moved one at commit.
  const ObjectRec& o = objects_[id];
  const bool invertible = make_local_frame(o.to_world, l.frame);
  l.object = id;
  l.mask = o.mask;
  l.mesh = invertible ? o.mesh : kInvalidId;
  return invertible ? padded_box(o) : Aabb{};
}

void Picker::Impl::set_mask(std::uint32_t id, std::uint32_t mask) {
  RAYPICK_ASSERT(id < objects_.size(), "object id out of range");
  objects_[id].mask = mask;
  if (objects_[id].prim != kInvalidId) leaf_[objects_[id].prim].mask = mask;
}

void Picker::Impl::build_mesh_bvhs() {
  if (!config_.mesh_mode) return;
  std::vector<bool> used(meshes_.size(), false);
  for (const ObjectRec& o : objects_) used[o.mesh] = used[o.mesh] || o.alive;
  for (std::size_t id = 0; id < meshes_.size(); ++id) {
    MeshAccel& m = meshes_[id];
    if (!used[id] || m.bvh_built) continue;
    std::vector<Aabb> boxes(m.triangles.size());
    std::vector<glm::vec3> centers(m.triangles.size());
    for (std::size_t t = 0; t < m.triangles.size(); ++t) {
      Aabb b;
      for (int k = 0; k < 3; ++k) b.extend(m.positions[m.triangles[t][k]]);
      boxes[t] = pad(b);
      centers[t] = b.center();
    }
    m.bvh = WideBvh::collapse(build_bvh(boxes, centers, config_.mesh));
    m.bvh.set_avx2(avx2());
    m.verts.resize(m.bvh.entry_count());
    for (std::size_t e = 0; e < m.verts.size(); ++e) {
      const glm::uvec3& t = m.triangles[m.bvh.prim_id(static_cast<std::uint32_t>(e))];
      m.verts[e] = {m.positions[t.x], m.positions[t.y], m.positions[t.z]};
    }
    m.bvh_built = true;
  }
}


double Picker::Impl::sah_cost() const {
  if (top_.empty()) return 0.0;
  // The root's own term moves with its area; the rest is the tracked sum.
  return sah_sum_ / std::max(double(top_.bounds().half_area()), 1e-30);
}

void Picker::Impl::rebuild() {
  // The padding's centre, as padding_centre() over the live objects (in
  // order: its double sum must not depend on the thread count).
  CentreSum centre;
  for (const ObjectRec& o : objects_) {
    if (o.alive) centre.add(o.to_world[3]);
  }
  pad_centre_ = centre.centre();
  // Per object, in parallel: its leaf copy (the double inverse), padded
  // world box and centre, by object id. An empty box (removed, or never
  // hit) leaves the object out of the tree.
  const auto count = static_cast<std::uint32_t>(objects_.size());
  Uninitialized<LeafObb> leaves(count);
  Uninitialized<Aabb> boxes(count);
  Uninitialized<glm::vec3> centers(count);
  auto make_leaves = [&](const tbb::blocked_range<std::uint32_t>& r, std::size_t k) {
    for (std::uint32_t id = r.begin(); id != r.end(); ++id) {
      ObjectRec& o = objects_[id];
      o.prim = kInvalidId;
      boxes[id] = o.alive ? make_leaf(id, leaves[id]) : Aabb{};
      if (boxes[id].empty()) continue;
      centers[id] = boxes[id].center();
      ++k;
    }
    return k;
  };
  // A single chunk (a small scene) runs here, without the scheduler.
  const tbb::blocked_range<std::uint32_t> ids(0, count, kObjectGrain);
  const std::size_t kept =
      ids.is_divisible() ? tbb::parallel_reduce(ids, std::size_t{0}, make_leaves, std::plus<>())
                         : make_leaves(ids, 0);
  // Primitives are the kept objects in id order: when some are left out,
  // close the gaps (one serial pass, only then).
  std::size_t n = count;
  if (kept != count) {
    n = 0;
    for (std::uint32_t id = 0; id < count; ++id) {
      if (boxes[id].empty()) continue;
      leaves[n] = leaves[id];
      boxes[n] = boxes[id];
      centers[n] = centers[id];
      ++n;
    }
  }
  top_ = WideBvh::collapse(build_bvh({boxes.get(), n}, {centers.get(), n}, config_.top));
  top_.set_avx2(avx2());
  // Renumber the primitives in the tree's entry order, so that a refit's
  // sweep reads the boxes front to back: from here on prim == entry. Each
  // entry writes its own leaf copy and object: a parallel loop.
  RAYPICK_ASSERT(top_.entry_count() == n, "the tree holds every primitive once");
  std::vector<LeafObb> by_entry(n);  // allocated at its size: no shrink copy
  auto reorder = [&](const tbb::blocked_range<std::uint32_t>& r) {
    for (std::uint32_t e = r.begin(); e != r.end(); ++e) {
      const LeafObb& leaf = leaves[top_.prim_id(e)];
      by_entry[e] = leaf;
      objects_[leaf.object].prim = e;
    }
  };
  const tbb::blocked_range<std::uint32_t> entries(0, static_cast<std::uint32_t>(n), kObjectGrain);
  if (entries.is_divisible()) {
    tbb::parallel_for(entries, reorder);
  } else {
    reorder(entries);
  }
  leaf_ = std::move(by_entry);
  top_.number_by_entry();
  moved_.assign(n, 0);
  sah_sum_ = top_.sah_sum(config_.top);
  sah_built_ = sah_cost();
  ++rebuilds_;
}

Aabb Picker::Impl::update_entry(std::uint32_t e, std::uint32_t id) {
  moved_[e] = 0;
  return make_leaf(id, leaf_[e]);
}

Aabb Picker::Impl::entry_box(std::uint32_t e) const {
  const LeafObb& l = leaf_[e];
  return l.mesh == kInvalidId ? Aabb{} : padded_box(objects_[l.object]);
}

std::size_t Picker::Impl::refit_moved(std::span<const std::uint32_t> moved) {
  const std::size_t n = top_.nodes().size();
  if (n == 0) return 0;
  // The path refit costs about 0.5 us per moved object (its record, leaf
  // copy and nodes, prefetched), the sweep about 12 ns per entry (it reads
  // every entry in order) plus 0.2 us per moved one (boxes-1M, one
  // thread: 1% moved, 4.8 against 12.8 ms; 3%, 14 against 18.7 ms). Past
  // about 1 in 24 entries moved, the sweep is cheaper.
  if (moved.size() * 24 < leaf_.size()) {
    // A moved entry's leaf copy and box are made once, when its slot's
    // walk first asks for its box.
    auto box = [&](std::uint32_t e) {
      return moved_[e] != 0 ? update_entry(e, leaf_[e].object) : entry_box(e);
    };
    std::vector<std::uint32_t> entries;
    entries.reserve(moved.size());
    for (std::uint32_t id : moved) entries.push_back(objects_[id].prim);
    // The SAH sum follows each box change, so commit() compares the
    // tree's cost with the built one without an O(n) pass.
    // Ahead of an entry's turn: its leaf copy and moved flag, then (once
    // the leaf copy has arrived) its object's record.
    auto prefetch = [&](std::uint32_t e, int stage) {
      if (stage == 0) {
        wide_detail::prefetch(&leaf_[e]);
        wide_detail::prefetch(&moved_[e]);
      } else {
        wide_detail::prefetch(&objects_[leaf_[e].object]);
      }
    };
    return top_.refit_path(
        entries, box, config_.top,
        [&](double weight, double old_area, double new_area) {
          sah_sum_ += weight * (new_area - old_area);
        },
        prefetch);
  }
  // Many moved: the sweep takes the entries in order, so the leaf copies
  // are written front to back and only the objects are read out of order
  // (prefetched a few entries ahead). The look-ahead may read flags of the
  // next range, which another thread sweeps: so no flag is cleared during
  // the sweep, only after it.
  const std::size_t entries = leaf_.size();
  constexpr std::size_t kAhead = 16;  // object reads in flight
  const WideBvh::SweepResult r = top_.refit_sweep(
      [&](std::uint32_t e) {
        if (e + kAhead < entries && moved_[e + kAhead] != 0) {
          wide_detail::prefetch(&objects_[leaf_[e + kAhead].object]);
        }
        return moved_[e] != 0;
      },
      [&](std::uint32_t e) {
        return moved_[e] != 0 ? make_leaf(leaf_[e].object, leaf_[e]) : entry_box(e);
      },
      config_.top);
  // Cleared in one sequential pass: a pass over the moved objects' records
  // would read a cache line each, for one byte.
  std::fill(moved_.begin(), moved_.end(), std::uint8_t{0});
  sah_sum_ = r.sah_sum;
  return r.slots;
}

CommitStats Picker::Impl::commit(CommitMode mode) {
  CommitStats s;
  // Which meshes are used changes only with adds and removals (a pass over
  // every object record: not for a commit of moves).
  if (structure_dirty_ || !committed_) build_mesh_bvhs();
  if (mode == CommitMode::kRebuild || structure_dirty_ || !committed_) {
    rebuild();
    s.rebuilt = true;
  } else if (!dirty_.empty()) {
    s.moved = dirty_.size();
    s.slots_updated = refit_moved(dirty_);
    s.refitted = true;
    ++refits_;
    if (mode == CommitMode::kAuto &&
        sah_cost() > config_.rebuild_factor * sah_built_) {
      rebuild();
      s.rebuilt = true;
    }
  }
  dirty_.clear();
  structure_dirty_ = false;
  committed_ = true;
  s.sah_cost = sah_cost();
  s.sah_cost_built = sah_built_;
  s.rebuilds = rebuilds_;
  s.refits = refits_;
  return s;
}


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
RAYPICK_HOT_INLINE Hit Picker::Impl::leaf_hit(const LeafObb& leaf, const R& ray, float tmax,
                     PickMode mode) const {
  if (mode == PickMode::kMesh) return mesh_hit<kAny>(leaf, ray, tmax);
  Hit best;
  if (leaf.mesh == kInvalidId) return best;  // singular matrix
  const float t = obb_entry(leaf.frame, meshes_[leaf.mesh].bounds, ray, tmax);
  if (t != kInfinity) {
    best.object = leaf.object;
    best.t = t;
  }
  return best;
}

// The nearest triangle hit on one object with t <= tmax (any hit when
// kAny), the ray carried into the mesh's frame by the leaf's frame.
template <bool kAny, class R>
Hit Picker::Impl::mesh_hit(const LeafObb& leaf, const R& ray, float tmax) const {
  Hit best;
  if (leaf.mesh == kInvalidId) return best;  // singular matrix
  const MeshAccel& mesh = meshes_[leaf.mesh];
  RAYPICK_ASSERT(mesh.bvh_built, "mesh mode needs PickerConfig::mesh_mode");
  const std::uint32_t id = leaf.object;
  const Ray local = [&] {
    Ray r = transform_ray(leaf.frame, ray);
    r.tmax = tmax;
    return r;
  }();
  const TriangleRay tri_ray(local.org, local.dir);
  // The triangle step stays a call: inlined into the mesh tree's walk, it
  // made that loop slower (crowd-300 camera 51 -> 56 ns per ray, idle).
  mesh.bvh.traverse(local, [&](std::uint32_t entry, float& local_tmax) RAYPICK_NOINLINE {
    const std::array<glm::vec3, 3>& v = mesh.verts[entry];
    const TriangleHit h =
        intersect_triangle(tri_ray, v[0], v[1], v[2], local.tmin, local_tmax);
    if (!h.hit) return false;
    // The id (a read of another array) only for a hit.
    const std::uint32_t tri = mesh.bvh.prim_id(entry);
    if (!better_in_object(h.t, tri, best)) return false;
    best.object = id;
    best.t = h.t;
    best.triangle = tri;
    best.u = h.u;
    best.v = h.v;
    local_tmax = h.t;
    return kAny;
  });
  return best;
}

template <class R>
RAYPICK_HOT_INLINE bool Picker::Impl::closest_leaf(std::uint32_t entry, const R& ray,
                          const QueryOptions& options, float& tmax,
                          Hit& best) const {
  const LeafObb& leaf = leaf_[entry];
  if (!accepts(leaf, options)) return false;
  const Hit h = leaf_hit<false>(leaf, ray, tmax, options.mode);
  // Leaf tests are inclusive of tmax, so an equal t reaches here and the
  // contract's order (t, object, triangle) decides.
  if (h.hit() && closer(h, best)) {
    best = h;
    tmax = h.t;
  }
  return false;
}

template <class R>
PickResult Picker::Impl::intersect_impl(const R& ray, const QueryOptions& options) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(),
                 "commit() the picker before querying it");
  PickResult r;
  // A bad ray is the host's input, not a bug of ours: a miss, never an abort.
  if (!is_valid(ray)) return r;
  r.stats = top_.traverse(traversal_ray(ray), [&](std::uint32_t entry, float& tmax) {
    return closest_leaf(entry, ray, options, tmax, r.hit);
  });
  return r;
}


template <class R>
bool Picker::Impl::occluded_impl(const R& ray, const QueryOptions& options) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(),
                 "commit() the picker before querying it");
  bool found = false;
  if (!is_valid(ray)) return found;
  top_.traverse(traversal_ray(ray), [&](std::uint32_t entry, float& tmax) {
    const LeafObb& leaf = leaf_[entry];
    if (!accepts(leaf, options)) return false;
    found = leaf_hit<true>(leaf, ray, tmax, options.mode).hit();
    return found;
  });
  return found;
}


template <class R>
std::vector<Hit> Picker::Impl::intersect_all_impl(const R& ray, const QueryOptions& options,
                                            std::size_t limit) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(),
                 "commit() the picker before querying it");
  std::vector<Hit> hits;
  if (!is_valid(ray)) return hits;
  top_.traverse(traversal_ray(ray), [&](std::uint32_t entry, float& tmax) {
    const LeafObb& leaf = leaf_[entry];
    if (!accepts(leaf, options)) return false;
    const Hit h = leaf_hit<false>(leaf, ray, tmax, options.mode);
    if (h.hit()) hits.push_back(h);
    return false;
  });
  std::sort(hits.begin(), hits.end(), closer);
  if (hits.size() > limit) hits.resize(limit);
  return hits;
}


template <class R>
std::vector<Hit> Picker::Impl::intersect_batch_impl(std::span<const R> rays,
                                              const QueryOptions& options) const {
  RAYPICK_ASSERT(!structure_dirty_ && dirty_.empty(),
                 "commit() the picker before querying it");
  std::vector<Hit> out(rays.size());
  // A top level much larger than the caches makes every node a cache miss:
  // each task then runs its rays interleaved, several in flight, so that
  // one ray's misses overlap the others' work. A tree in cache gains
  // nothing from that and coherent rays lose (their branches no longer
  // repeat), so smaller trees take the rays one at a time.
  const std::size_t top_bytes =
      top_.nodes().size() * sizeof(WideNode) + leaf_.size() * sizeof(LeafObb);
  const bool interleave = top_bytes >= config_.batch_interleave_bytes;
  constexpr int kInFlight = 32;
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, rays.size(), 1024),
      [&](const tbb::blocked_range<std::size_t>& range) {
        const std::span<const R> part = rays.subspan(range.begin(), range.size());
        Hit* hits = out.data() + range.begin();
        // The traversal takes float rays; the leaves read part[i]. A bad
        // ray (not is_valid) walks as a ray that reaches nothing (t in
        // [0, -1]: every box test fails) and is answered as a miss.
        const bool all_valid = std::all_of(part.begin(), part.end(),
                                           [](const R& ray) { return is_valid(ray); });
        std::vector<Ray> rounded;
        std::span<const Ray> node_rays;
        if (std::is_same_v<R, Ray> && all_valid) {
          if constexpr (std::is_same_v<R, Ray>) node_rays = part;
        } else {
          rounded.reserve(part.size());
          for (const R& ray : part) {
            rounded.push_back(is_valid(ray) ? traversal_ray(ray)
                                            : Ray{glm::vec3{0.0f}, glm::vec3{0.0f, 0.0f, 1.0f},
                                                  0.0f, -1.0f});
          }
          node_rays = rounded;
        }
        if (!interleave) {
          // Coherent groups of consecutive rays (a camera's pixels along
          // a row) walk the tree as packets, the others one ray at a time.
          top_.traverse_packets(node_rays, [&](std::size_t i, std::uint32_t entry, float& tmax) {
            closest_leaf(entry, part[i], options, tmax, hits[i]);
          });
          return;
        }
        top_.traverse_interleaved<kInFlight>(
            node_rays,
            [&](std::size_t i, std::uint32_t entry, float& tmax) {
              return closest_leaf(entry, part[i], options, tmax, hits[i]);
            },
            [&](std::uint32_t first, std::uint32_t count) {
              // Every cache line of the leaf's run of copies.
              const auto begin = reinterpret_cast<std::uintptr_t>(&leaf_[first]);
              const auto end = reinterpret_cast<std::uintptr_t>(&leaf_[first + count]);
              for (std::uintptr_t p = begin & ~std::uintptr_t{63}; p < end; p += 64) {
                wide_detail::prefetch(reinterpret_cast<const void*>(p));
              }
            });
      });
  return out;
}


glm::vec3 Picker::Impl::world_normal(const Hit& hit) const {
  if (!hit.hit() || hit.triangle == kInvalidId) return glm::vec3{0.0f};
  const ObjectRec& obj = objects_[hit.object];
  const MeshAccel& mesh = meshes_[obj.mesh];
  const glm::uvec3& idx = mesh.triangles[hit.triangle];
  const glm::vec3 p0 = mesh.positions[idx.x];
  const glm::vec3 n_local =
      glm::cross(mesh.positions[idx.y] - p0, mesh.positions[idx.z] - p0);
  // cross(M e1, M e2) = det(M) * M^-T * cross(e1, e2): the inverse
  // transpose alone would flip the normal of a mirrored object.
  const Obb obb = make_obb(obj);
  const glm::mat3 m{obb.to_world};
  const glm::mat3 inv_t = glm::transpose(obb.frame.linear);
  glm::vec3 n = inv_t * n_local;
  if (glm::determinant(m) < 0.0f) n = -n;
  const float len = glm::length(n);
  return len > 0.0f ? n / len : glm::vec3{0.0f};
}

Aabb Picker::Impl::world_box(std::uint32_t id) const {
  RAYPICK_ASSERT(id < objects_.size(), "object id out of range");
  if (!objects_[id].alive) return Aabb{};
  return padded_world_box(make_obb(objects_[id]), pad_centre_);
}

std::size_t Picker::Impl::memory_bytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  std::size_t n = bytes(objects_) + bytes(user_data_) + bytes(meshes_) +
                  bytes(leaf_) + bytes(moved_) + bytes(dirty_) + top_.memory_bytes();
  for (const MeshAccel& m : meshes_) {
    n += bytes(m.owned_positions) + bytes(m.owned_triangles) + bytes(m.verts) +
         m.bvh.memory_bytes();
  }
  return n;
}

// ---- the API: each call handed to the implementation ----------------------

Picker::Picker() : impl_(std::make_unique<Impl>(PickerConfig{})) {}
Picker::Picker(const PickerConfig& config) : impl_(std::make_unique<Impl>(config)) {}
Picker::Picker(const Scene& scene, const PickerConfig& config)
    : impl_(std::make_unique<Impl>(config)) {
  impl_->load(scene);
}
Picker::~Picker() = default;
Picker::Picker(Picker&&) noexcept = default;
Picker& Picker::operator=(Picker&&) noexcept = default;

std::uint32_t Picker::add_mesh(std::span<const glm::vec3> positions,
                               std::span<const glm::uvec3> triangles, Storage storage) {
  return impl_->add_mesh(positions, triangles, storage);
}
std::uint32_t Picker::add_object(std::uint32_t mesh, const glm::mat4& matrix,
                                 std::uint32_t mask, void* user_data) {
  return impl_->add_object(mesh, matrix, mask, user_data);
}
void Picker::remove_object(std::uint32_t id) { impl_->remove_object(id); }
void Picker::set_matrix(std::uint32_t id, const glm::mat4& matrix) {
  impl_->set_matrix(id, matrix);
}
void Picker::set_mask(std::uint32_t id, std::uint32_t mask) { impl_->set_mask(id, mask); }
CommitStats Picker::commit(CommitMode mode) { return impl_->commit(mode); }

PickResult Picker::intersect_stats(const Ray& ray, const QueryOptions& options) const {
  return impl_->intersect_impl(ray, options);
}
PickResult Picker::intersect_stats(const RayD& ray, const QueryOptions& options) const {
  return impl_->intersect_impl(ray, options);
}
bool Picker::occluded(const Ray& ray, const QueryOptions& options) const {
  return impl_->occluded_impl(ray, options);
}
bool Picker::occluded(const RayD& ray, const QueryOptions& options) const {
  return impl_->occluded_impl(ray, options);
}
std::vector<Hit> Picker::intersect_all(const Ray& ray, const QueryOptions& options,
                                       std::size_t limit) const {
  return impl_->intersect_all_impl(ray, options, limit);
}
std::vector<Hit> Picker::intersect_all(const RayD& ray, const QueryOptions& options,
                                       std::size_t limit) const {
  return impl_->intersect_all_impl(ray, options, limit);
}
std::vector<Hit> Picker::intersect_batch(std::span<const Ray> rays,
                                         const QueryOptions& options) const {
  return impl_->intersect_batch_impl(rays, options);
}
std::vector<Hit> Picker::intersect_batch(std::span<const RayD> rays,
                                         const QueryOptions& options) const {
  return impl_->intersect_batch_impl(rays, options);
}
std::vector<std::uint32_t> Picker::select(const Frustum& region, SelectRule rule,
                                          const QueryOptions& options) const {
  return impl_->select(region, rule, options);
}
glm::vec3 Picker::world_normal(const Hit& hit) const { return impl_->world_normal(hit); }

std::size_t Picker::object_count() const { return impl_->objects_.size(); }
std::size_t Picker::mesh_count() const { return impl_->meshes_.size(); }
bool Picker::alive(std::uint32_t id) const { return impl_->objects_[id].alive; }
Obb Picker::obb(std::uint32_t id) const { return impl_->make_obb(impl_->objects_[id]); }
std::uint32_t Picker::mask(std::uint32_t id) const { return impl_->objects_[id].mask; }
void* Picker::user_data(std::uint32_t id) const {
  return id < impl_->user_data_.size() ? impl_->user_data_[id] : nullptr;
}
Aabb Picker::world_box(std::uint32_t id) const { return impl_->world_box(id); }
Aabb Picker::world_bounds() const { return impl_->top_.bounds(); }
glm::vec3 Picker::pad_centre() const { return impl_->pad_centre_; }
BvhStats Picker::bvh_stats() const { return impl_->top_.stats(impl_->config_.top); }
std::size_t Picker::memory_bytes() const { return impl_->memory_bytes(); }
Isa Picker::isa() const { return impl_->avx2() ? Isa::kAvx2 : Isa::kSse2; }

}  // namespace raypick
