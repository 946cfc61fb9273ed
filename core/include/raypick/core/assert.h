// Programmer-error checks for raypick.
//
// RAYPICK_ASSERT(cond, msg) reports a broken precondition: a bug in the
// caller or in raypick, never bad input (bad input is reported through the
// loaders' results). The check is on in every build type, because picking
// queries are cheap next to the cost of a silently wrong answer; define
// RAYPICK_DISABLE_ASSERTS to compile it out of hot paths.
#pragma once

namespace raypick {

// Called when an assertion fails. The default prints file, line and message
// to stderr and calls std::abort(). It must not return.
using AssertHandler = void (*)(const char* expr, const char* msg,
                               const char* file, int line);

// Installs `handler` (nullptr restores the default) and returns the previous
// one. Not thread-safe: set it once at start-up.
AssertHandler set_assert_handler(AssertHandler handler);

[[noreturn]] void assert_failed(const char* expr, const char* msg,
                                const char* file, int line);

}  // namespace raypick

#if defined(RAYPICK_DISABLE_ASSERTS)
#define RAYPICK_ASSERT(cond, msg) ((void)0)
#else
#define RAYPICK_ASSERT(cond, msg)                                    \
  ((cond) ? (void)0                                                  \
          : ::raypick::assert_failed(#cond, msg, __FILE__, __LINE__))
#endif
