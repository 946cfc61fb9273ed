// raypick bench: raypick and Embree's best configuration, side by side on
// the same scenes and rays, answers checked against each other. The
// workloads are in tools/bench_scenes, the Embree side in
// tools/embree_bench; this file runs, times, checks and prints.
#include "bench.h"
#include "common.h"

#include "../tools/bench_scenes.h"
#include "../tools/embree_bench.h"
#include "../tools/reference.h"
#include "../tools/scene_gen.h"
#include "../tools/validate.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"
#include "raypick/loaders/load.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <malloc.h>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace raypick::cli {

struct BenchArgs {
  std::vector<std::string> scenes;  // boxes, crowd or a scene file
  std::vector<std::string> files;   // positional SCENE files
  std::vector<std::size_t> n;
  std::string mode = "auto";
  std::string ray_kind = "both";
  std::size_t rays = 1000000;
  std::string camera = "1024x1024";
  int runs = 5;
  std::vector<int> threads{1};
  std::uint64_t seed = 1;
  std::string json;
  std::string model = tools::kCrowdModel;
  std::vector<double> offset;  // X, Y, Z: every scene moved by it; or empty
  bool quick = false;
  std::string profile;   // "raypick" or "embree": only that side's single rays
  int profile_passes = 1;
  LoadOptions load;  // for scene files and the crowd model
  // Which options were given, so that --quick only changes the others.
  CLI::Option* rays_opt = nullptr;
  CLI::Option* camera_opt = nullptr;
  CLI::Option* runs_opt = nullptr;
};

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kExitVoid = kExitBadInput;  // a VOID row or a file problem
// obb mode: relative tolerance on the sum of t over the rays (the answers
// are identical in practice: Embree runs raypick's leaf test).
constexpr double kSumTolerance = 1e-5;
// Mesh mode: at most this fraction of the rays may be excused as boundary
// rays (see compare_answers).
constexpr double kMaxBoundaryFraction = 1e-4;
// Rays re-checked after the moves (the update row's answers).
constexpr std::size_t kUpdateCheckRays = 65536;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Resident bytes after giving freed heap pages back to the system, so that
// a build's growth counts what it keeps, not what it freed.
std::size_t trimmed_resident_bytes() {
  malloc_trim(0);
  return tools::resident_bytes();
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(' '));
        return name;
      }
    }
  }
  return "unknown CPU";
}

// The 1-minute load average (/proc/loadavg), -1 when unknown: the bench
// figures are noisy on a machine that is busy with something else.
double load_average() {
  std::ifstream in("/proc/loadavg");
  double load = -1.0;
  if (!(in >> load)) return -1.0;
  return load;
}

// The widest x86 vector ISA this CPU has (Embree picks its kernels by it).
const char* cpu_isa() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return "AVX-512";
  if (__builtin_cpu_supports("avx2")) return "AVX2";
  if (__builtin_cpu_supports("avx")) return "AVX";
  return "SSE";
#else
  return "non-x86";
#endif
}

// The status line on stderr: on a terminal one line rewritten in place,
// otherwise one terse line per phase (and nothing per run).
class Progress {
 public:
  Progress() : tty_(isatty(fileno(stderr)) != 0) {}
  ~Progress() { clear(); }
  void phase(const std::string& text) {
    if (tty_) {
      show(text);
    } else {
      std::fprintf(stderr, "bench: %s\n", text.c_str());
    }
    current_ = text;
  }
  void step(const std::string& detail) {
    if (tty_) show(current_ + " " + detail);
  }
  void clear() {
    if (tty_ && shown_) std::fputs("\r\033[K", stderr);
    shown_ = false;
  }

 private:
  void show(const std::string& text) {
    std::fprintf(stderr, "\r\033[Kbench: %s", text.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  bool tty_;
  bool shown_ = false;
  std::string current_;
};

// ------------------------------------------------------------ the plan ---

struct SceneSpec {
  std::string kind;   // "boxes", "crowd" or "file"
  std::string path;   // the file, for kind == "file"
  std::size_t n = 0;  // objects, for generated scenes
  std::string label() const {
    return kind == "file"
               ? printable(std::filesystem::path(path).filename().string())
               : kind;
  }
  std::string json_name() const { return kind == "file" ? path : kind; }
};

struct RaySet {
  std::string kind;  // "incoherent" or "camera"
  std::vector<Ray> rays;
  int width = 0;     // camera rays: the image, row-major; 0 for incoherent
  int height = 0;
};

// What one system measured on one (scene, mode, threads) configuration.
struct PerKind {
  double mrays = 0.0;
  double mrays_batch = 0.0;
  double mrays_packet = 0.0;  // Embree only: rtcIntersect16 batches
  std::size_t hits = 0;
  double sum_t = 0.0;
};
struct SystemFigures {
  double build_ms = 0.0;
  double update_ms = 0.0;         // set_matrix on all objects + commit
  double update_set_ms = 0.0;     // ... the set_matrix part
  double update_commit_ms = 0.0;  // ... the commit part
  std::size_t rss_bytes = 0;      // process growth over the first build
  // raypick: Picker::memory_bytes(); Embree: the OBB array its callbacks
  // read (EmbreeBenchScene::user_data_bytes), outside Embree's own memory.
  std::size_t array_bytes = 0;
  std::vector<PerKind> kinds;     // by ray set
};
struct Check {
  bool ok = true;
  std::string why;
  void fail(const std::string& reason) {
    if (ok) why = reason;
    ok = false;
  }
};
struct ConfigResult {
  SystemFigures raypick, embree;
  std::vector<Check> checks;              // by ray set
  std::vector<std::size_t> boundary_rays; // by ray set (mesh mode)
  Check update_check;         // answers after the moves
  bool update_rebuilt = false;
};

struct Tally {
  std::size_t hits = 0;
  double sum_t = 0.0;
};
Tally tally(const std::vector<Hit>& hits) {
  Tally t;
  for (const Hit& h : hits) {
    if (h.hit()) {
      ++t.hits;
      t.sum_t += h.t;
    }
  }
  return t;
}

// Checks that raypick (`a`) and Embree (`b`) computed the same answers on
// `rays`; returns the number of boundary rays excused (mesh mode).
//
// obb mode: Embree runs raypick's own leaf test, so the hit counts must be
// equal and the sums of t equal within kSumTolerance (they are identical in
// practice).
//
// mesh mode: Embree's triangle test is not watertight and carries the ray
// into an instance's frame by its own float inverse, so a ray within
// rounding of a triangle's edge, or nearly in its plane, may hit in one
// system and slip through (or hit something further) in the other. As in
// validate, two hits agree when their t are within tools::kTol * scale
// (scale: the largest coordinate of the scene or the ray origin over the
// largest direction component), whatever object they name (a tie). A ray
// whose answers differ beyond that (hit vs miss, or t further apart) is
// excused, as a boundary ray, only when the double-precision reference
// (tools::SceneReference) says the nearer of the two hits lies within
// rounding of its triangle's edges or plane. Any other differing ray makes
// the row VOID, and so do more than kMaxBoundaryFraction boundary rays.
std::size_t compare_answers(const Scene& scene, PickMode mode,
                            std::span<const Ray> rays,
                            const std::vector<Hit>& a,
                            const std::vector<Hit>& b, Check& check) {
  const Tally ta = tally(a), tb = tally(b);
  const double sum_scale =
      std::max({std::abs(ta.sum_t), std::abs(tb.sum_t), 1e-30});
  const double rel = std::abs(ta.sum_t - tb.sum_t) / sum_scale;
  char buf[320];
  if (mode == PickMode::kObb) {
    if (ta.hits != tb.hits || rel > kSumTolerance) {
      std::size_t differ = 0;
      for (std::size_t i = 0; i < a.size(); ++i) {
        differ += a[i].object != b[i].object;
      }
      std::snprintf(buf, sizeof buf,
                    "hits %zu vs %zu, sum of t %.9g vs %.9g (rel %.2g), %zu "
                    "rays pick another object",
                    ta.hits, tb.hits, ta.sum_t, tb.sum_t, rel, differ);
      check.fail(buf);
    }
    return 0;
  }
  const Aabb bounds = tools::scene_bounds(scene);
  auto max_abs = [](const glm::vec3& v) {
    return double(std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)}));
  };
  const double scene_scale =
      bounds.empty() ? 1.0 : std::max(max_abs(bounds.min), max_abs(bounds.max));
  std::optional<tools::SceneReference> ref;
  std::size_t boundary = 0, real = 0, first = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Hit& x = a[i];
    const Hit& y = b[i];
    // validate's float-noise and tie bound: t agrees within 1e-4 * scale.
    const double scale =
        std::max(scene_scale, max_abs(rays[i].org)) / max_abs(rays[i].dir);
    if (x.hit() == y.hit() &&
        (!x.hit() ||
         std::abs(double(x.t) - double(y.t)) <= tools::kTol * scale)) {
      continue;
    }
    const Hit& nearer = !y.hit() || (x.hit() && x.t <= y.t) ? x : y;
    if (!ref) ref.emplace(scene);
    const tools::TriangleEntry e =
        ref->triangle_entry(nearer.object, nearer.triangle, rays[i]);
    if (e.coplanar || std::abs(e.inside) < 1.0) {
      ++boundary;
    } else if (real++ == 0) {
      first = i;
    }
  }
  if (real > 0) {
    std::snprintf(buf, sizeof buf,
                  "%zu rays differ beyond rounding (first: ray %zu, raypick "
                  "object %u triangle %u t %.9g, embree object %u triangle %u "
                  "t %.9g); hits %zu vs %zu",
                  real, first, a[first].object, a[first].triangle, a[first].t,
                  b[first].object, b[first].triangle, b[first].t, ta.hits,
                  tb.hits);
    check.fail(buf);
  } else if (double(boundary) > kMaxBoundaryFraction * double(a.size())) {
    std::snprintf(buf, sizeof buf,
                  "%zu boundary rays (more than %.0e of the rays); hits %zu "
                  "vs %zu",
                  boundary, kMaxBoundaryFraction, ta.hits, tb.hits);
    check.fail(buf);
  }
  return boundary;
}

// Batch answers must be exactly the single-ray answers.
void compare_exact(const std::vector<Hit>& single, const std::vector<Hit>& batch,
                   const char* system, Check& check) {
  for (std::size_t i = 0; i < single.size(); ++i) {
    if (single[i].object != batch[i].object || single[i].t != batch[i].t) {
      check.fail(std::string(system) + " batch differs from single rays at ray " +
                 std::to_string(i));
      return;
    }
  }
}

ConfigResult run_config(const Scene& scene, PickMode mode,
                        const std::vector<RaySet>& sets, int runs, int threads,
                        std::uint64_t seed, const std::string& name,
                        Progress& progress) {
  ConfigResult res;
  PickerConfig config;
  config.mesh_mode = mode == PickMode::kMesh;
  const QueryOptions options{mode};
  const tools::EmbreeDevice device(threads);
  auto runs_label = [&](int r) {
    return "(run " + std::to_string(r + 1) + "/" + std::to_string(runs) + ")";
  };

  // ---- build: the first build of each is kept and measured for memory.
  progress.phase(name + ": build");
  std::vector<double> rp_build, em_build;
  std::size_t rss0 = trimmed_resident_bytes();
  auto start = Clock::now();
  Picker picker(scene, config);
  rp_build.push_back(ms_since(start));
  std::size_t rss1 = trimmed_resident_bytes();
  res.raypick.rss_bytes = rss1 > rss0 ? rss1 - rss0 : 0;
  res.raypick.array_bytes = picker.memory_bytes();
  rss0 = rss1;
  start = Clock::now();
  tools::EmbreeBenchScene embree(device, scene, mode);
  em_build.push_back(ms_since(start));
  rss1 = trimmed_resident_bytes();
  res.embree.rss_bytes = rss1 > rss0 ? rss1 - rss0 : 0;
  res.embree.array_bytes = embree.user_data_bytes();
  for (int r = 1; r < runs; ++r) {
    progress.step(runs_label(r));
    {
      start = Clock::now();
      const Picker p(scene, config);
      rp_build.push_back(ms_since(start));
    }
    {
      start = Clock::now();
      const tools::EmbreeBenchScene e(device, scene, mode);
      em_build.push_back(ms_since(start));
    }
  }
  res.raypick.build_ms = median(rp_build);
  res.embree.build_ms = median(em_build);

  // ---- queries, back to back on the same rays.
  std::vector<Hit> rp_hits, em_hits, batch;
  for (const RaySet& set : sets) {
    progress.phase(name + ": " + set.kind + " rays");
    const std::size_t count = set.rays.size();
    rp_hits.assign(count, Hit{});
    em_hits.assign(count, Hit{});
    Check& check = res.checks.emplace_back();
    std::vector<double> rp_s, em_s, rp_b, em_b;
    for (int r = 0; r < runs; ++r) {
      progress.step("single " + runs_label(r));
      start = Clock::now();
      for (std::size_t i = 0; i < count; ++i) {
        rp_hits[i] = picker.intersect(set.rays[i], options);
      }
      rp_s.push_back(ms_since(start));
      start = Clock::now();
      for (std::size_t i = 0; i < count; ++i) {
        em_hits[i] = embree.intersect(set.rays[i]);
      }
      em_s.push_back(ms_since(start));
    }
    res.boundary_rays.push_back(
        compare_answers(scene, mode, set.rays, rp_hits, em_hits, check));
    for (int r = 0; r < runs; ++r) {
      progress.step("batch " + runs_label(r));
      start = Clock::now();
      batch = picker.intersect_batch(set.rays, options);
      rp_b.push_back(ms_since(start));
      if (r == 0) compare_exact(rp_hits, batch, "raypick", check);
      start = Clock::now();
      batch = embree.intersect_batch(set.rays);
      em_b.push_back(ms_since(start));
      if (r == 0) compare_exact(em_hits, batch, "embree", check);
    }
    // Embree's packet API: 4x4 pixel tiles of camera rays (coherent), 16
    // consecutive rays otherwise. Checked as Embree's single rays are:
    // against raypick's answers.
    const std::vector<std::uint32_t> lanes =
        set.width > 0 ? tools::tile_lanes(set.width, set.height)
                      : tools::block_lanes(count);
    std::vector<double> em_p;
    for (int r = 0; r < runs; ++r) {
      progress.step("packets " + runs_label(r));
      start = Clock::now();
      batch = embree.intersect_packets(set.rays, lanes, set.width > 0);
      em_p.push_back(ms_since(start));
      if (r == 0) {
        Check packet_check;
        compare_answers(scene, mode, set.rays, rp_hits, batch, packet_check);
        if (!packet_check.ok) check.fail("embree packets: " + packet_check.why);
      }
    }
    auto mrays = [&](const std::vector<double>& ms) {
      const double m = median(ms);
      return m > 0.0 ? double(count) / (m * 1e3) : 0.0;
    };
    const Tally tr = tally(rp_hits), te = tally(em_hits);
    res.raypick.kinds.push_back({mrays(rp_s), mrays(rp_b), 0.0, tr.hits, tr.sum_t});
    res.embree.kinds.push_back(
        {mrays(em_s), mrays(em_b), mrays(em_p), te.hits, te.sum_t});
  }

  // ---- update: move every object by a small random translation, then
  // raypick refits (set_matrix + commit) and Embree recommits.
  progress.phase(name + ": update (move all " +
                 std::to_string(scene.objects.size()) + " objects)");
  const float amount = tools::move_amount(scene);
  std::vector<glm::mat4> current = tools::object_matrices(scene);
  std::vector<double> rp_set, rp_commit, em_set, em_commit;
  const auto n = static_cast<std::uint32_t>(current.size());
  for (int r = 0; r < runs; ++r) {
    progress.step(runs_label(r));
    current = tools::moved_matrices(current, amount, seed * 7919 + 101 + r);
    start = Clock::now();
    for (std::uint32_t i = 0; i < n; ++i) picker.set_matrix(i, current[i]);
    rp_set.push_back(ms_since(start));
    start = Clock::now();
    res.update_rebuilt = picker.commit().rebuilt || res.update_rebuilt;
    rp_commit.push_back(ms_since(start));
    start = Clock::now();
    for (std::uint32_t i = 0; i < n; ++i) embree.set_matrix(i, current[i]);
    em_set.push_back(ms_since(start));
    start = Clock::now();
    embree.commit();
    em_commit.push_back(ms_since(start));
  }
  auto total = [](const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> s(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) s[i] = a[i] + b[i];
    return median(s);
  };
  res.raypick.update_ms = total(rp_set, rp_commit);
  res.raypick.update_set_ms = median(rp_set);
  res.raypick.update_commit_ms = median(rp_commit);
  res.embree.update_ms = total(em_set, em_commit);
  res.embree.update_set_ms = median(em_set);
  res.embree.update_commit_ms = median(em_commit);
  // The moved scene must still give the same answers.
  if (!sets.empty()) {
    const std::size_t k = std::min(kUpdateCheckRays, sets[0].rays.size());
    rp_hits.resize(k);
    em_hits.resize(k);
    for (std::size_t i = 0; i < k; ++i) {
      rp_hits[i] = picker.intersect(sets[0].rays[i], options);
      em_hits[i] = embree.intersect(sets[0].rays[i]);
    }
    // The reference judges boundary rays on the moved scene (mesh mode).
    Scene moved;
    if (mode == PickMode::kMesh) {
      moved = scene;
      for (std::size_t i = 0; i < moved.objects.size(); ++i) {
        moved.objects[i].matrix = current[i];
      }
    }
    compare_answers(mode == PickMode::kMesh ? moved : scene, mode,
                    std::span<const Ray>(sets[0].rays).first(k), rp_hits,
                    em_hits, res.update_check);
    if (!res.update_check.ok) {
      res.update_check.why = "after the moves: " + res.update_check.why;
    }
  }
  progress.clear();
  return res;
}

// ------------------------------------------------------------- output ---

const char* kHeader =
    "scene            n mode rays       thr system   build ms  update ms   "
    "Mrays/s  batch Mr/s  pkt16 Mr/s    RSS MB arrays MB       hits  check\n";

std::string ratio(double a, double b) {
  if (!(b > 0.0) || !(a >= 0.0)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", a / b);
  return buf;
}

void print_rows(const SceneSpec& spec, std::size_t objects, PickMode mode,
                int threads, const std::vector<RaySet>& sets,
                const ConfigResult& res) {
  const char* mode_name = mode == PickMode::kObb ? "obb" : "mesh";
  const double mb = 1.0 / (1024.0 * 1024.0);
  for (std::size_t k = 0; k < sets.size(); ++k) {
    Check check = res.checks[k];
    if (!res.update_check.ok) check.fail(res.update_check.why);
    std::string verdict = check.ok ? "ok" : "VOID: " + check.why;
    if (check.ok && res.boundary_rays[k] > 0) {
      verdict += " (" + std::to_string(res.boundary_rays[k]) + " boundary rays)";
    }
    char lead[64];
    std::snprintf(lead, sizeof lead, "%-10.10s %7zu %-4s %-10s %3d", spec.label().c_str(),
                  objects, mode_name, sets[k].kind.c_str(), threads);
    const std::string blank(std::string(lead).size(), ' ');
    auto line = [&](const std::string& first, const char* system,
                    const SystemFigures& f) {
      const PerKind& p = f.kinds[k];
      char arr[16] = "        -";
      if (f.array_bytes > 0) {
        std::snprintf(arr, sizeof arr, "%9.1f", double(f.array_bytes) * mb);
      }
      char packet[16] = "          -";
      if (p.mrays_packet > 0.0) {
        std::snprintf(packet, sizeof packet, "%11.3f", p.mrays_packet);
      }
      std::printf("%s %-7s %10.2f %10.2f %9.3f %11.3f %s %9.1f %s %10zu  %s\n",
                  first.c_str(), system, f.build_ms, f.update_ms, p.mrays,
                  p.mrays_batch, packet, double(f.rss_bytes) * mb, arr, p.hits,
                  verdict.c_str());
    };
    line(lead, "raypick", res.raypick);
    line(blank, "embree", res.embree);
    const PerKind& r = res.raypick.kinds[k];
    const PerKind& e = res.embree.kinds[k];
    // The packet column's ratio: raypick's batch against Embree's best
    // batch figure, rtcIntersect1 loop or rtcIntersect16 packets.
    std::printf("%s %-7s %10s %10s %9s %11s %11s %9s\n", blank.c_str(), "ratio",
                ratio(res.raypick.build_ms, res.embree.build_ms).c_str(),
                ratio(res.raypick.update_ms, res.embree.update_ms).c_str(),
                ratio(r.mrays, e.mrays).c_str(),
                ratio(r.mrays_batch, e.mrays_batch).c_str(),
                ratio(r.mrays_batch, std::max(e.mrays_batch, e.mrays_packet)).c_str(),
                ratio(double(res.raypick.rss_bytes), double(res.embree.rss_bytes)).c_str());
  }
  std::fflush(stdout);
}

void add_json_rows(nlohmann::json& rows, const SceneSpec& spec,
                   std::size_t objects, PickMode mode, int threads, int runs,
                   const std::vector<RaySet>& sets, const ConfigResult& res) {
  for (std::size_t k = 0; k < sets.size(); ++k) {
    Check check = res.checks[k];
    if (!res.update_check.ok) check.fail(res.update_check.why);
    for (int s = 0; s < 2; ++s) {
      const SystemFigures& f = s == 0 ? res.raypick : res.embree;
      const PerKind& p = f.kinds[k];
      nlohmann::json row = {
          {"scene", spec.json_name()},
          {"n", objects},
          {"mode", mode == PickMode::kObb ? "obb" : "mesh"},
          {"rays", sets[k].kind},
          {"system", s == 0 ? "raypick" : "embree"},
          {"build_ms", f.build_ms},
          {"update_ms", f.update_ms},
          {"mrays", p.mrays},
          {"threads", threads},
          {"bytes", f.rss_bytes},
          // Beyond the keys:
          {"mrays_batch", p.mrays_batch},
          {"mrays_packet", p.mrays_packet},
          {"update_set_ms", f.update_set_ms},
          {"update_commit_ms", f.update_commit_ms},
          {"ray_count", sets[k].rays.size()},
          {"hits", p.hits},
          {"sum_t", p.sum_t},
          {"runs", runs},
          {"valid", check.ok},
          {"boundary_rays", res.boundary_rays[k]},
          {"array_bytes", f.array_bytes},
      };
      if (s == 0) row["update_rebuilt"] = res.update_rebuilt;
      if (!check.ok) row["void_reason"] = check.why;
      rows.push_back(std::move(row));
    }
  }
}

// --profile: builds only `system`'s structure and runs only its single-ray
// loop, `passes` times over each ray set, for a profiler (cachegrind) to
// count. Two runs that differ only in --profile-passes differ by exactly
// one warm pass over the rays. Prints one line per ray set.
void profile_config(const Scene& scene, PickMode mode,
                    const std::vector<RaySet>& sets, const std::string& system,
                    int passes, const std::string& name) {
  const QueryOptions options{mode};
  std::optional<Picker> picker;
  std::optional<tools::EmbreeDevice> device;
  std::optional<tools::EmbreeBenchScene> embree;
  if (system == "raypick") {
    PickerConfig config;
    config.mesh_mode = mode == PickMode::kMesh;
    picker.emplace(scene, config);
  } else {
    device.emplace(1);
    embree.emplace(*device, scene, mode);
  }
  for (const RaySet& set : sets) {
    std::vector<Hit> hits(set.rays.size());
    for (int pass = 0; pass < passes; ++pass) {
      for (std::size_t i = 0; i < set.rays.size(); ++i) {
        hits[i] = picker ? picker->intersect(set.rays[i], options)
                         : embree->intersect(set.rays[i]);
      }
    }
    const Tally t = tally(hits);
    std::printf("profile %s %s %s: %zu rays x %d passes, %zu hits\n",
                system.c_str(), name.c_str(), set.kind.c_str(), set.rays.size(),
                passes, t.hits);
  }
  std::fflush(stdout);
}

// The marquee row: Picker::select (touch, obb) of the middle quarter of
// the bench camera's view (half its width by half its height), timed as the
// median of `runs`, against brute force: core's exact OBB test
// (box_touches) on every object, once. Adds one line to `lines` (printed
// after the table); false when the two answers differ.
bool select_row(const Scene& scene, const Aabb& bounds, int width, int height,
                int runs, const std::string& name, Progress& progress, std::string& lines) {
  progress.phase(name + ": select a quarter of the view");
  const tools::Camera bc = tools::make_camera(bounds);
  CameraSpec spec;
  spec.eye = glm::dvec3(bc.eye);
  spec.target = glm::dvec3(bc.eye) + glm::dvec3(bc.forward);
  spec.up = glm::dvec3(bc.up);
  spec.width = width;
  spec.height = height;
  const raypick::Camera cam(spec);
  const Frustum region = cam.frustum(width / 4.0, height / 4.0, 3.0 * width / 4.0, 3.0 * height / 4.0);
  PickerConfig config;
  config.mesh_mode = false;
  const Picker picker(scene, config);
  std::vector<double> ms;
  std::vector<std::uint32_t> got;
  for (int r = 0; r < runs; ++r) {
    const auto start = Clock::now();
    got = picker.select(region, SelectRule::kTouch);
    ms.push_back(ms_since(start));
  }
  progress.step("(brute force)");
  auto start = Clock::now();
  std::vector<std::uint32_t> want;
  for (std::uint32_t id = 0; id < picker.object_count(); ++id) {
    const Obb obb = picker.obb(id);
    if (!obb.invertible || obb.local.empty()) continue;
    if (box_touches(region, glm::mat4x3(obb.to_world), obb.local)) want.push_back(id);
  }
  const double brute_ms = ms_since(start);
  progress.clear();
  const bool ok = got == want;
  char line[320];
  std::snprintf(line, sizeof line,
                "select %-14s touch obb, middle quarter of the view: %zu of %zu objects "
                "selected in %.2f ms; brute force %.2f ms (%s); %s\n",
                name.c_str(), got.size(), scene.objects.size(), median(ms), brute_ms,
                ratio(brute_ms, median(ms)).c_str(), ok ? "ok" : "VOID: answers differ");
  lines += line;
  return ok;
}

}  // namespace

// ------------------------------------------------------------ command ---

BenchCommand::BenchCommand(CLI::App& app)
    : args_(std::make_unique<BenchArgs>()) {
  BenchArgs& a = *args_;
  cmd_ = app.add_subcommand(
      "bench",
      "Race raypick against Embree's best configuration on generated scenes "
      "(boxes-N, crowd-N) or scene files; answers checked, median of runs");
  cmd_->add_option("SCENE", a.files, "Scene files to bench (as --scene FILE)");
  cmd_->add_option("--scene", a.scenes,
                   "boxes, crowd or a scene file; repeatable or a list "
                   "(default: boxes,crowd)")
      ->delimiter(',');
  cmd_->add_option("--n", a.n,
                   "Objects in generated scenes; repeatable or a list "
                   "(default: boxes 10000,1000000; crowd 300,10000)")
      ->delimiter(',')
      ->transform(whole_number(1, 100000000));
  cmd_->add_option("--mode", a.mode,
                   "obb, mesh, both, or auto (default): obb for boxes and "
                   "files, mesh for crowd")
      ->check(CLI::IsMember({"obb", "mesh", "both", "auto"}));
  cmd_->add_option("--ray-kind", a.ray_kind,
                   "incoherent, camera or both (default)")
      ->check(CLI::IsMember({"incoherent", "camera", "both"}));
  a.rays_opt = cmd_->add_option("--rays", a.rays, "Incoherent rays")
                   ->capture_default_str()
                   ->transform(whole_number(1, 100000000));
  a.camera_opt = cmd_->add_option("--camera", a.camera,
                                  "Camera rays: WxH pixels, 60 degree field "
                                  "of view")
                     ->capture_default_str();
  a.runs_opt = cmd_->add_option("--runs", a.runs,
                                "Runs of every measurement; the median is "
                                "reported")
                   ->capture_default_str()
                   ->transform(whole_number(1, 1000));
  cmd_->add_option("--threads", a.threads,
                   "Threads (Embree device and TBB) for builds and batch "
                   "queries; a list runs each (default 1)")
      ->delimiter(',')
      ->transform(whole_number(1, 1024));
  cmd_->add_option("--seed", a.seed, "Seed of scenes and rays")
      ->capture_default_str()
      ->transform(whole_number(0));
  cmd_->add_option("--json", a.json, "Also write the rows to FILE as JSON");
  cmd_->add_option("--model", a.model, "The crowd scenes' model")
      ->capture_default_str();
  cmd_->add_option("--offset", a.offset,
                   "X,Y,Z: move every object of every scene by this offset "
                   "(a scene far from the origin)")
      ->delimiter(',')
      ->expected(3)
      ->check(CLI::Range(-1e30, 1e30));
  cmd_->add_flag("--quick", a.quick,
                 "Tiny sizes for CI: boxes 1000, crowd 10, 10000 rays, "
                 "camera 64x64, 1 run (options given explicitly win)");
  cmd_->add_option("--profile", a.profile,
                   "raypick or embree: build and run only that system's "
                   "single-ray loop (no timing, no checks), for a profiler")
      ->check(CLI::IsMember({"raypick", "embree"}));
  cmd_->add_option("--profile-passes", a.profile_passes,
                   "With --profile: passes of the single-ray loop over the rays")
      ->capture_default_str()
      ->transform(whole_number(0, 1000));
  add_load_options(*cmd_, a.load);
}

BenchCommand::~BenchCommand() = default;

BenchCommand::operator bool() const { return cmd_->parsed(); }

int BenchCommand::run() const {
  const BenchArgs& a = *args_;
  std::size_t ray_count = a.rays;
  std::string camera_text = a.camera;
  int runs = a.runs;
  if (a.quick) {
    if (a.rays_opt->count() == 0) ray_count = 10000;
    if (a.camera_opt->count() == 0) camera_text = "64x64";
    if (a.runs_opt->count() == 0) runs = 1;
  }
  const auto resolution = tools::parse_resolution(camera_text);
  if (!resolution) {
    return fail(kExitUsage, "bench: --camera '" + camera_text +
                                "': expected WxH, e.g. 1024x1024");
  }
  const bool want_incoherent = a.ray_kind != "camera";
  const bool want_camera = a.ray_kind != "incoherent";

  // The plan: scenes in the order given, each with its sizes and modes.
  std::vector<std::string> names = a.scenes;
  names.insert(names.end(), a.files.begin(), a.files.end());
  if (names.empty()) names = {"boxes", "crowd"};
  std::vector<SceneSpec> specs;
  for (const std::string& name : names) {
    if (name == "boxes" || name == "crowd") {
      std::vector<std::size_t> sizes = a.n;
      if (sizes.empty()) {
        if (a.quick) {
          sizes = {name == "boxes" ? std::size_t{1000} : std::size_t{10}};
        } else if (name == "boxes") {
          sizes = {10000, 1000000};
        } else {
          sizes = {300, 10000};
        }
      }
      for (std::size_t n : sizes) specs.push_back({name, "", n});
    } else {
      specs.push_back({"file", name, 0});
    }
  }
  auto modes_of = [&](const SceneSpec& s) -> std::vector<PickMode> {
    if (a.mode == "obb") return {PickMode::kObb};
    if (a.mode == "mesh") return {PickMode::kMesh};
    if (a.mode == "both") return {PickMode::kObb, PickMode::kMesh};
    return {s.kind == "crowd" ? PickMode::kMesh : PickMode::kObb};
  };

  std::optional<Mesh> crowd_model;
  for (const SceneSpec& s : specs) {
    if (s.kind != "crowd" || crowd_model) continue;
    LoadResult r = load_scene(a.model, a.load);
    if (!r.ok()) {
      return fail(r.error().kind == LoadError::Kind::kUnsupported ? kExitUsage
                                                                  : kExitVoid,
                  r.error().to_string());
    }
    crowd_model = tools::merge_into_one_mesh(r.scene());
  }

  // Inputs and outputs are checked before anything is printed: every scene
  // file is loaded now (and kept until its turn), the JSON file opened.
  std::ofstream json_out;
  if (!a.json.empty()) {
    const std::string error = open_for_writing(json_out, a.json, "JSON");
    if (!error.empty()) return fail(kExitVoid, error);
  }
  std::vector<Scene> file_scenes(specs.size());
  for (std::size_t k = 0; k < specs.size(); ++k) {
    if (specs[k].kind != "file") continue;
    LoadResult r = load_scene(specs[k].path, a.load);
    if (!r.ok()) {
      return fail(r.error().kind == LoadError::Kind::kUnsupported ? kExitUsage
                                                                  : kExitVoid,
                  r.error().to_string());
    }
    if (tools::scene_bounds(r.scene()).empty()) {
      return fail(kExitVoid, specs[k].path + ": no object can be hit");
    }
    file_scenes[k] = std::move(r.scene());
  }

  if (a.profile.empty()) {  // --profile prints only its own lines
    std::printf("raypick bench: raypick vs Embree %s on %s (%s, %u hardware "
                "threads); median of %d run%s\n",
                tools::EmbreeDevice::version(), cpu_name().c_str(), cpu_isa(),
                std::thread::hardware_concurrency(), runs, runs == 1 ? "" : "s");
    std::printf("rays: ");
    if (want_incoherent) std::printf("incoherent %zu (seed %llu)%s", ray_count,
                                     static_cast<unsigned long long>(a.seed),
                                     want_camera ? ", " : "");
    if (want_camera) std::printf("camera %dx%d (60 degree fov)", resolution->first,
                                 resolution->second);
    if (!a.offset.empty()) {
      std::printf("\noffset: every object moved by (%.9g, %.9g, %.9g)", a.offset[0],
                  a.offset[1], a.offset[2]);
    }
    std::printf("\nembree: obb = one USER geometry running raypick's obb_entry; "
                "mesh = one triangle geometry per mesh, instanced; "
                "RTC_SCENE_FLAG_NONE, build quality MEDIUM, rtcIntersect1; "
                "batch = tbb::parallel_for over rtcIntersect1; pkt16 = rtcIntersect16 "
                "over 4x4 camera tiles or 16-ray blocks (ratio: raypick batch / best "
                "embree batch)\n");
    std::printf("ratio = raypick / embree (build, update, RSS: lower is "
                "better; Mrays/s: higher is better)\n\n");
    std::fputs(kHeader, stdout);
    std::fflush(stdout);
  }

  const double load_before = load_average();
  Progress progress;
  std::string select_lines;  // the marquee rows, after the table
  nlohmann::json rows = nlohmann::json::array();
  bool all_ok = true;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    const SceneSpec& spec = specs[k];
    Scene scene;
    if (spec.kind == "boxes") {
      progress.phase("generating boxes-" + std::to_string(spec.n));
      scene = tools::make_boxes_scene(spec.n, a.seed);
    } else if (spec.kind == "crowd") {
      progress.phase("generating crowd-" + std::to_string(spec.n));
      scene = tools::make_crowd_scene(*crowd_model, spec.n, a.seed);
    } else {
      scene = std::move(file_scenes[k]);
    }
    if (!a.offset.empty()) {
      tools::shift_scene(scene, {a.offset[0], a.offset[1], a.offset[2]});
    }
    const Aabb bounds = tools::scene_bounds(scene);
    if (bounds.empty()) {
      return fail(kExitVoid, spec.label() + ": no object can be hit");
    }
    std::vector<RaySet> sets;
    if (want_incoherent) {
      sets.push_back({"incoherent",
                      tools::make_incoherent_rays(bounds, ray_count, a.seed)});
    }
    if (want_camera) {
      sets.push_back({"camera",
                      tools::make_camera_rays(tools::make_camera(bounds),
                                              resolution->first, resolution->second),
                      resolution->first, resolution->second});
    }
    const std::vector<PickMode> modes = modes_of(spec);
    if (!a.profile.empty()) {
      for (PickMode mode : modes) {
        profile_config(scene, mode, sets, a.profile, a.profile_passes,
                       (spec.kind == "file" ? spec.label()
                                            : spec.kind + "-" + std::to_string(spec.n)) +
                           (mode == PickMode::kObb ? " obb" : " mesh"));
      }
      continue;
    }
    for (PickMode mode : modes) {
      for (int threads : a.threads) {
        // Caps TBB (raypick's batch queries, and any parallel build) at the
        // same count as the Embree device.
        const tbb::global_control cap(
            tbb::global_control::max_allowed_parallelism,
            static_cast<std::size_t>(threads));
        const std::string name =
            (spec.kind == "file" ? spec.label()
                                 : spec.kind + "-" + std::to_string(spec.n)) +
            (mode == PickMode::kObb ? " obb" : " mesh") + " threads=" +
            std::to_string(threads);
        const ConfigResult res = run_config(scene, mode, sets, runs, threads,
                                            a.seed, name, progress);
        print_rows(spec, scene.objects.size(), mode, threads, sets, res);
        add_json_rows(rows, spec, scene.objects.size(), mode, threads, runs,
                      sets, res);
        for (const Check& c : res.checks) all_ok = all_ok && c.ok;
        all_ok = all_ok && res.update_check.ok;
      }
    }
    if (want_camera && std::find(modes.begin(), modes.end(), PickMode::kObb) != modes.end()) {
      const std::string label =
          spec.kind == "file" ? spec.label() : spec.kind + "-" + std::to_string(spec.n);
      all_ok = select_row(scene, bounds, resolution->first, resolution->second, runs, label,
                          progress, select_lines) && all_ok;
    }
  }
  progress.clear();
  if (!select_lines.empty()) {
    std::printf("\n%s", select_lines.c_str());
    std::fflush(stdout);
  }
  if (!a.json.empty()) {
    // Where the figures come from, on every row (for tools/bench_table.py).
    char cpu[256];
    std::snprintf(cpu, sizeof cpu, "%s (%s, %u hardware threads)", cpu_name().c_str(),
                  cpu_isa(), std::thread::hardware_concurrency());
    for (auto& row : rows) {
      row["cpu"] = cpu;
      row["embree_version"] = tools::EmbreeDevice::version();
      row["load_before"] = load_before;
      row["load_after"] = load_average();
    }
    json_out << rows.dump(2) << "\n";
    json_out.flush();
    if (!json_out) {
      return fail(kExitVoid, a.json + ": cannot write the JSON file");
    }
  }
  if (cli::finish_output(0) != 0) return kExitVoid;
  if (!all_ok) {
    return fail(kExitVoid,
                "bench: VOID rows: raypick and Embree computed different "
                "answers, so their speeds do not compare");
  }
  return 0;
}

}  // namespace raypick::cli
