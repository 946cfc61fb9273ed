#include <raypick/bvh/picker.h>

#include <glm/ext/matrix_transform.hpp>
#include <cstdio>

int main() {
  const glm::vec3 corners[] = {{-1, -1, -1}, {1, -1, -1}, {-1, 1, -1}, {1, 1, -1},
                               {-1, -1, 1},  {1, -1, 1},  {-1, 1, 1},  {1, 1, 1}};
  const glm::uvec3 faces[] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                              {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
  raypick::Picker picker;
  const auto cube = picker.add_mesh(corners, faces);
  for (int i = 0; i < 10; ++i)  // a row of crates along x; drag crate 4 over crate 5
    picker.add_object(cube, glm::translate(glm::mat4(1), {3.0f * i, 0, 0}));
  picker.commit();
  const std::uint32_t dragged = 4;
  raypick::QueryOptions opt{raypick::PickMode::kMesh};
  opt.filter = [&](std::uint32_t id) { return id != dragged; };  // see through it
  for (int frame = 0; frame < 3; ++frame) {
    picker.set_matrix(dragged, glm::translate(glm::mat4(1), {15, 0, 5.0f - frame}));
    const raypick::CommitStats st = picker.commit();  // a refit, not a rebuild
    const raypick::Hit hit = picker.intersect(raypick::Ray{{15, 0, 10}, {0, 0, -1}}, opt);
    std::printf("frame %d: object %u triangle %u t=%g (%s)\n", frame, hit.object,
                hit.triangle, hit.t, st.rebuilt ? "rebuilt" : "refitted");
  }
}
