// `raypick info SCENE [loading options]`: a scene's objects, bounds, BVH
// statistics, cameras and timings.
#include "command.h"
#include "common.h"
#include "ray_io.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>
#include <string>

namespace raypick::cli {
namespace {

class InfoCommand final : public Command {
 public:
  explicit InfoCommand(CLI::App& app)
      : Command(app.add_subcommand(
            "info", "Print a scene's objects, bounds, BVH statistics and timings")) {
    add_scene_argument(*cmd_, scene_);
    add_load_options(*cmd_, load_);
    add_enum_option(*cmd_, "--top-width", top_width_,
                    EnumNames<int>{{"auto", 0}, {"8", 8}, {"16", 16}},
                    "The BVH's top-level nodes (PickerConfig::top_width): auto (the "
                    "default: 16 slots where the CPU has AVX-512, else 8), 8 or 16");
  }
  int run() const override;

 private:
  LoadOptions load_;
  int top_width_ = 0;
};

int InfoCommand::run() const {
  const std::string& path = scene_;
  int status = 0;
  std::optional<Loaded> loaded = load_or_report(path, load_, status);
  if (!loaded) return status;
  const Scene& scene = loaded->scene;
  const auto start = Clock::now();
  PickerConfig config;
  config.top_width = top_width_;
  const Picker picker(scene, config);
  const double build_ms = ms_since(start);
  std::size_t hittable = 0;
  for (std::uint32_t i = 0; i < picker.object_count(); ++i) {
    hittable += !picker.world_box(i).empty();
  }
  const BvhStats s = picker.bvh_stats();
  const Aabb b = world_bounds(scene);  // without the BVH's rounding margin
  std::printf("scene:      %s\n", printable(path).c_str());
  std::printf("objects:    %zu (%zu can be hit)\n", scene.objects.size(),
              hittable);
  std::printf("meshes:     %zu\n", scene.meshes.size());
  std::printf("triangles:  %zu\n", scene.triangle_count());
  if (b.empty()) {
    std::printf("bounds:     empty\n");
  } else {
    std::printf("bounds:     [%s, %s, %s] .. [%s, %s, %s]\n",
                tools::format_float(b.min.x).c_str(),
                tools::format_float(b.min.y).c_str(),
                tools::format_float(b.min.z).c_str(),
                tools::format_float(b.max.x).c_str(),
                tools::format_float(b.max.y).c_str(),
                tools::format_float(b.max.z).c_str());
  }
  std::printf("bvh:        %zu nodes of %d slots, %zu leaves, depth %d, leaf size "
              "%u..%u (mean %.2f), SAH cost %.2f\n",
              s.nodes, picker.top_width(), s.leaves, s.max_depth, s.min_leaf_size,
              s.max_leaf_size, s.mean_leaf_size, s.sah_cost);
  std::printf("time:       load %.2f ms, build %.2f ms\n", loaded->load_ms,
              build_ms);
  for (std::size_t i = 0; i < scene.objects.size() && i < 20; ++i) {
    const Object& o = scene.objects[i];
    std::printf("  object %zu '%s': %zu triangles\n", i,
                printable(o.name).c_str(),
                scene.meshes[o.mesh].triangles.size());
  }
  if (scene.objects.size() > 20) {
    std::printf("  ... %zu more objects\n", scene.objects.size() - 20);
  }
  // A glTF file's cameras, by the index and name --camera takes.
  if (!scene.cameras.empty()) std::printf("cameras:    %zu\n", scene.cameras.size());
  for (std::size_t i = 0; i < scene.cameras.size(); ++i) {
    const SceneCamera& c = scene.cameras[i];
    const std::string name = !c.name.empty() ? c.name : c.camera_name;
    std::printf("  camera %zu %s: %s\n", i,
                name.empty() ? "(no name)" : ("'" + printable(name) + "'").c_str(),
                c.projection == Projection::kPerspective
                    ? ("perspective, vertical fov " +
                       tools::format_float(static_cast<float>(c.fov_deg)) + " degrees").c_str()
                    : ("orthographic, view height " +
                       tools::format_float(static_cast<float>(c.ortho_height))).c_str());
  }
  return finish_output(0);
}

}  // namespace

std::unique_ptr<Command> add_info(CLI::App& app) { return std::make_unique<InfoCommand>(app); }

}  // namespace raypick::cli
