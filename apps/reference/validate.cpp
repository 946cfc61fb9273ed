#include "validate.h"

#include "ray_io.h"

#include <glm/ext/matrix_double4x4.hpp>
#include <glm/geometric.hpp>
#include <glm/mat3x3.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

namespace raypick::tools {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double max_abs(const glm::dvec3& v) {
  return std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)});
}

std::string where(const Hit& h) {
  std::string s = "object " + std::to_string(h.object);
  if (h.triangle != kInvalidId) s += " triangle " + std::to_string(h.triangle);
  return s + " at t = " + format_float(h.t);
}

enum class Judgement { kExact, kTie, kBoundary, kWrong };

// What the double reference says about one ray, in either mode: for every
// candidate (an object, or an object's triangle) its exact t, its t when the
// hit is sure (well inside, not within rounding of the boundary), and the
// range [lo, hi] of t that a float answer hitting it may report.
struct Candidate {
  Hit hit;        // object and triangle
  double t;       // exact t; +inf when not hit exactly
  double t_sure;  // t when the hit is sure, else +inf
  double lo, hi;  // acceptable answers; lo = +inf when none is
};

struct Reference {
  std::vector<Candidate> candidates;
  Hit nearest;  // the smallest exact t, ties to the lower ids

  const Candidate* find(const Hit& h) const {
    for (const Candidate& c : candidates) {
      if (c.hit.object == h.object && c.hit.triangle == h.triangle) return &c;
    }
    return nullptr;
  }
};

Reference make_reference(const SceneReference& ref, const Ray& ray,
                         PickMode mode, double tol) {
  Reference r;
  double best = kInf;
  for (std::uint32_t o = 0; o < ref.object_count(); ++o) {
    const BoxEntries box = ref.box_entries(o, ray);
    if (box.grown == kInf) continue;  // no hit possible on this object
    auto add = [&](Candidate c) {
      const bool lower_ids =
          c.hit.object < r.nearest.object ||
          (c.hit.object == r.nearest.object && c.hit.triangle < r.nearest.triangle);
      if (c.t != kInf && (c.t < best || (c.t == best && lower_ids))) {
        best = c.t;
        r.nearest = c.hit;
        r.nearest.t = static_cast<float>(c.t);
      }
      r.candidates.push_back(c);
    };
    if (mode == PickMode::kObb) {
      // Under rounding the entry lies between the grown box's entry and
      // the shrunk box's (unbounded above when only grazed).
      Hit h;
      h.object = o;
      add({h, box.exact, box.shrunk, box.grown - tol,
           box.shrunk == kInf ? kInf : box.shrunk + tol});
      continue;
    }
    for (std::uint32_t tri = 0; tri < ref.triangle_count(o); ++tri) {
      const TriangleEntry e = ref.triangle_entry(o, tri, ray);
      Hit h;
      h.object = o;
      h.triangle = tri;
      if (e.coplanar) {
        // A ray in the triangle's plane has no sure answer: neither
        // hitting nor missing it is refuted.
        add({h, kInf, kInf, -kInf, kInf});
        continue;
      }
      if (e.inside <= -1.0 || e.t < -tol - e.t_err) continue;  // surely missed
      // A triangle's t is well defined even at its edges.
      const double slack = tol + e.t_err;
      add({h, e.inside >= 0.0 && e.t >= 0.0 ? e.t : kInf,
           e.inside >= 1.0 && e.t >= slack ? e.t : kInf, e.t - slack,
           e.t + slack});
    }
  }
  return r;
}

// Is `ans` a correct nearest hit for `ray`, per the reference?
Judgement judge(const Hit& ans, const Reference& ref, double tol,
                std::string& why) {
  if (!ans.hit()) {
    for (const Candidate& c : ref.candidates) {
      if (c.t_sure != kInf) {
        why = "misses, but the reference hits " + where(c.hit) +
              " (t = " + std::to_string(c.t_sure) + ")";
        return Judgement::kWrong;
      }
    }
    return ref.nearest.hit() ? Judgement::kBoundary : Judgement::kExact;
  }
  const double t = ans.t;
  const Candidate* mine = ref.find(ans);
  if (!mine || !(mine->lo <= t && t <= mine->hi)) {
    why = where(ans) + ", which the reference " +
          (mine && mine->t != kInf ? "hits at t = " + std::to_string(mine->t)
                                   : std::string("does not hit"));
    return Judgement::kWrong;
  }
  for (const Candidate& c : ref.candidates) {
    // Surely hit, and surely before t even allowing for its rounding.
    if (c.t_sure != kInf && c.hi < t) {
      why = where(ans) + ", but the reference hits " + where(c.hit) +
            " first, at t = " + std::to_string(c.t_sure);
      return Judgement::kWrong;
    }
  }
  if (ref.nearest.hit() && std::abs(t - double(ref.nearest.t)) <= tol) {
    return ans.object == ref.nearest.object &&
                   ans.triangle == ref.nearest.triangle
               ? Judgement::kExact
               : Judgement::kTie;
  }
  // Everything the reference meets before t is met only within rounding.
  return Judgement::kBoundary;
}

}  // namespace

Agreement::Agreement(const Aabb& bounds) {
  if (bounds.empty()) return;
  centre_ = glm::dvec3{bounds.center()};
  half_ = max_abs(bounds.half_extent());
}

double Agreement::scale(const Ray& ray) const {
  return 2.0 * std::max(half_, max_abs(glm::dvec3{ray.org} - centre_)) /
         max_abs(ray.dir);
}

bool Agreement::same_t(const Hit& a, const Hit& b, const Ray& ray) const {
  if (a.hit() != b.hit()) return false;
  return !a.hit() || std::abs(double(a.t) - double(b.t)) <= tolerance(ray);
}

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::kAgree: return "agree";
    case Verdict::kFloatNoise: return "float noise";
    case Verdict::kTie: return "tie";
    case Verdict::kBoundary: return "boundary";
    case Verdict::kOriginInside: return "origin inside";
    case Verdict::kEmbreeWrong: return "embree wrong";
    case Verdict::kMismatch: return "MISMATCH";
  }
  return "?";
}

std::vector<Ray> make_validation_rays(const Scene& scene, const Picker& picker,
                                      std::size_t n, std::uint64_t seed,
                                      PickMode mode) {
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
  auto pick_index = [&](std::size_t count) {
    return std::min<std::size_t>(
        count - 1, static_cast<std::size_t>(unit(rng) * float(count)));
  };
  // A point of object `id`: inside its OBB, or on one of its triangles.
  auto target_on = [&](std::uint32_t id) {
    const Obb& obb = picker.obb(id);
    glm::vec3 local = uniform_in(obb.local);
    if (mode == PickMode::kMesh) {
      const Mesh& mesh = scene.meshes[scene.objects[id].mesh];
      const glm::uvec3 t = mesh.triangles[pick_index(mesh.triangles.size())];
      float a = unit(rng), b = unit(rng);
      if (a + b > 1.0f) {
        a = 1.0f - a;
        b = 1.0f - b;
      }
      local = mesh.positions[t.x] + a * (mesh.positions[t.y] - mesh.positions[t.x]) +
              b * (mesh.positions[t.z] - mesh.positions[t.x]);
    }
    return glm::vec3{obb.to_world * glm::vec4(local, 1.0f)};
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
      ray.dir = target_on(hittable[pick_index(hittable.size())]) - ray.org;
    } else if (kind < 0.8f) {
      ray.dir = {gauss(rng), gauss(rng), gauss(rng)};
    } else {
      const int axis = static_cast<int>(unit(rng) * 3.0f) % 3;
      for (int a = 0; a < 3; ++a) ray.dir[a] = unit(rng) < 0.5f ? 0.0f : -0.0f;
      ray.dir[axis] = unit(rng) < 0.5f ? 1.0f : -1.0f;
      if (unit(rng) < 0.5f && !hittable.empty()) {
        // Put the origin on a face plane of some object's world box, on one
        // of the axes the ray does not move along.
        const Aabb box = picker.world_box(hittable[pick_index(hittable.size())]);
        const int other = (axis + 1 + (unit(rng) < 0.5f ? 0 : 1)) % 3;
        ray.org[other] = unit(rng) < 0.5f ? box.min[other] : box.max[other];
      }
    }
    if (!is_valid(ray)) continue;
    rays.push_back(ray);
  }
  return rays;
}

Verdict classify(const SceneReference& reference, const Agreement& agreement,
                 PickMode mode, const Ray& ray, const Hit& r, const Hit& e,
                 std::string* detail, Hit* nearest) {
  const double dt =
      r.hit() && e.hit() ? std::abs(double(r.t) - double(e.t)) : 0.0;
  const bool same = r.object == e.object && r.triangle == e.triangle;
  if (same && dt <= kAgreeTol * agreement.scale(ray)) return Verdict::kAgree;
  const double tol = agreement.tolerance(ray);
  const Reference ref = make_reference(reference, ray, mode, tol);
  if (nearest) *nearest = ref.nearest;
  std::string why_r, why_e, unused;
  std::string& out = detail ? *detail : unused;
  const Judgement jr = judge(r, ref, tol, why_r);
  const Judgement je = judge(e, ref, tol, why_e);
  const bool inside = mode == PickMode::kObb && ref.nearest.hit() &&
                      ref.nearest.t == 0.0f;
  if (jr == Judgement::kWrong) {
    out = r.hit() ? "raypick hits " + why_r : "raypick " + why_r;
    return Verdict::kMismatch;
  }
  if (inside && (je == Judgement::kWrong || (r.t == 0.0f && e.t > 0.0f))) {
    // Embree's surface model cannot say t = 0 for an origin in a box.
    return Verdict::kOriginInside;
  }
  if (je == Judgement::kWrong) {
    out = (e.hit() ? "Embree hits " : "Embree ") + why_e +
          " (raypick agrees with the reference)";
    return Verdict::kEmbreeWrong;
  }
  if (jr == Judgement::kBoundary || je == Judgement::kBoundary) return Verdict::kBoundary;
  if (jr == Judgement::kTie || je == Judgement::kTie || !same) return Verdict::kTie;
  return Verdict::kFloatNoise;
}

ValidateReport validate(const Scene& scene, const Picker& picker,
                        const EmbreeScene& embree, PickMode mode,
                        std::span<const Ray> rays,
                        const std::function<void(std::size_t)>& progress) {
  ValidateReport report;
  report.mode = mode;
  report.rays = rays.size();
  const SceneReference reference(scene);
  const Agreement agreement(world_bounds(scene));
  for (std::size_t i = 0; i < rays.size(); ++i) {
    if (progress && i % 4096 == 0) progress(i);
    const Ray& ray = rays[i];
    const Hit r = picker.intersect(ray, mode);
    const Hit e = embree.intersect(ray);
    report.raypick_hits += r.hit();
    report.embree_hits += e.hit();
    if (mode == PickMode::kMesh) {
      const Hit o = picker.intersect(ray, PickMode::kObb);
      report.obb_mesh_differ += o.object != r.object;
    }
    const double scale = agreement.scale(ray);
    const double dt =
        r.hit() && e.hit() ? std::abs(double(r.t) - double(e.t)) : 0.0;
    const bool same = r.object == e.object && r.triangle == e.triangle;
    if (same && dt <= kAgreeTol * scale) {
      ++report.counts[static_cast<int>(Verdict::kAgree)];
      report.max_dt_agree = std::max(report.max_dt_agree, dt);
      report.max_dt = std::max(report.max_dt, dt);
      continue;
    }
    // Disagreement: ask the double-precision reference who is right.
    std::string detail;
    Hit nearest;
    const Verdict v = classify(reference, agreement, mode, ray, r, e, &detail, &nearest);
    if (v == Verdict::kFloatNoise) report.max_dt = std::max(report.max_dt, dt);
    ++report.counts[static_cast<int>(v)];
    report.disagreements.push_back({i, ray, v, r, e, nearest, detail});
  }
  if (progress) progress(rays.size());
  if (mode == PickMode::kMesh) {
    // Where the boundary rays meet their triangles: at a corner, along an
    // edge, and which vertices (object, mesh vertex) they go through.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> at;
    auto& hint = report.boundary_hint;
    for (const Disagreement& d : report.disagreements) {
      if (d.verdict != Verdict::kBoundary) continue;
      const Hit& h = d.raypick.hit() ? d.raypick : d.embree;
      if (!h.hit() || h.triangle == kInvalidId) continue;
      const Object& o = scene.objects[h.object];
      const glm::uvec3 tri = scene.meshes[o.mesh].triangles[h.triangle];
      const double b[3] = {1.0 - double(h.u) - double(h.v), double(h.u), double(h.v)};
      const int corner = b[0] >= b[1] && b[0] >= b[2] ? 0 : (b[1] >= b[2] ? 1 : 2);
      if (b[corner] >= 1.0 - 1e-3) {
        ++hint.at_vertex;
        ++at[{h.object, tri[corner]}];
      } else if (std::min({b[0], b[1], b[2]}) <= 1e-3) {
        ++hint.at_edge;
      }
    }
    hint.vertices = at.size();
    for (const auto& [key, count] : at) {
      if (count <= hint.top_count) continue;
      hint.top_count = count;
      hint.top_object = key.first;
      hint.top_vertex = key.second;
      const Object& o = scene.objects[key.first];
      hint.top_point = glm::dvec3(o.world_matrix() *
                                  glm::dvec4(glm::dvec3(scene.meshes[o.mesh].positions[key.second]), 1.0));
    }
  }
  return report;
}

void write_dump(std::ostream& out, const ValidateReport& report) {
  out << "# raypick validate (" << (report.mode == PickMode::kObb ? "obb" : "mesh")
      << " mode): " << report.disagreements.size()
      << " disagreeing rays; read back with: raypick pick SCENE --rays FILE\n";
  auto str = [](const Hit& h) { return h.hit() ? where(h) : std::string("miss"); };
  for (const Disagreement& d : report.disagreements) {
    out << "# ray " << d.ray_index << ": " << to_string(d.verdict)
        << "; raypick " << str(d.raypick) << "; embree " << str(d.embree)
        << "; reference " << str(d.reference);
    if (!d.detail.empty()) out << "; " << d.detail;
    out << "\n"
        << format_float(d.ray.org.x) << ' ' << format_float(d.ray.org.y) << ' '
        << format_float(d.ray.org.z) << ' ' << format_float(d.ray.dir.x) << ' '
        << format_float(d.ray.dir.y) << ' ' << format_float(d.ray.dir.z)
        << "\n";
  }
}

std::vector<glm::dvec3> make_validation_points(const Scene& scene, std::size_t n,
                                               std::uint64_t seed, PickMode mode) {
  std::mt19937_64 rng(seed * 7919 + 3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  const Aabb bounds = world_bounds(scene);
  std::vector<std::uint32_t> usable;
  for (std::uint32_t id = 0; id < scene.objects.size(); ++id) {
    if (!scene.meshes[scene.objects[id].mesh].triangles.empty()) usable.push_back(id);
  }
  std::vector<glm::dvec3> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double kind = u(rng);
    if (kind >= 0.6 || usable.empty()) {
      glm::dvec3 p;
      for (int a = 0; a < 3; ++a) {
        const double lo = bounds.min[a], hi = bounds.max[a], pad = 0.1 * (hi - lo);
        p[a] = lo - pad + u(rng) * (hi - lo + 2.0 * pad);
      }
      out.push_back(p);
      continue;
    }
    const Object& o = scene.objects[usable[std::size_t(u(rng) * double(usable.size())) %
                                           usable.size()]];
    const glm::dmat4 m = o.world_matrix();
    const Mesh box = box_mesh(scene.meshes[o.mesh].triangle_bounds());
    const Mesh& mesh = mode == PickMode::kMesh ? scene.meshes[o.mesh] : box;
    const glm::uvec3 t = mesh.triangles[std::size_t(u(rng) * double(mesh.triangles.size())) %
                                        mesh.triangles.size()];
    const glm::dvec3 a(mesh.positions[t.x]), b(mesh.positions[t.y]), c(mesh.positions[t.z]);
    glm::dvec3 local;
    if (kind < 0.2) {
      local = u(rng) < 0.5 ? a : 0.5 * (a + b);
    } else {
      double s = u(rng), r = u(rng);
      if (s + r > 1.0) {
        s = 1.0 - s;
        r = 1.0 - r;
      }
      local = a + s * (b - a) + r * (c - a);
    }
    glm::dvec3 p = glm::dvec3(m * glm::dvec4(local, 1.0));
    if (kind >= 0.3) {
      const glm::dvec3 lo(box.positions[0]), hi(box.positions[7]);
      const double size = glm::length(glm::dmat3(m) * (hi - lo));
      const glm::dvec3 dir = glm::normalize(glm::dvec3{g(rng), g(rng), g(rng)});
      p += dir * (0.05 * size * u(rng));
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace raypick::tools
