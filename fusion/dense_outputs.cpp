// A graph output that is a view or a leaf gets a Copy on top: realize
// returns dense arrays, and the copy then fuses into the kernel that
// produces the value (or reads the leaf through its strides).
#include "fusion/passes.h"

namespace braze {

Graph dense_outputs(const Graph& g) {
  Graph out = g;
  for (NodeId& o : out.outputs) {
    const Node& n = out[o];
    if (is_movement(n.op) || info(n.op).kind == FusionKind::Leaf) o = out.apply(Op::Copy, {o});
  }
  return out;
}

}  // namespace braze
