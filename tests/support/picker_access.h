// What the library's tests read of a Picker: its private state
// (bvh/src/picker_impl.h), as picker.cpp keeps it.
#pragma once

#include "picker_impl.h"

namespace raypick {

// Declared a friend by Picker.
struct PickerInternals {
  static const Picker::Impl& of(const Picker& picker) { return *picker.impl_; }
};

}  // namespace raypick
