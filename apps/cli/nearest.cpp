// `raypick nearest SCENE --point X,Y,Z | --points FILE|- ...`: the object
// nearest to each point (docs/contract.md, "raypick nearest").
#include "command.h"
#include "common.h"

#include "ray_io.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace raypick::cli {
namespace {

struct NearestArgs {
  std::optional<std::string> point;
  std::optional<std::string> points;
  PickMode mode = PickMode::kObb;
  double max_distance = std::numeric_limits<double>::infinity();
  std::uint32_t mask = ~0u;
  std::string format;
  bool inside = false;       // --inside: say whether each point is inside
  bool signed_distance = false;  // --signed: negative distances inside
  LoadOptions load;
};

// The answer for point i, in `format` (text, json or jsonl). `inside` is
// 1 or 0 for --inside, -1 without it; with --signed, h.distance is
// already signed.
std::string answer(std::size_t i, const PointHit& h, int inside, PickMode mode,
                   const std::string& format, const std::vector<std::string>& names) {
  using tools::format_float;
  const auto f = [](double v) { return format_float(static_cast<float>(v)); };
  if (format == "text") {
    std::string s = "point " + std::to_string(i) + ": ";
    const std::string where = inside < 0 ? "" : inside ? " (inside)" : " (outside)";
    if (!h.hit()) return s + "nothing within reach" + where + "\n";
    s += "object " + std::to_string(h.object) + " '" + printable(names[h.object]) + "'";
    if (mode == PickMode::kMesh) s += " triangle " + std::to_string(h.triangle);
    return s + " at distance " + f(h.distance) + ", closest (" + f(h.point.x) + ", " +
           f(h.point.y) + ", " + f(h.point.z) + ")" + where + "\n";
  }
  std::string s = "{\"point\":" + std::to_string(i);
  const std::string where = inside < 0 ? "" : inside ? ",\"inside\":true" : ",\"inside\":false";
  if (!h.hit()) return s + ",\"hit\":false" + where + "}\n";
  s += ",\"hit\":true,\"object\":" + std::to_string(h.object) +
       ",\"name\":" + tools::json_string(names[h.object]);
  if (mode == PickMode::kMesh) s += ",\"triangle\":" + std::to_string(h.triangle);
  return s + ",\"distance\":" + f(h.distance) + ",\"closest\":[" + f(h.point.x) + "," +
         f(h.point.y) + "," + f(h.point.z) + "]" + where + "}\n";
}

class NearestCommand final : public Command {
 public:
  explicit NearestCommand(CLI::App& app);
  int run() const override;

 private:
  NearestArgs a_;
};

NearestCommand::NearestCommand(CLI::App& app)
    : Command(app.add_subcommand("nearest",
                                 "Print the object nearest to each point, the nearest point on "
                                 "it and its distance")) {
  NearestArgs& a = a_;
  add_scene_argument(*cmd_, scene_);
  CLI::Option_group* source =
      cmd_->add_option_group("points", "Where the points come from: one point or a file");
  source->add_option("--point", a.point, "One point: x,y,z");
  source->add_option("--points", a.points,
                     "Points file, one 'x y z' per line (the rays file's rules); '-' reads "
                     "stdin");
  source->require_option(1);
  add_enum_option(*cmd_, "--mode", a.mode, mode_names(),
                  "obb: nearest point of the objects' oriented boxes, 0 inside (default); "
                  "mesh: nearest point of their triangles");
  cmd_->add_option("--max-distance", a.max_distance,
                   "Only objects within D of the point (default: unbounded)")
      ->transform(float_at_least(0.0));
  add_mask_option(*cmd_, a.mask);
  cmd_->add_option("--format", a.format,
                   "Output: text (default for --point), json (one point), jsonl (default for "
                   "--points)")
      ->check(CLI::IsMember({"text", "json", "jsonl"}));
  cmd_->add_flag("--inside", a.inside,
                 "mesh mode: also say whether each point is inside an object (winding "
                 "number; points on a surface are inside)");
  cmd_->add_flag("--signed", a.signed_distance,
                 "mesh mode: the distance is negative for points inside an object");
  add_load_options(*cmd_, a.load);
}

int NearestCommand::run() const {
  const NearestArgs& a = a_;
  if (a.points && a.points->empty()) {
    return fail(kExitUsage, "nearest: --points needs a file name, or '-' for standard input");
  }
  const std::string format = !a.format.empty() ? a.format : (a.point ? "text" : "jsonl");
  if (format == "json" && !a.point) {
    return fail(kExitUsage,
                "nearest: --format json is for a single --point; use --format jsonl with "
                "--points");
  }
  if ((a.inside || a.signed_distance) && a.mode != PickMode::kMesh) {
    return fail(kExitUsage,
                std::string("nearest: ") + (a.inside ? "--inside" : "--signed") +
                    " needs --mode mesh (inside means inside the triangles)");
  }
  // Every point is read and checked before anything is printed.
  std::vector<glm::dvec3> points;
  if (a.point) {
    std::string error;
    const std::optional<glm::dvec3> p = tools::parse_point<3>(*a.point, error, "x,y,z", kMaxInputPoint);
    if (!p) return fail(kExitBadInput, "--point '" + printable(*a.point, 80) + "': " + error);
    points.push_back(*p);
  } else {
    tools::Point3List list = tools::read_points<3>(*a.points);
    if (!list.ok()) return fail(kExitBadInput, list.error);
    points = std::move(list.points);
  }
  int status = 0;
  std::optional<Loaded> loaded = load_or_report(scene_, a.load, status);
  if (!loaded) return status;
  const Picker picker(loaded->scene, picker_config(a.mode));
  const std::vector<std::string> names = object_names(loaded->scene);
  const QueryOptions options(a.mode, a.mask);
  std::vector<PointHit> hits = picker.closest_points(points, options, a.max_distance);
  std::vector<std::uint32_t> holder;
  if (a.inside || a.signed_distance) holder = picker.containing_objects(points, options);
  std::string out;
  for (std::size_t i = 0; i < hits.size(); ++i) {
    const bool in = !holder.empty() && holder[i] != kInvalidId;
    // Mesh mode's signed distance (Picker::signed_distance): the distance,
    // negated inside.
    if (a.signed_distance && in && hits[i].distance > 0.0) hits[i].distance = -hits[i].distance;
    write_buffered(out, answer(i, hits[i], a.inside ? int(in) : -1, a.mode, format, names));
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return finish_output(0);
}

}  // namespace

std::unique_ptr<Command> add_nearest(CLI::App& app) {
  return std::make_unique<NearestCommand>(app);
}

}  // namespace raypick::cli
