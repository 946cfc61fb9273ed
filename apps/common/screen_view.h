// Screen-space work that the CLI (render, select) and the Python module
// share: the picture a camera sees, and the marquee selection. No Embree.
#pragma once

#include "image.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/camera.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace raypick::tools {

// What a pixel's colour shows (render --color).
enum class Colouring {
  kShade,   // the object's palette colour under a headlight
  kId,      // the object's palette colour, flat
  kIds,     // the exact id buffer: RGB = id + 1 (id_colour), misses black
  kDepth,   // grey by t over the scene's range: white nearest, grey 80 farthest
  kNormal,  // the world normal, (n + 1) / 2 as RGB
};
// "shade", "id", "ids", "depth" or "normal"; nullopt for anything else.
std::optional<Colouring> colouring_of(std::string_view name);

// The colours the pictures share.
inline constexpr Rgb kBackground{28, 30, 36};
inline constexpr Rgb kHighlight{255, 140, 0};
inline constexpr Rgb kOutline{255, 235, 40};
inline constexpr Rgb kMarquee{70, 150, 255};

struct RenderedView {
  Image image;
  std::vector<std::uint32_t> ids;  // the object hit at each pixel, row-major
  std::size_t hits = 0;            // pixels that hit an object
};

// One ray per pixel centre, cam.ray(i + 0.5, j + 0.5), through
// picker.intersect_batch in `mode`, coloured by `colouring`; objects whose
// entry in `lit` is non-zero are lightened and striped diagonally in
// kHighlight (not for kIds), so that a highlight shows on any colour.
// `rows_done` (may be empty) is called after each band of rows.
RenderedView render_view(const Picker& picker, const Camera& cam, PickMode mode,
                         Colouring colouring, std::span<const std::uint8_t> lit,
                         const std::function<void(int rows_done)>& rows_done = {});

// Outlines the lit objects: their pixels next to another object or a miss.
void outline_lit(RenderedView& view, std::span<const std::uint8_t> lit);

// The marquee X0,Y0,X1,Y1 (corners in either order): the pixels whose
// centres lie inside tinted, its edge drawn.
void draw_marquee(Image& image, const std::array<double, 4>& rect);

// The marquee selection: picker.select() of the region the rectangle
// covers; with `visible_only`, only the objects that the pick also hits at
// a pixel centre inside the rectangle. Ids ascending.
std::vector<std::uint32_t> select_in_view(const Picker& picker, const Camera& cam,
                                          const std::array<double, 4>& rect, SelectRule rule,
                                          bool visible_only, const QueryOptions& options);

}  // namespace raypick::tools
