// The engine of `raypick bench` (docs/performance.md): raypick and Embree's
// best configuration side by side on generated scenes (boxes-N, crowd-N;
// bench_scenes.h) and scene files, with their answers checked against each
// other. apps/cli/bench.cpp reads the command's options into a Bench and
// calls run().
#pragma once

#include "bench_scenes.h"
#include "raypick/bvh/picker.h"

#include "raypick/core/pick_mode.h"
#include "raypick/core/text.h"
#include "raypick/loaders/load.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace raypick::bench {

// --mode: the hit modes each scene is benched in.
enum class ModeChoice { kObb, kMesh, kBoth, kAuto };
// --profile: whose single-ray loop to run alone; kNone: the whole bench.
enum class Profile { kNone, kRaypick, kEmbree };

enum class SceneKind { kBoxes, kCrowd, kFile };

struct SceneSpec {
  SceneKind kind = SceneKind::kBoxes;
  std::string path;   // the file, for kFile
  std::size_t n = 0;  // objects, for generated scenes
  // "boxes", "crowd", or the file's name as the table shows it.
  std::string label() const {
    switch (kind) {
      case SceneKind::kBoxes: return "boxes";
      case SceneKind::kCrowd: return "crowd";
      case SceneKind::kFile: break;
    }
    return printable(std::filesystem::path(path).filename().string());
  }
  // The JSON rows' "scene": the kind, or the file's path as given.
  std::string json_name() const { return kind == SceneKind::kFile ? path : label(); }
  // The progress lines' and the select line's name: boxes-N, crowd-N or
  // the file's label.
  std::string name() const {
    return kind == SceneKind::kFile ? label() : label() + "-" + std::to_string(n);
  }
};

// The settings after --quick: what was given explicitly wins.
struct Settings {
  std::size_t ray_count = 0;
  int width = 0, height = 0;  // camera rays
  int runs = 0;
  bool incoherent = false, camera = false;  // the ray sets
  bool frames = true;  // the dynamic frame row
  bool points = true;  // the closest-point row
  std::size_t point_count = 0;
};

// A whole bench: the scenes, in order, and how each is run.
struct Bench {
  std::vector<SceneSpec> specs;
  Settings settings;
  ModeChoice mode = ModeChoice::kAuto;
  std::vector<int> threads{1};
  std::uint64_t seed = 1;
  std::string json;  // also write the rows to this file as JSON; "" for none
  std::string model = tools::kCrowdModel;
  std::vector<double> offset;  // X, Y, Z: every scene moved by it; or empty
  Profile profile = Profile::kNone;
  int profile_passes = 1;
  LoadOptions load;  // for scene files and the crowd model
  Isa isa = Isa::kAuto;  // raypick's node test (PickerConfig::isa)
  int top_width = 0;     // raypick's top-level width (PickerConfig::top_width)
};

// Runs the bench and prints the table on stdout (progress on stderr).
// Exit status: 0 when every row's answers match, 1 when a row is VOID
// (raypick and Embree disagree) or a file cannot be read or written.
int run(const Bench& bench);

}  // namespace raypick::bench
