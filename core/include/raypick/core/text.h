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

// `text` with every byte that is not part of valid UTF-8 (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF) replaced by U+FFFD,
// one per byte; everything else, control characters included, kept as it
// is. What loaders store as a name: the file's text exactly when it is
// valid UTF-8. Outputs escape it for their medium (printable() for text,
// RFC 8259 escapes for JSON). Cost: O(|text|).
std::string valid_utf8(std::string_view text);

}  // namespace raypick
