// `raypick pick SCENE <camera> --pixel X,Y | --pixels FILE|- [--radius R]`,
// and how `pick` prints an answer, by ray or by pixel.
#include "screen.h"

#include "../tools/ray_io.h"

#include "raypick/bvh/picker.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <tuple>

namespace raypick::cli {
namespace {

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

}  // namespace

std::vector<std::string> object_names(const Scene& scene) {
  std::vector<std::string> names;
  names.reserve(scene.objects.size());
  for (const Object& o : scene.objects) names.push_back(o.name);
  return names;
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

void write_buffered(std::string& out, const std::string& text) {
  out += text;
  if (out.size() > (1 << 16)) {
    std::fwrite(out.data(), 1, out.size(), stdout);
    out.clear();
  }
}

PixelPick::PixelPick(CLI::App& cmd, CLI::Option_group& ray_source) {
  camera_.add_to(cmd);
  pixel_opt_ = ray_source.add_option("--pixel", pixel_,
                              "An image-plane point X,Y in pixels ((0,0) the top-left "
                              "corner; pixel (i,j)'s centre is i+0.5,j+0.5); needs a camera")
                   ->check(not_an_option());
  pixels_opt_ = ray_source.add_option("--pixels", pixels_,
                               "Points file, one 'X Y' or 'X,Y' per line; '-' reads stdin")
                    ->check(not_an_option());
  radius_opt_ = cmd.add_option("--radius", radius_,
                               "Pick the object nearest in depth among those hit within R "
                               "pixels of the point (0..256)")
                    ->transform(a_number());
}

bool PixelPick::chosen() const {
  return pixel_opt_->count() > 0 || pixels_opt_->count() > 0 ||
         radius_opt_->count() > 0 || camera_.any_given();
}

int PixelPick::run(const PickArgs& a) const {
  const bool one = pixel_opt_->count() > 0;
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
  const std::string format = !a.format.empty() ? a.format : (one ? "text" : "jsonl");
  if (format == "json" && !one) {
    return fail(kExitUsage,
                       "pick: --format json is for a single --pixel; use --format jsonl "
                       "with --pixels");
  }
  if (std::string e = camera_.check(); !e.empty()) {
    return fail(kExitUsage, "pick: " + e);
  }
  tools::PointList points;
  if (one) {
    std::string why;
    const std::optional<glm::dvec2> p = tools::parse_point<2>(pixel_, why, "X,Y");
    if (!p) return fail(kExitUsage, "pick: --pixel " + in_quotes(pixel_) + ": " + why);
    points.points.push_back(*p);
  } else {
    points = tools::read_points<2>(pixels_);
  }
  if (!points.ok()) return fail(kExitBadInput, points.error);

  int status = 0;
  const std::optional<CameraOptions::View> view =
      camera_.load_view("pick", a.scene, a.load, status);
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
    write_buffered(out, pick_answer(i, to_double(ray), hits, a.all, format, names, &p));
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return finish_output(0);
}

}  // namespace raypick::cli
