// libFuzzer target: the input is a saved scene, .rpscene (see fuzz_load.h).
#include "fuzz_load.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return raypick::fuzz::load_input(data, size, "in.rpscene");
}
