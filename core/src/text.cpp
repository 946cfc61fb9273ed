#include "raypick/core/text.h"

namespace raypick {
namespace {

// Length of the valid UTF-8 sequence at the start of `s`, or 0 when its
// first byte does not start one (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF).
std::size_t utf8_length(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t take = 1;  // input bytes this step consumes
    std::size_t escaped = 0;  // leading bytes of them shown as \xNN
    if (c >= 0x20 && c < 0x7F) {
      escaped = 0;
    } else if (c < 0x80) {
      escaped = 1;  // C0 or DEL
    } else if (const std::size_t n = utf8_length(text.substr(i)); n > 0) {
      take = n;
      // C1 controls are U+0080..U+009F: C2 80 .. C2 9F.
      escaped = c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0
                    ? 2
                    : 0;
    } else {
      escaped = 1;  // not UTF-8
    }
    const std::size_t width = escaped > 0 ? 4 * escaped : take;
    if (max_bytes != std::string::npos && out.size() + width > max_bytes) {
      out += "...";
      break;
    }
    if (escaped > 0) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      for (std::size_t k = 0; k < escaped; ++k) {
        const auto u = static_cast<unsigned char>(text[i + k]);
        out += "\\x";
        out += kHex[u >> 4];
        out += kHex[u & 15];
      }
    } else {
      out.append(text.substr(i, take));
    }
    i += take;
  }
  return out;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (const std::size_t n = utf8_length(text.substr(i)); n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}

}  // namespace raypick
