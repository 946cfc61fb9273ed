// `raypick render SCENE <camera> --out FILE.png [--mode obb|mesh]
//  [--color shade|id|ids|depth|normal] [--highlight ID,...] [--rect X0,Y0,X1,Y1]`.
#include "screen.h"

#include "../tools/image.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"

#include <CLI/CLI.hpp>

#include <glm/geometric.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace raypick::cli {

struct RenderArgs {
  std::string scene;
  CameraOptions camera;
  std::string out;
  PickMode mode = PickMode::kObb;
  std::string color = "shade";
  std::vector<std::uint32_t> highlight;
  std::string rect;
  LoadOptions load;
};

namespace {

using tools::Rgb;

constexpr Rgb kBackground{28, 30, 36};
constexpr Rgb kHighlight{255, 140, 0};
constexpr Rgb kOutline{255, 235, 40};
constexpr Rgb kMarquee{70, 150, 255};

// The world normal of the OBB face that point p (on or in the box) is
// nearest to, in the box's frame; unit length.
glm::dvec3 obb_face_normal(const Obb& obb, const glm::vec3& p) {
  const glm::dvec3 q = glm::dvec3(glm::dmat4(obb.to_local) * glm::dvec4(glm::dvec3(p), 1.0));
  int best = 0;
  double best_d = INFINITY;
  for (int a = 0; a < 3; ++a) {
    const double d = std::min(std::abs(q[a] - obb.local.min[a]), std::abs(q[a] - obb.local.max[a]));
    if (d < best_d) {
      best_d = d;
      best = a;
    }
  }
  // Normals go through the inverse transpose: row `best` of to_local.
  const glm::dvec3 n{obb.to_local[0][best], obb.to_local[1][best], obb.to_local[2][best]};
  return glm::normalize(n);
}

// The t range a scene's hits fall in, seen from the camera: from the
// nearest to the farthest point of the box around every object.
std::pair<double, double> t_range(const Camera& cam, const Aabb& b) {
  if (b.empty()) return {0.0, 1.0};
  double lo = INFINITY, hi = 0.0;
  for (int k = 0; k < 8; ++k) {
    const glm::dvec3 c{(k & 1) ? b.max.x : b.min.x, (k & 2) ? b.max.y : b.min.y,
                       (k & 4) ? b.max.z : b.min.z};
    const double t = cam.projection() == Projection::kPerspective ? glm::length(c - cam.eye())
                                                                   : cam.depth(c);
    hi = std::max(hi, t);
  }
  if (cam.projection() == Projection::kPerspective) {
    const glm::dvec3 nearest = glm::clamp(cam.eye(), glm::dvec3(b.min), glm::dvec3(b.max));
    lo = glm::length(nearest - cam.eye());
  } else {
    lo = INFINITY;
    for (int k = 0; k < 8; ++k) {
      const glm::dvec3 c{(k & 1) ? b.max.x : b.min.x, (k & 2) ? b.max.y : b.min.y,
                         (k & 4) ? b.max.z : b.min.z};
      lo = std::min(lo, cam.depth(c));
    }
    lo = std::max(lo, 0.0);
  }
  return {lo, std::max(hi, lo + 1e-9)};
}

}  // namespace

RenderCommand::RenderCommand(CLI::App& app) : args_(std::make_unique<RenderArgs>()) {
  RenderArgs& a = *args_;
  cmd_ = app.add_subcommand("render",
                            "Render the view to a PNG: one ray per pixel centre, coloured "
                            "by object, id, depth or normal");
  cmd_->add_option("SCENE", a.scene, "Scene file (.obj, .gltf, .glb, .json)")->required();
  a.camera.add_to(*cmd_);
  cmd_->add_option("--out", a.out, "The PNG file to write")->required()->check(not_an_option());
  add_enum_option(*cmd_, "--mode", a.mode, mode_names(),
                  "obb (default) or mesh: what a ray hits, as in pick");
  cmd_->add_option("--color", a.color,
                   "shade (default): palette colour times a headlight; id: palette colour; "
                   "ids: the exact id buffer, RGB = object id + 1; depth: grey by t; "
                   "normal: the world normal")
      ->check(CLI::IsMember({"shade", "id", "ids", "depth", "normal"}));
  cmd_->add_option("--highlight", a.highlight,
                   "Tint and outline these objects (ids, comma-separated; e.g. select's output)")
      ->delimiter(',')
      ->transform(whole_number(0, 0xFFFFFFFFu));
  cmd_->add_option("--rect", a.rect, "Draw this marquee X0,Y0,X1,Y1 (image-plane pixels)")
      ->check(not_an_option());
  add_load_options(*cmd_, a.load);
}

RenderCommand::~RenderCommand() = default;

RenderCommand::operator bool() const { return cmd_->parsed(); }

const std::string& RenderCommand::scene() const { return args_->scene; }

int RenderCommand::run() const {
  const RenderArgs& a = *args_;
  const auto start = Clock::now();
  if (std::string e = a.camera.check(); !e.empty()) {
    return fail(kExitUsage, "render: " + e);
  }
  std::string error;
  std::optional<std::array<double, 4>> rect;
  if (!a.rect.empty()) {
    rect = parse_rect(a.rect, error);
    if (!rect) return fail(kExitUsage, "render: " + error);
  }
  if (a.color == "ids" && (rect || !a.highlight.empty())) {
    return fail(kExitUsage,
                       "render: --color ids writes the exact id buffer; --highlight and "
                       "--rect do not apply to it");
  }
  // The picture's file is opened before any work, so a bad path fails at once.
  tools::OutputFile png;
  if (std::string e = png.open(a.out, "PNG"); !e.empty()) return fail(kExitBadInput, e);
  int status = 0;
  const std::optional<CameraOptions::View> view =
      a.camera.load_view("render", a.scene, a.load, status);
  if (!view) return status;
  const Scene& scene = view->loaded.scene;
  const Camera& cam = view->camera;
  std::vector<std::uint8_t> lit(scene.objects.size(), 0);
  for (std::uint32_t id : a.highlight) {
    if (id >= scene.objects.size()) {
      return fail(kExitUsage, "render: --highlight " + std::to_string(id) +
                                               ": the scene has " +
                                               std::to_string(scene.objects.size()) +
                                               " objects (ids 0.." +
                                               std::to_string(scene.objects.size() - 1) + ")");
    }
    lit[id] = 1;
  }

  const PickMode mode = a.mode;
  const Picker picker(scene, picker_config(mode));
  const QueryOptions options(mode);
  const int W = cam.width(), H = cam.height();
  const auto [t_lo, t_hi] = t_range(cam, picker.world_bounds());
  const bool ids_only = a.color == "ids";
  tools::Image img(W, H, ids_only ? Rgb{} : kBackground);
  std::vector<std::uint32_t> ids(std::size_t(W) * H, kInvalidId);
  const bool tty = isatty(fileno(stderr));
  std::size_t hit_count = 0;
  constexpr int kRows = 16;  // rows per batch
  std::vector<Ray> rays;
  for (int j0 = 0; j0 < H; j0 += kRows) {
    const int j1 = std::min(H, j0 + kRows);
    rays.clear();
    for (int j = j0; j < j1; ++j) {
      for (int i = 0; i < W; ++i) rays.push_back(cam.ray(i + 0.5, j + 0.5));
    }
    const std::vector<Hit> hits = picker.intersect_batch(rays, options);
    for (std::size_t k = 0; k < hits.size(); ++k) {
      const Hit& h = hits[k];
      const int i = int(k % W), j = j0 + int(k / W);
      ids[std::size_t(j) * W + i] = h.object;
      if (!h.hit()) continue;
      ++hit_count;
      if (ids_only) {
        img.at(i, j) = tools::id_colour(h.object);
        continue;
      }
      const Ray& r = rays[k];
      glm::dvec3 n{0.0};
      if (a.color == "shade" || a.color == "normal") {
        if (mode == PickMode::kMesh) {
          n = glm::dvec3(picker.world_normal(h));
        } else if (h.t > 0.0f) {
          n = obb_face_normal(picker.obb(h.object), r.org + h.t * r.dir);
          if (glm::dot(n, glm::dvec3(r.dir)) > 0.0) n = -n;  // facing the camera
        }
      }
      Rgb c;
      if (a.color == "id") {
        c = tools::palette(h.object);
      } else if (a.color == "shade") {
        // A headlight: full light facing the eye, a quarter grazing it.
        const double facing = n == glm::dvec3(0.0)
                                  ? 1.0
                                  : std::abs(glm::dot(n, glm::normalize(glm::dvec3(r.dir))));
        c = tools::scale(tools::palette(h.object), 0.25 + 0.75 * facing);
      } else if (a.color == "depth") {
        const double s = std::clamp((h.t - t_lo) / (t_hi - t_lo), 0.0, 1.0);
        const auto g = std::uint8_t(std::lround(255.0 - 205.0 * s));
        c = {g, g, g};
      } else {  // normal
        auto q = [](double v) { return std::uint8_t(std::lround((v * 0.5 + 0.5) * 255.0)); };
        c = {q(n.x), q(n.y), q(n.z)};
      }
      if (lit[h.object]) c = tools::mix(c, kHighlight, 0.45);
      img.at(i, j) = c;
    }
    if (tty) std::fprintf(stderr, "\rrender: row %d / %d", j1, H);
  }
  if (tty) std::fputc('\n', stderr);
  // Outlines: highlighted pixels next to another object or a miss.
  if (!a.highlight.empty()) {
    for (int j = 0; j < H; ++j) {
      for (int i = 0; i < W; ++i) {
        const std::uint32_t id = ids[std::size_t(j) * W + i];
        if (id == kInvalidId || !lit[id]) continue;
        auto other = [&](int x, int y) {
          return x < 0 || y < 0 || x >= W || y >= H || ids[std::size_t(y) * W + x] != id;
        };
        if (other(i - 1, j) || other(i + 1, j) || other(i, j - 1) || other(i, j + 1)) {
          img.at(i, j) = kOutline;
        }
      }
    }
  }
  // The marquee: pixels whose centres are inside tinted, its edge drawn.
  if (rect) {
    const auto [x0, y0, x1, y1] = *rect;
    const double xl = std::min(x0, x1), xh = std::max(x0, x1);
    const double yl = std::min(y0, y1), yh = std::max(y0, y1);
    const int i0 = std::max(0, int(std::ceil(xl - 0.5))), i1 = std::min(W - 1, int(std::floor(xh - 0.5)));
    const int k0 = std::max(0, int(std::ceil(yl - 0.5))), k1 = std::min(H - 1, int(std::floor(yh - 0.5)));
    for (int j = k0; j <= k1; ++j) {
      for (int i = i0; i <= i1; ++i) {
        const bool edge = i == i0 || i == i1 || j == k0 || j == k1;
        img.at(i, j) = edge ? kMarquee : tools::mix(img.at(i, j), kMarquee, 0.18);
      }
    }
  }
  if (std::string e = tools::write_png(png, img); !e.empty()) return fail(kExitBadInput, e);
  const double ms = ms_since(start);
  std::fprintf(stderr, "render: %dx%d, %zu of %zu pixels hit, %.1f ms, wrote %s\n", W, H,
               hit_count, std::size_t(W) * H, ms, printable(a.out).c_str());
  return 0;
}

}  // namespace raypick::cli
