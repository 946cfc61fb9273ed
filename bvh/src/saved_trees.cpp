// A picker's trees saved and adopted (Picker::save_trees, Picker::open):
// their shape only, never their boxes, which the adopting picker refits
// from its own scene, so saved bytes can make a picker slow but never
// wrong. Format (little-endian):
//
//   u32 version: the nodes' widths, top level and meshes' trees: 1 for 8
//       and 8, 2 for 16 and 8, 3 for 8 and 16, 4 for 16 and 16 (the top
//       level 16 wide under Isa::kAvx512 and kAuto where the CPU has
//       AVX-512, or by PickerConfig::top_width; the meshes' trees under
//       the AVX-512 node test); a picker adopts only the widths it would
//       build
//   u8  mesh mode (1) or obb mode (0)
//   u64 object count
//   the top level's shape (WideBvhOf::save_shape) over the objects in the
//   tree, then u32 per entry: its object
//   u64 mesh count, then per mesh: u8 built (its triangle tree exists,
//   mesh mode only), and when built its tree's shape over its triangles
#include "padding.h"
#include "picker_impl.h"

#include <variant>
#include <vector>

namespace raypick {
namespace {

// The version of the saved bytes for a top level and meshes' trees of 8
// or 16 slots (a picker without mesh trees saves them as 8).
constexpr std::uint32_t trees_version(bool top16, bool mesh16) {
  return 1 + (top16 ? 1 : 0) + (mesh16 ? 2 : 0);
}

}  // namespace

std::string PickerCore::save_trees() const {
  std::string out;
  saved::append(out, trees_version(std::holds_alternative<WideBvh16>(top_), saved_mesh16()));
  saved::append(out, static_cast<std::uint8_t>(config_.mesh_mode ? 1 : 0));
  saved::append(out, static_cast<std::uint64_t>(objects_.size()));
  with_top([&](const auto& top) { top.save_shape(out); });
  for (const LeafObb& l : leaf_) saved::append(out, l.object);
  saved::append(out, static_cast<std::uint64_t>(meshes_.size()));
  for (const MeshAccel& m : meshes_) {
    saved::append(out, static_cast<std::uint8_t>(m.bvh_built ? 1 : 0));
    if (m.bvh_built) m.with_bvh([&](const auto& tree) { tree.save_shape(out); });
  }
  return out;
}

bool PickerCore::adopt_trees(std::string_view bytes, std::string& why) {
  saved::Bytes in(bytes);
  const auto version = in.read<std::uint32_t>();
  const auto mesh_mode = in.read<std::uint8_t>();
  const auto objects = in.read<std::uint64_t>();
  if (!in.ok() || version < trees_version(false, false) || version > trees_version(true, true)) {
    why = "saved trees of another version";
    return false;
  }
  if ((mesh_mode == 1) != config_.mesh_mode || mesh_mode > 1) {
    why = "saved trees of another mode";
    return false;
  }
  if (objects != objects_.size()) {
    why = "saved trees over " + std::to_string(objects) + " objects, the scene has " +
          std::to_string(objects_.size());
    return false;
  }
  // As rebuild(): the padding's centre, each object's leaf copy and box;
  // the objects with a box are the tree's primitives.
  pad_centre_ = live_centre();
  const auto count = static_cast<std::uint32_t>(objects_.size());
  std::vector<LeafObb> leaves(count);
  std::vector<Aabb> boxes(count);
  const std::size_t kept = make_leaves(leaves.data(), boxes.data());
  // The widths a build of this picker would choose.
  const bool wide = wide16();
  if ((version == trees_version(true, false) || version == trees_version(true, true)) != wide) {
    why = wide ? "saved trees of 8-wide nodes; this picker's top level takes 16"
               : "saved trees of 16-wide nodes; this picker's top level takes 8";
    return false;
  }
  if (version != trees_version(wide, saved_mesh16())) {
    why = !config_.mesh_mode ? "saved trees of another version (16-wide mesh trees in obb mode)"
          : saved_mesh16()   ? "saved mesh trees of 8-wide nodes; this picker's take 16"
                             : "saved mesh trees of 16-wide nodes; this picker's take 8";
    return false;
  }
  if (wide) {
    return adopt_top<WideBvh16>(in, kept, leaves, boxes, why) && adopt_meshes(in, kept, why);
  }
  return adopt_top<WideBvh>(in, kept, leaves, boxes, why) && adopt_meshes(in, kept, why);
}

template <class Tree>
bool PickerCore::adopt_top(saved::Bytes& in, std::size_t kept, const std::vector<LeafObb>& leaves,
                           const std::vector<Aabb>& boxes, std::string& why) {
  const auto count = static_cast<std::uint32_t>(objects_.size());
  std::optional<Tree> top = Tree::load_shape(in, kept, config_.top.max_leaf_size, why);
  if (!top) return false;
  if (top->has_prim_ids()) {
    why = "the saved top level numbers its entries (its objects come after it)";
    return false;
  }
  if (!in.holds(kept, sizeof(std::uint32_t))) {
    why = "the saved trees' objects are cut off";
    return false;
  }
  leaf_.resize(kept);
  std::vector<Aabb> entry_boxes(kept);
  for (std::uint32_t e = 0; e < kept; ++e) {
    const auto id = in.read<std::uint32_t>();
    if (id >= count || boxes[id].empty() || objects_[id].prim != kInvalidId) {
      why = "the saved tree's entry " + std::to_string(e) + " names object " +
            std::to_string(id) + ", which it cannot hold";
      return false;
    }
    objects_[id].prim = e;
    leaf_[e] = leaves[id];
    entry_boxes[e] = boxes[id];
  }
  top->set_node_test(node_test());
  top->set_packet_lanes(packet_lanes());
  top->set_fetch_pushed(fetches_pushed(*top));
  sah_sum_ = top->refit_sweep([](std::uint32_t) { return true; },
                              [&](std::uint32_t e) { return entry_boxes[e]; }, config_.top)
                 .sah_sum;
  top_ = std::move(*top);
  return true;
}

bool PickerCore::adopt_meshes(saved::Bytes& in, std::size_t kept, std::string& why) {
  // The meshes' triangle trees, where the build would make them: mesh
  // mode, meshes some live object uses.
  const auto meshes = in.read<std::uint64_t>();
  if (meshes != meshes_.size()) {
    why = "saved trees over " + std::to_string(meshes) + " meshes, the scene has " +
          std::to_string(meshes_.size());
    return false;
  }
  const std::vector<bool> used = used_meshes();
  for (std::size_t id = 0; id < meshes_.size(); ++id) {
    MeshAccel& m = meshes_[id];
    const auto built = in.read<std::uint8_t>();
    if (built != ((config_.mesh_mode && used[id]) ? 1 : 0)) {
      why = "saved trees: mesh " + std::to_string(id) + "'s tree does not fit";
      return false;
    }
    if (built == 0) continue;
    // The width this picker builds (the version said so).
    bool loaded = false;
    if (mesh_wide16()) {
      std::optional<WideBvh16> tree =
          WideBvh16::load_shape(in, m.triangles.size(), config_.mesh.max_leaf_size, why);
      if (tree) m.bvh = std::move(*tree);
      loaded = tree.has_value();
    } else {
      std::optional<WideBvh> tree =
          WideBvh::load_shape(in, m.triangles.size(), config_.mesh.max_leaf_size, why);
      if (tree) m.bvh = std::move(*tree);
      loaded = tree.has_value();
    }
    if (!loaded) {
      why = "mesh " + std::to_string(id) + ": " + why;
      return false;
    }
    copy_verts(m);
    // The triangles' padded boxes, as build_mesh_bvh() pads them.
    std::vector<Aabb> padded(m.verts.size());
    for (std::size_t e = 0; e < m.verts.size(); ++e) {
      Aabb b;
      for (const glm::vec3& v : m.verts[e]) b.extend(v);
      padded[e] = pad(b);
    }
    m.with_bvh([&](auto& tree) {
      tree.refit_sweep([](std::uint32_t) { return true; },
                       [&](std::uint32_t e) { return padded[e]; }, config_.mesh);
      tree.set_node_test(node_test());
    });
    m.bvh_built = true;
  }
  if (!in.done()) {
    why = in.ok() ? "bytes after the saved trees" : "the saved trees are cut off";
    return false;
  }
  moved_.assign(kept, 0);
  dirty_.clear();
  structure_dirty_ = false;
  committed_ = true;
  sah_built_ = sah_cost();
  return true;
}

}  // namespace raypick
