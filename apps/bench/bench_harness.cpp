// The engine of `raypick bench`: raypick and Embree's best configuration,
// side by side on the same scenes and rays, answers checked against each
// other. The workloads are in bench_scenes.h and scene_gen.h, the Embree
// side in apps/reference (embree_bench.h); this file runs, times, checks
// and prints. The command's options are apps/cli/bench.cpp.
#include "bench_harness.h"
#include "common.h"

#include "bench_scenes.h"
#include "embree_bench.h"
#include "embree_points.h"
#include "output_file.h"
#include "reference.h"
#include "scene_gen.h"
#include "validate.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/scene.h"
#include "raypick/core/text.h"
#include "raypick/loaders/load.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <malloc.h>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace raypick::bench {

using namespace cli;  // the commands' messages, checked output, modes and timing

namespace {

constexpr int kExitVoid = kExitBadInput;  // a VOID row or a file problem
// Mesh mode: at most this fraction of the rays may be excused as boundary
// rays (see compare_answers).
constexpr double kMaxBoundaryFraction = 1e-4;
// Rays re-checked after the moves (the update row's answers).
constexpr std::size_t kUpdateCheckRays = 65536;

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
  // raypick: the top level's SAH cost after the build (BvhStats::sah_cost),
  // the tree quality the build time buys; Embree does not report its own.
  double sah_cost = 0.0;
  std::vector<PerKind> kinds;     // by ray set
};
struct Check {
  bool ok = true;
  std::string why;
  // Mesh mode: rays whose answers differ beyond the agreement tolerance,
  // not at a boundary, where the double-precision reference does not refute
  // raypick's answer (Embree's float instancing far from the origin);
  // counted, not voiding.
  std::size_t judged = 0;
  void refute(const std::string& reason) {
    if (ok) why = reason;
    ok = false;
  }
};
struct ConfigResult {
  SystemFigures raypick, embree;
  // By ray set: the set's own checks, then the answers after the moves
  // (one failure there voids every row of the configuration). Decided once
  // by ConfigRun::finish(), printed and written as they are.
  std::vector<Check> checks;
  std::vector<std::size_t> boundary_rays; // by ray set (mesh mode)
  bool update_rebuilt = false;
  Isa node_test = Isa::kAuto;  // what raypick's picker ran (Picker::isa())
  int top_width = 0;           // and its top level's width (Picker::top_width())

  bool ok() const {
    return std::all_of(checks.begin(), checks.end(),
                       [](const Check& c) { return c.ok; });
  }
  // The table's check column for ray set `k`.
  std::string verdict(std::size_t k) const {
    if (!checks[k].ok) return "VOID: " + checks[k].why;
    std::string notes;
    if (boundary_rays[k] != 0) notes = std::to_string(boundary_rays[k]) + " boundary rays";
    if (checks[k].judged != 0) {
      notes += (notes.empty() ? "" : ", ") + std::to_string(checks[k].judged) +
               " judged by the reference";
    }
    return notes.empty() ? "ok" : "ok (" + notes + ")";
  }
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
// obb mode: Embree runs raypick's own leaf test, so every ray must name the
// same object at the same t, bit for bit.
//
// mesh mode: Embree's triangle test is not watertight and carries the ray
// into an instance's frame by its own float inverse, so a ray within
// rounding of a triangle's edge, or nearly in its plane, may hit in one
// system and slip through (or hit something further) in the other. By
// validate's rule (tools::Agreement over the scene's world_bounds), two
// hits agree when their t are within kTol * scale, whatever object they
// name (a tie). A ray whose answers differ beyond that (hit vs miss, or t
// further apart) is judged by validate's rule (tools::classify, the
// double-precision reference): a boundary ray when the reference finds it
// within rounding of a triangle's edges or plane, judged (check.judged)
// when it does not refute raypick's answer (Embree's float instancing
// loses precision far from the origin, bench --offset, where its t strays
// beyond the tolerance or it hits the wrong surface). Any other ray (raypick
// refuted by the reference) makes the row VOID, and so do more than
// kMaxBoundaryFraction boundary rays, except for a scene moved by
// --offset (`offset`), where the reference's rounding margins grow with
// the distance and Embree's float instancing puts many rays there.
std::size_t compare_answers(const Scene& scene, PickMode mode, bool offset,
                            std::span<const Ray> rays,
                            const std::vector<Hit>& a,
                            const std::vector<Hit>& b, Check& check) {
  const Tally ta = tally(a), tb = tally(b);
  char buf[320];
  if (mode == PickMode::kObb) {
    std::size_t differ = 0, first = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].object == b[i].object && a[i].t == b[i].t) continue;
      if (differ++ == 0) first = i;
    }
    if (differ > 0) {
      std::snprintf(buf, sizeof buf,
                    "%zu rays differ (first: ray %zu, raypick object %u t %.9g, "
                    "embree object %u t %.9g); hits %zu vs %zu",
                    differ, first, a[first].object, a[first].t, b[first].object,
                    b[first].t, ta.hits, tb.hits);
      check.refute(buf);
    }
    return 0;
  }
  const tools::Agreement agreement(world_bounds(scene));
  std::optional<tools::SceneReference> ref;
  std::size_t boundary = 0, real = 0, first = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (agreement.same_t(a[i], b[i], rays[i])) continue;
    if (!ref) ref.emplace(scene);
    const tools::Verdict v = tools::classify(*ref, agreement, mode, rays[i], a[i], b[i]);
    if (v == tools::Verdict::kBoundary) {
      ++boundary;
    } else if (v != tools::Verdict::kMismatch) {
      ++check.judged;
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
    check.refute(buf);
  } else if (!offset && double(boundary) > kMaxBoundaryFraction * double(a.size())) {
    std::snprintf(buf, sizeof buf,
                  "%zu boundary rays (more than %.0e of the rays); hits %zu "
                  "vs %zu",
                  boundary, kMaxBoundaryFraction, ta.hits, tb.hits);
    check.refute(buf);
  }
  return boundary;
}

// Batch answers must be exactly the single-ray answers.
void compare_exact(const std::vector<Hit>& single, const std::vector<Hit>& batch,
                   const char* system, Check& check) {
  for (std::size_t i = 0; i < single.size(); ++i) {
    if (single[i].object != batch[i].object || single[i].t != batch[i].t) {
      check.refute(std::string(system) + " batch differs from single rays at ray " +
                   std::to_string(i));
      return;
    }
  }
}

// The median of `ms` as millions of `count` rays per second; 0 when the
// median is 0.
double mrays(std::size_t count, const std::vector<double>& ms) {
  const double m = median(ms);
  return m > 0.0 ? double(count) / (m * 1e3) : 0.0;
}

// PickerConfig::isa's name in the bench's options and JSON.
const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAuto:
      return "auto";
    case Isa::kSse2:
      return "sse2";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "?";
}

// --isa and --top-width: raypick's node test and top-level width.
struct NodeChoice {
  Isa isa = Isa::kAuto;
  int top_width = 0;
};

NodeChoice node_of(const Bench& a) { return {a.isa, a.top_width}; }

// The bench's picker configuration: the commands' (picker_config) with
// the node test and width asked for.
PickerConfig bench_picker_config(PickMode mode, NodeChoice node) {
  PickerConfig config = picker_config(mode);
  config.isa = node.isa;
  config.top_width = node.top_width;
  return config;
}

// One (scene, mode, threads) configuration, measured in steps: build(),
// query() on each ray set, update(), check_update(); finish() decides the
// rows' verdicts and hands the figures over.
class ConfigRun {
 public:
  ConfigRun(const Scene& scene, PickMode mode, NodeChoice node, bool offset, int runs, int threads,
            std::string name, Progress& progress)
      : scene_(scene), mode_(mode), offset_(offset), runs_(runs), name_(std::move(name)),
        progress_(progress), config_(bench_picker_config(mode, node)), options_{mode},
        device_(threads) {}

  // Builds both structures `runs` times; the first build of each is kept
  // and measured for memory, the median time is the build figure.
  void build() {
    progress_.phase(name_ + ": build");
    std::vector<double> rp_build, em_build;
    std::size_t rss0 = trimmed_resident_bytes();
    auto start = Clock::now();
    picker_.emplace(scene_, config_);
    rp_build.push_back(ms_since(start));
    res_.node_test = picker_->isa();
    res_.top_width = picker_->top_width();
    std::size_t rss1 = trimmed_resident_bytes();
    res_.raypick.rss_bytes = rss1 > rss0 ? rss1 - rss0 : 0;
    res_.raypick.array_bytes = picker_->memory_bytes();
    res_.raypick.sah_cost = picker_->bvh_stats().sah_cost;
    rss0 = rss1;
    start = Clock::now();
    embree_.emplace(device_, scene_, mode_);
    em_build.push_back(ms_since(start));
    rss1 = trimmed_resident_bytes();
    res_.embree.rss_bytes = rss1 > rss0 ? rss1 - rss0 : 0;
    res_.embree.array_bytes = embree_->user_data_bytes();
    for (int r = 1; r < runs_; ++r) {
      progress_.step(runs_label(r));
      {
        start = Clock::now();
        const Picker p(scene_, config_);
        rp_build.push_back(ms_since(start));
      }
      {
        start = Clock::now();
        const tools::EmbreeBenchScene e(device_, scene_, mode_);
        em_build.push_back(ms_since(start));
      }
    }
    res_.raypick.build_ms = median(rp_build);
    res_.embree.build_ms = median(em_build);
  }

  // Single rays, batches and Embree's packets, back to back on the same
  // rays, each checked against the other system or the single rays.
  void query(const RaySet& set) {
    progress_.phase(name_ + ": " + set.kind + " rays");
    Check& check = res_.checks.emplace_back();
    std::vector<double> rp_s, em_s;
    time_single(set, rp_s, em_s);
    res_.boundary_rays.push_back(
        compare_answers(scene_, mode_, offset_, set.rays, rp_hits_, em_hits_, check));
    std::vector<double> rp_b, em_b;
    std::vector<Hit> batch;
    for (int r = 0; r < runs_; ++r) {
      progress_.step("batch " + runs_label(r));
      auto start = Clock::now();
      // A camera's rays as the image they are (4x4 tiles on a large tree,
      // as Embree's packets get them); other rays as a plain batch.
      batch = set.width > 0 ? picker_->intersect_image(set.rays, std::size_t(set.width), options_)
                            : picker_->intersect_batch(set.rays, options_);
      rp_b.push_back(ms_since(start));
      if (r == 0) compare_exact(rp_hits_, batch, "raypick", check);
      start = Clock::now();
      batch = embree_->intersect_batch(set.rays);
      em_b.push_back(ms_since(start));
      if (r == 0) compare_exact(em_hits_, batch, "embree", check);
    }
    const std::vector<double> em_p = time_packets(set, check);
    const std::size_t count = set.rays.size();
    const Tally tr = tally(rp_hits_), te = tally(em_hits_);
    res_.raypick.kinds.push_back(
        {mrays(count, rp_s), mrays(count, rp_b), 0.0, tr.hits, tr.sum_t});
    res_.embree.kinds.push_back({mrays(count, em_s), mrays(count, em_b),
                                 mrays(count, em_p), te.hits, te.sum_t});
  }

  // Moves every object by a small random translation, `runs` times: raypick
  // refits (set_matrix + commit), Embree recommits.
  void update(std::uint64_t seed) {
    progress_.phase(name_ + ": update (move all " +
                    std::to_string(scene_.objects.size()) + " objects)");
    const float amount = tools::move_amount(scene_);
    matrices_ = tools::object_matrices(scene_);
    std::vector<double> rp_set, rp_commit, em_set, em_commit;
    const auto n = static_cast<std::uint32_t>(matrices_.size());
    for (int r = 0; r < runs_; ++r) {
      progress_.step(runs_label(r));
      matrices_ = tools::moved_matrices(matrices_, amount, seed * 7919 + 101 + r);
      auto start = Clock::now();
      for (std::uint32_t i = 0; i < n; ++i) picker_->set_matrix(i, matrices_[i]);
      rp_set.push_back(ms_since(start));
      start = Clock::now();
      res_.update_rebuilt = picker_->commit().rebuilt || res_.update_rebuilt;
      rp_commit.push_back(ms_since(start));
      start = Clock::now();
      for (std::uint32_t i = 0; i < n; ++i) embree_->set_matrix(i, matrices_[i]);
      em_set.push_back(ms_since(start));
      start = Clock::now();
      embree_->commit();
      em_commit.push_back(ms_since(start));
    }
    set_update_figures(res_.raypick, rp_set, rp_commit);
    set_update_figures(res_.embree, em_set, em_commit);
  }

  // The moved scene must still give the same answers: the first
  // kUpdateCheckRays rays of `set`, single rays in both systems.
  void check_update(const RaySet& set) {
    const std::size_t k = std::min(kUpdateCheckRays, set.rays.size());
    rp_hits_.resize(k);
    em_hits_.resize(k);
    for (std::size_t i = 0; i < k; ++i) {
      rp_hits_[i] = picker_->intersect(set.rays[i], options_);
      em_hits_[i] = embree_->intersect(set.rays[i]);
    }
    // The reference judges boundary rays on the moved scene (mesh mode).
    Scene moved;
    if (mode_ == PickMode::kMesh) {
      moved = scene_;
      for (std::size_t i = 0; i < moved.objects.size(); ++i) {
        moved.objects[i].matrix = matrices_[i];
        moved.objects[i].translation_low = glm::vec3{0.0f};  // as set_matrix(float)
      }
    }
    compare_answers(mode_ == PickMode::kMesh ? moved : scene_, mode_, offset_,
                    std::span<const Ray>(set.rays).first(k), rp_hits_,
                    em_hits_, update_check_);
  }

  ConfigResult finish() {
    progress_.clear();
    if (!update_check_.ok) {
      for (Check& c : res_.checks) c.refute("after the moves: " + update_check_.why);
    }
    return std::move(res_);
  }

 private:
  std::string runs_label(int r) const {
    return "(run " + std::to_string(r + 1) + "/" + std::to_string(runs_) + ")";
  }

  // Single rays, run by run: raypick's loop, then Embree's; the answers
  // stay in rp_hits_ and em_hits_.
  void time_single(const RaySet& set, std::vector<double>& rp_ms,
                   std::vector<double>& em_ms) {
    rp_hits_.assign(set.rays.size(), Hit{});
    em_hits_.assign(set.rays.size(), Hit{});
    for (int r = 0; r < runs_; ++r) {
      progress_.step("single " + runs_label(r));
      auto start = Clock::now();
      for (std::size_t i = 0; i < set.rays.size(); ++i) {
        rp_hits_[i] = picker_->intersect(set.rays[i], options_);
      }
      rp_ms.push_back(ms_since(start));
      start = Clock::now();
      for (std::size_t i = 0; i < set.rays.size(); ++i) {
        em_hits_[i] = embree_->intersect(set.rays[i]);
      }
      em_ms.push_back(ms_since(start));
    }
  }

  // Embree's packet API: 4x4 pixel tiles of camera rays (coherent), 16
  // consecutive rays otherwise. Checked as Embree's single rays are:
  // against raypick's answers.
  std::vector<double> time_packets(const RaySet& set, Check& check) {
    const std::vector<std::uint32_t> lanes =
        set.width > 0 ? tools::tile_lanes(set.width, set.height)
                      : tools::block_lanes(set.rays.size());
    std::vector<double> ms;
    for (int r = 0; r < runs_; ++r) {
      progress_.step("packets " + runs_label(r));
      const auto start = Clock::now();
      const std::vector<Hit> hits =
          embree_->intersect_packets(set.rays, lanes, set.width > 0);
      ms.push_back(ms_since(start));
      if (r == 0) {
        Check packet_check;
        compare_answers(scene_, mode_, offset_, set.rays, rp_hits_, hits, packet_check);
        if (!packet_check.ok) check.refute("embree packets: " + packet_check.why);
      }
    }
    return ms;
  }

  static void set_update_figures(SystemFigures& f, const std::vector<double>& set,
                                 const std::vector<double>& commit) {
    std::vector<double> total(set.size());
    for (std::size_t i = 0; i < set.size(); ++i) total[i] = set[i] + commit[i];
    f.update_ms = median(total);
    f.update_set_ms = median(set);
    f.update_commit_ms = median(commit);
  }

  const Scene& scene_;
  const PickMode mode_;
  const bool offset_;  // the scene was moved by --offset
  const int runs_;
  const std::string name_;
  Progress& progress_;
  const PickerConfig config_;
  const QueryOptions options_;
  const tools::EmbreeDevice device_;  // outlives embree_
  std::optional<Picker> picker_;
  std::optional<tools::EmbreeBenchScene> embree_;
  std::vector<Hit> rp_hits_, em_hits_;  // the last single-ray answers
  std::vector<glm::mat4> matrices_;     // the objects' matrices after update()
  Check update_check_;
  ConfigResult res_;
};

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
  const double mb = 1.0 / (1024.0 * 1024.0);
  for (std::size_t k = 0; k < sets.size(); ++k) {
    const std::string verdict = res.verdict(k);
    char lead[64];
    std::snprintf(lead, sizeof lead, "%-10.10s %7zu %-4s %-10s %3d", spec.label().c_str(),
                  objects, mode_name(mode), sets[k].kind.c_str(), threads);
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
    const Check& check = res.checks[k];
    for (int s = 0; s < 2; ++s) {
      const SystemFigures& f = s == 0 ? res.raypick : res.embree;
      const PerKind& p = f.kinds[k];
      nlohmann::json row = {
          {"scene", spec.json_name()},
          {"n", objects},
          {"mode", mode_name(mode)},
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
          {"judged_rays", check.judged},
          {"array_bytes", f.array_bytes},
      };
      if (s == 0) row["sah_cost"] = f.sah_cost;
      if (s == 0) row["node_test"] = isa_name(res.node_test);
      if (s == 0) row["top_width"] = res.top_width;
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
void profile_config(const Scene& scene, PickMode mode, NodeChoice node,
                    const std::vector<RaySet>& sets, Profile system,
                    int passes, const std::string& name) {
  const QueryOptions options{mode};
  std::optional<Picker> picker;
  std::optional<tools::EmbreeDevice> device;
  std::optional<tools::EmbreeBenchScene> embree;
  if (system == Profile::kRaypick) {
    picker.emplace(scene, bench_picker_config(mode, node));
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
                picker ? "raypick" : "embree", name.c_str(), set.kind.c_str(), set.rays.size(),
                passes, t.hits);
  }
  std::fflush(stdout);
}

// The marquee row: Picker::select (touch, obb) of the middle quarter of
// the bench camera's view (half its width by half its height), timed as the
// median of `runs`, against brute force: core's exact OBB test
// (box_touches) on every object, once. Adds one line to `lines` (printed
// after the table); false when the two answers differ.
bool select_row(const Scene& scene, NodeChoice node, const Aabb& bounds, int width, int height,
                int runs, const std::string& name, Progress& progress, std::string& lines) {
  progress.phase(name + ": select a quarter of the view");
  CameraSpec spec = tools::make_camera(bounds);
  spec.width = width;
  spec.height = height;
  const raypick::Camera cam(spec);
  const Frustum region = cam.frustum(width / 4.0, height / 4.0, 3.0 * width / 4.0, 3.0 * height / 4.0);
  const Picker picker(scene, bench_picker_config(PickMode::kObb, node));
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
    glm::dmat4x3 w{obb.to_world};
    w[3] += glm::dvec3{obb.origin_low};  // the low part, as Picker::select
    if (box_touches(region, w, obb.local)) want.push_back(id);
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

// The dynamic frame row: an editor's frame, repeated. Each frame moves 1%
// of the objects (at least one; ids and moves drawn from the seed, the same
// for both systems), commits, and picks kFrameRays single rays from the
// bench camera (one thread). raypick against Embree's best dynamic
// configuration: each of tools::EmbreeBuild's builds is run through the same
// frames and the fastest counts. After the frames both must give the same
// answers on the frame's rays (obb mode bit for bit; mesh mode by
// compare_answers' rule on the moved scene). Adds one line to `lines` and
// two JSON rows ("row": "frame"); false when the answers differ.
constexpr int kFrameRays = 1000;
constexpr int kFrames = 20;

bool frame_row(const Scene& scene, PickMode mode, NodeChoice node, bool offset, const Aabb& bounds,
               std::uint64_t seed,
               const std::string& name, Progress& progress, std::string& lines,
               nlohmann::json& rows) {
  const tbb::global_control cap(tbb::global_control::max_allowed_parallelism, 1);
  const std::vector<Ray> rays =
      tools::make_camera_rays(tools::make_camera(bounds), 40, kFrameRays / 40);
  const std::vector<glm::mat4> base = tools::object_matrices(scene);
  const float amount = tools::move_amount(scene);
  const std::size_t n = scene.objects.size();
  const std::size_t k = std::max<std::size_t>(1, n / 100);
  // The frames' moves: which objects, and their new matrices.
  std::vector<std::vector<std::uint32_t>> ids(kFrames);
  std::vector<std::vector<glm::mat4>> moves(kFrames);
  {
    std::mt19937_64 rng(seed * 104729 + 17);
    std::uniform_int_distribution<std::uint32_t> pick(0, static_cast<std::uint32_t>(n - 1));
    std::vector<glm::mat4> current = base;
    for (int f = 0; f < kFrames; ++f) {
      const std::vector<glm::mat4> moved = tools::moved_matrices(current, amount, rng());
      for (std::size_t j = 0; j < k; ++j) {
        const std::uint32_t id = pick(rng);
        ids[f].push_back(id);
        moves[f].push_back(moved[id]);
        current[id] = moved[id];
      }
    }
  }
  // Frame by frame, the median of the frames after the first (warm-up),
  // and the medians of its three parts (moves, commit, rays).
  struct FrameMs {
    double total = 0.0, set = 0.0, commit = 0.0, rays = 0.0;
  };
  auto run_frames = [&](auto& system, auto&& query, std::vector<Hit>& answers) {
    std::vector<double> total, set, commit, cast;
    for (int f = 0; f < kFrames; ++f) {
      const auto start = Clock::now();
      for (std::size_t j = 0; j < k; ++j) system.set_matrix(ids[f][j], moves[f][j]);
      const double t_set = ms_since(start);
      system.commit();
      const double t_commit = ms_since(start);
      for (std::size_t i = 0; i < rays.size(); ++i) answers[i] = query(rays[i]);
      const double t_all = ms_since(start);
      if (f == 0) continue;
      total.push_back(t_all);
      set.push_back(t_set);
      commit.push_back(t_commit - t_set);
      cast.push_back(t_all - t_commit);
    }
    return FrameMs{median(total), median(set), median(commit), median(cast)};
  };
  progress.phase(name + ": dynamic frames (raypick)");
  Picker picker(scene, bench_picker_config(mode, node));
  const QueryOptions options{mode};
  std::vector<Hit> rp_hits(rays.size()), em_hits(rays.size());
  const FrameMs rp = run_frames(picker, [&](const Ray& r) { return picker.intersect(r, options); },
                                 rp_hits);
  const tools::EmbreeDevice device(1);
  FrameMs em;
  tools::EmbreeBuild best = tools::EmbreeBuild::kStatic;
  Check check;
  for (tools::EmbreeBuild build : {tools::EmbreeBuild::kStatic, tools::EmbreeBuild::kDynamicLow,
                                   tools::EmbreeBuild::kDynamicRefit}) {
    if (build == tools::EmbreeBuild::kDynamicRefit && mode != PickMode::kObb) continue;
    progress.phase(name + ": dynamic frames (Embree, " + tools::embree_build_name(build) + ")");
    tools::EmbreeBenchScene embree(device, scene, mode, build);
    std::vector<Hit> hits(rays.size());
    const FrameMs ms = run_frames(embree, [&](const Ray& r) { return embree.intersect(r); }, hits);
    if (em.total == 0.0 || ms.total < em.total) {
      em = ms;
      best = build;
      em_hits = hits;
    }
  }
  // The scene after the frames, for the reference's boundary judgement.
  Scene moved = scene;
  for (int f = 0; f < kFrames; ++f) {
    for (std::size_t j = 0; j < k; ++j) {
      moved.objects[ids[f][j]].matrix = moves[f][j];
      moved.objects[ids[f][j]].translation_low = glm::vec3{0.0f};  // as set_matrix(float)
    }
  }
  compare_answers(moved, mode, offset, rays, rp_hits, em_hits, check);
  progress.clear();
  char line[600];
  std::snprintf(line, sizeof line,
                "frame  %-14s %s: move %zu objects (1%%) + commit + %d camera rays, per frame: "
                "raypick %.3f ms (%.3f + %.3f + %.3f), Embree %.3f ms (%.3f + %.3f + %.3f; %s, "
                "the best of its builds): %s faster; %s\n",
                name.c_str(), mode_name(mode), k, kFrameRays, rp.total, rp.set, rp.commit, rp.rays,
                em.total, em.set, em.commit, em.rays, tools::embree_build_name(best),
                ratio(em.total, rp.total).c_str(),
                check.ok ? "ok" : ("VOID: " + check.why).c_str());
  lines += line;
  for (int sys = 0; sys < 2; ++sys) {
    nlohmann::json row = {{"row", "frame"},
                          {"scene", name},
                          {"n", n},
                          {"mode", mode_name(mode)},
                          {"system", sys == 0 ? "raypick" : "embree"},
                          {"frame_ms", (sys == 0 ? rp : em).total},
                          {"frame_set_ms", (sys == 0 ? rp : em).set},
                          {"frame_commit_ms", (sys == 0 ? rp : em).commit},
                          {"frame_rays_ms", (sys == 0 ? rp : em).rays},
                          {"moved_per_frame", k},
                          {"rays_per_frame", kFrameRays},
                          {"frames", kFrames},
                          {"threads", 1},
                          {"valid", check.ok}};
    if (sys == 1) row["embree_build"] = tools::embree_build_name(best);
    rows.push_back(std::move(row));
  }
  return check.ok;
}

// The closest-point row of one mode: tools::make_validation_points' points
// (near the surfaces, on edges and corners, and in the scene's box),
// raypick's Picker::closest_point against Embree's rtcPointQuery
// (tools::EmbreePointScene: obb mode over a flat user geometry of world
// boxes, mesh mode over instanced triangle geometries). Single queries on one thread, and batches
// (Picker::closest_points; Embree's queries in a TBB loop) on `threads`;
// medians of `runs`. Both must give the same object, triangle, distance and
// point, bit for bit. Adds one line to `lines` and two JSON rows ("row":
// "points"); false when the answers differ. A mesh-mode scene whose
// matrices are not all similarities is skipped: one line saying why, no
// rows.
bool points_row(const Scene& scene, PickMode mode, NodeChoice node, std::size_t count,
                std::uint64_t seed, int threads, int runs, const std::string& name,
                Progress& progress, std::string& lines, nlohmann::json& rows) {
  const char* mode_text = mode_name(mode);
  if (mode == PickMode::kMesh) {
    if (const std::string why = tools::instanced_points_refusal(scene); !why.empty()) {
      lines += "points " + name + " mesh: skipped: " + why + "\n";
      return true;
    }
  }
  const std::vector<glm::dvec3> points = tools::make_validation_points(scene, count, seed, mode);
  progress.phase(name + ": closest points (build)");
  const Picker picker(scene, bench_picker_config(mode, node));
  const QueryOptions options{mode};
  const tools::EmbreeDevice device(threads);
  const tools::EmbreePointScene embree(
      device.get(), scene, mode,
      mode == PickMode::kMesh ? tools::PointLayout::kInstanced : tools::PointLayout::kFlat);
  std::vector<PointHit> rp(points.size()), em(points.size()), rp_batch, em_batch(points.size());
  std::vector<double> rp_single, em_single, rp_many, em_many;
  for (int r = 0; r < runs; ++r) {
    progress.phase(name + ": closest points (raypick)");
    {
      const tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
      auto start = Clock::now();
      for (std::size_t i = 0; i < points.size(); ++i) rp[i] = picker.closest_point(points[i], options);
      rp_single.push_back(ms_since(start));
    }
    const tbb::global_control cap(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(threads));
    auto start = Clock::now();
    rp_batch = picker.closest_points(points, options);
    rp_many.push_back(ms_since(start));
    progress.phase(name + ": closest points (Embree)");
    start = Clock::now();
    for (std::size_t i = 0; i < points.size(); ++i) em[i] = embree.closest_point(points[i], INFINITY);
    em_single.push_back(ms_since(start));
    start = Clock::now();
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, points.size(), 256),
                      [&](const tbb::blocked_range<std::size_t>& b) {
                        for (std::size_t i = b.begin(); i != b.end(); ++i) {
                          em_batch[i] = embree.closest_point(points[i], INFINITY);
                        }
                      });
    em_many.push_back(ms_since(start));
  }
  progress.clear();
  std::size_t differ = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (const PointHit* other : {&em[i], &rp_batch[i], &em_batch[i]}) {
      differ += !(other->object == rp[i].object && other->triangle == rp[i].triangle &&
                  other->distance == rp[i].distance && other->point == rp[i].point);
    }
  }
  const bool ok = differ == 0;
  const auto rate = [&](const std::vector<double>& ms) {
    return double(points.size()) / (median(ms) * 1e3);  // M queries/s
  };
  char line[600];
  std::snprintf(line, sizeof line,
                "points %-14s %s: %zu closest points, M queries/s single (1 thread): raypick "
                "%.2f, Embree %.2f (%s); batch (%d threads): raypick %.2f, Embree %.2f (%s); "
                "%s\n",
                name.c_str(), mode_text, points.size(), rate(rp_single), rate(em_single),
                ratio(median(em_single), median(rp_single)).c_str(), threads, rate(rp_many),
                rate(em_many), ratio(median(em_many), median(rp_many)).c_str(),
                ok ? "ok" : ("VOID: " + std::to_string(differ) + " answers differ").c_str());
  lines += line;
  for (int sys = 0; sys < 2; ++sys) {
    rows.push_back({{"row", "points"},
                    {"scene", name},
                    {"n", scene.objects.size()},
                    {"mode", mode_text},
                    {"system", sys == 0 ? "raypick" : "embree"},
                    {"points", points.size()},
                    {"mqps_single", rate(sys == 0 ? rp_single : em_single)},
                    {"mqps_batch", rate(sys == 0 ? rp_many : em_many)},
                    {"threads", threads},
                    {"runs", runs},
                    {"valid", ok}});
  }
  return ok;
}

std::vector<PickMode> modes_of(ModeChoice choice, SceneKind kind) {
  switch (choice) {
    case ModeChoice::kObb: return {PickMode::kObb};
    case ModeChoice::kMesh: return {PickMode::kMesh};
    case ModeChoice::kBoth: return {PickMode::kObb, PickMode::kMesh};
    case ModeChoice::kAuto: break;
  }
  return {kind == SceneKind::kCrowd ? PickMode::kMesh : PickMode::kObb};
}

// What the plan reads from files.
struct Inputs {
  std::optional<Mesh> crowd_model;  // the model, merged into one mesh
  std::vector<Scene> file_scenes;   // by spec; empty for generated ones
};

// A file loaded, or the message printed and `status` set (2 for an
// unsupported extension, else 1).
std::optional<Scene> load_file(const std::string& path, const LoadOptions& options,
                               int& status) {
  LoadResult r = load_scene(path, options);
  if (!r.ok()) {
    status = fail(r.error().kind == LoadError::Kind::kUnsupported ? kExitUsage : kExitVoid,
                  r.error().to_string());
    return std::nullopt;
  }
  return std::move(r.scene());
}

// The crowd model, merged into one mesh, when the plan has a crowd scene.
// 0, or the exit status after the message.
int load_model(const Bench& a, const std::vector<SceneSpec>& specs, Inputs& in) {
  const bool crowd = std::any_of(specs.begin(), specs.end(), [](const SceneSpec& s) {
    return s.kind == SceneKind::kCrowd;
  });
  if (!crowd) return 0;
  int status = 0;
  std::optional<Scene> model = load_file(a.model, a.load, status);
  if (!model) return status;
  in.crowd_model = merge_into_one_mesh(*model);
  return 0;
}

// Every scene file, loaded now and kept until its turn. 0, or the exit
// status after the message.
int load_files(const Bench& a, const std::vector<SceneSpec>& specs, Inputs& in) {
  in.file_scenes.resize(specs.size());
  for (std::size_t k = 0; k < specs.size(); ++k) {
    if (specs[k].kind != SceneKind::kFile) continue;
    int status = 0;
    std::optional<Scene> scene = load_file(specs[k].path, a.load, status);
    if (!scene) return status;
    if (world_bounds(*scene).empty()) {
      return fail(kExitVoid, specs[k].path + ": no object can be hit");
    }
    in.file_scenes[k] = std::move(*scene);
  }
  return 0;
}

// The header's words for --isa and --top-width (the JSON rows name what
// each picker ran).
std::string node_test(Isa requested, int top_width) {
  std::string words =
      requested == Isa::kAuto
          ? "auto (avx512, a 16-wide top level, where the CPU has AVX-512, else avx2, or sse2 "
            "without AVX2)"
          : std::string(isa_name(requested)) + " (a CPU without it runs the next one down)";
  if (top_width != 0) words += ", " + std::to_string(top_width) + "-wide top level";
  return words;
}

void print_header(const Bench& a, const Settings& s) {
  std::printf("raypick bench: raypick vs Embree %s on %s (%s, %u hardware "
              "threads); median of %d run%s; raypick's node test: %s\n",
              tools::EmbreeDevice::version(), cpu_name().c_str(), cpu_isa(),
              std::thread::hardware_concurrency(), s.runs, s.runs == 1 ? "" : "s",
              node_test(a.isa, a.top_width).c_str());
  std::printf("rays: ");
  if (s.incoherent) std::printf("incoherent %zu (seed %llu)%s", s.ray_count,
                                static_cast<unsigned long long>(a.seed),
                                s.camera ? ", " : "");
  if (s.camera) std::printf("camera %dx%d (60 degree fov)", s.width, s.height);
  if (!a.offset.empty()) {
    std::printf("\noffset: every object moved by (%.9g, %.9g, %.9g)", a.offset[0],
                a.offset[1], a.offset[2]);
    {
      std::printf("\noffset, mesh rows: Embree carries rays into its instances in float, "
                  "so far from the origin its t strays and some of its hits are wrong; "
                  "where the two differ, the double-precision reference judges, and a "
                  "row fails only where it refutes raypick (the check column counts the "
                  "rays it judged; validate --offset lists them)");
    }
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

// Spec `k`'s scene: generated, or the file loaded up front; moved by
// --offset.
Scene scene_of(const Bench& a, const SceneSpec& spec, Scene& file_scene,
               const Inputs& in, Progress& progress) {
  Scene scene;
  if (spec.kind == SceneKind::kBoxes) {
    progress.phase("generating " + spec.name());
    scene = tools::make_boxes_scene(spec.n, a.seed);
  } else if (spec.kind == SceneKind::kCrowd) {
    progress.phase("generating " + spec.name());
    scene = tools::make_crowd_scene(*in.crowd_model, spec.n, a.seed);
  } else {
    scene = std::move(file_scene);
  }
  if (!a.offset.empty()) {
    tools::shift_scene(scene, {a.offset[0], a.offset[1], a.offset[2]});
  }
  return scene;
}

std::vector<RaySet> ray_sets_of(const Aabb& bounds, const Settings& s, std::uint64_t seed) {
  std::vector<RaySet> sets;
  if (s.incoherent) {
    sets.push_back({"incoherent", tools::make_incoherent_rays(bounds, s.ray_count, seed)});
  }
  if (s.camera) {
    sets.push_back({"camera",
                    tools::make_camera_rays(tools::make_camera(bounds), s.width, s.height),
                    s.width, s.height});
  }
  return sets;
}

// The rows of one scene in one mode at one thread count: build, query,
// update and check, then print and add the JSON rows. False when a row is
// VOID.
bool bench_config(const Bench& a, const SceneSpec& spec, const Scene& scene,
                  PickMode mode, int threads, const std::vector<RaySet>& sets,
                  int runs, Progress& progress, nlohmann::json& rows) {
  // Caps TBB (raypick's batch queries, and any parallel build) at the
  // same count as the Embree device.
  const tbb::global_control cap(tbb::global_control::max_allowed_parallelism,
                                static_cast<std::size_t>(threads));
  ConfigRun run(scene, mode, node_of(a), !a.offset.empty(), runs, threads,
                spec.name() + " " + mode_name(mode) + " threads=" + std::to_string(threads),
                progress);
  run.build();
  for (const RaySet& set : sets) run.query(set);
  run.update(a.seed);
  if (!sets.empty()) run.check_update(sets[0]);
  const ConfigResult res = run.finish();
  print_rows(spec, scene.objects.size(), mode, threads, sets, res);
  add_json_rows(rows, spec, scene.objects.size(), mode, threads, runs, sets, res);
  return res.ok();
}

// Writes the rows, each with where its figures come from (for
// apps/bench/bench_table.py). 0, or the exit status after the message.
int write_json(tools::OutputFile& out, nlohmann::json& rows, double load_before) {
  char cpu[256];
  std::snprintf(cpu, sizeof cpu, "%s (%s, %u hardware threads)", cpu_name().c_str(),
                cpu_isa(), std::thread::hardware_concurrency());
  for (auto& row : rows) {
    row["cpu"] = cpu;
    row["embree_version"] = tools::EmbreeDevice::version();
    row["load_before"] = load_before;
    row["load_after"] = load_average();
  }
  if (std::string e = out.write(rows.dump(2) + "\n"); !e.empty()) return fail(kExitVoid, e);
  return 0;
}

}  // namespace

int run(const Bench& a) {
  const Settings& s = a.settings;
  const std::vector<SceneSpec>& specs = a.specs;
  // Inputs and outputs are checked before anything is printed.
  Inputs in;
  if (const int status = load_model(a, specs, in)) return status;
  tools::OutputFile json_out;
  if (!a.json.empty()) {
    const std::string error = json_out.open(a.json, "JSON");
    if (!error.empty()) return fail(kExitVoid, error);
  }
  if (const int status = load_files(a, specs, in)) return status;
  const bool profile = a.profile != Profile::kNone;
  if (!profile) print_header(a, s);  // --profile prints only its own lines

  const double load_before = load_average();
  Progress progress;
  std::string select_lines;  // the marquee rows, after the table
  nlohmann::json rows = nlohmann::json::array();
  bool all_ok = true;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    const SceneSpec& spec = specs[k];
    const Scene scene = scene_of(a, spec, in.file_scenes[k], in, progress);
    const Aabb bounds = world_bounds(scene);
    if (bounds.empty()) return fail(kExitVoid, spec.label() + ": no object can be hit");
    const std::vector<RaySet> sets = ray_sets_of(bounds, s, a.seed);
    const std::vector<PickMode> modes = modes_of(a.mode, spec.kind);
    for (PickMode mode : modes) {
      if (profile) {
        profile_config(scene, mode, node_of(a), sets, a.profile, a.profile_passes,
                       spec.name() + " " + mode_name(mode));
        continue;
      }
      for (int threads : a.threads) {
        all_ok = bench_config(a, spec, scene, mode, threads, sets, s.runs, progress, rows) &&
                 all_ok;
      }
    }
    if (!profile && s.frames) {
      for (PickMode mode : modes) {
        all_ok = frame_row(scene, mode, node_of(a), !a.offset.empty(), bounds, a.seed,
                           spec.name(), progress, select_lines, rows) &&
                 all_ok;
      }
    }
    const bool obb = std::find(modes.begin(), modes.end(), PickMode::kObb) != modes.end();
    for (PickMode mode : modes) {
      if (profile || !s.points) break;
      const int threads = *std::max_element(a.threads.begin(), a.threads.end());
      all_ok = points_row(scene, mode, node_of(a), s.point_count, a.seed, threads, s.runs,
                          spec.name(), progress, select_lines, rows) &&
               all_ok;
    }
    if (!profile && s.camera && obb) {
      all_ok = select_row(scene, node_of(a), bounds, s.width, s.height, s.runs, spec.name(),
                          progress, select_lines) &&
               all_ok;
    }
  }
  progress.clear();
  if (!select_lines.empty()) {
    std::printf("\n%s", select_lines.c_str());
    std::fflush(stdout);
  }
  if (!a.json.empty()) {
    if (const int status = write_json(json_out, rows, load_before)) return status;
  }
  if (finish_output(0) != 0) return kExitVoid;
  if (!all_ok) {
    return fail(kExitVoid,
                "bench: VOID rows: raypick and Embree computed different "
                "answers, so their speeds do not compare");
  }
  return 0;
}

}  // namespace raypick::bench
