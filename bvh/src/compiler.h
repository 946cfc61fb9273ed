// The bvh library's compiler switches, in one place: which SIMD the trees
// use, how the hot steps are inlined, the AVX2 and AVX-512 function
// targets, the CPU checks and the prefetch hint. Private to the library.
#pragma once

// SSE2 is the x86-64 baseline: the node tests, packets and padded boxes
// use it wherever it exists, and fall back to scalar code elsewhere.
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#include <xmmintrin.h>
#define RAYPICK_WIDE_SSE 1
#endif

// The 8-wide AVX node test is compiled into functions of the AVX2 target
// (GCC and Clang function-level targets) and chosen at run time, once per
// Picker (PickerConfig::isa): the library itself is built for the x86-64
// baseline.
#if RAYPICK_WIDE_SSE && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define RAYPICK_WIDE_AVX2 1
#define RAYPICK_TARGET_AVX2 __attribute__((target("avx2")))
// The 16-slot node test of the top level's 16-wide tree, likewise.
#define RAYPICK_WIDE_AVX512 1
#define RAYPICK_TARGET_AVX512 __attribute__((target("avx2,avx512f,avx512vl,avx512dq,avx512bw")))
#endif

// The packets' AVX2 and AVX-512 lanes (wide_packets.h, packet_obb.h) hand
// vectors between the one packet loop, a template of the baseline target,
// and the lanes' functions, all inlined into a function of the lanes'
// target: GCC compiles that; Clang refuses each such call (a vector
// argument without AVX changes the ABI), so a Clang build's packets run on
// the SSE lanes (the same answers; Clang builds only the fuzz targets here).
#if RAYPICK_WIDE_AVX2 && !defined(__clang__)
#define RAYPICK_PACKET_AVX 1
#endif

// The per-leaf steps of the traversal loops are inlined into them, which
// the compiler's size heuristics would not always do; a rarely taken step
// (the triangle tree of one object) keeps its call.
#if defined(__GNUC__)
#define RAYPICK_HOT_INLINE [[gnu::always_inline]] inline
#define RAYPICK_NOINLINE __attribute__((noinline))
#else
#define RAYPICK_HOT_INLINE inline
#define RAYPICK_NOINLINE
#endif

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

// A sanitizer build (AddressSanitizer, ThreadSanitizer): its checks cover
// malloc's memory, so HugeAllocator leaves mappings of its own out.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RAYPICK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RAYPICK_SANITIZED 1
#endif
#endif

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace raypick::compiler {

// Whether this CPU has AVX2 (asked once).
inline bool cpu_has_avx2() {
#if RAYPICK_WIDE_AVX2
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
#else
  return false;
#endif
}

// Whether this CPU has the AVX-512 subsets the 16-slot test uses (F, VL,
// DQ, BW; asked once).
inline bool cpu_has_avx512() {
#if RAYPICK_WIDE_AVX512
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
  }();
  return has;
#else
  return false;
#endif
}

// A hint that [p, p + bytes), freshly allocated and not yet touched, will
// be written whole soon: Linux backs its 2 MiB-aligned part with huge pages
// where the system allows them on request (transparent huge pages in
// "madvise" mode or "always"), one page fault per 2 MiB instead of 512.
// For the builds' large temporary arrays only (a huge page is 2 MiB of
// memory once touched at all), and only from 32 MiB: glibc maps most
// allocations that large on their own and unmaps them when they are
// freed. Not all: a free chunk of the heap large enough is handed out
// instead, its pages already there at 4 KiB, and the hint then does
// nothing; the arrays that queries read use HugeAllocator (below), which
// maps them itself. Does nothing elsewhere.
inline void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  if (p == nullptr || bytes < 16 * kHuge) return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// Sizes v to n elements, its storage hinted to huge pages before they are
// written (advise_huge_pages), when v has no storage yet. For temporary
// arrays: a HugeVector needs no hint (its allocator maps and hints).
template <class Vector>
void resize_huge(Vector& v, std::size_t n) {
  if (v.capacity() == 0) {
    v.reserve(n);
    advise_huge_pages(v.data(), n * sizeof(typename Vector::value_type));
  }
  v.resize(n);
}

// The allocator of the arrays that queries read at random, the wide
// trees' nodes and the top level's leaf copies: from 32 MiB on, a mapping
// of its own, aligned to 2 MiB and hinted to huge pages before anything
// touches it, so that a million objects' arrays take a few dozen TLB
// entries. Through
// malloc, a large array could instead reuse freed heap memory whose pages
// are already there at 4 KiB, and a hint then changes nothing (boxes-1M's
// leaf copies landed there in a driver, whose single incoherent rays ran
// 11% faster with the mapping). Below 32 MiB, and in sanitizer builds
// (whose checks work on malloc's memory), the usual operator new. Throws
// std::bad_alloc when the memory is not there.
template <class T>
struct HugeAllocator {
  using value_type = T;
  // Whether this build maps large arrays itself (Linux, not a sanitizer
  // build).
#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(RAYPICK_SANITIZED)
  static constexpr bool kMaps = true;
#else
  static constexpr bool kMaps = false;
#endif
  HugeAllocator() = default;
  template <class U>
  HugeAllocator(const HugeAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > std::size_t(PTRDIFF_MAX) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(RAYPICK_SANITIZED)
    if (bytes >= kMapped) {
      const std::size_t length = mapped_length(bytes);
      // kHuge more than needed, the unaligned ends given back.
      void* raw = mmap(nullptr, length + kHuge, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (raw == MAP_FAILED) throw std::bad_alloc();
      const auto start = reinterpret_cast<std::uintptr_t>(raw);
      const std::uintptr_t aligned = (start + kHuge - 1) & ~(kHuge - 1);
      if (aligned > start) munmap(raw, aligned - start);
      const std::uintptr_t end = start + length + kHuge;
      if (end > aligned + length) {
        munmap(reinterpret_cast<void*>(aligned + length), end - aligned - length);
      }
      madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);
      return reinterpret_cast<T*>(aligned);
    }
#endif
    return static_cast<T*>(::operator new(bytes, std::align_val_t{alignof(T)}));
  }
  void deallocate(T* p, [[maybe_unused]] std::size_t n) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(RAYPICK_SANITIZED)
    if (n * sizeof(T) >= kMapped) {
      munmap(p, mapped_length(n * sizeof(T)));
      return;
    }
#endif
    ::operator delete(p, std::align_val_t{alignof(T)});
  }
  template <class U>
  friend bool operator==(const HugeAllocator&, const HugeAllocator<U>&) {
    return true;
  }

 private:
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  static constexpr std::size_t kMapped = std::size_t{32} << 20;
#if defined(__linux__)
  // Whole pages of the system's size (4 KiB on x86-64, up to 64 KiB
  // elsewhere), so that the trims and munmap meet page boundaries.
  static std::size_t mapped_length(std::size_t bytes) {
    static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return (bytes + page - 1) / page * page;
  }
#endif
};

// A vector of the arrays above.
template <class T>
using HugeVector = std::vector<T, HugeAllocator<T>>;

// A hint that the cache line at p will be read soon. An asm statement,
// not __builtin_prefetch: GCC deletes a loop whose body is only built-in
// prefetches (it has no effect the language sees), as it did with the
// path refit's prefetch of its slots' other entries.
inline void prefetch(const void* p) {
#if defined(__GNUC__) && defined(__SSE__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#elif defined(__GNUC__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// prefetch() of every 64-byte line of x (a wide node: 4 or 8 lines).
template <class T>
inline void prefetch_lines(const T& x) {
  const char* p = reinterpret_cast<const char*>(&x);
  for (std::size_t b = 0; b < sizeof(T); b += 64) prefetch(p + b);
}

// For the length of a scope, the CPU's default floating-point mode: round
// to nearest, no flush-to-zero, no denormals-are-zero, exceptions masked
// (MXCSR 0x1F80), as the queries assume (a direction near the float range
// has a denormal inverse, which flush-to-zero makes 0, and 0 times an
// unused slot's infinite planes is NaN). For the batches' TBB tasks: a
// worker thread may carry another library's mode (Embree's tasks leave
// flush-to-zero and denormals-are-zero on TBB's workers). The mode's
// sticky exception flags are left out of the comparison.
class DefaultFpMode {
 public:
#if RAYPICK_WIDE_SSE
  DefaultFpMode() : saved_(_mm_getcsr()) {
    if ((saved_ & ~kFlags) != kDefault) _mm_setcsr(kDefault);
  }
  ~DefaultFpMode() {
    if ((saved_ & ~kFlags) != kDefault) _mm_setcsr(saved_);
  }
  DefaultFpMode(const DefaultFpMode&) = delete;
  DefaultFpMode& operator=(const DefaultFpMode&) = delete;

 private:
  static constexpr unsigned kDefault = 0x1F80;
  static constexpr unsigned kFlags = 0x3F;
  unsigned saved_;
#endif
};

// A hint that the cache line at p will be written soon; an asm statement,
// as prefetch() (prefetchw where the build targets it, else prefetcht0:
// what __builtin_prefetch(p, 1) emits).
inline void prefetch_for_write(const void* p) {
#if defined(__GNUC__) && defined(__PRFCHW__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#elif defined(__GNUC__) && defined(__SSE__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#elif defined(__GNUC__)
  __builtin_prefetch(p, 1);
#else
  (void)p;
#endif
}

}  // namespace raypick::compiler
