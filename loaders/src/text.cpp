#include "text.h"

#include <cstdio>

namespace raypick::detail {

namespace {

void append_hex(std::string& out, unsigned char u) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", u);
  out += buf;
}

}  // namespace

std::string printable(std::string_view s, std::size_t limit) {
  std::string out;
  std::size_t taken = 0;
  for (const char c : s) {
    if (taken++ >= limit) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F) {
      out += c;
    } else {
      append_hex(out, u);
    }
  }
  return out;
}

std::string escape_controls(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      append_hex(out, u);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace raypick::detail
