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

std::string_view name(DTypeRule r) {
  switch (r) {
#define BRAZE_RULE(x) case DTypeRule::x: return #x;
    BRAZE_RULE(Given) BRAZE_RULE(Same) BRAZE_RULE(SameNumeric) BRAZE_RULE(SameNonEmpty)
    BRAZE_RULE(ToFloat) BRAZE_RULE(ToBool) BRAZE_RULE(Cast) BRAZE_RULE(Promote)
    BRAZE_RULE(PromoteNumeric) BRAZE_RULE(PromoteFloat) BRAZE_RULE(Compare) BRAZE_RULE(Logical)
    BRAZE_RULE(Bitwise) BRAZE_RULE(Shift)
    BRAZE_RULE(Select) BRAZE_RULE(Accumulate) BRAZE_RULE(Index) BRAZE_RULE(MatMul) BRAZE_RULE(Conv)
#undef BRAZE_RULE
  }
  return "?";
}

}  // namespace braze
