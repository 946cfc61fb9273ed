// printable(): what raypick shows on a terminal of text that came from a file.
#include "test_util.h"

#include "raypick/core/text.h"

using raypick::printable;

TEST_CASE("printable escapes control bytes and keeps printable ASCII and UTF-8") {
  CHECK(printable("wheel_2 (left) \\x") == "wheel_2 (left) \\x");
  CHECK(printable("a\x1B[31mb\rc\nd\te\x7F") ==
        "a\\x1B[31mb\\x0Dc\\x0Ad\\x09e\\x7F");
  CHECK(printable(std::string("x\0y", 3)) == "x\\x00y");
  // Valid UTF-8 passes: é (2 bytes), € (3), 😀 (4).
  CHECK(printable("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") ==
        "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  // C1 controls (U+009B is a one-character CSI on some terminals).
  CHECK(printable("\xC2\x9B" "2J") == "\\xC2\\x9B2J");
  CHECK(printable("\xC2\xA0") == "\xC2\xA0");  // U+00A0 is not a control
}

TEST_CASE("printable escapes every byte that is not part of valid UTF-8") {
  CHECK(printable("\xFF\xFE") == "\\xFF\\xFE");
  CHECK(printable("\xC3") == "\\xC3");             // truncated sequence
  CHECK(printable("\xC3(") == "\\xC3(");           // bad continuation
  CHECK(printable("\xC0\xAF") == "\\xC0\\xAF");    // overlong '/'
  CHECK(printable("\xE0\x80\xAF") == "\\xE0\\x80\\xAF");  // overlong
  CHECK(printable("\xED\xA0\x80") == "\\xED\\xA0\\x80");  // surrogate
  CHECK(printable("\xF4\x90\x80\x80") == "\\xF4\\x90\\x80\\x80");  // > U+10FFFF
  CHECK(printable("\x80") == "\\x80");             // lone continuation
}

TEST_CASE("printable cuts long text at a character boundary and marks the cut") {
  CHECK(printable("abcdef", 6) == "abcdef");
  CHECK(printable("abcdefg", 6) == "abcdef...");
  CHECK(printable(std::string(10000000, 'x'), 40) == std::string(40, 'x') + "...");
  // Neither an escape nor a UTF-8 character is split.
  CHECK(printable("ab\x1B", 5) == "ab...");
  CHECK(printable("ab\xE2\x82\xAC", 4) == "ab...");
  CHECK(printable("ab\xE2\x82\xAC", 5) == "ab\xE2\x82\xAC");
}
