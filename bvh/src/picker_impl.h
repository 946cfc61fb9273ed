// PickerCore: what a Picker holds, its state and its private steps, shared
// by picker.cpp, picker_queries.cpp, select.cpp and point_query.cpp. A
// Picker forwards each call to one. Private to the library: the library's
// tests and raypick_floor (the raypick_bvh_internal target) build a
// PickerCore directly to read its trees.
#pragma once

#include "raypick/bvh/picker.h"

#include "point_keys.h"
#include "wide_bvh.h"

#include <glm/ext/matrix_double4x3.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace raypick {

// The bound of a mesh tree's box walk when its triangle tests are bounded
// by t: t and 2^-17 of it more (64 to 128 ulps). A triangle's float t can
// round a few ulps below the exact hit, and so below the float entry of
// its own leaf's box, which a walk bounded by t itself would cull
// (PickerCore::mesh_hit; docs/precision.md).
inline float mesh_walk_reach(float t) {
  return t + std::abs(t) * 0x1p-17f;
}

// A wide BVH of 8 or 16 slots (the top level, a mesh's triangle tree).
using AnyWideBvh = std::variant<WideBvh, WideBvh16>;

// Calls f with the tree `v` holds, whichever its width (const or not as
// `v` is).
template <class Variant, class F>
decltype(auto) with_width(Variant& v, F&& f) {
  if (auto* t = std::get_if<WideBvh16>(&v)) return f(*t);
  return f(std::get<WideBvh>(v));
}

class PickerCore {
 public:
  // Calls f with the top level's tree, whichever its width.
  template <class F>
  decltype(auto) with_top(F&& f) const { return with_width(top_, f); }
  template <class F>
  decltype(auto) with_top(F&& f) { return with_width(top_, f); }
  // An empty picker's top level already has the width its builds will
  // give it (Picker::isa() says so).
  explicit PickerCore(const PickerConfig& config) : config_(config) {
    RAYPICK_ASSERT(config.top_width == 0 || config.top_width == 8 || config.top_width == 16,
                   "PickerConfig::top_width is 0, 8 or 16");
    if (wide16()) top_ = WideBvh16{};
    with_top([&](auto& top) { top.set_node_test(node_test()); });
  }
  // Picker(scene, config)'s core.
  explicit PickerCore(const Scene& scene, const PickerConfig& config = {})
      : PickerCore(config) {
    load(scene);
  }

  struct MeshAccel {
    std::vector<glm::vec3> owned_positions;
    std::vector<glm::uvec3> owned_triangles;
    std::span<const glm::vec3> positions;
    std::span<const glm::uvec3> triangles;
    Aabb bounds;  // of the vertices the triangles use
    // Built at commit in mesh mode: a wide BVH over the triangles (16 wide
    // under the AVX-512 node test, mesh_wide16(); else 8), and each
    // triangle's vertices copied in the BVH's entry order, so a leaf reads
    // one contiguous run.
    AnyWideBvh bvh;
    std::vector<std::array<glm::vec3, 3>> verts;
    // Their exact (unpadded) boxes, in the same order, for the point
    // queries' per-triangle keys.
    point_keys::TriangleBoxes tri_boxes;
    bool bvh_built = false;

    // f(tree) on the triangle tree, whichever its width.
    template <class F>
    decltype(auto) with_bvh(F&& f) const { return with_width(bvh, f); }
    template <class F>
    decltype(auto) with_bvh(F&& f) { return with_width(bvh, f); }
    // The triangle of tree entry e.
    std::uint32_t prim_id(std::uint32_t e) const {
      return with_bvh([e](const auto& t) { return t.prim_id(e); });
    }
  };
  // What an object is, not what the tree derives from it (the inverse,
  // the world box and the leaf copy are recomputed at commit): one cache
  // line, so a commit after many moves reads one line per object.
  struct alignas(64) ObjectRec {
    glm::mat4x3 to_world{1.0f};  // the matrix's top three rows
    std::uint32_t mesh = 0;
    std::uint32_t mask = ~0u;
    // Top-level primitive, if in the tree; primitives are numbered in the
    // tree's entry order, so this indexes leaf_ and moved_.
    std::uint32_t prim = kInvalidId;
    bool alive = true;
    // Moved since the last commit (listed in dirty_): set_matrix() reads
    // and writes this line only.
    bool moved = false;
  };
  static_assert(sizeof(ObjectRec) == 64);
  // What the top level's leaf test reads, in entry order so a leaf's
  // objects are adjacent in memory: one cache line. The local box is the
  // mesh's bounds, shared by its objects.
  struct alignas(64) LeafObb {
    LocalFrame frame;  // the object's origin and inverse 3x3 (48 bytes)
    std::uint32_t object;
    std::uint32_t mask;
    std::uint32_t mesh;  // kInvalidId when the matrix is singular: never hit
  };
  static_assert(sizeof(LeafObb) == 64);

  // ---- the Picker's operations (picker.cpp, select.cpp) ----------------
  // add_scene(), then a commit that builds the trees.
  void load(const Scene& scene);
  // The scene's meshes and objects added, nothing committed.
  void add_scene(const Scene& scene);
  // The trees' shape as of the last commit (saved_trees.cpp).
  std::string save_trees() const;
  // Instead of the first commit, after add_scene(): takes the trees' shape
  // from save_trees()'s bytes and refits their boxes. False, with the
  // reason in `why`, when the bytes do not fit this picker's objects,
  // meshes and mode; the core is then half made: discard it.
  bool adopt_trees(std::string_view bytes, std::string& why);
  // adopt_trees()'s steps: the top level's shape (of Tree's width), its
  // entries' objects and boxes (leaves and boxes by object id, kept of
  // them in the tree); then the meshes' trees and the end of the bytes.
  template <class Tree>
  bool adopt_top(saved::Bytes& in, std::size_t kept, const std::vector<LeafObb>& leaves,
                 const std::vector<Aabb>& boxes, std::string& why);
  bool adopt_meshes(saved::Bytes& in, std::size_t kept, std::string& why);
  std::uint32_t add_mesh(std::span<const glm::vec3> positions,
                         std::span<const glm::uvec3> triangles, Picker::Storage storage);
  // `low`: what the translation holds beyond float (Object::translation_low).
  std::uint32_t add_object(std::uint32_t mesh, const glm::mat4& matrix, const glm::vec3& low,
                           std::uint32_t mask, void* user_data);
  void remove_object(std::uint32_t id);
  void set_matrix(std::uint32_t id, const glm::mat4& matrix, const glm::vec3& low = glm::vec3{0.0f});
  void set_mask(std::uint32_t id, std::uint32_t mask);
  CommitStats commit(CommitMode mode);
  // R is Ray or RayD: the ray the leaves carry into the objects' frames.
  template <class R>
  PickResult intersect(const R& ray, const QueryOptions& options) const;
  template <class R>
  bool occluded(const R& ray, const QueryOptions& options) const;
  template <class R>
  std::vector<Hit> intersect_all(const R& ray, const QueryOptions& options,
                                      std::size_t limit) const;
  template <class R>
  std::vector<Hit> intersect_batch(std::span<const R> rays,
                                        const QueryOptions& options) const;
  template <class R>
  std::vector<Hit> intersect_image(std::span<const R> rays, std::size_t width,
                                   const QueryOptions& options) const;
  // intersect_batch() on the top level `top`, into out (rays' size).
  template <class Tree, class R>
  void batch(const Tree& top, std::span<const R> rays, const QueryOptions& options,
             std::vector<Hit>& out) const;
  // intersect_image() on `top` (width >= 4), into out (rays' size).
  template <class Tree, class R>
  void image(const Tree& top, std::span<const R> rays, std::size_t width,
             const QueryOptions& options, std::vector<Hit>& out) const;
  // The bytes of `top`'s nodes and leaf copies.
  template <class Tree>
  std::size_t top_bytes(const Tree& top) const {
    return top.nodes().size() * sizeof(typename Tree::Node) + leaf_.size() * sizeof(LeafObb);
  }
  // Whether `top` is past config_.batch_interleave_bytes: much larger than
  // the caches, so that every node is a cache miss. A batch on it then
  // walks its rays that are not in packets interleaved, several in
  // flight, so that one ray's misses overlap the others' work. A tree in
  // cache gains nothing from that (and coherent rays lost, their branches
  // no longer repeating), so a smaller tree takes its other rays one at a
  // time.
  template <class Tree>
  bool batch_interleaves(const Tree& top) const {
    return top_bytes(top) >= config_.batch_interleave_bytes;
  }
  // Whether single rays on `top` fetch the nodes they push
  // (WideBvhOf::set_fetch_pushed): from four times the batches' bound on
  // (32 MiB by default). Intel Xeon with AVX-512, alternated runs, one
  // thread, boxes scenes, incoherent / camera (512x512) single rays:
  // 100,000 boxes (11 MiB) +2% / -5%, 300,000 (34 MiB) +4% / -2%; at
  // 1,000,000 (114 MiB) +15% / +2% (256x256) and -2% (1024x1024).
  template <class Tree>
  bool fetches_pushed(const Tree& top) const {
    return top_bytes(top) / 4 >= config_.batch_interleave_bytes;
  }
  // One task's rays of a batch, their answers into hits[0 .. size); the
  // packets' stack is the task's, made once for all its parts.
  template <class Tree, class R>
  void batch_part(const Tree& top, std::span<const R> part, Hit* hits,
                  const QueryOptions& options, bool interleave,
                  const wide_detail::PacketStack<Tree::kWidth>& stack) const;
  std::vector<std::uint32_t> select(const Frustum& region, SelectRule rule,
                                    const QueryOptions& options) const;
  glm::vec3 world_normal(const Hit& hit) const;
  PointHit closest_point(const glm::dvec3& p, const QueryOptions& options,
                         double max_distance) const;  // point_query.cpp
  std::uint32_t containing_object(const glm::dvec3& p, const QueryOptions& options) const;
  double signed_distance(const glm::dvec3& p, const QueryOptions& options,
                         double max_distance) const;
  double winding_number(std::uint32_t id, const glm::dvec3& p) const;
  Aabb world_box(std::uint32_t id) const;
  Aabb world_bounds() const {
    return with_top([](const auto& top) { return top.bounds(); });
  }
  BvhStats bvh_stats() const {
    return with_top([&](const auto& top) { return top.stats(config_.top); });
  }
  std::size_t memory_bytes() const;
  // kAuto makes the top level 16 wide at every size where the CPU has
  // AVX-512. Until the 16-wide walk took a single hit slot by a branch and
  // the nearest of several by an integer reduction (wide_traverse.h), it
  // did so only from 20,000 objects (1,000 with mesh trees); since, on an
  // Intel Xeon with AVX-512, one thread, 8 wide -> 16 wide, ratios to
  // Embree: boxes-100 single rays 1.05 -> 1.22 incoherent, 1.37 -> 1.54
  // camera; boxes-3k 0.82 -> 1.01, 0.95 -> 1.20; boxes-10k 0.84 -> 1.02,
  // 0.93 -> 1.19 (incoherent batch 0.73 -> 0.95); crowd-300 (mesh mode)
  // 0.91 -> 1.10, 1.07 -> 1.21. The cost: boxes-10k builds about 15%
  // longer (the SAH collapse).
  // Where the CPU has AVX2 but not AVX-512, kAuto keeps 8-wide nodes at
  // every size: a 16-wide level, its nodes tested in two AVX2 halves,
  // speeds up single rays on large trees but not incoherent batches (AMD
  // EPYC without AVX-512, one thread, boxes-1M, 8 wide -> 16 wide, six
  // alternated pairs: single rays 1.2-1.7x incoherent, 0.95-1.22x camera;
  // incoherent batches 0.65-1.13x, camera batches 0.87-1.30x).
  // PickerConfig::top_width asks for it.

  // Whether config_.isa allows AVX2 and the CPU has it (the point queries'
  // measure of four triangles at a time).
  bool avx2() const { return config_.isa != Isa::kSse2 && compiler::cpu_has_avx2(); }
  // Rays per instruction in the batches' packets
  // (WideBvhOf::set_packet_lanes; the CPU's widest of these where it lacks
  // the asked one): kSse2 4, kAvx2 8, kAuto and kAvx512 16.
  int packet_lanes() const {
    return config_.isa == Isa::kSse2 ? 4 : config_.isa == Isa::kAvx2 ? 8 : 16;
  }
  // Whether the top level has 16-wide nodes: as config_.top_width says,
  // else where the CPU has AVX-512 (and so AVX2) under config_.isa kAvx512
  // or kAuto.
  bool wide16() const {
    if (config_.top_width == 8 || config_.top_width == 16) return config_.top_width == 16;
    return avx512_test();
  }
  // Whether the trees take the AVX-512 node test: config_.isa kAvx512 or
  // kAuto, and the CPU has AVX-512 (and AVX2).
  bool avx512_test() const {
    const bool avx512 = compiler::cpu_has_avx2() && compiler::cpu_has_avx512();
    return avx512 && (config_.isa == Isa::kAvx512 || config_.isa == Isa::kAuto);
  }
  // Whether the meshes' triangle trees have 16-wide nodes: under the
  // AVX-512 node test, whatever the top level's width; else 8. Intel Xeon
  // with AVX-512, alternated runs, one thread, 8 -> 16 wide: mesh-mode
  // single rays and camera batches 0 to 5% faster, closest points in mesh
  // mode 6 to 13%, crowd builds 2 to 8% longer (docs/performance.md,
  // "What was tried").
  bool mesh_wide16() const { return avx512_test(); }
  // The meshes' trees' width in saved trees: 16 only where there are mesh
  // trees (mesh mode) and they are 16 wide.
  bool saved_mesh16() const { return config_.mesh_mode && mesh_wide16(); }
  // The node test config_.isa asks of the trees (each tree takes the best
  // its width and the CPU allow: WideBvhOf::set_node_test).
  NodeTest node_test() const {
    switch (config_.isa) {
      case Isa::kSse2:
        return NodeTest::kSse;
      case Isa::kAvx2:
        return NodeTest::kAvx2;
      default:
        return NodeTest::kAvx512;
    }
  }
  // The node test the top level's queries run on (Picker::isa()).
  Isa isa() const {
    return with_top([](const auto& top) {
      switch (top.node_test()) {
        case NodeTest::kSse:
          return Isa::kSse2;
        case NodeTest::kAvx2:
          return Isa::kAvx2;
        default:
          return Isa::kAvx512;
      }
    });
  }
  int top_width() const { return std::holds_alternative<WideBvh16>(top_) ? 16 : 8; }

  // ---- steps -----------------------------------------------------------
  Obb make_obb(std::uint32_t id) const;
  // The padded world box of object o, its translation's low part being
  // `low` (see low()), its matrix being invertible.
  Aabb padded_box(const ObjectRec& o, const glm::vec3& low = glm::vec3{0.0f}) const;
  // Object id's translation beyond float (Object::translation_low); zero
  // unless some object was placed beyond float.
  glm::vec3 low(std::uint32_t id) const { return low_.empty() ? glm::vec3{0.0f} : low_[id]; }
  // Object id's matrix in double, its translation low part added.
  glm::dmat4x3 world_matrix(std::uint32_t id) const;
  // Stores object id's low part, significant_low() of `low` for its box
  // and matrix (allocating low_ on the first one that is not zero).
  void store_low(std::uint32_t id, const glm::vec3& low);
  // Fills l with object id's leaf copy; returns its padded world box
  // (empty when the matrix is singular).
  Aabb make_leaf(std::uint32_t id, LeafObb& l) const;
  // For the entries e in [begin, end) with want[e - begin] set: a moved
  // one's leaf copy made (make_leaf()), every one's padded world box into
  // out[e - begin]; many moved ones at a time (leaf_batch.h), `lanes` the
  // ISA's (packet_lanes()). The sweep refit's entry_boxes.
  void make_leaves(std::uint32_t begin, std::uint32_t end, const std::uint8_t* want, Aabb* out,
                   int lanes);
  // For the moved entries es[k], k < n <= kLeafBatch: their leaf copies
  // made (make_leaf()) and their padded world boxes into *out[k], in one
  // batch (leaf_batch.h), `lanes` the ISA's (packet_lanes()).
  void remake_leaves(const std::uint32_t* es, std::size_t n, Aabb* const* out, int lanes);
  // The padded world box of top-level entry e (there is no array of them:
  // the tree's leaf slots hold their union).
  Aabb entry_box(std::uint32_t e) const;

  // The ray carried into the leaf's object frame: transform_ray, with the
  // object's low part when it has one (as obb_entry of its Obb does).
  template <class R>
  RAYPICK_HOT_INLINE Ray carry(const LeafObb& leaf, const R& ray) const {
    if (low_.empty()) return transform_ray(leaf.frame, ray);
    const glm::vec3& l = low_[leaf.object];
    return l == glm::vec3{0.0f} ? transform_ray(leaf.frame, ray) : transform_ray(leaf.frame, l, ray);
  }
  template <bool kAny, class R>
  Hit mesh_hit(const LeafObb& leaf, const R& ray, float tmax) const;
  // mesh_hit() after its carry: `local` is the ray carried into the
  // leaf's frame (carry()), its tmax the walk's, mesh_walk_reach(tmax).
  template <bool kAny>
  Hit mesh_walk(const LeafObb& leaf, const Ray& local, float tmax) const;
  template <bool kAny, class R>
  Hit leaf_hit(const LeafObb& leaf, const R& ray, float tmax,
               PickMode mode) const;
  // The closest-hit step on top-level entry `entry`: tests its object and
  // keeps the hit in best (lowering tmax) when closer. Never stops.
  template <class R>
  bool closest_leaf(std::uint32_t entry, const R& ray,
                    const QueryOptions& options, float& tmax, Hit& best) const;
  // The closest-hit rule of every leaf step: h (a hit or not) replaces
  // best and lowers tmax when closer. Leaf tests are inclusive of tmax, so
  // an equal t reaches here and the contract's order (t, object, triangle)
  // decides.
  static void keep_if_closer(const Hit& h, float& tmax, Hit& best) {
    if (h.hit() && closer(h, best)) {
      best = h;
      tmax = h.t;
    }
  }
  static bool accepts(const LeafObb& leaf, const QueryOptions& options) {
    return (leaf.mask & options.mask) != 0 &&
           (!options.filter || options.filter(leaf.object));
  }
  // select()'s exact test of one top-level entry (select.cpp). In mesh
  // mode, `hittable` caches per mesh whether it has a non-degenerate
  // triangle (0 unknown, 1 yes, 2 no).
  bool select_entry(std::uint32_t entry, const Frustum& region, SelectRule rule,
                    PickMode mode, std::vector<std::uint8_t>& hittable) const;
  void rebuild();
  // The meshes a commit builds trees for: used by a live object, not built
  // yet (none without mesh mode).
  std::vector<std::uint32_t> meshes_to_build() const;
  // Their trees, in parallel.
  void build_mesh_bvhs(std::span<const std::uint32_t> todo);
  // One mesh's triangle tree and its vertices in leaf order.
  void build_mesh_bvh(MeshAccel& m) const;
  // Shared by rebuild() and adopt_trees(): the padding centre of the live
  // objects (their translations' mean, summed in id order); which meshes
  // live objects use; each object's leaf copy and padded box by id, in
  // parallel, returning how many have a box (prim reset to kInvalidId); a mesh's vertices copied
  // in its tree's entry order.
  glm::vec3 live_centre() const;
  std::vector<bool> used_meshes() const;
  std::size_t make_leaves(LeafObb* leaves, Aabb* boxes);
  static void copy_verts(MeshAccel& m);
  // Refits the top level after moves; returns the slot boxes recomputed.
  std::size_t refit_moved(std::span<const std::uint32_t> moved);
  template <class Tree>
  std::size_t refit_moved(Tree& top, std::span<const std::uint32_t> moved);
  // rebuild()'s steps after the collapse, on its new top level over the
  // first n of `leaves` (by primitive): the node test chosen, the leaf
  // copies and objects renumbered in entry order, the SAH sum.
  template <class Tree>
  void rebuild_entries(Tree& top, const LeafObb* leaves, std::size_t n);
  // Top-level SAH cost (BvhStats::sah_cost), kept up to date through refits
  // as an unnormalized sum of cost * area over the nodes.
  double sah_cost() const;

  PickerConfig config_;
  std::vector<ObjectRec> objects_;           // by object id
  std::vector<void*> user_data_;  // by object id, up to the last non-null
  // By object id: the translations' low parts, allocated when the first
  // object placed beyond float arrives (empty otherwise: the leaf tests
  // then read nothing more). Not in ObjectRec or LeafObb, which are one
  // cache line each and full.
  std::vector<glm::vec3> low_;
  std::vector<MeshAccel> meshes_;            // by mesh id
  compiler::HugeVector<LeafObb> leaf_;       // by top-level entry
  std::vector<std::uint8_t> moved_;          // by entry: 1 if moved (the sweep's)
  std::vector<std::uint32_t> dirty_;         // moved objects (in the tree)
  // refit_moved()'s path refit: the moved objects' entries and new boxes,
  // in dirty_'s order (kept between commits: no allocation per commit).
  std::vector<std::uint32_t> moved_entries_;
  std::vector<Aabb> moved_boxes_;
  // The top level: 8-wide nodes, or 16-wide ones under the AVX-512 node
  // test (wide16()); one tree per picker.
  AnyWideBvh top_;
  bool structure_dirty_ = false;  // adds/removals since the last commit
  bool committed_ = false;
  std::size_t rebuilds_ = 0;
  std::size_t refits_ = 0;
  double sah_built_ = 0.0;
  double sah_sum_ = 0.0;
  glm::vec3 pad_centre_{0.0f};
};

}  // namespace raypick
