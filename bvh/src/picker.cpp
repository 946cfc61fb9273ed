#include "picker_impl.h"
#include "leaf_batch.h"
#include "padding.h"

#include "raypick/core/assert.h"
#include "raypick/core/ray_triangle.h"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

#include <glm/matrix.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <exception>
#include <functional>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

namespace raypick {
namespace {

// Storage for n elements of a trivially copyable T, left uninitialized:
// for arrays that a parallel loop fills before anything reads them (a
// vector would first write every element on one thread).
template <class T>
class Uninitialized {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  explicit Uninitialized(std::size_t n)
      : data_(static_cast<T*>(::operator new(std::max<std::size_t>(n, 1) * sizeof(T),
                                             std::align_val_t{alignof(T)}))) {
    compiler::advise_huge_pages(data_, n * sizeof(T));
  }
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

// validate_objects(scene, bounds, 0, n).empty(), in parallel chunks
// (serial, the check was 30 ms of a million objects' build).
bool objects_are_valid(const Scene& scene, std::span<const Aabb> bounds) {
  auto range = [&](const tbb::blocked_range<std::size_t>& r, bool ok) {
    return ok && validate_objects(scene, bounds, r.begin(), r.end()).empty();
  };
  const tbb::blocked_range<std::size_t> ids(0, scene.objects.size(), kObjectGrain);
  return ids.is_divisible() ? tbb::parallel_reduce(ids, true, range, std::logical_and<>())
                            : range(ids, true);
}

}  // namespace

void PickerCore::load(const Scene& scene) {
  add_scene(scene);
  commit(CommitMode::kRebuild);
}

void PickerCore::add_scene(const Scene& scene) {
  // validate_scene(scene), in its two steps: the meshes, then the objects
  // against the meshes' boxes, which add_mesh() makes (triangle_bounds()).
  RAYPICK_ASSERT(validate_meshes(scene).empty(), "scene is not valid");
  const std::size_t first_mesh = meshes_.size();
  meshes_.reserve(first_mesh + scene.meshes.size());
  for (const Mesh& m : scene.meshes) add_mesh(m.positions, m.triangles, Picker::Storage::kCopy);
  std::vector<Aabb> bounds(scene.meshes.size());
  for (std::size_t m = 0; m < bounds.size(); ++m) bounds[m] = meshes_[first_mesh + m].bounds;
  RAYPICK_ASSERT(objects_are_valid(scene, bounds), "scene is not valid");
  const bool fresh = objects_.capacity() == 0;
  objects_.reserve(scene.objects.size());
  if (fresh) compiler::advise_huge_pages(objects_.data(), scene.objects.size() * sizeof(ObjectRec));
  for (const Object& o : scene.objects) {
    add_object(o.mesh, o.matrix, o.translation_low, o.mask, nullptr);
  }
}

std::uint32_t PickerCore::add_mesh(std::span<const glm::vec3> positions,
                               std::span<const glm::uvec3> triangles,
                               Picker::Storage storage) {
  MeshAccel& m = meshes_.emplace_back();
  if (storage == Picker::Storage::kCopy) {
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

std::uint32_t PickerCore::add_object(std::uint32_t mesh, const glm::mat4& matrix,
                                     const glm::vec3& low, std::uint32_t mask,
                                     void* user_data) {
  RAYPICK_ASSERT(mesh < meshes_.size(), "mesh id out of range");
  ObjectRec& o = objects_.emplace_back();
  o.to_world = glm::mat4x3(matrix);
  o.mesh = mesh;
  o.mask = mask;
  const std::uint32_t id = static_cast<std::uint32_t>(objects_.size() - 1);
  store_low(id, low);
  if (user_data != nullptr) {
    // Allocated on first use: scenes without user data pay nothing.
    user_data_.resize(id + 1, nullptr);
    user_data_[id] = user_data;
  }
  structure_dirty_ = true;
  return id;
}

void PickerCore::remove_object(std::uint32_t id) {
  RAYPICK_ASSERT(id < objects_.size() && objects_[id].alive,
                 "object id out of range or already removed");
  objects_[id].alive = false;
  structure_dirty_ = true;
}

void PickerCore::set_matrix(std::uint32_t id, const glm::mat4& matrix, const glm::vec3& low) {
  RAYPICK_ASSERT(id < objects_.size() && objects_[id].alive,
                 "object id out of range or removed");
  ObjectRec& o = objects_[id];
  o.to_world = glm::mat4x3(matrix);
  // A float matrix in a scene with no low parts (the usual move) has
  // nothing to store: no call.
  if (low != glm::vec3{0.0f} || !low_.empty()) store_low(id, low);
  if (o.prim == kInvalidId) {
    // Not in the tree (it could not be hit at the last build): only a
    // rebuild can add it.
    if (!make_obb(id).world_bounds().empty()) structure_dirty_ = true;
    return;
  }
  // The inverse, world box and leaf copy are recomputed at commit, where
  // many moves are taken in the tree's order.
  if (!o.moved) {
    o.moved = true;
    dirty_.push_back(id);
  }
}

void PickerCore::store_low(std::uint32_t id, const glm::vec3& low) {
  if (low == glm::vec3{0.0f}) {
    // significant_low() of zero is zero: no read of the object or its mesh
    // (a move of every object by a float matrix comes here for each).
    if (!low_.empty()) {
      low_.resize(objects_.size(), glm::vec3{0.0f});  // a new object's place
      low_[id] = glm::vec3{0.0f};
    }
    return;
  }
  const ObjectRec& o = objects_[id];
  const glm::vec3 l = significant_low(o.to_world, meshes_[o.mesh].bounds, low);
  if (low_.empty() && l == glm::vec3{0.0f}) return;
  if (low_.empty()) low_.reserve(objects_.capacity());
  low_.resize(objects_.size(), glm::vec3{0.0f});
  low_[id] = l;
}

Obb PickerCore::make_obb(std::uint32_t id) const {
  const ObjectRec& o = objects_[id];
  return Obb::make(meshes_[o.mesh].bounds, glm::mat4(o.to_world), low(id));
}

glm::dmat4x3 PickerCore::world_matrix(std::uint32_t id) const {
  glm::dmat4x3 m{objects_[id].to_world};
  const glm::vec3 l = low(id);
  for (int a = 0; a < 3; ++a) {
    if (l[a] != 0.0f) m[3][a] += l[a];  // a -0.0 translation stays -0.0
  }
  return m;
}

Aabb PickerCore::padded_box(const ObjectRec& o, const glm::vec3& l) const {
  if (l == glm::vec3{0.0f}) {
    return pad_transformed_box(o.to_world, meshes_[o.mesh].bounds, pad_centre_);
  }
  // Placed beyond float: as padded_world_box(make_obb(id)), the box moved
  // by the low part, rounded outward, before the padding.
  return pad(shift_outward(transform_aabb(o.to_world, meshes_[o.mesh].bounds), l), pad_centre_);
}

Aabb PickerCore::make_leaf(std::uint32_t id, LeafObb& l) const {
  // As make_obb() and padded_world_box(), without the Obb's full matrices:
  // this runs for every object at a build and every moved one at commit.
  const ObjectRec& o = objects_[id];
  const bool invertible = make_local_frame(o.to_world, l.frame);
  // Written only when it changes: a commit's sweep remakes leaf copies in
  // place while another range's look-ahead reads their object ids.
  if (l.object != id) l.object = id;
  l.mask = o.mask;
  l.mesh = invertible ? o.mesh : kInvalidId;
  return invertible ? padded_box(o, low(id)) : Aabb{};
}

void PickerCore::set_mask(std::uint32_t id, std::uint32_t mask) {
  RAYPICK_ASSERT(id < objects_.size(), "object id out of range");
  objects_[id].mask = mask;
  if (objects_[id].prim != kInvalidId) leaf_[objects_[id].prim].mask = mask;
}

std::vector<std::uint32_t> PickerCore::meshes_to_build() const {
  std::vector<std::uint32_t> todo;
  if (!config_.mesh_mode) return todo;
  const std::vector<bool> used = used_meshes();
  for (std::uint32_t id = 0; id < meshes_.size(); ++id) {
    if (used[id] && !meshes_[id].bvh_built) todo.push_back(id);
  }
  return todo;
}

namespace {

// Runs f, keeping an exception it throws in `error` instead of letting it
// leave a TBB task: there it would cancel the task's siblings, and with
// them their nested builds (whose trees would be left half made).
template <class F>
void keeping_exception(std::exception_ptr& error, F&& f) {
  try {
    f();
  } catch (...) {
    error = std::current_exception();
  }
}

}  // namespace

void PickerCore::build_mesh_bvhs(std::span<const std::uint32_t> todo) {
  // A single mesh without the scheduler.
  if (todo.size() == 1) {
    build_mesh_bvh(meshes_[todo[0]]);
    return;
  }
  // One task per mesh (a large one builds its subtrees as tasks of its
  // own), each keeping its exception; the first is thrown once all are
  // done. A mesh whose build threw keeps bvh_built false.
  std::vector<std::exception_ptr> errors(todo.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, todo.size(), 1),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      for (std::size_t k = r.begin(); k != r.end(); ++k) {
                        keeping_exception(errors[k], [&] { build_mesh_bvh(meshes_[todo[k]]); });
                      }
                    });
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void PickerCore::build_mesh_bvh(MeshAccel& m) const {
  {  // the triangles' boxes freed before the vertices are copied
    std::vector<Aabb> boxes(m.triangles.size());
    for (std::size_t t = 0; t < m.triangles.size(); ++t) {
      Aabb b;
      for (int k = 0; k < 3; ++k) b.extend(m.positions[m.triangles[t][k]]);
      boxes[t] = pad(b);
    }
    const Bvh binary = build_bvh(boxes, config_.mesh);
    if (mesh_wide16()) {
      m.bvh = WideBvh16::collapse(binary, config_.mesh);
    } else {
      m.bvh = WideBvh::collapse(binary, config_.mesh);
    }
  }
  m.with_bvh([&](auto& tree) { tree.set_node_test(node_test()); });
  copy_verts(m);
  m.bvh_built = true;
}


double PickerCore::sah_cost() const {
  return with_top([&](const auto& top) {
    if (top.empty()) return 0.0;
    // The root's own term moves with its area; the rest is the tracked sum.
    return sah_sum_ / std::max(double(top.bounds().half_area()), 1e-30);
  });
}

glm::vec3 PickerCore::live_centre() const {
  CentreSum centre;
  for (const ObjectRec& o : objects_) {
    if (o.alive) centre.add(o.to_world[3]);
  }
  return centre.centre();
}

std::vector<bool> PickerCore::used_meshes() const {
  std::vector<bool> used(meshes_.size(), false);
  for (const ObjectRec& o : objects_) used[o.mesh] = used[o.mesh] || o.alive;
  return used;
}

std::size_t PickerCore::make_leaves(LeafObb* leaves, Aabb* boxes) {
  auto range = [&](const tbb::blocked_range<std::uint32_t>& r, std::size_t k) {
    for (std::uint32_t id = r.begin(); id != r.end(); ++id) {
      ObjectRec& o = objects_[id];
      o.prim = kInvalidId;
      // The id first: `leaves` may be uninitialized (rebuild()'s buffer),
      // and make_leaf() reads it (to write it only when it changes).
      leaves[id].object = id;
      boxes[id] = o.alive ? make_leaf(id, leaves[id]) : Aabb{};
      if (!boxes[id].empty()) ++k;
    }
    return k;
  };
  // A single chunk (a small scene) runs here, without the scheduler.
  const tbb::blocked_range<std::uint32_t> ids(0, static_cast<std::uint32_t>(objects_.size()),
                                              kObjectGrain);
  return ids.is_divisible() ? tbb::parallel_reduce(ids, std::size_t{0}, range, std::plus<>())
                            : range(ids, 0);
}

void PickerCore::copy_verts(MeshAccel& m) {
  m.verts.resize(m.with_bvh([](const auto& tree) { return tree.entry_count(); }));
  for (std::size_t e = 0; e < m.verts.size(); ++e) {
    const glm::uvec3& t = m.triangles[m.prim_id(static_cast<std::uint32_t>(e))];
    m.verts[e] = {m.positions[t.x], m.positions[t.y], m.positions[t.z]};
  }
  m.tri_boxes.assign(m.verts);
}

void PickerCore::rebuild() {
  // The padding's centre over the live objects (in order: its double sum
  // must not depend on the thread count).
  pad_centre_ = live_centre();
  // Per object, in parallel: its leaf copy (the double inverse) and padded
  // world box, by object id. An empty box (removed, or never hit) leaves
  // the object out of the tree.
  const auto count = static_cast<std::uint32_t>(objects_.size());
  Uninitialized<LeafObb> leaves(count);
  Uninitialized<Aabb> boxes(count);
  const std::size_t kept = make_leaves(leaves.get(), boxes.get());
  // Primitives are the kept objects in id order: when some are left out,
  // close the gaps (one serial pass, only then).
  std::size_t n = count;
  if (kept != count) {
    n = 0;
    for (std::uint32_t id = 0; id < count; ++id) {
      if (boxes[id].empty()) continue;
      leaves[n] = leaves[id];
      boxes[n] = boxes[id];
      ++n;
    }
  }
  {
    const Bvh binary = build_bvh({boxes.get(), n}, config_.top);
    if (wide16()) {
      top_ = WideBvh16::collapse(binary, config_.top);
    } else {
      top_ = WideBvh::collapse(binary, config_.top);
    }
  }
  with_top([&](auto& top) { rebuild_entries(top, leaves.get(), n); });
}

template <class Tree>
void PickerCore::rebuild_entries(Tree& top, const LeafObb* leaves, std::size_t n) {
  top.set_node_test(node_test());
  top.set_packet_lanes(packet_lanes());
  // Renumber the primitives in the tree's entry order, so that a refit's
  // sweep reads the boxes front to back: from here on prim == entry. Each
  // entry writes its own leaf copy and object: a parallel loop.
  RAYPICK_ASSERT(top.entry_count() == n, "the tree holds every primitive once");
  // Allocated at its size (no shrink copy); HugeAllocator maps and hints a
  // large one itself.
  compiler::HugeVector<LeafObb> by_entry(n);
  // Both reads are at random (by primitive, then by object): each is
  // fetched a few entries ahead, the object's through its leaf copy,
  // fetched before it.
  constexpr std::uint32_t kAhead = 16;
  auto reorder = [&](const tbb::blocked_range<std::uint32_t>& r) {
    for (std::uint32_t e = r.begin(); e != r.end(); ++e) {
      if (e + kAhead < r.end()) compiler::prefetch(&leaves[top.prim_id(e + kAhead)]);
      if (e + kAhead / 2 < r.end()) {
        compiler::prefetch(&objects_[leaves[top.prim_id(e + kAhead / 2)].object]);
      }
      const LeafObb& leaf = leaves[top.prim_id(e)];
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
  top.set_fetch_pushed(fetches_pushed(top));
  top.number_by_entry();
  moved_.assign(n, 0);
  sah_sum_ = top.sah_sum(config_.top);
  sah_built_ = sah_cost();
  ++rebuilds_;
}

void PickerCore::remake_leaves(const std::uint32_t* es, std::size_t n, Aabb* const* out,
                               int lanes) {
  // leaf_batch.h: make_leaf()'s frames and boxes, bit for bit, low parts
  // included; the few the batch hands back made one at a time. low is
  // read only when any_low.
  const glm::mat4x3* m[kLeafBatch];
  const Aabb* local[kLeafBatch];
  LocalFrame* frames[kLeafBatch];
  Aabb boxes[kLeafBatch];
  glm::vec3 low[kLeafBatch];
  bool any_low = false;
  for (std::size_t k = 0; k < n; ++k) {
    const ObjectRec& o = objects_[leaf_[es[k]].object];
    m[k] = &o.to_world;
    local[k] = &meshes_[o.mesh].bounds;
    frames[k] = &leaf_[es[k]].frame;
    if (!low_.empty()) {
      low[k] = low_[leaf_[es[k]].object];
      any_low = any_low || ((low[k].x != 0.0f) | (low[k].y != 0.0f) | (low[k].z != 0.0f));
    }
  }
  const unsigned back = leaf_frames_and_boxes(lanes, n, m, local, any_low ? low : nullptr,
                                              pad_centre_, frames, boxes);
  for (std::size_t k = 0; k < n; ++k) {
    LeafObb& l = leaf_[es[k]];
    if ((back >> k) & 1u) {
      *out[k] = make_leaf(l.object, l);
    } else {
      const ObjectRec& o = objects_[l.object];
      l.mask = o.mask;
      l.mesh = o.mesh;
      *out[k] = boxes[k];
    }
  }
}

void PickerCore::make_leaves(std::uint32_t begin, std::uint32_t end, const std::uint8_t* want,
                             Aabb* out, int lanes) {
  // The moved entries kLeafBatch at a time.
  std::uint32_t batch[kLeafBatch];
  Aabb* boxes[kLeafBatch];
  std::size_t n = 0;
  for (std::uint32_t e = begin; e < end; ++e) {
    if (want[e - begin] == 0) continue;
    if (moved_[e] == 0) {
      out[e - begin] = entry_box(e);
      continue;
    }
    batch[n] = e;
    boxes[n++] = &out[e - begin];
    if (n == kLeafBatch) {
      remake_leaves(batch, n, boxes, lanes);
      n = 0;
    }
  }
  remake_leaves(batch, n, boxes, lanes);
}

Aabb PickerCore::entry_box(std::uint32_t e) const {
  const LeafObb& l = leaf_[e];
  return l.mesh == kInvalidId ? Aabb{} : padded_box(objects_[l.object], low(l.object));
}

namespace {

// The threads TBB may run a parallel loop of the calling thread on: its
// arena's, capped by any global_control.
std::size_t tbb_threads() {
  return std::min(static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()),
                  tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

}  // namespace

std::size_t PickerCore::refit_moved(std::span<const std::uint32_t> moved) {
  return with_top([&](auto& top) { return refit_moved(top, moved); });
}

template <class Tree>
std::size_t PickerCore::refit_moved(Tree& top, std::span<const std::uint32_t> moved) {
  // Clears the moved objects' flags (ObjectRec::moved) on every path.
  const std::size_t n = top.nodes().size();
  if (n == 0) {
    for (std::uint32_t id : moved) objects_[id].moved = false;
    return 0;
  }
  // The path refit costs about 0.13 us per moved object at boxes-1M (the
  // moved records read in the order of the moves, the tree's nodes and
  // leaf slots prefetched in its order), the sweep about 17 ms plus 0.07
  // us per moved one (it reads every entry in order). One thread, boxes-1M
  // commit ms, path against sweep: 2% moved 2.9 / 17.9, 6% 7.9 / 21.7, 10%
  // 13.1 / 24.4, 15% 19.1 / 28.1; boxes-10k, 20% moved, 0.10 / 0.21. Past
  // about 1 in 5 entries moved the sweep is cheaper on one thread. The
  // sweep runs on every thread from 65,536 entries on and the path on one:
  // there the crossing is divided by the threads.
  const std::size_t sweep_threads = leaf_.size() >= Tree::kParallelSweep ? tbb_threads() : 1;
  if (moved.size() * 5 * sweep_threads < leaf_.size()) {
    // The moved entries' leaf copies and boxes first, in the order of the
    // moves, kLeafBatch at a time as the sweep makes them: set_matrix()
    // has just written their records, which are likely still in cache (in
    // the tree's order below they were cache misses). Their leaf copies
    // are written at random, fetched for writing a batch ahead.
    std::vector<std::uint32_t>& entries = moved_entries_;
    std::vector<Aabb>& boxes = moved_boxes_;
    entries.resize(moved.size());
    boxes.resize(moved.size());
    for (std::size_t i = 0; i < moved.size(); ++i) {
      ObjectRec& o = objects_[moved[i]];
      entries[i] = o.prim;
      o.moved = false;
    }
    const int lanes = packet_lanes();
    Aabb* out[kLeafBatch];
    for (std::size_t i = 0; i < entries.size(); i += kLeafBatch) {
      const std::size_t batch = std::min(kLeafBatch, entries.size() - i);
      for (std::size_t k = i + kLeafBatch; k < std::min(i + 2 * kLeafBatch, entries.size()); ++k) {
        compiler::prefetch_for_write(&leaf_[entries[k]]);
      }
      for (std::size_t k = 0; k < batch; ++k) out[k] = &boxes[i + k];
      remake_leaves(&entries[i], batch, out, lanes);
    }
    // The other entries of the moved ones' leaf slots: their leaf copies,
    // then (once a leaf copy has arrived) their objects' records.
    auto prefetch = [&](std::uint32_t e, int stage) {
      if (stage == 2) {
        compiler::prefetch(&leaf_[e]);
      } else if (stage == 3) {
        compiler::prefetch(&objects_[leaf_[e].object]);
      }
    };
    // The SAH sum follows each box change, so commit() compares the
    // tree's cost with the built one without an O(n) pass.
    const std::size_t slots = top.refit_path(
        entries, [&](std::uint32_t e) { return entry_box(e); },
        [&](std::size_t i) { return boxes[i]; }, config_.top,
        [&](double weight, double old_area, double new_area) {
          sah_sum_ += weight * (new_area - old_area);
        },
        prefetch);
    return slots;
  }
  // Many moved: the sweep takes the entries in order, so the leaf copies
  // are written front to back and only the objects are read out of order
  // (prefetched 128 entries ahead). The look-ahead may read flags of the
  // next range, which another thread sweeps: so no flag is cleared during
  // the sweep, only after it.
  for (std::uint32_t id : moved) {
    ObjectRec& o = objects_[id];
    moved_[o.prim] = 1;
    o.moved = false;
  }
  const std::size_t entries = leaf_.size();
  constexpr std::size_t kAhead = 128;  // object reads ahead: two of the sweep's blocks
  const int lanes = packet_lanes();
  const typename Tree::SweepResult r = top.refit_sweep_blocks(
      [&](std::uint32_t e) {
        // The leaf copies twice as far ahead, so that reading the one
        // kAhead ahead for its object does not wait for memory.
        if (e + 2 * kAhead < entries) compiler::prefetch(&leaf_[e + 2 * kAhead]);
        if (e + kAhead < entries && moved_[e + kAhead] != 0) {
          compiler::prefetch(&objects_[leaf_[e + kAhead].object]);
        }
        return moved_[e] != 0;
      },
      [&](std::uint32_t begin, std::uint32_t end, const std::uint8_t* want, Aabb* out) {
        make_leaves(begin, end, want, out, lanes);
      },
      config_.top);
  // Cleared in one sequential pass: a pass over the moved objects' records
  // would read a cache line each, for one byte.
  std::fill(moved_.begin(), moved_.end(), std::uint8_t{0});
  sah_sum_ = r.sah_sum;
  return r.slots;
}

CommitStats PickerCore::commit(CommitMode mode) {
  CommitStats s;
  // Which meshes are used changes only with adds and removals (a pass over
  // every object record: not for a commit of moves).
  if (structure_dirty_ || !committed_) {
    // The top level reads the meshes' bounds, never their trees: the two
    // are built side by side where TBB may run more than one thread (the
    // arena's, capped by any global_control). As in build_mesh_bvhs(),
    // each side keeps its exception until both are done.
    const std::vector<std::uint32_t> todo = meshes_to_build();
    if (todo.empty() || tbb_threads() == 1) {
      build_mesh_bvhs(todo);
      rebuild();
    } else {
      std::exception_ptr meshes_error, top_error;
      tbb::parallel_invoke(
          [&] { keeping_exception(meshes_error, [&] { build_mesh_bvhs(todo); }); },
          [&] { keeping_exception(top_error, [&] { rebuild(); }); });
      if (top_error) std::rethrow_exception(top_error);
      if (meshes_error) std::rethrow_exception(meshes_error);
    }
    s.rebuilt = true;
  } else if (mode == CommitMode::kRebuild) {
    rebuild();
    s.rebuilt = true;
  } else if (!dirty_.empty()) {
    s.moved = dirty_.size();
    try {
      s.slots_updated = refit_moved(dirty_);
    } catch (...) {
      // The moved flags may be cleared already, the tree half refitted
      // (an allocation failed): the next commit rebuilds from the records.
      for (std::uint32_t id : dirty_) objects_[id].moved = false;
      dirty_.clear();
      structure_dirty_ = true;
      throw;
    }
    s.refitted = true;
    ++refits_;
    if (mode == CommitMode::kAuto &&
        sah_cost() > config_.rebuild_factor * sah_built_) {
      rebuild();
      s.rebuilt = true;
    }
  }
  // A rebuild leaves the moved flags to clear (a refit clears them).
  if (!s.refitted) {
    for (std::uint32_t id : dirty_) objects_[id].moved = false;
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

// ---- the API: each call handed to the implementation ----------------------

Picker::Picker() : impl_(std::make_unique<PickerCore>(PickerConfig{})) {}
Picker::Picker(const PickerConfig& config) : impl_(std::make_unique<PickerCore>(config)) {}
Picker::Picker(const Scene& scene, const PickerConfig& config)
    : impl_(std::make_unique<PickerCore>(scene, config)) {}
Picker Picker::open(const Scene& scene, std::string_view trees, const PickerConfig& config,
                    std::string* why) {
  Picker p(config);
  std::string reason = "no saved trees";
  if (!trees.empty()) {
    p.impl_->add_scene(scene);
    if (p.impl_->adopt_trees(trees, reason)) {
      if (why) why->clear();
      return p;
    }
    p.impl_ = std::make_unique<PickerCore>(config);
  }
  if (why) *why = std::move(reason);
  p.impl_->load(scene);
  return p;
}
std::string Picker::save_trees() const { return impl_->save_trees(); }
Picker::~Picker() = default;
Picker::Picker(Picker&&) noexcept = default;
Picker& Picker::operator=(Picker&&) noexcept = default;

std::uint32_t Picker::add_mesh(std::span<const glm::vec3> positions,
                               std::span<const glm::uvec3> triangles, Picker::Storage storage) {
  return impl_->add_mesh(positions, triangles, storage);
}
std::uint32_t Picker::add_object(std::uint32_t mesh, const glm::mat4& matrix,
                                 std::uint32_t mask, void* user_data) {
  return impl_->add_object(mesh, matrix, glm::vec3{0.0f}, mask, user_data);
}
std::uint32_t Picker::add_object(std::uint32_t mesh, const glm::dmat4& matrix,
                                 std::uint32_t mask, void* user_data) {
  return impl_->add_object(mesh, glm::mat4(matrix), translation_low(glm::dvec3(matrix[3])), mask,
                           user_data);
}
void Picker::remove_object(std::uint32_t id) { impl_->remove_object(id); }
void Picker::set_matrix(std::uint32_t id, const glm::mat4& matrix) {
  impl_->set_matrix(id, matrix, glm::vec3{0.0f});
}
void Picker::set_matrix(std::uint32_t id, const glm::dmat4& matrix) {
  impl_->set_matrix(id, glm::mat4(matrix), translation_low(glm::dvec3(matrix[3])));
}
void Picker::set_mask(std::uint32_t id, std::uint32_t mask) { impl_->set_mask(id, mask); }
CommitStats Picker::commit(CommitMode mode) { return impl_->commit(mode); }


std::size_t Picker::object_count() const { return impl_->objects_.size(); }
std::size_t Picker::mesh_count() const { return impl_->meshes_.size(); }
bool Picker::alive(std::uint32_t id) const { return impl_->objects_[id].alive; }
Obb Picker::obb(std::uint32_t id) const { return impl_->make_obb(id); }
std::uint32_t Picker::mask(std::uint32_t id) const { return impl_->objects_[id].mask; }
void* Picker::user_data(std::uint32_t id) const {
  return id < impl_->user_data_.size() ? impl_->user_data_[id] : nullptr;
}
Aabb Picker::world_box(std::uint32_t id) const { return impl_->world_box(id); }
Aabb Picker::world_bounds() const { return impl_->world_bounds(); }
glm::vec3 Picker::pad_centre() const { return impl_->pad_centre_; }
BvhStats Picker::bvh_stats() const { return impl_->bvh_stats(); }
std::size_t Picker::memory_bytes() const { return impl_->memory_bytes(); }
Isa Picker::isa() const { return impl_->isa(); }
int Picker::top_width() const { return impl_->top_width(); }

}  // namespace raypick
