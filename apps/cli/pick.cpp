// `raypick pick SCENE --ray ox,oy,oz,dx,dy,dz | --rays FILE|- ...` and
// `raypick pick SCENE <camera> --pixel X,Y | --pixels FILE|- [--radius R]
// [--snap vertex|edge]`, and how `pick` prints an answer, by ray or by pixel.
#include "camera_options.h"
#include "command.h"
#include "common.h"

#include "ray_io.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"

#include <CLI/CLI.hpp>
#include <glm/geometric.hpp>
#include <glm/trigonometric.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace raypick::cli {
namespace {

// What `pick` parsed: a pixel pick uses it too.
struct PickArgs {
  std::optional<std::string> ray;  // set when --ray is given, even empty
  std::optional<std::string> rays;
  PickMode mode = PickMode::kObb;
  std::string format;
  bool all = false;
  std::size_t limit = 0;  // 0: no limit
  float max_t = kInfinity;
  std::uint32_t mask = ~0u;
  LoadOptions load;
};

// pick's answer for ray `i` in `format` (text, json or jsonl), each line
// ended by '\n'. With `all`: `hits` are every hit, nearest first, as one
// text line each (one miss line when there is none) or one JSON line;
// without: `hits` holds the nearest hit, or nothing for a miss. With
// `pixel`, each line also names the image-plane point the ray goes through.
std::string pick_answer(std::size_t i, const RayD& ray, std::span<const Hit> hits,
                        bool all, const std::string& format,
                        const std::vector<std::string>& names,
                        const glm::dvec2* pixel = nullptr);

// `raypick pick SCENE <camera> --pixel X,Y | --pixels FILE|- [--radius R]
// [--snap vertex|edge]`: registers the camera options, --radius and --snap
// on the `pick` subcommand, and --pixel and --pixels in its group of ray
// sources (exactly one of which is given).
class PixelPick {
 public:
  PixelPick(CLI::App& pick_cmd, CLI::Option_group& ray_source);
  // True when the command line asks for a pixel pick (--pixel, --pixels,
  // --radius, --snap or a camera option given).
  bool chosen() const;
  int run(const std::string& scene, const PickArgs& pick) const;

 private:
  CameraOptions camera_;
  std::string pixel_, pixels_;
  double radius_ = 0.0;
  std::string snap_;  // "vertex", "edge", or "" when --snap is not given
  CLI::Option* pixel_opt_ = nullptr;
  CLI::Option* pixels_opt_ = nullptr;
  CLI::Option* radius_opt_ = nullptr;
  CLI::Option* snap_opt_ = nullptr;
};

constexpr double kMaxRadius = 256.0;
// --radius samples the disc on a grid of this many pixels.
constexpr double kRadiusStep = 0.5;

// The nearest object hit by the rays through the disc of `radius` pixels
// around (X, Y), sampled on a kRadiusStep grid that includes the point:
// nearest in depth (along the view direction) first, ties to the sample
// nearest the point on screen, then to the lower object and triangle id.
// Returns the winning sample's ray and hit (a miss and the point's own ray
// when no sample hits).
std::pair<Ray, Hit> pick_within(const Picker& picker, const Camera& cam,
                                double X, double Y, double radius, float max_t,
                                const QueryOptions& options) {
  std::vector<Ray> rays;
  std::vector<double> dist2;
  const int n = int(std::floor(radius / kRadiusStep));
  for (int j = -n; j <= n; ++j) {
    for (int i = -n; i <= n; ++i) {
      const double dx = i * kRadiusStep, dy = j * kRadiusStep;
      const double d2 = dx * dx + dy * dy;
      if (d2 > radius * radius) continue;
      Ray r = cam.ray(X + dx, Y + dy);
      r.tmax = max_t;
      rays.push_back(r);
      dist2.push_back(d2);
    }
  }
  const std::vector<Hit> hits = picker.intersect_batch(rays, options);
  std::size_t best = rays.size();
  std::tuple<double, double, std::uint32_t, std::uint32_t> best_key;
  for (std::size_t k = 0; k < rays.size(); ++k) {
    if (!hits[k].hit()) continue;
    const glm::dvec3 p = hit_point(rays[k], hits[k]);
    const auto key = std::make_tuple(cam.depth(p), dist2[k], hits[k].object, hits[k].triangle);
    if (best == rays.size() || key < best_key) {
      best = k;
      best_key = key;
    }
  }
  if (best == rays.size()) {
    Ray r = cam.ray(X, Y);
    r.tmax = max_t;
    return {r, Hit{}};
  }
  return {rays[best], hits[best]};
}

// --snap without --radius looks this many pixels around the point.
constexpr double kDefaultSnapRadius = 8.0;
// A snap candidate is visible when the first hit of the camera's ray through
// it is a miss or lies no nearer than the candidate's own t less this
// fraction of it: the float ray and hit round by far less, a real occluder
// (the object's own front face before a back corner) is far nearer.
constexpr double kSnapVisibleTolerance = 1e-4;

enum class SnapKind { kVertex, kEdge };

// A snap: the vertex `a` (a == b), or the point of the edge (a, b), a < b.
struct Snap {
  SnapKind kind = SnapKind::kVertex;
  glm::dvec3 point{0.0};
  glm::dvec2 pixel{0.0};  // the point's projection
  double distance_px = 0.0;
  double depth = 0.0;
  std::uint32_t a = 0, b = 0;

  // Nearer on screen first, then nearer in depth, then the lower index.
  auto key() const { return std::make_tuple(distance_px, depth, a, b); }
};

// The triangles a snap looks at, their vertices placed in the world in
// double: the object's mesh under its matrix (mesh mode), or its OBB's
// 8 corners and 12 triangles, box_mesh's numbering (obb mode).
struct PlacedTriangles {
  std::vector<glm::dvec3> vertices;       // by vertex index
  std::span<const glm::uvec3> triangles;  // index `vertices`
};

PlacedTriangles placed_triangles(const Scene& scene, std::uint32_t object, PickMode mode) {
  const Object& o = scene.objects[object];
  const Mesh& mesh = scene.meshes[o.mesh];
  PlacedTriangles g;
  if (mode == PickMode::kObb) {
    const std::array<glm::dvec3, 8> c = box_corners(glm::dmat4x3(o.world_matrix()), mesh.triangle_bounds());
    g.vertices.assign(c.begin(), c.end());
    g.triangles = box_triangles();
    return g;
  }
  const glm::dmat4 m = o.world_matrix();
  g.vertices.reserve(mesh.positions.size());
  for (const glm::vec3& v : mesh.positions) {
    g.vertices.push_back(glm::dvec3(m * glm::dvec4(glm::dvec3(v), 1.0)));
  }
  g.triangles = mesh.triangles;
  return g;
}

// The line of image-plane point (X, Y)'s ray, by the contract's formulas in
// double (Camera::ray rounds to float): origin and (not unit) direction.
std::pair<glm::dvec3, glm::dvec3> pixel_line(const Camera& cam, double X, double Y) {
  const CameraSpec& s = cam.spec();
  const double x = 2.0 * X / s.width - 1.0, y = 1.0 - 2.0 * Y / s.height;
  const bool persp = cam.projection() == Projection::kPerspective;
  const double sy = persp ? std::tan(glm::radians(s.fov_deg) / 2.0) : s.ortho_height / 2.0;
  const double sx = sy * s.width / s.height;
  const glm::dvec3 across = (x * sx) * cam.right() + (y * sy) * cam.up();
  if (persp) return {cam.eye(), cam.forward() + across};
  return {cam.eye() + across, cam.forward()};
}

// The point of segment [p, q] nearest to the line o + s·d (s any real): the
// closest points of two lines, the segment's parameter clamped to [0, 1]
// (the squared distance is convex in it, so clamping keeps it the
// nearest). A segment parallel to the line (or of zero length) is equally
// near everywhere: its end nearer the camera along d.
glm::dvec3 segment_point_nearest_line(const glm::dvec3& p, const glm::dvec3& q,
                                      const glm::dvec3& o, const glm::dvec3& d) {
  const glm::dvec3 e = q - p, w = o - p;
  const double a = glm::dot(d, d), b = glm::dot(d, e), c = glm::dot(e, e);
  const double dw = glm::dot(d, w), ew = glm::dot(e, w);
  const double den = a * c - b * b;  // a·c·sin²(angle) >= 0
  double u = b > 0.0 ? 0.0 : 1.0;
  if (den > 1e-12 * a * c) u = std::clamp((a * ew - b * dw) / den, 0.0, 1.0);
  return p + u * e;
}

// In front of the camera, where its rays go: depth > 0 for a perspective
// camera (project() needs it), >= 0 for an orthographic one.
bool in_front(const Camera& cam, const glm::dvec3& p) {
  const double z = cam.depth(p);
  return cam.projection() == Projection::kPerspective ? z > 0.0 : z >= 0.0;
}

// Whether the camera's ray through p (from the eye, or along the view from
// the eye's plane; origin in double) sees p: see kSnapVisibleTolerance.
bool sees(const Picker& picker, const Camera& cam, const QueryOptions& options,
          const glm::dvec3& p) {
  RayD r;
  if (cam.projection() == Projection::kPerspective) {
    r.org = cam.eye();
    r.dir = glm::vec3(glm::normalize(p - cam.eye()));
  } else {
    r.org = p - cam.depth(p) * cam.forward();
    r.dir = glm::vec3(cam.forward());
  }
  const glm::dvec3 dir(r.dir);
  const double t = glm::dot(p - r.org, dir) / glm::dot(dir, dir);
  const Hit h = picker.intersect(r, options);
  return !h.hit() || double(h.t) >= t * (1.0 - kSnapVisibleTolerance);
}

// The snap of `kind` on `object` for image-plane point `px`: among the
// vertices its triangles use, or the points of their edges (but the
// diagonals inside flat faces) nearest the point's ray, those in front of the camera whose projection lies within
// `radius` pixels of px; the first by Snap::key() that the camera sees.
// nullopt when there is none. Cost: O(vertices) or O(triangles log
// triangles), plus one ray per candidate tried.
std::optional<Snap> find_snap(const Picker& picker, const Scene& scene, const Camera& cam,
                              const QueryOptions& options, std::uint32_t object,
                              const glm::dvec2& px, SnapKind kind, double radius) {
  const PlacedTriangles g = placed_triangles(scene, object, options.mode);
  std::vector<Snap> within;
  const auto consider = [&](const glm::dvec3& p, std::uint32_t a, std::uint32_t b) {
    if (!in_front(cam, p)) return;
    const glm::dvec2 s = cam.project(p);
    const double d = std::hypot(s.x - px.x, s.y - px.y);
    if (!(d <= radius)) return;
    within.push_back(Snap{kind, p, s, d, cam.depth(p), a, b});
  };
  if (kind == SnapKind::kVertex) {
    std::vector<char> used(g.vertices.size(), 0);
    for (const glm::uvec3& t : g.triangles) used[t.x] = used[t.y] = used[t.z] = 1;
    for (std::uint32_t i = 0; i < used.size(); ++i) {
      if (used[i]) consider(g.vertices[i], i, i);
    }
  } else {
    // Each edge once (by vertex index), with the triangles that use it.
    struct EdgeUse {
      std::uint32_t a, b, triangle;
      bool operator<(const EdgeUse& o) const {
        return std::tie(a, b, triangle) < std::tie(o.a, o.b, o.triangle);
      }
    };
    std::vector<EdgeUse> uses;
    uses.reserve(3 * g.triangles.size());
    for (std::uint32_t k = 0; k < g.triangles.size(); ++k) {
      const glm::uvec3& t = g.triangles[k];
      for (const auto& [a, b] : {std::pair{t.x, t.y}, {t.y, t.z}, {t.z, t.x}}) {
        if (a != b) uses.push_back(EdgeUse{std::min(a, b), std::max(a, b), k});
      }
    }
    std::sort(uses.begin(), uses.end());
    const auto normal = [&](std::uint32_t k) {
      const glm::uvec3& t = g.triangles[k];
      return glm::cross(g.vertices[t.y] - g.vertices[t.x], g.vertices[t.z] - g.vertices[t.x]);
    };
    // The diagonal inside a flat face (a box side's, a quad's): an edge of
    // exactly two triangles whose normals are parallel. A CAD user means
    // the face's outline, not how it was cut into triangles.
    const auto inside_flat_face = [&](std::uint32_t k0, std::uint32_t k1) {
      const glm::dvec3 n0 = normal(k0), n1 = normal(k1);
      const double l = glm::length(n0) * glm::length(n1);
      return l > 0.0 && glm::length(glm::cross(n0, n1)) <= 1e-9 * l;
    };
    const auto [o, d] = pixel_line(cam, px.x, px.y);
    for (std::size_t i = 0; i < uses.size();) {
      std::size_t j = i + 1;
      while (j < uses.size() && uses[j].a == uses[i].a && uses[j].b == uses[i].b) ++j;
      if (!(j - i == 2 && inside_flat_face(uses[i].triangle, uses[i + 1].triangle))) {
        const std::uint32_t a = uses[i].a, b = uses[i].b;
        consider(segment_point_nearest_line(g.vertices[a], g.vertices[b], o, d), a, b);
      }
      i = j;
    }
  }
  std::sort(within.begin(), within.end(),
            [](const Snap& x, const Snap& y) { return x.key() < y.key(); });
  for (const Snap& s : within) {
    if (sees(picker, cam, options, s.point)) return s;
  }
  return std::nullopt;
}

// Adds the snap to a hit's answer line (ended by '\n'): a JSON "snap"
// field after the hit's fields, or a text clause.
std::string with_snap(std::string line, const std::string& format,
                      const std::optional<Snap>& snap, double radius) {
  const std::size_t end = format == "text" ? line.rfind('\n') : line.rfind('}');
  const bool vertex = snap && snap->kind == SnapKind::kVertex;
  const auto f = [](double v) { return tools::format_float(static_cast<float>(v)); };
  std::string add;
  if (format == "text") {
    if (!snap) {
      add = ", no snap within " + format_coord(radius) + " px";
    } else {
      add = ", snapped to " +
            (vertex ? "vertex " + std::to_string(snap->a)
                    : "edge " + std::to_string(snap->a) + "-" + std::to_string(snap->b)) +
            " at (" + f(snap->point.x) + ", " + f(snap->point.y) + ", " + f(snap->point.z) +
            "), " + format_coord(snap->distance_px) + " px";
    }
  } else if (!snap) {
    add = ",\"snap\":null";
  } else {
    add = ",\"snap\":{\"kind\":\"" + std::string(vertex ? "vertex" : "edge") + "\",\"point\":[" +
          f(snap->point.x) + "," + f(snap->point.y) + "," + f(snap->point.z) + "],\"pixel\":[" +
          format_coord(snap->pixel.x) + "," + format_coord(snap->pixel.y) +
          "],\"distance_px\":" + format_coord(snap->distance_px) +
          (vertex ? ",\"vertex\":" + std::to_string(snap->a)
                  : ",\"edge\":[" + std::to_string(snap->a) + "," + std::to_string(snap->b) + "]") +
          "}";
  }
  line.insert(end, add);
  return line;
}

// Adds "pixel":[X,Y] after the "ray":i field of a JSON answer.
std::string with_pixel_json(std::string json, const glm::dvec2& p) {
  const std::size_t comma = json.find(',');
  json.insert(comma, ",\"pixel\":[" + format_coord(p.x) + "," + format_coord(p.y) + "]");
  return json;
}

// "ray i: ..." becomes "ray i, pixel (X, Y): ...".
std::string with_pixel_text(std::string text, const glm::dvec2& p) {
  const std::size_t colon = text.find(':');
  text.insert(colon, ", pixel (" + format_coord(p.x) + ", " + format_coord(p.y) + ")");
  return text;
}

std::string pick_answer(std::size_t i, const RayD& ray, std::span<const Hit> hits,
                        bool all, const std::string& format,
                        const std::vector<std::string>& names, const glm::dvec2* pixel) {
  const auto line = [&](std::string text) {
    if (pixel) text = format == "text" ? with_pixel_text(text, *pixel) : with_pixel_json(text, *pixel);
    return text + '\n';
  };
  if (format != "text") {
    if (all) return line(tools::hits_to_json(i, ray, {hits.begin(), hits.end()}, names));
    return hits.empty() ? line(tools::hit_to_json(i, ray, Hit{}, ""))
                        : line(tools::hit_to_json(i, ray, hits[0], names[hits[0].object]));
  }
  if (hits.empty()) return line(tools::hit_to_text(i, ray, Hit{}, ""));
  std::string out;
  for (const Hit& h : hits) out += line(tools::hit_to_text(i, ray, h, names[h.object]));
  return out;
}

PixelPick::PixelPick(CLI::App& cmd, CLI::Option_group& ray_source) {
  camera_.add_to(cmd);
  pixel_opt_ = add_text_option(ray_source, "--pixel", pixel_,
                               "An image-plane point X,Y in pixels ((0,0) the top-left "
                               "corner; pixel (i,j)'s centre is i+0.5,j+0.5); needs a camera");
  pixels_opt_ = add_text_option(ray_source, "--pixels", pixels_,
                                "Points file, one 'X Y' or 'X,Y' per line; '-' reads stdin");
  radius_opt_ = cmd.add_option("--radius", radius_,
                               "Pick the object nearest in depth among those hit within R "
                               "pixels of the point (0..256); with --snap, also how far "
                               "it snaps")
                    ->transform(a_number());
  snap_opt_ = cmd.add_option("--snap", snap_,
                             "Snap to the picked object's nearest vertex or edge point "
                             "within R pixels (--radius; 8 when not given), as CAD tools do")
                  ->check(CLI::IsMember({"vertex", "edge"}));
}

bool PixelPick::chosen() const {
  return pixel_opt_->count() > 0 || pixels_opt_->count() > 0 ||
         radius_opt_->count() > 0 || snap_opt_->count() > 0 || camera_.any_given();
}

int PixelPick::run(const std::string& scene_file, const PickArgs& a) const {
  const bool one = pixel_opt_->count() > 0;
  const bool snap = snap_opt_->count() > 0;
  if (snap && !one && pixels_opt_->count() == 0) {
    return fail(kExitUsage,
                "pick: --snap snaps on the screen: it needs --pixel X,Y or --pixels FILE, "
                "not --ray or --rays");
  }
  if (!one && pixels_opt_->count() == 0) {
    return fail(kExitUsage,
                       "pick: a camera needs --pixel X,Y or --pixels FILE");
  }
  if (!(radius_ >= 0.0 && radius_ <= kMaxRadius)) {
    return fail(kExitUsage, "pick: --radius must be in 0..256 pixels, got " +
                                             format_coord(radius_));
  }
  if (a.all && radius_opt_->count() > 0) {
    return fail(kExitUsage,
                       "pick: --radius picks one object per point; it does not combine "
                       "with --all");
  }
  if (a.all && snap) {
    return fail(kExitUsage,
                "pick: --snap snaps to the one object a point picks; it does not combine "
                "with --all");
  }
  const std::string format = !a.format.empty() ? a.format : (one ? "text" : "jsonl");
  if (format == "json" && !one) {
    return fail(kExitUsage,
                       "pick: --format json is for a single --pixel; use --format jsonl "
                       "with --pixels");
  }
  int status = 0;
  camera_.check("pick", nullptr, status);
  if (status != 0) return status;
  tools::PointList points;
  if (one) {
    std::string why;
    const std::optional<glm::dvec2> p = tools::parse_point<2>(pixel_, why, "X,Y", kMaxInputPoint);
    if (!p) return fail(kExitUsage, "pick: --pixel " + in_quotes(pixel_) + ": " + why);
    points.points.push_back(*p);
  } else {
    points = tools::read_points<2>(pixels_);
  }
  if (!points.ok()) return fail(kExitBadInput, points.error);

  const std::optional<CameraOptions::View> view =
      camera_.load_view("pick", scene_file, a.load, status);
  if (!view) return status;
  const Scene& scene = view->loaded.scene;
  const Camera& cam = view->camera;

  // A point outside the image still has a ray (the camera's plane goes on),
  // but is most likely a mistake: one warning, naming the first.
  std::size_t outside = 0, first_outside = 0;
  for (std::size_t i = 0; i < points.points.size(); ++i) {
    const glm::dvec2& p = points.points[i];
    if (p.x >= 0.0 && p.y >= 0.0 && p.x <= cam.width() && p.y <= cam.height()) continue;
    if (outside++ == 0) first_outside = i;
  }
  if (outside > 0) {
    const glm::dvec2& p = points.points[first_outside];
    std::fprintf(stderr,
                 "raypick: warning: %zu pixel point%s outside the %dx%d image (the first: %s,%s%s); "
                 "answered as the camera's rays through them\n",
                 outside, outside == 1 ? " lies" : "s lie", cam.width(), cam.height(),
                 tools::format_float(static_cast<float>(p.x)).c_str(),
                 tools::format_float(static_cast<float>(p.y)).c_str(),
                 one ? "" : (", line " + std::to_string(points.lines[first_outside])).c_str());
  }

  const PickMode mode = a.mode;
  const Picker picker(scene, picker_config(mode));
  const std::vector<std::string> names = object_names(scene);
  const QueryOptions options(mode, a.mask);

  // Without --radius and --all, the points' rays go through one batch.
  std::vector<Ray> rays;
  rays.reserve(points.points.size());
  for (const glm::dvec2& p : points.points) {
    Ray r = cam.ray(p.x, p.y);
    r.tmax = a.max_t;
    rays.push_back(r);
  }
  std::vector<Hit> batch;
  if (!a.all && radius_opt_->count() == 0) batch = picker.intersect_batch(rays, options);

  std::string out;
  for (std::size_t i = 0; i < points.points.size(); ++i) {
    const glm::dvec2& p = points.points[i];
    Ray ray = rays[i];
    std::vector<Hit> hits;
    if (a.all) {
      hits = picker.intersect_all(ray, options, a.limit == 0 ? SIZE_MAX : a.limit);
    } else {
      Hit hit = batch.empty() ? Hit{} : batch[i];
      if (radius_opt_->count() > 0) {
        std::tie(ray, hit) = pick_within(picker, cam, p.x, p.y, radius_, a.max_t, options);
      }
      if (hit.hit()) hits.push_back(hit);
    }
    std::string answer = pick_answer(i, to_double(ray), hits, a.all, format, names, &p);
    if (snap && !hits.empty()) {
      const double r = radius_opt_->count() > 0 ? radius_ : kDefaultSnapRadius;
      const SnapKind kind = snap_ == "edge" ? SnapKind::kEdge : SnapKind::kVertex;
      answer = with_snap(std::move(answer), format,
                         find_snap(picker, scene, cam, options, hits[0].object, p, kind, r), r);
    }
    write_buffered(out, answer);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return finish_output(0);
}

// `raypick pick SCENE --ray ... | --rays FILE|-` by ray, or by pixel
// (PixelPick).
class PickCommand final : public Command {
 public:
  explicit PickCommand(CLI::App& app);
  int run() const override;

 private:
  int run_rays() const;

  PickArgs a_;
  std::optional<PixelPick> pixel_;
};

PickCommand::PickCommand(CLI::App& app)
    : Command(app.add_subcommand("pick",
                                 "Cast rays into a scene and print the nearest object hit")) {
  PickArgs& pick = a_;
  add_scene_argument(*cmd_, scene_);
  // Exactly one source of rays: CLI11 refuses none or two ("Exactly 1
  // option from [--ray,--rays,--pixel,--pixels]", exit 2).
  CLI::Option_group* ray_source = cmd_->add_option_group(
      "rays", "Where the rays come from: one ray, a rays file, or a camera's points");
  ray_source->add_option("--ray", pick.ray, "One ray: ox,oy,oz,dx,dy,dz");
  ray_source->add_option(
      "--rays", pick.rays,
      "Rays file, one 'ox oy oz dx dy dz' per line; '-' reads stdin");
  add_enum_option(*cmd_, "--mode", pick.mode, mode_names(),
                  "obb: nearest oriented bounding box (default); mesh: "
                  "nearest triangle, exact");
  CLI::Option* all_opt = cmd_->add_flag(
      "--all", pick.all,
      "Every object along the ray, nearest first (one hit per object)");
  cmd_->add_option("--limit", pick.limit, "With --all: at most K hits per ray")
      ->needs(all_opt)
      ->transform(whole_number(1));
  add_mask_option(*cmd_, pick.mask,
                  "Only objects whose pick mask shares a bit with M "
                  "(a JSON scene's \"layer\": k is bit k; decimal or "
                  "0x-hex)");
  cmd_->add_option("--max-t", pick.max_t,
                   "Only hits with t <= T (in units of the direction)")
      ->transform(float_at_least(0.0));
  cmd_->add_option("--format", pick.format,
                   "Output: text (default for --ray), json (one ray), "
                   "jsonl (default for --rays)")
      ->check(CLI::IsMember({"text", "json", "jsonl"}));
  add_load_options(*cmd_, pick.load);

  pixel_.emplace(*cmd_, *ray_source);
  ray_source->require_option(1);
}

int PickCommand::run() const {
  return pixel_->chosen() ? pixel_->run(scene_, a_) : run_rays();
}

int PickCommand::run_rays() const {
  const PickArgs& a = a_;
  int status = 0;
  if (a.rays && a.rays->empty()) {
    return fail(kExitUsage,
                "pick: --rays needs a file name, or '-' for standard input");
  }
  if (!(a.max_t >= 0.0f)) {
    return fail(kExitUsage, "pick: --max-t must be a number >= 0");
  }
  const PickMode mode = a.mode;
  const std::string format =
      !a.format.empty() ? a.format : (a.ray ? "text" : "jsonl");
  if (format == "json" && !a.ray) {
    return fail(kExitUsage,
                "pick: --format json is for a single --ray; use --format "
                "jsonl with --rays");
  }
  // All rays are read and checked before anything is printed, so bad input
  // never leaves a partial answer on stdout.
  tools::RayList rays;
  if (a.ray) {
    std::string error;
    std::optional<RayD> ray = tools::parse_ray(*a.ray, error);
    if (!ray) {
      return fail(kExitBadInput,
                  "--ray '" + printable(*a.ray, 80) + "': " + error);
    }
    rays.rays.push_back(*ray);
  } else {
    rays = tools::read_rays(*a.rays);
  }
  if (!rays.ok()) return fail(kExitBadInput, rays.error);
  for (RayD& ray : rays.rays) ray.tmax = a.max_t;

  std::optional<Loaded> loaded = load_or_report(scene_, a.load, status);
  if (!loaded) return status;
  const Picker picker(loaded->scene, picker_config(mode));
  const std::vector<std::string> names = object_names(loaded->scene);
  const QueryOptions options(mode, a.mask);
  std::string out;
  for (std::size_t i = 0; i < rays.rays.size(); ++i) {
    const RayD& ray = rays.rays[i];
    if (a.all) {
      const std::vector<Hit> hits = picker.intersect_all(
          ray, options, a.limit == 0 ? SIZE_MAX : a.limit);
      write_buffered(out, pick_answer(i, ray, hits, true, format, names));
    } else {
      const Hit hit = picker.intersect(ray, options);
      write_buffered(
          out, pick_answer(i, ray, {&hit, hit.hit() ? 1u : 0u}, false, format, names));
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return finish_output(0);
}

}  // namespace

std::unique_ptr<Command> add_pick(CLI::App& app) { return std::make_unique<PickCommand>(app); }

}  // namespace raypick::cli
