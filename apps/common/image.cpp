#include "image.h"

#include <stb_image.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace raypick::tools {

std::string write_png(OutputFile& file, const Image& image) {
  if (image.width <= 0 || image.height <= 0) {
    return file.path() + ": cannot write an empty image";
  }
  static_assert(sizeof(Rgb) == 3, "pixels are packed RGB");
  std::string bytes;
  const auto put = [](void* out, void* data, int size) {
    static_cast<std::string*>(out)->append(static_cast<const char*>(data), std::size_t(size));
  };
  if (stbi_write_png_to_func(put, &bytes, image.width, image.height, 3, image.pixels.data(),
                             image.width * 3) == 0) {
    return file.path() + ": cannot encode the PNG image";
  }
  return file.write(bytes);
}

Image read_png(const std::string& path, std::string& error) {
  int w = 0, h = 0, comp = 0;
  unsigned char* data = stbi_load(path.c_str(), &w, &h, &comp, 3);
  if (data == nullptr) {
    error = path + ": cannot read the image (" +
            (stbi_failure_reason() ? stbi_failure_reason() : "unknown reason") + ")";
    return {};
  }
  Image img(w, h);
  std::copy(data, data + std::size_t(w) * h * 3, reinterpret_cast<unsigned char*>(img.pixels.data()));
  stbi_image_free(data);
  return img;
}

namespace {

Rgb hsv(double h, double s, double v) {
  const double c = v * s;
  const double hp = h * 6.0;
  const double x = c * (1.0 - std::abs(std::fmod(hp, 2.0) - 1.0));
  double r = 0, g = 0, b = 0;
  switch (int(hp) % 6) {
    case 0: r = c; g = x; break;
    case 1: r = x; g = c; break;
    case 2: g = c; b = x; break;
    case 3: g = x; b = c; break;
    case 4: r = x; b = c; break;
    default: r = c; b = x; break;
  }
  const double m = v - c;
  auto q = [](double t) { return std::uint8_t(std::lround(std::clamp(t, 0.0, 1.0) * 255.0)); };
  return {q(r + m), q(g + m), q(b + m)};
}

}  // namespace

Rgb palette(std::uint32_t id) {
  const double h = std::fmod(0.11 + id * 0.6180339887498949, 1.0);
  const double s = (id / 2) % 2 == 0 ? 0.65 : 0.45;
  const double v = id % 3 == 0 ? 0.95 : (id % 3 == 1 ? 0.8 : 0.88);
  return hsv(h, s, v);
}

Rgb id_colour(std::uint32_t id) {
  if (id == 0xFFFFFFFFu) return {0, 0, 0};
  const std::uint32_t k = id + 1;
  return {std::uint8_t((k >> 16) & 255), std::uint8_t((k >> 8) & 255), std::uint8_t(k & 255)};
}

std::uint32_t id_from_colour(Rgb c) {
  const std::uint32_t k = (std::uint32_t(c.r) << 16) | (std::uint32_t(c.g) << 8) | c.b;
  return k == 0 ? 0xFFFFFFFFu : k - 1;
}

Rgb scale(Rgb c, double s) {
  auto q = [&](std::uint8_t v) { return std::uint8_t(std::lround(std::clamp(v * s, 0.0, 255.0))); };
  return {q(c.r), q(c.g), q(c.b)};
}

Rgb mix(Rgb c, Rgb d, double a) {
  auto q = [&](std::uint8_t x, std::uint8_t y) {
    return std::uint8_t(std::lround(std::clamp((1.0 - a) * x + a * y, 0.0, 255.0)));
  };
  return {q(c.r, d.r), q(c.g, d.g), q(c.b, d.b)};
}

}  // namespace raypick::tools
