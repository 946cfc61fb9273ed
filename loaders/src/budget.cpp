#include "budget.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace raypick::detail {

namespace {

struct Named {
  const char* budget;
  const char* what;
};

constexpr Named kNames[] = {
    {"max_bytes", "bytes of files read"},
    {"max_vertices", "vertex positions in its meshes"},
    {"max_triangles", "triangles in its meshes"},
    {"max_objects", "objects"},
};

}  // namespace

std::string Budget::exceeded(Resource r) const {
  return std::string("load budget ") + kNames[r].budget +
         " exceeded: the scene needs more than " + std::to_string(limit_[r]) +
         " " + kNames[r].what;
}

std::uint64_t Budget::memory_limit() const {
  if (max_memory_ != 0) return max_memory_;
  const std::uint64_t read = used_[kBytes];
  const std::uint64_t scaled =
      read > UINT64_MAX / LoadBudget::kMemoryFactor ? UINT64_MAX : read * LoadBudget::kMemoryFactor;
  return std::max(LoadBudget::kMemoryAllowance, scaled);
}

std::optional<std::string> Budget::take(Resource r, std::uint64_t n) {
  if (n > limit_[r] - used_[r]) return exceeded(r);  // used <= limit always holds
  constexpr std::uint64_t kCost[] = {1, LoadBudget::kMemoryPerVertex,
                                     LoadBudget::kMemoryPerTriangle, LoadBudget::kMemoryPerObject};
  // n <= 2^64 / cost is not guaranteed: saturate.
  const std::uint64_t bytes = n > UINT64_MAX / kCost[r] ? UINT64_MAX : n * kCost[r];
  const std::uint64_t estimate = bytes > UINT64_MAX - memory_ ? UINT64_MAX : memory_ + bytes;
  used_[r] += n;  // bytes read raise the automatic limit before they are charged
  const std::uint64_t limit = memory_limit();
  if (estimate > limit) {
    used_[r] -= n;
    constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
    // Whole MiB from 16 MiB up, else bytes.
    const auto amount = [](std::uint64_t b) {
      if (b < 16 * kMiB) return std::to_string(b) + " bytes";
      return std::to_string(b / kMiB + (b % kMiB != 0 ? 1 : 0)) + " MiB";
    };
    std::string why = "load budget max_memory exceeded: loading and building the scene needs an "
                      "estimated " + (estimate == UINT64_MAX ? std::string("more than 2^64 bytes")
                                                           : amount(estimate)) +
                      ", more than the " + amount(limit) + " allowed";
    if (max_memory_ == 0) {
      why += " (256 MiB, or 64 times the " + std::to_string(used_[kBytes]) +
             " bytes read when that is more)";
    }
    return why + "; raise it with --max-memory (LoadBudget::max_memory)";
  }
  memory_ = estimate;
  return std::nullopt;
}

}  // namespace raypick::detail
