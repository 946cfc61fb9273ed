// What every raypick command shares: exit statuses, the one-line error,
// checked output, plain-worded option checks and the scene-loading options.
#pragma once

#include <string>

namespace raypick::cli {

inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;

// Every failure leaves through here: flushes stdout, writes
// "raypick: MESSAGE" on stderr as one line, returns `status`. The message
// goes through printable(), so no control character from a file name or a
// file's bytes reaches the terminal.
int fail(int status, const std::string& message);

// Flushes stdout and checks that everything written to it arrived. Returns
// `status` when it did; otherwise reports "cannot write to standard output:
// REASON" and returns kExitBadInput (so `raypick info > /dev/full` fails).
int finish_output(int status);

}  // namespace raypick::cli
