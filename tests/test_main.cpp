#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#if defined(__SANITIZE_THREAD__)
#define RAYPICK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RAYPICK_TSAN 1
#endif
#endif

#ifdef RAYPICK_TSAN
#include <tbb/global_control.h>

namespace {
// Under ThreadSanitizer, TBB runs no worker threads. The library's
// uninstrumented libtbb hands a task to a worker through atomics that
// ThreadSanitizer cannot see, so every task run on a worker is reported as
// a race with the thread that made it (the builder's subtrees of 1,024
// primitives or more, top level and triangle trees alike). The threads
// these tests start themselves, and what the library shares between them,
// are still checked; the parallel builds and sweeps are not checked for
// races, only compared on 1, 2 and 4 threads by the determinism tests.
const tbb::global_control no_tbb_workers(tbb::global_control::max_allowed_parallelism, 1);
}  // namespace
#endif
