#include "graph/op.h"

namespace braze {

std::optional<Op> op_from_name(std::string_view s) {
  for (size_t i = 0; i < kNumOps; ++i)
    if (kOpInfo[i].name == s || kOpInfo[i].api == s) return static_cast<Op>(i);
  return std::nullopt;
}

std::string_view name(FusionKind k) {
  switch (k) {
    case FusionKind::Leaf: return "leaf";
    case FusionKind::ElemWise: return "elementwise";
    case FusionKind::Broadcast: return "broadcast";
    case FusionKind::View: return "view";
    case FusionKind::Reduce: return "reduce";
    case FusionKind::Opaque: return "opaque";
  }
  return "?";
}

}  // namespace braze
