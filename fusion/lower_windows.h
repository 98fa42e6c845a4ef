// Windowed reads as masked loads, for the code generators.
#pragma once

#include "fusion/kernel_spec.h"

namespace braze {

// Note [Masked loads]
// A kernel input whose view has a window (Note [Windows] in graph/shape.h:
// padding) reads its buffer only inside the window and zero outside; the
// view's strides and offset still give every index an address, one outside
// the buffer for a padded index. lower_windows rewrites such a spec for a
// generator: the window leaves the input's view, each windowed axis d
// becomes a Window input (a bool true where the index along d lies in the
// window, computed from the index as an arange is, nothing passed at
// launch; appended after the spec's inputs, so a launch's arguments still
// line up), the axes' bools are and-ed, and the load takes the result as
// its one arg: a masked load, which reads no address where the mask is
// false and gives zero there. So a generator needs two things only: Window
// inputs, and loads under a mask; each decides how to mask (the CPU:
// whole vectors where every lane is in or every lane is out, lane by lane
// at the window's edges; CUDA: a select around the load). The spec's key
// is the unlowered spec's, whose canonical text has the windows.
KernelSpec lower_windows(const KernelSpec& spec);

// Per input of a lowered spec, whether a masked load reads it: a generator
// must not read it whole (vector loads, staged tiles) where it would read
// padding's addresses.
std::vector<bool> masked_inputs(const KernelSpec& spec);

}  // namespace braze
