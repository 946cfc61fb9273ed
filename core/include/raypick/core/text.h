// Text that came from a file, made safe to show on a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace raypick {

// `text` with every control character (C0 including tab and newline, DEL,
// and the C1 range U+0080..U+009F) and every byte that is not part of valid
// UTF-8 written as `\xNN` (one per byte); valid UTF-8 text passes unchanged,
// backslashes included. When the result would pass `max_bytes`, it is cut at
// a character boundary at or before that length and "..." is appended.
// Cost: O(min(|text|, max_bytes)).
std::string printable(std::string_view text,
                      std::size_t max_bytes = std::string::npos);

}  // namespace raypick
