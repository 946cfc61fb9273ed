// raypick_floor: measured lower bounds for the rows of `raypick bench`, for
// the CURRENT design (8-wide top-level BVH over padded OBB world boxes, a
// 64-byte leaf copy per object, per-mesh 8-wide triangle BVHs). Not
// installed; docs/performance.md explains the table.
//
// On the bench's scenes and rays (tools::make_boxes_scene, make_crowd_scene,
// make_incoherent_rays, make_camera_rays; same seeds), it reads the engine's
// own trees (a PickerCore, through the uninstalled raypick_bvh_internal
// target: the same build, padding and leaf copies as a Picker's) and takes a
// query apart:
//   raypick      Picker::intersect in a loop (what bench times)
//   embree       EmbreeBenchScene::intersect in a loop (bench's Embree side)
//   replica      the closest-hit walk over the engine's trees with a leaf
//                step that records what it tests: must give raypick's
//                answers exactly and visit as many top-level nodes
//                (printed as a check; the parts below replay its records)
//   walk         the top-level walk with an empty leaf test (tmax never drops)
//   walk@t       the top-level walk with tmax set to the answer's t from the
//                start and an empty leaf test: the nodes any closest-hit
//                traversal of this tree must open, nothing else
//   obb: leaves  the OBB tests the query made (obb_entry on the recorded
//                (ray, object, tmax) triples), alone in a loop
//   mesh: +setup walk@t plus, per object reached, the ray carried into its
//                frame and the watertight test's per-ray setup
//   mesh: +mesh  that plus the walk of the object's triangle BVH at the
//                answer's t, with an empty triangle test
//   mesh: tris   the triangle tests the query made, alone in a loop
//   floor        walk@t + leaves (obb), +mesh + tris (mesh): the query with
//                a perfect visiting order and nothing else
// then, in obb mode, prototypes, each a query (answers checked against the
// Picker's) and its walk@t: `compress` and `octant` (today's tree, other
// visiting orders, AVX2), `wide16` (16-wide nodes, floor_wide16.h),
// `q16` (the SAH-collapsed ones quantized to 192 bytes) and `wide8c`
// (today's nodes in wide16's order), all AVX-512; `new L..`
// (the compressed design, --new);
// and, per scene, the build, update and memory floors (see run_scene).
// Times are CPU time (see cpu_ms), median of --runs.
#include "bench_scenes.h"
#include "embree_bench.h"
#include "scene_gen.h"

#include "binary_bvh.h"
#include "raypick/bvh/picker.h"
#include "wide_bvh.h"
#include "floor_qbvh.h"
#include "floor_wide16.h"
#include "picker_impl.h"
#include "raypick/core/obb.h"
#include "raypick/core/ray_triangle.h"
#include "raypick/loaders/load.h"

#include <CLI/CLI.hpp>
#include <tbb/global_control.h>

#include <malloc.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

using namespace raypick;

// Keeps a value alive for the optimizer, so that a timed loop whose result
// is otherwise unused is not removed.
template <class T>
void keep(const T& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

// CPU time of the process in milliseconds. Everything here runs on one
// thread (TBB and the Embree device are capped at one), and on a machine
// shared with other jobs CPU time is far steadier than wall time, which
// counts the time this process waits to be scheduled.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
}

// The median over `runs` calls of f, in CPU milliseconds.
template <class F>
double median_ms(int runs, F&& f) {
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    const double start = cpu_ms();
    f();
    ms.push_back(cpu_ms() - start);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::size_t trimmed_rss() {
  malloc_trim(0);
  return tools::resident_bytes();
}

// The engine's own leaf copy and mesh data (PickerCore's, through the
// raypick_bvh_internal target): one cache line per object, in the tree's
// entry order; a mesh's triangle tree and its vertices in entry order.
using Leaf = floorq::Leaf;
using MeshData = PickerCore::MeshAccel;

// The engine's trees as a PickerCore built them (the same build and
// padding as a Picker's, not a copy), and the top level's build passes
// timed alone on its own boxes.
struct Replica {
  const WideBvh& top;
  std::span<const Leaf> leaves;           // by entry
  std::span<const MeshData> meshes;
  // The top level's inputs by entry: the padded world boxes and the leaf
  // copies (the compressed design's build reads them).
  std::vector<Aabb> boxes;
  std::span<const Leaf> by_prim;
  double build_bvh_ms = 0.0, collapse_ms = 0.0;
  Bvh binary;  // the top level's binary tree, built again (the 16-wide prototype collapses it)
};

Replica make_replica(const PickerCore& core) {
  Replica rep{std::get<WideBvh>(core.top_), core.leaf_, core.meshes_, {}, core.leaf_, 0.0, 0.0, {}};
  for (std::uint32_t e = 0; e < core.leaf_.size(); ++e) rep.boxes.push_back(core.entry_box(e));
  double start = cpu_ms();
  rep.binary = build_bvh(rep.boxes, core.config_.top);
  rep.build_bvh_ms = cpu_ms() - start;
  start = cpu_ms();
  keep(WideBvh::collapse(rep.binary));
  rep.collapse_ms = cpu_ms() - start;
  return rep;
}

// What one query of the replica did, kept to replay its parts alone.
struct ObbTest {
  std::uint32_t ray, entry;
  float tmax;
};
struct TriTest {
  std::uint32_t local;  // index into Recorded::local
  std::uint32_t entry;  // of the mesh BVH
  float tmax;
};
struct Recorded {
  std::vector<std::uint32_t> nodes;  // top-level nodes visited, per ray
  std::vector<ObbTest> obb;          // obb mode: every OBB test
  std::vector<std::pair<Ray, std::uint32_t>> local;  // mesh: ray in object frame, mesh
  std::vector<TriTest> tris;         // mesh: every triangle test
};

// The closest hit on one mesh for a ray already in its frame (as
// Picker::mesh_hit, with its two bounds: the triangle tests up to the best
// t, the box walk up to 2^-17 of it further); `record` collects the
// triangle tests.
Hit mesh_hit(const MeshData& mesh, const Ray& local, std::uint32_t object,
             std::vector<TriTest>* record, std::uint32_t local_index) {
  Hit best;
  float test_tmax = local.tmax;
  Ray walk = local;
  walk.tmax = mesh_walk_reach(local.tmax);
  const TriangleRay tri_ray(local.org, local.dir);
  auto leaf = [&](std::uint32_t entry, float& walk_tmax) {
    if (record) record->push_back({local_index, entry, test_tmax});
    const auto& v = mesh.verts[entry];
    const TriangleHit h = intersect_triangle(tri_ray, v[0], v[1], v[2], local.tmin, test_tmax);
    const std::uint32_t tri = mesh.prim_id(entry);
    if (!h.hit || !(h.t < best.t || (h.t == best.t && tri < best.triangle))) return false;
    best.object = object;
    best.t = h.t;
    best.triangle = tri;
    best.u = h.u;
    best.v = h.v;
    test_tmax = h.t;
    walk_tmax = mesh_walk_reach(h.t);
    return false;
  };
  mesh.with_bvh([&](const auto& tree) { tree.traverse(walk, leaf); });
  return best;
}

// The replica's closest-hit query (Picker::intersect's steps).
template <bool kRecord>
Hit replica_query(const Replica& rep, const Ray& ray, bool mesh_mode,
                  std::uint32_t ray_index, Recorded* rec) {
  Hit best;
  const TraversalStats st = rep.top.traverse(ray, [&](std::uint32_t entry, float& tmax) {
    const Leaf& l = rep.leaves[entry];
    if (l.mesh == kInvalidId) return false;
    Hit h;
    if (!mesh_mode) {
      if constexpr (kRecord) rec->obb.push_back({ray_index, entry, tmax});
      const float t = obb_entry(l.frame, rep.meshes[l.mesh].bounds, ray, tmax);
      if (t != kInfinity) {
        h.object = l.object;
        h.t = t;
      }
    } else {
      Ray local = transform_ray(l.frame, ray);
      local.tmax = tmax;
      std::uint32_t index = 0;
      if constexpr (kRecord) {
        index = static_cast<std::uint32_t>(rec->local.size());
        rec->local.push_back({local, l.mesh});
      }
      h = mesh_hit(rep.meshes[l.mesh], local, l.object, kRecord ? &rec->tris : nullptr, index);
    }
    if (h.hit() && closer(h, best)) {
      best = h;
      tmax = h.t;
    }
    return false;
  });
  if constexpr (kRecord) rec->nodes.push_back(st.nodes_visited);
  return best;
}

// Set when the replica's answers differ from the Picker's: its parts then
// measure another query, and the program exits with status 1.
bool g_replica_differs = false;

struct Options {
  std::vector<std::string> scenes{"boxes", "crowd"};
  std::vector<std::size_t> n;
  std::string ray_kind = "both";
  std::size_t rays = 200000;
  std::string camera = "512x512";
  int runs = 3;
  std::uint64_t seed = 1;
  bool no_embree = false;
  std::string model = tools::kCrowdModel;
  // The compressed design's variants, leaf:cost (see make_new_design).
  std::vector<std::string> new_designs{"4:1", "8:1", "8:0.5"};
};

void print_row(const char* what, double ms, std::size_t rays, double embree_ms,
               const char* note = "") {
  const double ns = ms * 1e6 / double(rays);
  std::printf("    %-14s %9.1f ns/ray %8.3f Mrays/s", what, ns, double(rays) / (ms * 1e3));
  if (embree_ms > 0.0) std::printf("  %5.2fx Embree", embree_ms / ms);
  std::printf("  %s\n", note);
}

// ---- the compressed design (bvh/src/qbvh.h), prototyped here ------------

// One variant of the new design: the top level rebuilt with `leaf` objects
// per leaf at most and `cost` for one OBB test (relative to a node visit),
// its nodes quantized, its objects in SIMD blocks.
struct NewDesign {
  std::string name;
  QBvh tree;
  BvhStats stats;
  double build_ms = 0.0;
};

NewDesign make_new_design(const Replica& rep, const Scene& scene, std::uint32_t leaf, float cost) {
  NewDesign d;
  BvhConfig config = PickerConfig{}.top;
  config.max_leaf_size = leaf;
  config.intersection_cost = cost;
  char name[64];
  std::snprintf(name, sizeof name, "new L%u c%.2g", leaf, double(cost));
  d.name = name;
  const double start = cpu_ms();
  const WideBvh wide = WideBvh::collapse(build_bvh(rep.boxes, config));
  d.tree = QBvh::from_wide(wide);
  for (std::uint32_t e = 0; e < wide.entry_count(); ++e) {
    const Leaf& l = rep.by_prim[wide.prim_id(e)];
    d.tree.set_entry(e, l.frame, rep.meshes[scene.objects[l.object].mesh].bounds, l.object);
  }
  d.build_ms = cpu_ms() - start;
  d.stats = wide.stats();
  return d;
}

bool g_new_differs = false;

void run_new_designs(const std::vector<NewDesign>& designs, const std::vector<Ray>& rays,
                     const std::vector<Hit>& expect, double embree_ms, int runs) {
  for (const NewDesign& d : designs) {
    std::size_t mismatches = 0, nodes = 0, leaves = 0, prims = 0;
    for (std::size_t i = 0; i < rays.size(); ++i) {
      TraversalStats st;
      const Hit h = floorq::intersect_avx2(d.tree, rays[i], &st);
      const Hit hs = floorq::intersect_scalar(d.tree, rays[i], nullptr);
      if (h.object != expect[i].object || h.t != expect[i].t || hs.object != h.object ||
          hs.t != h.t) {
        ++mismatches;
      }
      nodes += st.nodes_visited;
      leaves += st.leaves_visited;
      prims += st.prims_tested;
    }
    if (mismatches != 0) g_new_differs = true;
    const double query_ms = median_ms(runs, [&] {
      for (const Ray& ray : rays) keep(floorq::intersect_avx2(d.tree, ray, nullptr));
    });
    std::vector<Ray> at_t = rays;
    for (std::size_t i = 0; i < rays.size(); ++i) {
      if (expect[i].hit()) at_t[i].tmax = expect[i].t;
    }
    std::size_t walk_t_nodes = 0;
    for (const Ray& ray : at_t) walk_t_nodes += floorq::walk_avx2(d.tree, ray).nodes_visited;
    const double walk_t_ms = median_ms(runs, [&] {
      for (const Ray& ray : at_t) keep(floorq::walk_avx2(d.tree, ray));
    });
    // The leaves the query at t must test: walk@t's leaves, SIMD-tested.
    const double floor_ms = median_ms(runs, [&] {
      for (const Ray& ray : at_t) keep(floorq::walk_leaves_avx2(d.tree, ray));
    });
    char note[200];
    std::snprintf(note, sizeof note,
                  "answers %s; %.2f nodes, %.2f leaves, %.2f OBBs/ray; %zu nodes, %.2f obj/leaf, "
                  "SAH %.3f, %.1f B/object",
                  mismatches == 0 ? "identical" : "DIFFER", double(nodes) / rays.size(),
                  double(leaves) / rays.size(), double(prims) / rays.size(), d.stats.nodes,
                  d.stats.mean_leaf_size, d.stats.sah_cost,
                  double(d.tree.memory_bytes()) / double(d.tree.entries));
    print_row(d.name.c_str(), query_ms, rays.size(), embree_ms, note);
    std::snprintf(note, sizeof note, "walk at the answer's t, empty leaves: %.2f nodes/ray",
                  double(walk_t_nodes) / rays.size());
    print_row("  walk@t", walk_t_ms, rays.size(), embree_ms, note);
    print_row("  floor", floor_ms, rays.size(), embree_ms, "walk@t + its SIMD leaf tests");
    // The folded node test: same tree, cheaper arithmetic, other rounding.
    std::size_t folded_mismatches = 0;
    for (std::size_t i = 0; i < rays.size(); ++i) {
      const Hit h = floorq::intersect_folded(d.tree, rays[i], nullptr);
      if (h.object != expect[i].object || h.t != expect[i].t) ++folded_mismatches;
    }
    const double folded_ms = median_ms(runs, [&] {
      for (const Ray& ray : rays) keep(floorq::intersect_folded(d.tree, ray, nullptr));
    });
    const double folded_walk_ms = median_ms(runs, [&] {
      for (const Ray& ray : at_t) keep(floorq::walk_folded(d.tree, ray));
    });
    std::snprintf(note, sizeof note, "node test folded per node: answers %s (%zu differ)",
                  folded_mismatches == 0 ? "identical" : "DIFFER", folded_mismatches);
    print_row("  folded", folded_ms, rays.size(), embree_ms, note);
    print_row("  walk@t", folded_walk_ms, rays.size(), embree_ms, "folded");
  }
}

// The 16-wide prototype (floor_wide16.h): today's top level widened, and
// the binary tree collapsed by the SAH, each walked with AVX-512; then
// today's nodes in the same order. Each query's answers are checked
// against the Picker's, and its walk at t printed beside today's.
void run_wide16(const Replica& rep, std::span<const Aabb> mesh_bounds,
                std::span<const Ray> rays, std::span<const Ray> at_t,
                std::span<const Hit> expect, double embree_ms, int runs) {
  char note[200];
  // query(ray, stats) and walk(ray) of one tree; `what` names it, `shape`
  // adds its size.
  auto measure = [&](const char* row, const char* what, const std::string& shape,
                     auto&& query, auto&& walk) {
    std::size_t differ = 0, nodes = 0;
    for (std::size_t i = 0; i < rays.size(); ++i) {
      TraversalStats st;
      const Hit h = query(rays[i], &st);
      if (h.object != expect[i].object || h.t != expect[i].t) ++differ;
      nodes += st.nodes_visited;
    }
    if (differ != 0) g_new_differs = true;
    const double query_ms = median_ms(runs, [&] {
      for (const Ray& ray : rays) keep(query(ray, nullptr));
    });
    std::size_t walk_nodes = 0;
    for (const Ray& ray : at_t) walk_nodes += walk(ray).nodes_visited;
    const double walk_ms = median_ms(runs, [&] {
      for (const Ray& ray : at_t) keep(walk(ray));
    });
    std::snprintf(note, sizeof note, "%s, AVX-512: answers %s, %.2f nodes/ray%s", what,
                  differ == 0 ? "identical" : "DIFFER", double(nodes) / rays.size(),
                  shape.c_str());
    print_row(row, query_ms, rays.size(), embree_ms, note);
    std::snprintf(note, sizeof note, "%s, hit slots pushed by a register compress, %.2f nodes/ray",
                  what, double(walk_nodes) / rays.size());
    print_row("  walk@t", walk_ms, rays.size(), embree_ms, note);
  };
  auto measure16 = [&](const char* what, const floorq::Wide16& wide, std::span<const Leaf> leaves) {
    char shape[96];
    std::snprintf(shape, sizeof shape, "; %zu nodes of 512 B, %.1f of 16 slots", wide.nodes.size(),
                  wide.slots_used);
    measure(
        "wide16", what, shape,
        [&](const Ray& ray, TraversalStats* st) {
          return floorq::intersect16(wide, leaves, mesh_bounds, ray, st);
        },
        [&](const Ray& ray) { return floorq::walk16(wide, ray); });
  };
  measure16("16-wide widened from today's", floorq::widen16(rep.top), rep.leaves);
  // The leaf copies in the binary tree's entry order (rep.by_prim is by
  // the boxes' index, which build_bvh's prim_ids hold).
  std::vector<Leaf> by_binary;
  by_binary.reserve(rep.binary.prim_ids.size());
  for (std::uint32_t e : rep.binary.prim_ids) by_binary.push_back(rep.by_prim[e]);
  // (A node cost of 2 gave the same tree as 1 at boxes-10k.)
  const double start = cpu_ms();
  const floorq::Wide16 collapsed = floorq::collapse16(rep.binary, 1.0f, 1.0f);
  const double collapse_ms = cpu_ms() - start;
  measure16("16-wide SAH-collapsed", collapsed, by_binary);
  std::printf("      (the SAH collapse took %.2f ms on one thread; today's collapse %.2f ms)\n",
              collapse_ms, rep.collapse_ms);
  {
    const floorq::QWide16 q = floorq::quantize16(collapsed);
    char shape[96];
    std::snprintf(shape, sizeof shape, "; %zu nodes of 192 B", q.nodes.size());
    measure(
        "q16", "16-wide SAH-collapsed, quantized", shape,
        [&](const Ray& ray, TraversalStats* st) {
          return floorq::intersectq16(q, by_binary, mesh_bounds, ray, st);
        },
        [&](const Ray& ray) { return floorq::walkq16(q, ray); });
  }
  measure(
      "wide8c", "today's 8-wide nodes", "",
      [&](const Ray& ray, TraversalStats* st) {
        return floorq::intersect8_compress512(rep.top, rep.leaves, mesh_bounds, ray, st);
      },
      [&](const Ray& ray) { return floorq::walk8_compress512(rep.top, ray); });
}

void run_rays(const Picker& picker, const Replica& rep,
              const tools::EmbreeBenchScene* embree, bool mesh_mode,
              const std::string& kind, const std::vector<Ray>& rays, int runs,
              const std::vector<NewDesign>& designs) {
  const QueryOptions options{mesh_mode ? PickMode::kMesh : PickMode::kObb};
  std::printf("  %s rays, %zu:\n", kind.c_str(), rays.size());
  // raypick as bench runs it, and its answers and node counts.
  std::vector<Hit> expect(rays.size());
  std::size_t picker_nodes = 0;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const PickResult r = picker.intersect_stats(rays[i], options);
    expect[i] = r.hit;
    picker_nodes += r.stats.nodes_visited;
  }
  const double raypick_ms = median_ms(runs, [&] {
    for (const Ray& ray : rays) keep(picker.intersect(ray, options));
  });
  double embree_ms = 0.0;
  if (embree) {
    embree_ms = median_ms(runs, [&] {
      for (const Ray& ray : rays) keep(embree->intersect(ray));
    });
  }
  // The replica: same answers, same node visits.
  Recorded rec;
  std::size_t mismatches = 0, hits = 0;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const Hit h = replica_query<true>(rep, rays[i], mesh_mode, static_cast<std::uint32_t>(i), &rec);
    if (h.object != expect[i].object || h.t != expect[i].t) ++mismatches;
    hits += h.hit();
  }
  if (mismatches != 0) g_replica_differs = true;
  std::size_t replica_nodes = 0;
  for (std::uint32_t k : rec.nodes) replica_nodes += k;
  const double replica_ms = median_ms(runs, [&] {
    for (std::size_t i = 0; i < rays.size(); ++i) {
      keep(replica_query<false>(rep, rays[i], mesh_mode, 0, nullptr));
    }
  });
  // The walks.
  const double walk_ms = median_ms(runs, [&] {
    for (const Ray& ray : rays) {
      keep(rep.top.traverse(ray, [](std::uint32_t, float&) { return false; }));
    }
  });
  std::vector<Ray> at_t = rays;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    if (expect[i].hit()) at_t[i].tmax = expect[i].t;
  }
  std::size_t walk_t_nodes = 0;
  for (const Ray& ray : at_t) {
    walk_t_nodes += rep.top.traverse(ray, [](std::uint32_t, float&) { return false; }).nodes_visited;
  }
  const double walk_t_ms = median_ms(runs, [&] {
    for (const Ray& ray : at_t) {
      keep(rep.top.traverse(ray, [](std::uint32_t, float&) { return false; }));
    }
  });
  print_row("raypick", raypick_ms, rays.size(), embree_ms, "Picker::intersect");
  if (embree) print_row("embree", embree_ms, rays.size(), embree_ms, "rtcIntersect1");
  char note[200];
  std::snprintf(note, sizeof note, "answers %s, %.2f top nodes/ray (Picker %.2f), %zu hits",
                mismatches == 0 ? "identical" : "DIFFER", double(replica_nodes) / rays.size(),
                double(picker_nodes) / rays.size(), hits);
  print_row("replica", replica_ms, rays.size(), embree_ms, note);
  print_row("walk", walk_ms, rays.size(), embree_ms, "top level, empty leaf test");
  std::snprintf(note, sizeof note, "top level at the answer's t, empty leaf test: %.2f nodes/ray",
                double(walk_t_nodes) / rays.size());
  print_row("walk@t", walk_t_ms, rays.size(), embree_ms, note);
  double floor_ms = 0.0;
  if (!mesh_mode) {
    const double leaves_ms = median_ms(runs, [&] {
      for (const ObbTest& t : rec.obb) {
        const Leaf& l = rep.leaves[t.entry];
        keep(obb_entry(l.frame, rep.meshes[l.mesh].bounds, rays[t.ray], t.tmax));
      }
    });
    std::snprintf(note, sizeof note, "the query's %.2f OBB tests/ray alone",
                  double(rec.obb.size()) / rays.size());
    print_row("leaves", leaves_ms, rays.size(), embree_ms, note);
    floor_ms = walk_t_ms + leaves_ms;
  } else {
    // Per object reached at the answer's t: the local ray and the
    // watertight test's setup; then also the object's triangle BVH walk.
    auto walk_objects = [&](bool mesh_walk) {
      for (const Ray& ray : at_t) {
        rep.top.traverse(ray, [&](std::uint32_t entry, float& tmax) {
          const Leaf& l = rep.leaves[entry];
          if (l.mesh == kInvalidId) return false;
          Ray local = transform_ray(l.frame, ray);
          local.tmax = tmax;
          const TriangleRay tri_ray(local.org, local.dir);
          keep(tri_ray);
          if (mesh_walk) {
            keep(rep.meshes[l.mesh].with_bvh([&](const auto& tree) {
              return tree.traverse(local, [](std::uint32_t, float&) { return false; });
            }));
          }
          return false;
        });
      }
    };
    const double setup_ms = median_ms(runs, [&] { walk_objects(false); });
    const double mesh_ms = median_ms(runs, [&] { walk_objects(true); });
    const double tris_ms = median_ms(runs, [&] {
      for (const TriTest& t : rec.tris) {
        const auto& [local, mesh] = rec.local[t.local];
        const TriangleRay tri_ray(local.org, local.dir);
        const auto& v = rep.meshes[mesh].verts[t.entry];
        keep(intersect_triangle(tri_ray, v[0], v[1], v[2], local.tmin, t.tmax));
      }
    });
    // The triangle loop redoes the watertight setup per test; take it out.
    const double tri_setup_ms = median_ms(runs, [&] {
      for (const TriTest& t : rec.tris) {
        const auto& [local, mesh] = rec.local[t.local];
        keep(TriangleRay(local.org, local.dir));
      }
    });
    print_row("+setup", setup_ms, rays.size(), embree_ms, "walk@t + ray into each object's frame");
    print_row("+mesh", mesh_ms, rays.size(), embree_ms, "... + each object's triangle BVH at t, empty test");
    std::snprintf(note, sizeof note, "the query's %.1f triangle tests/ray alone (%.1f objects/ray)",
                  double(rec.tris.size()) / rays.size(), double(rec.local.size()) / rays.size());
    const double tris_net = std::max(0.0, tris_ms - tri_setup_ms);
    print_row("tris", tris_net, rays.size(), embree_ms, note);
    floor_ms = mesh_ms + tris_net;
  }
  print_row("floor", floor_ms, rays.size(), embree_ms,
            "= the query with a perfect visiting order (current design)");
  if (!mesh_mode && compiler::cpu_has_avx2()) {
    // Today's nodes and leaves, the children's order from a SIMD compress.
    std::vector<Aabb> mesh_bounds;
    for (const MeshData& m : rep.meshes) mesh_bounds.push_back(m.bounds);
    std::size_t differ = 0, nodes = 0;
    for (std::size_t i = 0; i < rays.size(); ++i) {
      TraversalStats st;
      const Hit h = floorq::intersect_compress(rep.top, rep.leaves, mesh_bounds, rays[i], &st);
      if (h.object != expect[i].object || h.t != expect[i].t) ++differ;
      nodes += st.nodes_visited;
    }
    if (differ != 0) g_new_differs = true;
    const double compress_ms = median_ms(runs, [&] {
      for (const Ray& ray : rays) {
        keep(floorq::intersect_compress(rep.top, rep.leaves, mesh_bounds, ray, nullptr));
      }
    });
    const double compress_walk_ms = median_ms(runs, [&] {
      for (const Ray& ray : at_t) keep(floorq::walk_compress(rep.top, ray));
    });
    std::snprintf(note, sizeof note, "order by SIMD compress: answers %s, %.2f nodes/ray",
                  differ == 0 ? "identical" : "DIFFER", double(nodes) / rays.size());
    print_row("compress", compress_ms, rays.size(), embree_ms, note);
    print_row("  walk@t", compress_walk_ms, rays.size(), embree_ms, "compress order");
    // Today's nodes and leaves, the children in a fixed order per octant.
    const std::vector<std::uint64_t> order = floorq::octant_order(rep.top);
    differ = nodes = 0;
    for (std::size_t i = 0; i < rays.size(); ++i) {
      TraversalStats st;
      const Hit h =
          floorq::intersect_octant(rep.top, order, rep.leaves, mesh_bounds, rays[i], &st);
      if (h.object != expect[i].object || h.t != expect[i].t) ++differ;
      nodes += st.nodes_visited;
    }
    if (differ != 0) g_new_differs = true;
    const double octant_ms = median_ms(runs, [&] {
      for (const Ray& ray : rays) {
        keep(floorq::intersect_octant(rep.top, order, rep.leaves, mesh_bounds, ray, nullptr));
      }
    });
    std::size_t octant_walk_nodes = 0;
    for (const Ray& ray : at_t) octant_walk_nodes += floorq::walk_octant(rep.top, order, ray).nodes_visited;
    const double octant_walk_ms = median_ms(runs, [&] {
      for (const Ray& ray : at_t) keep(floorq::walk_octant(rep.top, order, ray));
    });
    std::snprintf(note, sizeof note, "order per octant: answers %s, %.2f nodes/ray",
                  differ == 0 ? "identical" : "DIFFER", double(nodes) / rays.size());
    print_row("octant", octant_ms, rays.size(), embree_ms, note);
    std::snprintf(note, sizeof note, "octant order, %.2f nodes/ray",
                  double(octant_walk_nodes) / rays.size());
    print_row("  walk@t", octant_walk_ms, rays.size(), embree_ms, note);
    if (floorq::cpu_has_avx512()) run_wide16(rep, mesh_bounds, rays, at_t, expect, embree_ms, runs);
  }
  run_new_designs(designs, rays, expect, embree_ms, runs);
}

// Build, update and memory floors of one scene.
void run_scene(const std::string& name, const Scene& scene, bool mesh_mode,
               const Options& o) {
  std::printf("%s, %s mode\n", name.c_str(), mesh_mode ? "mesh" : "obb");
  PickerConfig config;
  config.mesh_mode = mesh_mode;
  // The design measured here: the 8-wide top level under the AVX2 walk
  // (kAuto makes it 16 wide on a CPU with AVX-512; the wide16 lines
  // measure such trees).
  config.isa = Isa::kAvx2;
  const std::size_t rss0 = trimmed_rss();
  std::optional<Picker> picker;
  const double picker_ms = median_ms(o.runs, [&] { picker.emplace(scene, config); });
  const std::size_t rss1 = trimmed_rss();
  std::optional<tools::EmbreeDevice> device;
  std::optional<tools::EmbreeBenchScene> embree;
  double embree_build_ms = 0.0;
  std::size_t rss2 = rss1;
  if (!o.no_embree) {
    device.emplace(1);
    embree_build_ms = median_ms(o.runs, [&] {
      embree.reset();
      embree.emplace(*device, scene, mesh_mode ? PickMode::kMesh : PickMode::kObb);
    });
    rss2 = trimmed_rss();
  }
  // The engine's state, built as the Picker builds it, for the parts.
  const PickerCore core(scene, config);
  const Replica rep = make_replica(core);
  const std::size_t n = rep.leaves.size();
  std::vector<NewDesign> designs;
  if (!mesh_mode && compiler::cpu_has_avx2()) {
    for (const std::string& v : o.new_designs) {
      const auto colon = v.find(':');
      designs.push_back(make_new_design(rep, scene, std::stoul(v.substr(0, colon)),
                                        colon == std::string::npos ? 1.0f : std::stof(v.substr(colon + 1))));
    }
  }

  // ---- build: the Picker's parts, and single passes over the primitives.
  // Frames and world boxes from stored 3x4 matrices, as the Picker's
  // commit reads them from its object records.
  std::vector<glm::mat4x3> stored(scene.objects.size());
  for (std::size_t i = 0; i < stored.size(); ++i) stored[i] = glm::mat4x3(scene.objects[i].matrix);
  std::vector<LocalFrame> frames(scene.objects.size());
  const double frames_ms = median_ms(o.runs, [&] {
    for (std::size_t i = 0; i < frames.size(); ++i) make_local_frame(stored[i], frames[i]);
    keep(frames);
  });
  std::vector<Aabb> boxes(scene.objects.size());
  const double boxes_ms = median_ms(o.runs, [&] {
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      boxes[i] = transform_aabb(stored[i],
                                rep.meshes[scene.objects[i].mesh].bounds);
    }
    keep(boxes);
  });
  // A builder's record per primitive (box and id: 32 bytes, as build.cpp's
  // PrimRef, the centre computed from the box): one bounding pass and one
  // partition at the centre of the widest axis, the two passes a top-down
  // level makes.
  struct alignas(16) Ref {
    float lo[4], hi[3];
    std::uint32_t id;
    float centre(int a) const { return (lo[a] + hi[a]) * 0.5f; }
  };
  static_assert(sizeof(Ref) == 32);
  std::vector<Ref> refs(boxes.size()), work;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    refs[i] = Ref{{boxes[i].min.x, boxes[i].min.y, boxes[i].min.z, 0.0f},
                  {boxes[i].max.x, boxes[i].max.y, boxes[i].max.z},
                  static_cast<std::uint32_t>(i)};
  }
  Aabb cb;
  const double pass_ms = median_ms(o.runs, [&] {
    Aabb b;
    cb = Aabb{};
    for (const Ref& r : refs) {
      b.extend(Aabb{{r.lo[0], r.lo[1], r.lo[2]}, {r.hi[0], r.hi[1], r.hi[2]}});
      cb.extend(glm::vec3{r.centre(0), r.centre(1), r.centre(2)});
    }
    keep(b);
  });
  const glm::vec3 ext = cb.max - cb.min;
  const int axis = ext.x > ext.y ? (ext.x > ext.z ? 0 : 2) : (ext.y > ext.z ? 1 : 2);
  const float mid = 0.5f * (cb.min[axis] + cb.max[axis]);
  std::vector<double> part;
  for (int r = 0; r < o.runs; ++r) {
    work = refs;
    const double start = cpu_ms();
    keep(std::partition(work.begin(), work.end(), [&](const Ref& x) { return x.centre(axis) < mid; }));
    part.push_back(cpu_ms() - start);
  }
  std::sort(part.begin(), part.end());
  const double partition_ms = part[part.size() / 2];
  const BvhStats top_stats = rep.top.stats();
  const double levels = std::max(1.0, std::log2(double(n) / PickerConfig{}.top.max_leaf_size));
  std::printf("  top level: %zu wide nodes, %zu leaf slots, %.2f objects per leaf, SAH cost %.4f\n",
              top_stats.nodes, top_stats.leaves, top_stats.mean_leaf_size, top_stats.sah_cost);
  std::printf("  build (1 thread):\n");
  std::printf("    raypick %9.2f ms   embree %9.2f ms   ratio %.2fx\n", picker_ms, embree_build_ms,
              embree_build_ms > 0 ? picker_ms / embree_build_ms : 0.0);
  std::printf("    of raypick's: build_bvh %.2f ms, collapse %.2f ms, frames (double inverse) %.2f ms, "
              "world boxes %.2f ms\n",
              rep.build_bvh_ms, rep.collapse_ms, frames_ms, boxes_ms);
  std::printf("    one bounding pass over %zu 32-byte refs %.2f ms, one partition %.2f ms;\n"
              "    floor of a top-down build with %.1f levels of (pass + partition): %.2f ms "
              "(%.2fx Embree)\n",
              n, pass_ms, partition_ms, levels, levels * (pass_ms + partition_ms),
              embree_build_ms > 0 ? levels * (pass_ms + partition_ms) / embree_build_ms : 0.0);

  // ---- update: every object moved (as bench), then commit.
  const std::vector<glm::mat4> base = tools::object_matrices(scene);
  const float amount = tools::move_amount(scene);
  std::vector<std::vector<glm::mat4>> moves;
  for (int r = 0; r < o.runs; ++r) {
    moves.push_back(tools::moved_matrices(base, amount, o.seed * 7919 + 101 + r));
  }
  int round = 0;
  const double update_ms = median_ms(o.runs, [&] {
    const std::vector<glm::mat4>& moved = moves[round++];
    for (std::uint32_t i = 0; i < moved.size(); ++i) picker->set_matrix(i, moved[i]);
    picker->commit();
  });
  double embree_update_ms = 0.0;
  if (embree) {
    round = 0;
    embree_update_ms = median_ms(o.runs, [&] {
      const std::vector<glm::mat4>& moved = moves[round++];
      for (std::uint32_t i = 0; i < moved.size(); ++i) embree->set_matrix(i, moved[i]);
      embree->commit();
    });
  }
  // Bytes the refit must touch at least: read each object record (64) and
  // write its leaf copy (64), read and write every node (256 each).
  const std::size_t node_bytes = rep.top.nodes().size() * sizeof(WideNode);
  const std::size_t touched = n * 64 + n * 64 + 2 * node_bytes;
  std::vector<char> src(touched / 2), dst(touched / 2);
  std::memset(src.data(), 1, src.size());
  std::memset(dst.data(), 2, dst.size());
  const double copy_ms = median_ms(o.runs, [&] {
    std::memcpy(dst.data(), src.data(), src.size());
    keep(dst);
  });
  std::printf("  update (all %zu objects moved + commit, 1 thread):\n", n);
  std::printf("    raypick %.2f ms = %.1f ns/object; embree %.2f ms (ratio %.3fx, goal 1/30 = %.1f ns/object)\n",
              update_ms, update_ms * 1e6 / double(n), embree_update_ms,
              embree_update_ms > 0 ? update_ms / embree_update_ms : 0.0,
              embree_update_ms * 1e6 / double(n) / 30.0);
  std::printf("    floor: memcpy of the %.1f MB it must read and write %.2f ms (%.1f ns/object); "
              "frames %.2f + world boxes %.2f ms of arithmetic\n",
              double(touched) / 1e6, copy_ms, copy_ms * 1e6 / double(n), frames_ms, boxes_ms);

  // ---- memory.
  std::printf("  memory (bytes per object):\n");
  std::printf("    raypick RSS growth %.1f, arrays %.1f; embree RSS growth %.1f (incl. its 88-byte "
              "records in obb mode)\n",
              double(rss1 - rss0) / double(n), double(picker->memory_bytes()) / double(n),
              double(rss2 - rss1) / double(n));
  std::printf("    design floor: nodes %.1f (%zu nodes of 256 bytes, %.2f of 8 slots used) + leaf "
              "copy 64 + object record 64 = %.1f\n",
              double(node_bytes) / double(n), rep.top.nodes().size(),
              double(top_stats.leaves + top_stats.nodes - 1) / double(top_stats.nodes),
              (double(node_bytes) + 128.0 * double(n)) / double(n));

  // ---- queries. The update moved the Picker's objects: rebuild it.
  picker.emplace(scene, config);
  const Aabb bounds = world_bounds(scene);
  if (o.ray_kind != "camera") {
    run_rays(*picker, rep, embree ? &*embree : nullptr, mesh_mode, "incoherent",
             tools::make_incoherent_rays(bounds, o.rays, o.seed), o.runs, designs);
  }
  if (o.ray_kind != "incoherent") {
    const auto res = tools::parse_resolution(o.camera);
    run_rays(*picker, rep, embree ? &*embree : nullptr, mesh_mode, "camera",
             tools::make_camera_rays(tools::make_camera(bounds), res->first, res->second), o.runs,
             designs);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Measured lower bounds of raypick's current design for the rows of `raypick bench` "
               "(not installed; see docs/performance.md)"};
  app.add_option("--scene", o.scenes, "boxes and/or crowd")
      ->check(CLI::IsMember({"boxes", "crowd"}))->delimiter(',');
  app.add_option("--n", o.n, "Objects (default: boxes 10000,1000000; crowd 300,10000)")
      ->delimiter(',');
  app.add_option("--ray-kind", o.ray_kind, "incoherent, camera or both")
      ->check(CLI::IsMember({"incoherent", "camera", "both"}));
  app.add_option("--rays", o.rays, "Incoherent rays")->check(CLI::Range(1, 100000000));
  app.add_option("--camera", o.camera, "Camera rays: WxH")->check([](const std::string& s) {
    return tools::parse_resolution(s) ? std::string{} : "expected WxH";
  });
  app.add_option("--runs", o.runs, "Runs of every measurement; the median is printed")
      ->check(CLI::Range(1, 100));
  app.add_option("--seed", o.seed, "Seed of scenes and rays");
  app.add_flag("--no-embree", o.no_embree, "Leave Embree out");
  app.add_option("--model", o.model, "The crowd scenes' model");
  app.add_option("--new", o.new_designs,
                 "Variants of the compressed design (obb mode), LEAF:COST each: at most LEAF "
                 "objects per leaf, an OBB test costing COST node visits in the SAH")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  // One thread, as the bench's single-ray and `--threads 1` rows.
  tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
  std::optional<Mesh> model;
  for (const std::string& kind : o.scenes) {
    std::vector<std::size_t> sizes = o.n;
    if (sizes.empty()) {
      sizes = kind == "boxes" ? std::vector<std::size_t>{10000, 1000000}
                              : std::vector<std::size_t>{300, 10000};
    }
    for (std::size_t n : sizes) {
      Scene scene;
      if (kind == "boxes") {
        scene = tools::make_boxes_scene(n, o.seed);
      } else {
        if (!model) {
          LoadResult r = load_scene(o.model);
          if (!r.ok()) {
            std::fprintf(stderr, "raypick_floor: %s\n", r.error().to_string().c_str());
            return 1;
          }
          model = merge_into_one_mesh(r.scene());
        }
        scene = tools::make_crowd_scene(*model, n, o.seed);
      }
      run_scene(kind + "-" + std::to_string(n), scene, kind == "crowd", o);
      std::fflush(stdout);
    }
  }
  if (g_new_differs) {
    std::fprintf(stderr, "raypick_floor: the compressed design's answers differ from the Picker's\n");
    return 1;
  }
  if (g_replica_differs) {
    std::fprintf(stderr, "raypick_floor: the replica's answers differ from the Picker's: "
                         "its figures do not measure raypick's query\n");
    return 1;
  }
  return 0;
}
