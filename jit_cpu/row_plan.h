// The shape a generated kernel runs over: rows of a collapsed domain.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fusion/kernel_spec.h"

namespace braze::jit {

// Note [Row kernels]
// The generator sees a spec's domain with size-1 axes dropped and adjacent
// axes merged wherever every input's strides allow, so a contiguous tensor
// of any rank is one axis. The last axis is the row: it is vectorised, and a
// reduction runs along it (softmax's rows). The axes before it are the rows'
// index, walked by an odometer with constant strides and split across
// threads. A spec that reduces over an axis that is not innermost after
// collapsing has no row plan yet (it runs on the spec interpreter).
struct RowPlan {
  Shape outer;            // the rows' index space
  int64_t row_length = 1;  // L
  bool reduces = false;    // the reduction runs along the row
  // Per spec input, in plan axes: strides over `outer`, the stride along the
  // row (0 for Reduced inputs and broadcasts), and the offset.
  struct Access {
    std::vector<int64_t> outer_strides;
    int64_t inner_stride = 0;
    int64_t offset = 0;
  };
  std::vector<Access> inputs;
  int64_t rows() const;
};

// The plan, or nullopt with `why` set.
std::optional<RowPlan> plan_rows(const KernelSpec& spec, std::string& why);

}  // namespace braze::jit
