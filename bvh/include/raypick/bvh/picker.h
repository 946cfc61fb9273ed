// raypick's picking engine and its embedding API.
//
// A Picker is a scene you add meshes and objects to, move objects in, and
// pick from. Internally it is a two-level BVH: the top level is a BVH over
// the objects' OBB world boxes; in mesh mode each mesh has its own triangle
// BVH, built once and shared by every object that instances it.
//
//   raypick::Picker picker;
//   auto cube = picker.add_mesh(positions, triangles);
//   auto id = picker.add_object(cube, matrix);
//   picker.commit();                        // build
//   raypick::Hit hit = picker.intersect(ray);
//   picker.set_matrix(id, moved);           // every frame...
//   picker.commit();                        // ...a refit, not a rebuild
//
// Thread-safety: the const query functions (intersect, occluded,
// intersect_all, intersect_batch, select, world_normal and the accessors) may run
// concurrently with each other on a committed picker. Every non-const
// function (add, remove, set, commit, refit) must not run concurrently with
// anything. Queries see the picker as of the last commit(); queries after
// an add/remove/set without a commit() are a precondition violation.
#pragma once

#include "raypick/bvh/bvh.h"
#include "raypick/core/camera.h"
#include "raypick/core/hit.h"
#include "raypick/core/obb.h"
#include "raypick/core/pick_mode.h"
#include "raypick/core/scene.h"

#include <glm/ext/vector_double3.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace raypick {

class PickerCore;  // what a Picker holds: the library's own

// The instruction set the traversal's node test runs on, and the point
// queries' measure of triangles (two per instruction; four where AVX2 is
// allowed, by any value but kSse2, and the CPU has it, in GCC builds).
// Answers are the same bit for bit on every one (the tests force each);
// only speed differs.
enum class Isa : std::uint8_t {
  // kAvx512 where the CPU has AVX-512 (a 16-wide top level: faster single
  // rays and batches than 8-wide nodes at every size measured, 100 to
  // 1,000,000 objects, for a build about 15% longer at 10,000), else kAvx2
  // where the CPU has AVX2 (over 8-wide nodes: see
  // PickerConfig::top_width), else kSse2. A batch's packets (see
  // batch_interleave_bytes) test 16 rays per AVX-512 instruction where the
  // CPU has it.
  kAuto,
  kSse2,  // the x86-64 baseline (four slots, or packet rays, per instruction)
  // Eight slots, or packet rays, per instruction; kSse2 on a CPU without
  // AVX2.
  kAvx2,
  // Sixteen slots per instruction over a top level and meshes' triangle
  // trees of 16-wide nodes; an 8-wide top level (top_width 8) takes
  // kAvx2's test with AVX-512VL's choice of the next slot in its walks. On
  // a CPU without AVX-512 (F, VL, DQ, BW), kAvx2, or kSse2 without AVX2.
  // Its own trees: other nodes, the same answers.
  kAvx512,
};

struct PickerConfig {
  BvhConfig top;  // over objects
  // Over each mesh's triangles. Leaves are costed per block of four
  // triangles (leaf_block 4), as the ray test and the point queries' keys
  // take them: the tree has about half the nodes of leaf_block 1 and its
  // build runs about a fifth fewer instructions, with rays as fast and
  // closest points within a few percent (docs/performance.md, "What was
  // tried"; objects whose matrix's condition exceeds 100 measure a leaf's
  // triangles without the keys).
  BvhConfig mesh{/*max_leaf_size=*/4, /*bins=*/16, /*traversal_cost=*/1.0f,
                 /*intersection_cost=*/1.0f, /*leaf_block=*/4};
  // Build the per-mesh triangle BVHs at commit (needed by PickMode::kMesh).
  bool mesh_mode = true;
  // commit() rebuilds instead of refitting once refits have made the top
  // level's SAH cost this many times the cost right after the last build.
  // Query time follows the SAH cost, so this bounds how much slower than a
  // fresh build queries may get.
  float rebuild_factor = 1.5f;
  // intersect_batch() walks coherent groups of 32 consecutive rays as
  // packets and runs the other rays 32 interleaved per task, prefetching
  // each one's next node, once the top level's nodes and leaf data take at
  // least this many bytes (about 75,000 objects in the bench's boxes
  // scenes, with 8-wide nodes); below, where the tree stays in cache, the
  // coherent groups walk as packets and the other rays one at a time.
  // From four times this many bytes on, single-ray queries also fetch the
  // nodes of the slots they push on their stack as they push them
  // (boxes-1M, 114 MiB: incoherent rays about 15% faster, camera rays
  // within 2%; at 11 MiB, camera rays were 5% slower). 0: always as
  // for a large tree.
  std::size_t batch_interleave_bytes = std::size_t{8} << 20;
  // The node test's instruction set: the picker's trees keep it, decided
  // when they are built (see Isa, Picker::isa()).
  Isa isa = Isa::kAuto;
  // The top level's nodes: 8 or 16 slots on any CPU, the node test still
  // isa's (a 16-wide node takes two AVX2 tests, or four SSE ones); 0, the
  // default, leaves the width to isa (16 under kAvx512 and kAuto where the
  // CPU has AVX-512; else 8). The same answers on
  // every width (a tree of its own). Without AVX-512, 16 suits single rays
  // on large scenes and not incoherent batches (AMD EPYC with AVX2, one
  // thread, boxes-1M, 8 -> 16 wide, six alternated pairs: single rays
  // 1.2-1.7x faster incoherent, 0.95-1.22x camera; incoherent batches
  // 0.65-1.13x, camera batches 0.87-1.30x; docs/performance.md, "What was
  // tried"). The meshes' triangle trees follow isa only (16 wide under
  // the AVX-512 node test). Precondition: 0, 8 or 16 (where assertions are
  // compiled out, any other value acts as 0).
  int top_width = 0;
};

// The box the top level stores for an OBB: its abs-matrix world box padded,
// the same on every axis, by 2^-18 of the larger of its size and its
// distance from `centre` (a stand-in for the distance of the rays), and by
// at least 2^-22 of its largest coordinate, so that rounding in a node test
// never culls a box whose exact leaf test (obb_entry) hits. The Picker pads
// with its pad_centre(). Empty when the OBB cannot be hit.
Aabb padded_world_box(const Obb& obb, const glm::vec3& centre = glm::vec3{0.0f});

// The centre a Picker built from `objects` pads its boxes from: the mean of
// their translations, summed in double in id order (the origin for none).
// What pad_centre() returns after a rebuild with these objects alive.
glm::vec3 padding_centre(std::span<const Object> objects);

// Per-query options.
struct QueryOptions {
  QueryOptions() = default;
  explicit QueryOptions(PickMode m, std::uint32_t layer_mask = ~0u)
      : mode(m), mask(layer_mask) {}

  PickMode mode = PickMode::kObb;
  // An object is considered only when (object mask & mask) != 0.
  std::uint32_t mask = ~0u;
  // When set, an object is considered only when filter(id) is true (e.g. to
  // ignore the object being dragged). Called from the querying thread (or
  // a batch's TBB task), possibly several times per object; it must not
  // modify the picker. It runs in the default floating-point mode, as the
  // whole query does (round to nearest, no flush-to-zero, no
  // denormals-are-zero), whatever the caller's mode.
  std::function<bool(std::uint32_t object)> filter;
};

// What Picker::select() asks of an object (the contract's marquee rules).
enum class SelectRule {
  // obb mode: the OBB meets the region; mesh mode: one of the object's
  // triangles does. Boundary included.
  kTouch,
  // obb mode: the OBB's 8 corners lie in the region; mesh mode: every
  // vertex the object's triangles use does.
  kContain,
};

// The answer of a closest-point query (Picker::closest_point): the nearest
// point of the nearest object, in world space. A miss (nothing within the
// query's max_distance) has object == kInvalidId and distance +inf.
struct PointHit {
  std::uint32_t object = kInvalidId;
  std::uint32_t triangle = kInvalidId;  // mesh mode: the nearest triangle
  double distance = std::numeric_limits<double>::infinity();
  glm::dvec3 point{0.0};  // the nearest point on the object
  // mesh mode: point = a + u (b - a) + v (c - a) on triangle (a, b, c).
  double u = 0.0;
  double v = 0.0;

  bool hit() const { return object != kInvalidId; }
};

// A closest hit together with what the top-level traversal did.
struct PickResult {
  Hit hit;
  TraversalStats stats;
};

enum class CommitMode {
  kAuto,     // rebuild after adds/removals or when refits degraded the tree
             // past rebuild_factor, else refit, else nothing
  kRefit,    // refit even if the tree is degraded (not after add/remove)
  kRebuild,  // always rebuild the top level
};

// What commit() did, and the tree's state after it.
struct CommitStats {
  bool rebuilt = false;
  bool refitted = false;
  std::size_t moved = 0;         // objects whose world box was recomputed
  // Top-level slot boxes recomputed by the refit (a node has 8 slots): a
  // few moved objects walk up from their leaf slots, each slot on the way
  // counted, the last (found unchanged) included; many moved take one
  // sweep, counting the leaf slots holding a moved object and every inner
  // slot. 0 when nothing was refitted.
  std::size_t slots_updated = 0;
  double sah_cost = 0.0;         // top-level SAH cost now
  double sah_cost_built = 0.0;   // ... right after the last rebuild
  std::size_t rebuilds = 0;      // totals over the picker's life
  std::size_t refits = 0;
};

class Picker {
 public:
  Picker();
  explicit Picker(const PickerConfig& config);
  // Adds every mesh and object of `scene` (object ids = scene ids) and
  // commits. The scene may be destroyed after. Precondition:
  // validate_scene(scene) is empty. Cost: O(n log n) in the objects, plus
  // O(t log t) in each used mesh's triangles when config.mesh_mode.
  explicit Picker(const Scene& scene, const PickerConfig& config = {});

  // A picker over `scene` whose trees take their shape from `trees`, the
  // bytes of save_trees() of a picker over the same scene in the same mode
  // (kept in a saved scene, LoadResult::saved_trees): the boxes are refitted
  // from the scene in one pass instead of a SAH build, and the answers are
  // the same. Trees that do not fit (another scene, mode or version, a top
  // level or meshes' trees of other widths than this picker would build
  // (see Isa: 16-wide ones saved on a CPU with AVX-512 do not fit one
  // without), or damaged bytes: every index is checked) are ignored: the
  // picker builds its own, and *why (when given) says why.
  // O(objects + triangles).
  static Picker open(const Scene& scene, std::string_view trees,
                     const PickerConfig& config = {}, std::string* why = nullptr);
  // The shape of the trees as of the last commit, as bytes for open().
  std::string save_trees() const;

  ~Picker();
  // Move-only. A moved-from picker may only be assigned to or destroyed.
  Picker(Picker&&) noexcept;
  Picker& operator=(Picker&&) noexcept;

  // ---- building the scene -------------------------------------------

  enum class Storage { kCopy, kBorrow };

  // Adds a triangle mesh and returns its id (0, 1, 2, ...). kCopy copies
  // the arrays; kBorrow keeps pointers to them, which must then stay valid
  // and unchanged for the picker's life. Precondition: every index is in
  // range and every used position is finite. Cost: O(size) for kCopy.
  std::uint32_t add_mesh(std::span<const glm::vec3> positions,
                         std::span<const glm::uvec3> triangles,
                         Storage storage = Storage::kCopy);

  // Adds an object: mesh `mesh` placed by the affine `matrix`, with a layer
  // mask (see QueryOptions::mask) and an opaque user pointer. Returns its
  // id; ids are never reused, so they stay stable across removals. An
  // object whose matrix is singular, or whose mesh has no triangles, is
  // kept but can never be hit. O(1); takes effect at commit().
  std::uint32_t add_object(std::uint32_t mesh, const glm::mat4& matrix,
                           std::uint32_t mask = ~0u, void* user_data = nullptr);
  // The same for a matrix in double, as CAD and GIS data hold them: the
  // linear part is rounded to float, the translation kept to about 48 bits
  // (a float and what it lost, Object::translation_low), so that an object
  // at 3e5 is not moved by up to 0.016 by the rounding.
  std::uint32_t add_object(std::uint32_t mesh, const glm::dmat4& matrix,
                           std::uint32_t mask = ~0u, void* user_data = nullptr);

  // Removes an object; its id is not reused. O(1); takes effect at commit().
  void remove_object(std::uint32_t id);

  // Moves an object. O(1); takes effect at commit(), as a refit.
  void set_matrix(std::uint32_t id, const glm::mat4& matrix);
  // The same for a matrix in double (see add_object).
  void set_matrix(std::uint32_t id, const glm::dmat4& matrix);

  // Changes an object's layer mask. O(1), effective at once (masks are read
  // at query time).
  void set_mask(std::uint32_t id, std::uint32_t mask);

  // Brings the acceleration structure up to date. kAuto: after adds or
  // removals, rebuild (O(n log n)); after matrix changes only, recompute
  // the moved objects' world boxes (abs-matrix method) and refit: walking
  // up from each moved leaf when few moved (O(k log n) for k objects), one
  // bottom-up sweep when many did (O(n)); then rebuild instead if the SAH
  // cost passed rebuild_factor times its value after the last build.
  CommitStats commit(CommitMode mode = CommitMode::kAuto);

  // Refits after set_matrix on every object (CommitMode::kRefit).
  void refit() { commit(CommitMode::kRefit); }

  // ---- queries (const; see thread-safety above) ----------------------
  //
  // Every query considers t in [ray.tmin, ray.tmax]. A ray that is not
  // valid (is_valid: a zero, NaN or infinite direction, a non-finite
  // origin, a bad t range) is answered as a miss: intersect gives no hit,
  // occluded false, intersect_all nothing, and in a batch that ray alone
  // misses. Bad input never aborts the host. t is in units of the given
  // direction in both modes: the ray is carried into an object's frame by
  // the object's LocalFrame (origin subtracted first, then the inverse 3x3),
  // which keeps t. Ties go to the lower object id, then to the lower
  // triangle id.
  //
  // Precision: answers (object, triangle, t) are within a few float ulps of
  // the hit object's own size and of its distance from the ray origin, not
  // of the world coordinates: a scene 200 units across at 1e6 from the world
  // origin is picked as precisely as the same scene at the origin. Every
  // query also takes a RayD, whose origin is in double precision: the
  // origin is then kept in double until it is subtracted from each object's
  // translation, so a large-coordinate origin (6e5 m in a GIS scene) is not
  // first rounded to float (3 cm there). A RayD whose origin is a float
  // answers exactly as that Ray; it costs a few double operations more per
  // object visited.

  // The nearest hit. Miss: !hit.hit().
  Hit intersect(const Ray& ray, const QueryOptions& options) const {
    return intersect_stats(ray, options).hit;
  }
  Hit intersect(const Ray& ray, PickMode mode = PickMode::kObb) const {
    return intersect_stats(ray, QueryOptions{mode}).hit;
  }
  Hit intersect(const RayD& ray, const QueryOptions& options) const {
    return intersect_stats(ray, options).hit;
  }
  Hit intersect(const RayD& ray, PickMode mode = PickMode::kObb) const {
    return intersect_stats(ray, QueryOptions{mode}).hit;
  }
  PickResult intersect_stats(const Ray& ray,
                             const QueryOptions& options = {}) const;
  PickResult intersect_stats(const RayD& ray,
                             const QueryOptions& options = {}) const;

  // True when anything is hit; stops at the first hit found.
  bool occluded(const Ray& ray, const QueryOptions& options) const;
  bool occluded(const Ray& ray, PickMode mode = PickMode::kObb) const {
    return occluded(ray, QueryOptions{mode});
  }
  bool occluded(const RayD& ray, const QueryOptions& options) const;
  bool occluded(const RayD& ray, PickMode mode = PickMode::kObb) const {
    return occluded(ray, QueryOptions{mode});
  }

  // Every object the ray hits, one hit per object (its nearest), sorted by
  // t, then object id; at most `limit` of the nearest. For cycling through
  // overlapping objects under the cursor, as editors do.
  std::vector<Hit> intersect_all(const Ray& ray, const QueryOptions& options,
                                 std::size_t limit = SIZE_MAX) const;
  std::vector<Hit> intersect_all(const Ray& ray, PickMode mode = PickMode::kObb,
                                 std::size_t limit = SIZE_MAX) const {
    return intersect_all(ray, QueryOptions{mode}, limit);
  }
  std::vector<Hit> intersect_all(const RayD& ray, const QueryOptions& options,
                                 std::size_t limit = SIZE_MAX) const;
  std::vector<Hit> intersect_all(const RayD& ray, PickMode mode = PickMode::kObb,
                                 std::size_t limit = SIZE_MAX) const {
    return intersect_all(ray, QueryOptions{mode}, limit);
  }

  // intersect() for every ray, on all cores (TBB); result i is exactly
  // intersect(rays[i], options). The filter is called from worker threads.
  // Coherent groups of 32 consecutive rays (a camera's pixels in row order)
  // walk the tree as packets; on large scenes the other rays of each task
  // are traversed interleaved, which hides memory latency (see
  // PickerConfig::batch_interleave_bytes).
  std::vector<Hit> intersect_batch(std::span<const Ray> rays,
                                   const QueryOptions& options = {}) const;
  std::vector<Hit> intersect_batch(std::span<const RayD> rays,
                                   const QueryOptions& options = {}) const;
  // intersect_batch() for the rays of an image: `width` rays per row, the
  // rows one after another (a Camera's pixels row by row; the last row may
  // be short). Result i is exactly intersect(rays[i], options). Knowing
  // the rows, on a top level past batch_interleave_bytes it walks two 4x4
  // pixel tiles at a time as packets, which share more of the tree's nodes
  // than 32 pixels of one row do (28–36% faster at a million boxes in a
  // driver, docs/performance.md); a smaller tree, a width under 4 or rays that
  // fill no more than one row run as intersect_batch().
  std::vector<Hit> intersect_image(std::span<const Ray> rays, std::size_t width,
                                   const QueryOptions& options = {}) const;
  std::vector<Hit> intersect_image(std::span<const RayD> rays, std::size_t width,
                                   const QueryOptions& options = {}) const;

  // Every object in `region` (a Camera's frustum of a marquee rectangle)
  // under `rule`, in options.mode, among those options' mask and filter
  // accept; ids ascending. Objects that can never be hit (singular matrix,
  // no triangles; in mesh mode, only degenerate ones) are never selected,
  // and in mesh mode degenerate (zero-area) triangles never touch. The top
  // level culls whole subtrees
  // outside a plane of the region and takes whole subtrees inside all of
  // them; the objects in between get exact tests in double precision: a
  // separating-axis test of the OBB (or, in mesh mode, of each triangle,
  // culled by the mesh's BVH) against the region, boundary inclusive, or
  // the corners' (vertices') plane tests for kContain. Mesh mode needs
  // config.mesh_mode (else the triangles are scanned one by one).
  std::vector<std::uint32_t> select(const Frustum& region, SelectRule rule,
                                    const QueryOptions& options = {}) const;

  // ---- point queries (const; thread-safety as for rays) ----------------
  //
  // The object nearest to the world point p, measured in world space in
  // double precision: in obb mode the nearest point of its OBB (distance 0
  // and point p when p is inside or on the box), in mesh mode the nearest
  // point of its triangles (Euclidean after the object's matrix, so
  // non-uniform scale and shear are measured in the world). Only objects
  // within max_distance (inclusive: the distance this returns for them is
  // at most max_distance, so passing an answer's distance keeps that
  // answer) count; the mask, filter and mode of
  // `options` apply as for rays; objects that can never be hit (singular
  // matrix, no triangles) are never nearest. Ties go to the lower object
  // id, then the lower triangle id. A p that is not finite or lies beyond
  // kMaxPointCoordinate, or a NaN or negative max_distance, is a miss.
  // Nearest-first over the top level by box distance, pruned by the best
  // distance so far; in mesh mode the same over the object's triangle BVH
  // (config.mesh_mode; else its triangles one by one). Cost: O(log n)
  // boxes for a point near the objects.
  PointHit closest_point(const glm::dvec3& p, const QueryOptions& options = {},
                         double max_distance = std::numeric_limits<double>::infinity()) const;

  // closest_point() for every point, on all cores (TBB); result i is
  // exactly closest_point(points[i], options, max_distance).
  std::vector<PointHit> closest_points(
      std::span<const glm::dvec3> points, const QueryOptions& options = {},
      double max_distance = std::numeric_limits<double>::infinity()) const;

  // closest_point(p, options, max_distance).distance: +inf when nothing is
  // within max_distance.
  double distance(const glm::dvec3& p, const QueryOptions& options = {},
                  double max_distance = std::numeric_limits<double>::infinity()) const;

  // The inside test: the lowest id of the objects that hold the world
  // point p, kInvalidId when none does (or p is not finite or lies beyond
  // kMaxPointCoordinate). The mask, filter and mode of `options` apply as
  // for rays.
  //   obb mode: p inside or on the object's OBB (its local coordinates,
  //     solved in double, within the box).
  //   mesh mode: p on one of the object's triangles (a closest point, as
  //     closest_point() measures it, within 2^-36 of the size of the
  //     object's world box and its distance from the origin: far below
  //     float precision, but enough for a point put on a face, whose
  //     closest point rounds a few double ulps away), or the
  //     object's generalized winding number at p at least 1/2 in
  //     magnitude. The winding number is the sum of the solid angles
  //     that the object's triangles, placed in the world in double,
  //     subtend at p, over 4 pi; it is taken only for points in the
  //     object's world box. For a closed mesh (every edge shared by two
  //     triangles that run it in opposite directions) it is +-1 inside and
  //     0 outside, whichever way the mesh is wound and whether or not the
  //     matrix mirrors; no ray is cast, so seams and vertices need no
  //     special care. An open mesh gets the same rule: a small hole leaves
  //     the inside at nearly 1, a half-open shell is inside where more
  //     than half of the directions see it.
  // Cost: the top level down to the boxes holding p; in mesh mode then
  // every triangle of each object whose box holds p.
  std::uint32_t containing_object(const glm::dvec3& p, const QueryOptions& options = {}) const;
  // containing_object(p, options) != kInvalidId.
  bool contains(const glm::dvec3& p, const QueryOptions& options = {}) const;
  // The signed distance to the objects' surfaces: negative inside.
  //   mesh mode: distance(p), negated when contains(p); -inf when p is
  //     inside and no surface is within max_distance. With overlapping
  //     objects the surface is the nearest of any object's.
  //   obb mode: outside every OBB, distance(p); inside, minus the depth
  //     of p in the OBB that holds it deepest (the world distance to that
  //     box's nearest face plane), -inf when that is beyond max_distance.
  double signed_distance(const glm::dvec3& p, const QueryOptions& options = {},
                         double max_distance = std::numeric_limits<double>::infinity()) const;
  // Object `object`'s generalized winding number at p (mesh mode's inside
  // rule above, without the box cull): 0 for a removed object, and for a
  // p that is not finite or lies beyond kMaxPointCoordinate.
  double winding_number(std::uint32_t object, const glm::dvec3& p) const;
  // Batch forms on all cores (TBB): result i is exactly the single query's.
  std::vector<std::uint32_t> containing_objects(std::span<const glm::dvec3> points,
                                                const QueryOptions& options = {}) const;
  std::vector<double> signed_distances(
      std::span<const glm::dvec3> points, const QueryOptions& options = {},
      double max_distance = std::numeric_limits<double>::infinity()) const;

  // The world-space geometric normal of a mesh-mode hit: the unit normal of
  // the hit triangle as placed in the world (the cross product of its world
  // edges p1 - p0 and p2 - p0), correct under mirroring, non-uniform scale
  // and shear. Zero for a miss or an obb-mode hit.
  glm::vec3 world_normal(const Hit& hit) const;

  // ---- inspection ------------------------------------------------------

  // Object ids in use are [0, object_count()); removed ones stay counted.
  std::size_t object_count() const;
  std::size_t mesh_count() const;
  bool alive(std::uint32_t id) const;
  // Object `id`'s OBB: its mesh's bounds under its matrix (to_world, in
  // float; origin_low holds the part of the translation beyond float that
  // matters, significant_low()).
  Obb obb(std::uint32_t id) const;
  std::uint32_t mask(std::uint32_t id) const;
  void* user_data(std::uint32_t id) const;
  // The padded world box the top level uses for object `id`; empty when the
  // object cannot be hit.
  Aabb world_box(std::uint32_t id) const;
  // The box around every hittable object (empty when there is none).
  Aabb world_bounds() const;
  // The centre the world boxes are padded from (padded_world_box): the
  // mean of the live objects' translations at the last rebuild.
  glm::vec3 pad_centre() const;
  // Statistics of the top level, a wide BVH (8 or 16 slots per node, see
  // Isa) over the objects' world boxes: nodes are wide nodes, leaves leaf
  // slots (see BvhStats).
  BvhStats bvh_stats() const;
  // The instruction set the top level's walks run on: config.isa resolved
  // for this CPU (kAvx512 on either width: over 8-wide nodes the AVX2
  // test's operations, with AVX-512VL's choice of the next slot). The same
  // before the first build. Never kAuto.
  Isa isa() const;
  // The top level's nodes: 8 or 16 slots (PickerConfig::top_width, or as
  // isa decides).
  int top_width() const;
  // Bytes held by the picker's own arrays (objects, top-level BVH and its
  // bookkeeping, copied meshes and their BVHs); borrowed meshes not counted.
  std::size_t memory_bytes() const;

 private:
  std::unique_ptr<PickerCore> impl_;  // the library's own (not installed)
};

}  // namespace raypick
