#include "validate.h"

#include "ray_io.h"

#include <glm/ext/matrix_transform.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

namespace raypick::tools {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double max_abs(const glm::vec3& v) {
  return std::max({std::abs(double(v.x)), std::abs(double(v.y)),
                   std::abs(double(v.z))});
}

enum class Judgement { kExact, kTie, kBoundary, kWrong };

// Decides whether `ans` is a correct nearest hit for `ray`, given every
// object's entries from the double reference and the reference's nearest.
Judgement judge(const Hit& ans, const std::vector<BoxEntries>& e,
                const ObbReference::Nearest& ref, double tol,
                std::string& why) {
  if (!ans.hit()) {
    if (ref.object == UINT32_MAX) return Judgement::kExact;
    for (const BoxEntries& b : e) {
      if (b.shrunk != kInf) {
        why = "misses, but the reference hits object " +
              std::to_string(ref.object) + " at t = " + std::to_string(ref.t);
        return Judgement::kWrong;
      }
    }
    return Judgement::kBoundary;
  }
  const double t = ans.t;
  const BoxEntries& mine = e[ans.object];
  if (mine.grown == kInf) {
    why = "hits object " + std::to_string(ans.object) +
          ", which the reference misses";
    return Judgement::kWrong;
  }
  for (std::size_t o = 0; o < e.size(); ++o) {
    if (e[o].shrunk < t - tol) {
      why = "hits object " + std::to_string(ans.object) + " at t = " +
            std::to_string(t) + ", but object " + std::to_string(o) +
            " is entered before, at t = " + std::to_string(e[o].exact);
      return Judgement::kWrong;
    }
  }
  if (ans.object == ref.object && std::abs(t - ref.t) <= tol) {
    return Judgement::kExact;
  }
  if (std::abs(t - ref.t) <= tol && std::abs(mine.exact - t) <= tol) {
    return Judgement::kTie;
  }
  if (t >= mine.grown - tol && (mine.shrunk == kInf || t <= mine.shrunk + tol)) {
    return Judgement::kBoundary;
  }
  why = "hits object " + std::to_string(ans.object) + " at t = " +
        std::to_string(t) + ", the reference enters it at t = " +
        std::to_string(mine.exact);
  return Judgement::kWrong;
}

}  // namespace

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::kAgree: return "agree";
    case Verdict::kFloatNoise: return "float noise";
    case Verdict::kTie: return "tie";
    case Verdict::kBoundary: return "boundary";
    case Verdict::kOriginInside: return "origin inside";
    case Verdict::kMismatch: return "MISMATCH";
  }
  return "?";
}

std::vector<Ray> make_validation_rays(const Picker& picker, std::size_t n,
                                      std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  Aabb bounds = picker.world_bounds();
  if (bounds.empty()) bounds = Aabb{glm::vec3{-1.0f}, glm::vec3{1.0f}};
  const glm::vec3 grow = 0.1f * (bounds.max - bounds.min) + 1e-3f;
  bounds = Aabb{bounds.min - grow, bounds.max + grow};
  const float outside_radius = 1.01f * glm::length(bounds.max - bounds.min) * 0.5f;
  std::vector<std::uint32_t> hittable;
  for (std::uint32_t i = 0; i < picker.object_count(); ++i) {
    if (!picker.world_box(i).empty()) hittable.push_back(i);
  }
  auto uniform_in = [&](const Aabb& b) {
    return b.min + glm::vec3{unit(rng), unit(rng), unit(rng)} * (b.max - b.min);
  };
  auto pick_object = [&] {
    return hittable[std::min<std::size_t>(
        hittable.size() - 1,
        static_cast<std::size_t>(unit(rng) * float(hittable.size())))];
  };
  std::vector<Ray> rays;
  rays.reserve(n);
  while (rays.size() < n) {
    Ray ray;
    ray.org = uniform_in(bounds);
    const float kind = unit(rng);
    if (kind < 0.4f && !hittable.empty()) {
      // From outside the whole scene, so that Embree (surfaces only) and
      // raypick (solid boxes) answer the same question.
      glm::vec3 away{gauss(rng), gauss(rng), gauss(rng)};
      if (glm::length(away) == 0.0f) away = {1.0f, 0.0f, 0.0f};
      ray.org = bounds.center() + glm::normalize(away) * outside_radius;
      const Obb& obb = picker.obb(pick_object());
      const glm::vec3 target{obb.to_world * glm::vec4(uniform_in(obb.local), 1.0f)};
      ray.dir = target - ray.org;
    } else if (kind < 0.8f) {
      ray.dir = {gauss(rng), gauss(rng), gauss(rng)};
    } else {
      const int axis = static_cast<int>(unit(rng) * 3.0f) % 3;
      for (int a = 0; a < 3; ++a) ray.dir[a] = unit(rng) < 0.5f ? 0.0f : -0.0f;
      ray.dir[axis] = unit(rng) < 0.5f ? 1.0f : -1.0f;
      if (unit(rng) < 0.5f && !hittable.empty()) {
        // Put the origin on a face plane of some object's world box, on one
        // of the axes the ray does not move along.
        const Aabb box = picker.world_box(pick_object());
        const int other = (axis + 1 + (unit(rng) < 0.5f ? 0 : 1)) % 3;
        ray.org[other] = unit(rng) < 0.5f ? box.min[other] : box.max[other];
      }
    }
    if (!is_valid(ray)) continue;
    rays.push_back(ray);
  }
  return rays;
}

ValidateReport validate_obb(const Scene& scene, const Picker& picker,
                            const EmbreeObbScene& embree,
                            std::span<const Ray> rays,
                            const std::function<void(std::size_t)>& progress) {
  ValidateReport report;
  report.rays = rays.size();
  const ObbReference reference(scene);
  const Aabb bounds = picker.world_bounds();
  const double scene_scale =
      bounds.empty() ? 1.0 : std::max(max_abs(bounds.min), max_abs(bounds.max));
  std::vector<BoxEntries> entries(scene.objects.size());
  for (std::size_t i = 0; i < rays.size(); ++i) {
    if (progress && i % 4096 == 0) progress(i);
    const Ray& ray = rays[i];
    const Hit r = picker.intersect(ray);
    const Hit e = embree.intersect(ray);
    report.raypick_hits += r.hit();
    report.embree_hits += e.hit();
    const double scale = std::max(scene_scale, max_abs(ray.org)) / max_abs(ray.dir);
    const double dt = r.hit() && e.hit() ? std::abs(double(r.t) - double(e.t)) : 0.0;
    if (r.object == e.object && dt <= kAgreeTol * scale) {
      ++report.counts[static_cast<int>(Verdict::kAgree)];
      report.max_dt_agree = std::max(report.max_dt_agree, dt);
      report.max_dt = std::max(report.max_dt, dt);
      continue;
    }
    // Disagreement: ask the double-precision reference who is right.
    ObbReference::Nearest ref{UINT32_MAX, kInf};
    for (std::uint32_t o = 0; o < entries.size(); ++o) {
      entries[o] = reference.entries(o, ray);
      if (entries[o].exact < ref.t) ref = {o, entries[o].exact};
    }
    const double tol = kTol * scale;
    std::string why_r, why_e;
    const Judgement jr = judge(r, entries, ref, tol, why_r);
    const Judgement je = judge(e, entries, ref, tol, why_e);
    Verdict v;
    std::string detail;
    if (jr == Judgement::kWrong) {
      v = Verdict::kMismatch;
      detail = "raypick " + why_r;
    } else if (je == Judgement::kWrong) {
      if (ref.t == 0.0) {
        v = Verdict::kOriginInside;
      } else {
        v = Verdict::kMismatch;
        detail = "Embree " + why_e + " (raypick agrees with the reference)";
      }
    } else if (ref.t == 0.0 && r.t == 0.0f && e.t > 0.0f) {
      // Embree's exit face happened to be within the noise tolerance.
      v = Verdict::kOriginInside;
    } else if (jr == Judgement::kBoundary || je == Judgement::kBoundary) {
      v = Verdict::kBoundary;
    } else if (jr == Judgement::kTie || je == Judgement::kTie) {
      v = Verdict::kTie;
    } else {
      v = Verdict::kFloatNoise;
      report.max_dt = std::max(report.max_dt, dt);
    }
    ++report.counts[static_cast<int>(v)];
    report.disagreements.push_back({i, ray, v, r, e, ref, detail});
  }
  if (progress) progress(rays.size());
  return report;
}

void write_dump(std::ostream& out, const ValidateReport& report) {
  out << "# raypick validate: " << report.disagreements.size()
      << " disagreeing rays; read back with: raypick pick SCENE --rays FILE\n";
  auto hit_str = [](const Hit& h) {
    return h.hit() ? "object " + std::to_string(h.object) + " t=" +
                         format_float(h.t)
                   : std::string("miss");
  };
  for (const Disagreement& d : report.disagreements) {
    out << "# ray " << d.ray_index << ": " << to_string(d.verdict)
        << "; raypick " << hit_str(d.raypick) << "; embree "
        << hit_str(d.embree) << "; reference "
        << (d.reference.object == UINT32_MAX
                ? std::string("miss")
                : "object " + std::to_string(d.reference.object) + " t=" +
                      std::to_string(d.reference.t));
    if (!d.detail.empty()) out << "; " << d.detail;
    out << "\n";
    out << format_float(d.ray.org.x) << ' ' << format_float(d.ray.org.y) << ' '
        << format_float(d.ray.org.z) << ' ' << format_float(d.ray.dir.x) << ' '
        << format_float(d.ray.dir.y) << ' ' << format_float(d.ray.dir.z)
        << "\n";
  }
}

}  // namespace raypick::tools
