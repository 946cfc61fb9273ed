#include "screen_view.h"

#include <glm/geometric.hpp>
#include <glm/ext/matrix_double4x4.hpp>

#include <algorithm>
#include <cmath>

namespace raypick::tools {
namespace {

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

// The pixels whose centres (i + 0.5, j + 0.5) lie in [lo, hi] (boundary
// included), clipped to [0, size): first and one past the last.
std::pair<int, int> pixel_span(double lo, double hi, int size) {
  const double first = std::ceil(lo - 0.5), last = std::floor(hi - 0.5);
  const int a = int(std::clamp(first, 0.0, double(size)));
  const int b = int(std::clamp(last + 1.0, 0.0, double(size)));
  return {a, std::max(a, b)};
}

}  // namespace

std::optional<Colouring> colouring_of(std::string_view name) {
  if (name == "shade") return Colouring::kShade;
  if (name == "id") return Colouring::kId;
  if (name == "ids") return Colouring::kIds;
  if (name == "depth") return Colouring::kDepth;
  if (name == "normal") return Colouring::kNormal;
  return std::nullopt;
}

RenderedView render_view(const Picker& picker, const Camera& cam, PickMode mode,
                         Colouring colouring, std::span<const std::uint8_t> lit,
                         const std::function<void(int rows_done)>& rows_done) {
  const QueryOptions options(mode);
  const int W = cam.width(), H = cam.height();
  const auto [t_lo, t_hi] = t_range(cam, picker.world_bounds());
  const bool ids_only = colouring == Colouring::kIds;
  RenderedView view;
  view.image = Image(W, H, ids_only ? Rgb{} : kBackground);
  view.ids.assign(std::size_t(W) * H, kInvalidId);
  constexpr int kRows = 16;  // rows per batch
  std::vector<Ray> rays;
  for (int j0 = 0; j0 < H; j0 += kRows) {
    const int j1 = std::min(H, j0 + kRows);
    rays.clear();
    for (int j = j0; j < j1; ++j) {
      for (int i = 0; i < W; ++i) rays.push_back(cam.ray(i + 0.5, j + 0.5));
    }
    const std::vector<Hit> hits = picker.intersect_image(rays, std::size_t(W), options);
    for (std::size_t k = 0; k < hits.size(); ++k) {
      const Hit& h = hits[k];
      const int i = int(k % W), j = j0 + int(k / W);
      view.ids[std::size_t(j) * W + i] = h.object;
      if (!h.hit()) continue;
      ++view.hits;
      if (ids_only) {
        view.image.at(i, j) = id_colour(h.object);
        continue;
      }
      const Ray& r = rays[k];
      glm::dvec3 n{0.0};
      if (colouring == Colouring::kShade || colouring == Colouring::kNormal) {
        if (mode == PickMode::kMesh) {
          n = glm::dvec3(picker.world_normal(h));
        } else if (h.t > 0.0f) {
          n = obb_face_normal(picker.obb(h.object), r.org + h.t * r.dir);
          if (glm::dot(n, glm::dvec3(r.dir)) > 0.0) n = -n;  // facing the camera
        }
      }
      Rgb c;
      if (colouring == Colouring::kId) {
        c = palette(h.object);
      } else if (colouring == Colouring::kShade) {
        // A headlight: full light facing the eye, a quarter grazing it.
        const double facing = n == glm::dvec3(0.0)
                                  ? 1.0
                                  : std::abs(glm::dot(n, glm::normalize(glm::dvec3(r.dir))));
        c = scale(palette(h.object), 0.25 + 0.75 * facing);
      } else if (colouring == Colouring::kDepth) {
        const double s = std::clamp((h.t - t_lo) / (t_hi - t_lo), 0.0, 1.0);
        // White nearest, grey 80 farthest: well clear of the background.
        const auto g = std::uint8_t(std::lround(255.0 - 175.0 * s));
        c = {g, g, g};
      } else {  // normal
        auto q = [](double v) { return std::uint8_t(std::lround((v * 0.5 + 0.5) * 255.0)); };
        c = {q(n.x), q(n.y), q(n.z)};
      }
      if (h.object < lit.size() && lit[h.object]) {
        // Lightened, and striped diagonally in the highlight colour: seen
        // on every palette colour, the highlight's own hue included.
        c = mix(c, Rgb{255, 255, 255}, 0.3);
        if ((i + j) / 3 % 2 == 0) c = mix(c, kHighlight, 0.6);
      }
      view.image.at(i, j) = c;
    }
    if (rows_done) rows_done(j1);
  }
  return view;
}

void outline_lit(RenderedView& view, std::span<const std::uint8_t> lit) {
  const int W = view.image.width, H = view.image.height;
  const auto& ids = view.ids;
  for (int j = 0; j < H; ++j) {
    for (int i = 0; i < W; ++i) {
      const std::uint32_t id = ids[std::size_t(j) * W + i];
      if (id == kInvalidId || id >= lit.size() || !lit[id]) continue;
      auto other = [&](int x, int y) {
        return x < 0 || y < 0 || x >= W || y >= H || ids[std::size_t(y) * W + x] != id;
      };
      if (other(i - 1, j) || other(i + 1, j) || other(i, j - 1) || other(i, j + 1)) {
        view.image.at(i, j) = kOutline;
      }
    }
  }
}

void draw_marquee(Image& image, const std::array<double, 4>& rect) {
  const int W = image.width, H = image.height;
  const auto [x0, y0, x1, y1] = rect;
  const double xl = std::min(x0, x1), xh = std::max(x0, x1);
  const double yl = std::min(y0, y1), yh = std::max(y0, y1);
  const int i0 = std::max(0, int(std::ceil(xl - 0.5))), i1 = std::min(W - 1, int(std::floor(xh - 0.5)));
  const int k0 = std::max(0, int(std::ceil(yl - 0.5))), k1 = std::min(H - 1, int(std::floor(yh - 0.5)));
  for (int j = k0; j <= k1; ++j) {
    for (int i = i0; i <= i1; ++i) {
      const bool edge = i == i0 || i == i1 || j == k0 || j == k1;
      image.at(i, j) = edge ? kMarquee : mix(image.at(i, j), kMarquee, 0.18);
    }
  }
}

std::vector<std::uint32_t> select_in_view(const Picker& picker, const Camera& cam,
                                          const std::array<double, 4>& rect, SelectRule rule,
                                          bool visible_only, const QueryOptions& options) {
  const auto [x0, y0, x1, y1] = rect;
  std::vector<std::uint32_t> ids = picker.select(cam.frustum(x0, y0, x1, y1), rule, options);
  if (!visible_only || ids.empty()) return ids;
  // The objects the pick hits at the pixel centres inside the rectangle.
  const auto [i0, i1] = pixel_span(std::min(x0, x1), std::max(x0, x1), cam.width());
  const auto [j0, j1] = pixel_span(std::min(y0, y1), std::max(y0, y1), cam.height());
  std::vector<std::uint8_t> seen(picker.object_count(), 0);
  std::vector<Ray> rays;
  for (int j = j0; j < j1; ++j) {
    rays.clear();
    for (int i = i0; i < i1; ++i) rays.push_back(cam.ray(i + 0.5, j + 0.5));
    for (const Hit& h : picker.intersect_batch(rays, options)) {
      if (h.hit()) seen[h.object] = 1;
    }
  }
  std::erase_if(ids, [&](std::uint32_t id) { return seen[id] == 0; });
  return ids;
}

}  // namespace raypick::tools
