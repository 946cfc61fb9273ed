// 8-bit RGB images for `raypick render` and `validate --image`: PNG files
// through stb (libstb-dev), and the colours of object ids.
#pragma once

#include "output_file.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace raypick::tools {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

// A W x H image, rows top to bottom, pixels left to right.
struct Image {
  int width = 0;
  int height = 0;
  std::vector<Rgb> pixels;

  Image() = default;
  Image(int w, int h, Rgb fill = {}) : width(w), height(h), pixels(std::size_t(w) * h, fill) {}
  Rgb& at(int x, int y) { return pixels[std::size_t(y) * width + x]; }
  const Rgb& at(int x, int y) const { return pixels[std::size_t(y) * width + x]; }
};

// Encodes `image` as an 8-bit RGB PNG into `file` (opened by
// OutputFile::open) and closes it; "" on success, else why not, naming the
// file.
std::string write_png(OutputFile& file, const Image& image);

// Reads a PNG (or any format stb_image reads) as 8-bit RGB; an empty image
// (width 0) when it cannot, with `error` set.
Image read_png(const std::string& path, std::string& error);

// The palette colour of object `id`: a fixed, well-spread colour (hues a
// golden-ratio step apart, alternating saturation and value), never black.
Rgb palette(std::uint32_t id);

// The contract's id buffer colour: RGB = (id + 1) as a 24-bit big-endian
// number; a miss (kInvalidId) is 0,0,0. Ids past 2^24 - 2 wrap.
Rgb id_colour(std::uint32_t id);

// The object id an id-buffer colour names; kInvalidId (all bits) for 0,0,0.
std::uint32_t id_from_colour(Rgb c);

// c scaled by s in [0, 1], and the mix (1 - a) * c + a * d.
Rgb scale(Rgb c, double s);
Rgb mix(Rgb c, Rgb d, double a);

}  // namespace raypick::tools
