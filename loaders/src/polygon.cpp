#include "polygon.h"

#include <glm/common.hpp>
#include <glm/ext/vector_double3.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace raypick::detail {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// A corner in the ring being clipped (a doubly linked list over a vector),
// and in the z-order list of the ear test's spatial hash.
struct Node {
  std::uint32_t corner;
  double x, y;
  std::uint32_t prev, next;
  std::uint32_t prev_z = kNone, next_z = kNone;
  std::uint32_t z = 0;
};

// Twice the signed area of (p, q, r): > 0 when r lies left of p -> q.
double left(const Node& p, const Node& q, const Node& r) {
  return (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x);
}

bool same_place(const Node& a, const Node& b) { return a.x == b.x && a.y == b.y; }

int sign(double v) { return (v > 0.0) - (v < 0.0); }

// q on the segment p-r, given that the three are collinear.
bool on_segment(const Node& p, const Node& q, const Node& r) {
  return q.x <= std::max(p.x, r.x) && q.x >= std::min(p.x, r.x) && q.y <= std::max(p.y, r.y) &&
         q.y >= std::min(p.y, r.y);
}

// Whether segments p1-q1 and p2-q2 meet (touching included).
bool intersects(const Node& p1, const Node& q1, const Node& p2, const Node& q2) {
  const int o1 = sign(left(p1, q1, p2)), o2 = sign(left(p1, q1, q2));
  const int o3 = sign(left(p2, q2, p1)), o4 = sign(left(p2, q2, q1));
  if (o1 != o2 && o3 != o4) return true;
  return (o1 == 0 && on_segment(p1, p2, q1)) || (o2 == 0 && on_segment(p1, q2, q1)) ||
         (o3 == 0 && on_segment(p2, p1, q2)) || (o4 == 0 && on_segment(p2, q1, q2));
}

// p inside or on the counter-clockwise triangle (a, b, c).
bool in_triangle(const Node& a, const Node& b, const Node& c, const Node& p) {
  return left(a, b, p) >= 0.0 && left(b, c, p) >= 0.0 && left(c, a, p) >= 0.0;
}

class Clipper {
 public:
  Clipper(std::span<const glm::vec3> corners, PolygonTriangles& out) : out_(out) {
    // The plane: drop the axis of the largest Newell-normal component.
    glm::dvec3 n{0.0};
    const std::size_t count = corners.size();
    for (std::size_t i = 0; i < count; ++i) {
      const glm::dvec3 a{corners[i]}, b{corners[(i + 1) % count]};
      n.x += (a.y - b.y) * (a.z + b.z);
      n.y += (a.z - b.z) * (a.x + b.x);
      n.z += (a.x - b.x) * (a.y + b.y);
    }
    glm::dvec3 m = glm::abs(n);
    if (m == glm::dvec3{0.0}) {
      // No net area (a bow tie, or all corners on a line): the plane of the
      // two largest extents.
      glm::dvec3 lo{corners[0]}, hi{corners[0]};
      for (const glm::vec3& c : corners) {
        lo = glm::min(lo, glm::dvec3(c));
        hi = glm::max(hi, glm::dvec3(c));
      }
      m = glm::dvec3{1.0} / (hi - lo + 1e-300);
    }
    const int drop = m.x >= m.y && m.x >= m.z ? 0 : (m.y >= m.z ? 1 : 2);
    const int u = (drop + 1) % 3, v = (drop + 2) % 3;
    double area = 0.0;
    for (std::size_t i = 0; i < count; ++i) {
      const glm::vec3& a = corners[i];
      const glm::vec3& b = corners[(i + 1) % count];
      area += double(a[u]) * double(b[v]) - double(b[u]) * double(a[v]);
    }
    // Counter-clockwise in (x, y): interior on the left of every edge.
    const bool flip = area < 0.0;
    nodes_.reserve(count);
    for (std::size_t k = 0; k < count; ++k) {
      const auto i = static_cast<std::uint32_t>(flip ? count - 1 - k : k);
      const auto self = static_cast<std::uint32_t>(k);
      nodes_.push_back(Node{i, double(corners[i][u]), double(corners[i][v]),
                            self == 0 ? static_cast<std::uint32_t>(count - 1) : self - 1,
                            self + 1 == count ? 0 : self + 1});
    }
  }

  // True when every corner turns left and the turns add up to one turn: a
  // convex polygon, fanned.
  bool convex() const {
    double turning = 0.0;
    for (const Node& b : nodes_) {
      const Node& a = nodes_[b.prev];
      const Node& c = nodes_[b.next];
      const double cross = left(a, b, c);
      if (!(cross > 0.0)) return false;
      const double dot = (b.x - a.x) * (c.x - b.x) + (b.y - a.y) * (c.y - b.y);
      turning += std::atan2(cross, dot);
    }
    return std::abs(turning - 2.0 * std::numbers::pi) < 1e-6;
  }

  // The fan from the face's first corner, in the face's own order (so a
  // quad's triangles are (0, 1, 2) and (0, 2, 3) whichever way it winds).
  void fan() {
    for (std::uint32_t k = 1; k + 1 < nodes_.size(); ++k) out_.triangles.push_back({0, k, k + 1});
  }

  void run() {
    hashed_ = nodes_.size() > 80;
    if (hashed_) {
      double min_x = nodes_[0].x, min_y = nodes_[0].y, max_x = min_x, max_y = min_y;
      for (const Node& n : nodes_) {
        min_x = std::min(min_x, n.x);
        min_y = std::min(min_y, n.y);
        max_x = std::max(max_x, n.x);
        max_y = std::max(max_y, n.y);
      }
      min_x_ = min_x;
      min_y_ = min_y;
      const double size = std::max(max_x - min_x, max_y - min_y);
      inv_size_ = size > 0.0 ? 32767.0 / size : 0.0;
      index_curve();
    }
    clip(filter(0, kNone), 0);
  }

 private:
  // The z-order (Morton) code of a point, 15 bits per axis.
  std::uint32_t z_order(double x, double y) const {
    auto spread = [](std::uint32_t v) {
      v = (v | (v << 8)) & 0x00FF00FFu;
      v = (v | (v << 4)) & 0x0F0F0F0Fu;
      v = (v | (v << 2)) & 0x33333333u;
      v = (v | (v << 1)) & 0x55555555u;
      return v;
    };
    const auto qx = static_cast<std::uint32_t>(std::clamp((x - min_x_) * inv_size_, 0.0, 32767.0));
    const auto qy = static_cast<std::uint32_t>(std::clamp((y - min_y_) * inv_size_, 0.0, 32767.0));
    return spread(qx) | (spread(qy) << 1);
  }

  void index_curve() {
    std::vector<std::uint32_t> order(nodes_.size());
    for (std::uint32_t k = 0; k < nodes_.size(); ++k) {
      nodes_[k].z = z_order(nodes_[k].x, nodes_[k].y);
      order[k] = k;
    }
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return nodes_[a].z < nodes_[b].z; });
    for (std::size_t k = 0; k < order.size(); ++k) {
      nodes_[order[k]].prev_z = k == 0 ? kNone : order[k - 1];
      nodes_[order[k]].next_z = k + 1 == order.size() ? kNone : order[k + 1];
    }
  }

  void emit(const Node& a, const Node& b, const Node& c) {
    out_.triangles.push_back({a.corner, b.corner, c.corner});
  }

  void remove(std::uint32_t i) {
    Node& n = nodes_[i];
    nodes_[n.prev].next = n.next;
    nodes_[n.next].prev = n.prev;
    if (n.prev_z != kNone) nodes_[n.prev_z].next_z = n.next_z;
    if (n.next_z != kNone) nodes_[n.next_z].prev_z = n.prev_z;
  }

  // A point that keeps (a, b, c) from being an ear: inside or on it, not
  // one of its corners' places (a bridge's coincident corners), and reflex
  // or collinear (if an ear holds a corner of the polygon, it holds a
  // reflex one).
  bool blocks(const Node& a, const Node& b, const Node& c, std::uint32_t p) const {
    const Node& n = nodes_[p];
    if (same_place(n, a) || same_place(n, b) || same_place(n, c)) return false;
    return in_triangle(a, b, c, n) && left(nodes_[n.prev], n, nodes_[n.next]) <= 0.0;
  }

  bool is_ear(std::uint32_t ear) const {
    const Node& b = nodes_[ear];
    const Node& a = nodes_[b.prev];
    const Node& c = nodes_[b.next];
    if (!(left(a, b, c) > 0.0)) return false;  // reflex or flat: no ear
    const double x0 = std::min({a.x, b.x, c.x}), x1 = std::max({a.x, b.x, c.x});
    const double y0 = std::min({a.y, b.y, c.y}), y1 = std::max({a.y, b.y, c.y});
    auto candidate = [&](std::uint32_t p) {
      const Node& n = nodes_[p];
      return p != b.prev && p != ear && p != b.next && n.x >= x0 && n.x <= x1 && n.y >= y0 &&
             n.y <= y1 && blocks(a, b, c, p);
    };
    if (!hashed_) {
      for (std::uint32_t p = c.next; p != b.prev; p = nodes_[p].next) {
        if (candidate(p)) return false;
      }
      return true;
    }
    // Only points whose z-order lies within the triangle's box can be in it.
    const std::uint32_t min_z = z_order(x0, y0), max_z = z_order(x1, y1);
    for (std::uint32_t p = b.prev_z; p != kNone && nodes_[p].z >= min_z; p = nodes_[p].prev_z) {
      if (candidate(p)) return false;
    }
    for (std::uint32_t p = b.next_z; p != kNone && nodes_[p].z <= max_z; p = nodes_[p].next_z) {
      if (candidate(p)) return false;
    }
    return true;
  }

  // Removes repeated and collinear corners (they make no area) from start
  // to end (the whole ring when end is kNone); returns a corner still in.
  std::uint32_t filter(std::uint32_t start, std::uint32_t end) {
    if (end == kNone) end = start;
    std::uint32_t p = start;
    bool again;
    do {
      again = false;
      Node& n = nodes_[p];
      if (n.next == p || nodes_[n.next].next == p) return p;  // two corners left
      if (same_place(n, nodes_[n.next]) || left(nodes_[n.prev], n, nodes_[n.next]) == 0.0) {
        const std::uint32_t before = n.prev;
        remove(p);
        p = end = before;
        again = true;
      } else {
        p = n.next;
      }
    } while (again || p != end);
    return end;
  }

  // The diagonal a-b leaves a into the polygon's inside.
  bool locally_inside(std::uint32_t ai, std::uint32_t bi) const {
    const Node& a = nodes_[ai];
    const Node& b = nodes_[bi];
    const Node& prev = nodes_[a.prev];
    const Node& next = nodes_[a.next];
    if (left(prev, a, next) >= 0.0) return left(a, next, b) >= 0.0 && left(prev, a, b) >= 0.0;
    return left(a, next, b) >= 0.0 || left(prev, a, b) >= 0.0;
  }

  // Where the ring crosses itself locally (a-p and p.next-b meet), the
  // triangle (a, p, b) is cut off.
  std::uint32_t cure_local_intersections(std::uint32_t start) {
    std::uint32_t p = start;
    do {
      const std::uint32_t a = nodes_[p].prev;
      const std::uint32_t q = nodes_[p].next;
      const std::uint32_t b = nodes_[q].next;
      if (a != b && !same_place(nodes_[a], nodes_[b]) &&
          intersects(nodes_[a], nodes_[p], nodes_[q], nodes_[b]) && locally_inside(a, b) &&
          locally_inside(b, a)) {
        emit(nodes_[a], nodes_[p], nodes_[b]);
        remove(p);
        remove(q);
        p = start = b;
      }
      p = nodes_[p].next;
    } while (p != start && nodes_[p].next != nodes_[p].prev);
    return filter(p, kNone);
  }

  void clip(std::uint32_t ear, int pass) {
    std::uint32_t stop = ear;
    while (nodes_[ear].prev != nodes_[ear].next) {
      const std::uint32_t prev = nodes_[ear].prev;
      const std::uint32_t next = nodes_[ear].next;
      if (is_ear(ear)) {
        emit(nodes_[prev], nodes_[ear], nodes_[next]);
        remove(ear);
        ear = nodes_[next].next;
        stop = ear;
        continue;
      }
      ear = next;
      if (ear != stop) continue;
      // A whole turn without an ear.
      if (pass == 0) {
        clip(filter(ear, kNone), 1);
      } else if (pass == 1) {
        clip(cure_local_intersections(filter(ear, kNone)), 2);
      } else {
        // The face crosses itself: the rest is fanned.
        out_.simple = false;
        for (std::uint32_t p = nodes_[ear].next; nodes_[p].next != ear; p = nodes_[p].next) {
          emit(nodes_[ear], nodes_[p], nodes_[nodes_[p].next]);
        }
      }
      return;
    }
  }

  PolygonTriangles& out_;
  std::vector<Node> nodes_;
  bool hashed_ = false;
  double min_x_ = 0.0, min_y_ = 0.0, inv_size_ = 0.0;
};

}  // namespace

PolygonTriangles triangulate_polygon(std::span<const glm::vec3> corners) {
  PolygonTriangles out;
  if (corners.size() < 3) return out;
  if (corners.size() == 3) {
    out.triangles.push_back({0, 1, 2});
    return out;
  }
  Clipper clipper(corners, out);
  if (clipper.convex()) {
    clipper.fan();
  } else {
    clipper.run();
  }
  return out;
}

}  // namespace raypick::detail
