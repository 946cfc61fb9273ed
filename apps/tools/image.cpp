#include "image.h"

#include <stb_image.h>
#include <stb_image_write.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace raypick::tools {

PngFile::~PngFile() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  if (created_) std::remove(path_.c_str());
}

std::string PngFile::open(const std::string& path) {
  path_ = path;
  struct stat st;
  created_ = ::stat(path.c_str(), &st) != 0;
  // Not truncated yet: a command that fails before write() leaves a file
  // that was there as it was.
  errno = 0;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0) file_ = ::fdopen(fd, "wb");
  if (file_ == nullptr) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    if (fd >= 0 && created_) std::remove(path.c_str());
    return path + ": cannot write the PNG file: " + std::strerror(err);
  }
  return {};
}

std::string PngFile::write(const Image& image) {
  if (image.width <= 0 || image.height <= 0) return path_ + ": cannot write an empty image";
  static_assert(sizeof(Rgb) == 3, "pixels are packed RGB");
  const auto put = [](void* file, void* data, int size) {
    std::fwrite(data, 1, std::size_t(size), static_cast<std::FILE*>(file));
  };
  struct stat st;
  errno = 0;
  if (::fstat(fileno(file_), &st) == 0 && S_ISREG(st.st_mode) &&
      ::ftruncate(fileno(file_), 0) != 0) {
    return path_ + ": cannot write the PNG file: " + std::strerror(errno);
  }
  errno = 0;
  const bool encoded = stbi_write_png_to_func(put, file_, image.width, image.height, 3,
                                              image.pixels.data(), image.width * 3) != 0;
  const bool written = encoded && std::fflush(file_) == 0 && !std::ferror(file_);
  const int err = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (written && closed) return {};
  if (created_) std::remove(path_.c_str());
  std::string why = path_ + ": cannot write the PNG file";
  if (encoded && err != 0) why += std::string(": ") + std::strerror(err);
  return why;
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
