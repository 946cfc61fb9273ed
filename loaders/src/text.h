// Showing bytes from a file in messages and names. Private to loaders/.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace raypick::detail {

// `s` for a message: bytes that are not printable ASCII (control bytes such
// as ESC, CR and NUL, and every byte from 0x7F up) are shown as \xNN, and
// more than `limit` bytes of input are cut, ending in "...".
std::string printable(std::string_view s, std::size_t limit = 120);

// `s` as an object name: control bytes (below 0x20, and 0x7F) are shown as
// \xNN so that no name can drive a terminal or split a line of output;
// everything else, UTF-8 included, is kept as it is.
std::string escape_controls(std::string_view s);

}  // namespace raypick::detail
