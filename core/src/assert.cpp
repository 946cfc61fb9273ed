#include "raypick/core/assert.h"

#include <cstdio>
#include <cstdlib>

namespace raypick {
namespace {

void default_handler(const char* expr, const char* msg, const char* file,
                     int line) {
  std::fprintf(stderr, "%s:%d: raypick assertion failed: %s (%s)\n", file,
               line, expr, msg);
  std::fflush(stderr);
}

AssertHandler g_handler = &default_handler;

}  // namespace

AssertHandler set_assert_handler(AssertHandler handler) {
  AssertHandler previous = g_handler;
  g_handler = handler ? handler : &default_handler;
  return previous;
}

void assert_failed(const char* expr, const char* msg, const char* file,
                   int line) {
  g_handler(expr, msg, file, line);
  // A handler that returns would let a broken invariant run on.
  std::abort();
}

}  // namespace raypick
