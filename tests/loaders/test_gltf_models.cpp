// The glTF 2.0 models of Debian's assimp-testmodels: every file loads or is
// refused with a clear message; the valid ones load with the object and
// triangle counts an independent reading of their JSON gives (Python's json
// module: depth-first pre-order from the default scene, n / 3 triangles for
// a list, n - 2 for a strip or fan); the malformed ones are refused for the
// right reason; and Embree agrees with raypick's picks on the real models.
#include "loader_test_util.h"
#include "test_util.h"

#include "embree_scene.h"
#include "validate.h"

#include "raypick/bvh/picker.h"
#include "raypick/loaders/load.h"

#include <doctest/doctest.h>
#include <glm/mat4x4.hpp>

#include <filesystem>
#include <string>
#include <vector>

using namespace raypick;
using namespace raypick::test;
namespace fs = std::filesystem;

namespace {

const fs::path kModels = "/usr/share/assimp/models/glTF2";

void require_models() { assimp_model("glTF2"); }

std::string model(const std::string& relative) {
  return (kModels / relative).string();
}

}  // namespace

TEST_CASE("every glTF model of assimp-testmodels loads or fails cleanly") {
  require_models();
  std::size_t files = 0;
  std::size_t loaded = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(kModels)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".gltf" && ext != ".glb") continue;
    CAPTURE(entry.path().string());
    loaded += loads_or_fails_cleanly(entry.path().string()) ? 1 : 0;
    ++files;
  }
  CHECK(files == 46);
  CHECK(loaded == 35);
}

TEST_CASE("assimp's valid glTF models load with their object and triangle counts") {
  require_models();
  struct Expected {
    const char* file;
    std::size_t objects;
    std::size_t meshes;
    std::size_t triangles;
  };
  const std::vector<Expected> expected = {
      {"2CylinderEngine-glTF-Binary/2CylinderEngine.glb", 67, 29, 121496},
      {"BoxBadNormals-glTF-Binary/BoxBadNormals.glb", 1, 1, 12},
      {"BoxTexcoords-glTF/boxTexcoords.gltf", 1, 1, 12},
      {"BoxTextured-glTF-Binary/BoxTextured.glb", 1, 1, 12},
      {"BoxTextured-glTF-Embedded/BoxTextured.gltf", 1, 1, 12},
      {"BoxTextured-glTF-pbrSpecularGlossiness/BoxTextured.gltf", 1, 1, 12},
      // Requires KHR_technique_webgl, a material extension.
      {"BoxTextured-glTF-techniqueWebGL/BoxTextured.gltf", 1, 1, 12},
      {"BoxTextured-glTF/BoxTextured.gltf", 1, 1, 12},
      {"ClearCoat-glTF/ClearCoatTest.gltf", 27, 27, 37116},
      // No "scene": scene 0.
      {"cameras/Cameras.gltf", 1, 1, 2},
      {"glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf", 1, 1, 12},
      {"issue_3269/texcoord_crash.gltf", 5, 5, 10},
      // Four base64 buffers; the skin is ignored.
      {"simple_skin/simple_skin.gltf", 1, 1, 8},
      // 12 nodes instancing 9 meshes.
      {"textureTransform/TextureTransformTest.gltf", 12, 9, 24},
      // Wrong types where picking never looks (materials, a scene's name).
      {"wrongTypes/badExtension.gltf", 1, 1, 12},
      {"wrongTypes/badNumber.gltf", 1, 1, 12},
      {"wrongTypes/badObject.gltf", 1, 1, 12},
      {"wrongTypes/badString.gltf", 1, 1, 12},
      {"wrongTypes/badUint.gltf", 1, 1, 12},
  };
  for (const Expected& e : expected) {
    CAPTURE(e.file);
    const Scene scene = require_load(model(e.file));
    CHECK(scene.objects.size() == e.objects);
    CHECK(scene.meshes.size() == e.meshes);
    CHECK(scene.triangle_count() == e.triangles);
  }
}

TEST_CASE("assimp's glTF primitive mode models: points and lines are empty objects") {
  require_models();
  // 00-03 and 07-10: points, lines, loops, line strips (non-indexed, then
  // indexed); 04-06 and 11-15: strip, fan, list of 4 vertices making a
  // quad, 13-15 with u32, u8 and u16 indices.
  const std::vector<std::size_t> triangles = {0, 0, 0, 0, 2, 2, 2, 0,
                                              0, 0, 0, 2, 2, 2, 2, 2};
  for (std::size_t i = 0; i < triangles.size(); ++i) {
    const std::string file = model("glTF-Asset-Generator/Mesh_PrimitiveMode/Mesh_PrimitiveMode_" +
                                   std::string(i < 10 ? "0" : "") + std::to_string(i) + ".gltf");
    CAPTURE(file);
    const Scene scene = require_load(file);
    REQUIRE(object_names(scene) == std::vector<std::string>{"node0"});
    CHECK(scene.triangle_count() == triangles[i]);
  }
}

TEST_CASE("assimp's glTF models keep node names, order and matrices") {
  require_models();
  SUBCASE("BoxTextured: the mesh node under a rotating root") {
    const Scene scene = require_load(model("BoxTextured-glTF/BoxTextured.gltf"));
    REQUIRE(object_names(scene) == std::vector<std::string>{"node1"});
    glm::mat4 expected{1.0f};
    expected[1] = {0, 0, -1, 0};
    expected[2] = {0, 1, 0, 0};
    CHECK(scene.objects[0].matrix == expected);
    const Aabb box = mesh_of(scene, 0).triangle_bounds();
    CHECK(box.min == glm::vec3{-0.5f});
    CHECK(box.max == glm::vec3{0.5f});
  }
  SUBCASE("texcoord_crash: five named nodes in scene order") {
    const Scene scene = require_load(model("issue_3269/texcoord_crash.gltf"));
    CHECK(object_names(scene) == std::vector<std::string>{"BackPlane", "BottomRightObj",
                                                   "BottomLeftObj", "TopRightObj",
                                                   "TopLeftObj"});
  }
  SUBCASE("2CylinderEngine: unnamed nodes, pre-order") {
    const Scene scene = require_load(model("2CylinderEngine-glTF-Binary/2CylinderEngine.glb"));
    REQUIRE(scene.objects.size() == 67);
    // Node 0's children start 80, 79, 78; node 80 is a leaf with a matrix.
    CHECK(scene.objects[0].name == "node80");
    CHECK(scene.objects[1].name == "node79");
    CHECK(scene.objects[2].name == "node78");
    CHECK(mesh_of(scene, 0).triangles.size() == 191);
    CHECK(scene.objects[0].matrix[3] == glm::vec4{-295.0f, 132.1395263671875f,
                                                  -3.9833459854125977f, 1.0f});
  }
}

TEST_CASE("assimp's malformed glTF models are refused for the right reason") {
  require_models();
  struct Refused {
    const char* file;
    LoadError::Kind kind;
    std::size_t line;  // 0: none (a .glb)
    const char* message;
  };
  const std::vector<Refused> refused = {
      {"BoxWithInfinites-glTF-Binary/BoxWithInfinites.glb", LoadError::Kind::kMalformed, 0, "accessors[2]: POSITION (meshes[0].primitives[0]): vertex 0 is not finite (-inf, -0.5, 0.5)"},
      // Its buffer has 514 bytes; its views reach byte 1800.
      {"IncorrectVertexArrays/Cube.gltf", LoadError::Kind::kMalformed, 129, "bufferViews[2]: bytes 504..936 are out of range of buffers[0] (514 bytes)"},
      {"IndexOutOfRange/IndexOutOfRange.gltf", LoadError::Kind::kMalformed, 59, "accessors[0]: index 255 (element 0) is past the 24 vertices of POSITION (meshes[0].primitives[0])"},
      {"IndexOutOfRange/AllIndicesOutOfRange.gltf", LoadError::Kind::kMalformed, 59, "accessors[0]: index 65535 (element 0) is past the 24 vertices of POSITION (meshes[0].primitives[0])"},
      {"MissingBin/BoxTextured.gltf", LoadError::Kind::kIo, 178, "buffers[0].uri: cannot open buffer file '"},
      {"RecursiveNodes/RecursiveNodes.gltf", LoadError::Kind::kMalformed, 21, "nodes[1].children[0]: node 0 is its own ancestor (cycle 0 -> 1 -> 0)"},
      {"SchemaFailures/sceneWrongType.gltf", LoadError::Kind::kMalformed, 6, "scene: expected a non-negative integer, got the string \"hello\""},
      {"TestNoRootNode/NoScene.gltf", LoadError::Kind::kMalformed, 5, "scene: scenes[0] does not exist (0 elements)"},
      {"TestNoRootNode/SceneWithoutNodes.gltf", LoadError::Kind::kMalformed, 1, "no objects in scene (no node with a mesh)"},
      {"draco/2CylinderEngine.gltf", LoadError::Kind::kMalformed, 4753, "extensionsRequired[0]: the file requires KHR_draco_mesh_compression, which raypick cannot read"},
      {"wrongTypes/badArray.gltf", LoadError::Kind::kMalformed, 44, "meshes[0].primitives: expected an array, got an object"},
  };
  for (const Refused& r : refused) {
    CAPTURE(r.file);
    const LoadError error = require_error(model(r.file));
    CHECK(error.kind == r.kind);
    CHECK(error.line == r.line);
    CHECK(error.message.rfind(r.message, 0) == 0);
  }
}

TEST_CASE("validate finds 0 mismatches against Embree on real glTF models") {
  require_models();
  for (const char* file : {"2CylinderEngine-glTF-Binary/2CylinderEngine.glb",
                           "ClearCoat-glTF/ClearCoatTest.gltf",
                           "textureTransform/TextureTransformTest.gltf",
                           "BoxTextured-glTF/BoxTextured.gltf",
                           "issue_3269/texcoord_crash.gltf"}) {
    const Scene scene = require_load(model(file));
    const Picker picker(scene);
    for (const PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
      CAPTURE(file);
      CAPTURE(static_cast<int>(mode));
      const tools::EmbreeScene embree(scene, mode);
      const std::vector<Ray> rays =
          tools::make_validation_rays(scene, picker, 4000, 11, mode);
      const tools::ValidateReport report =
          tools::validate(scene, picker, embree, mode, rays);
      for (const tools::Disagreement& d : report.disagreements) {
        if (d.verdict == tools::Verdict::kMismatch) MESSAGE(d.detail);
      }
      CHECK(report.mismatches() == 0);
      CHECK(report.raypick_hits > 0);
      CHECK(report.count(tools::Verdict::kAgree) > report.rays / 2);
    }
  }
}
