#include "jit_cpu/dnn_call.h"

#include <cstdio>
#include <sstream>

namespace braze::dnn {

Call describe_call(const Graph& g, const FusedGroup& group) {
  const Node& lib = g[group.nodes[0]];
  auto operand = [&](NodeId i) { return Operand{g[i].dtype, g[i].view, g.base(i)}; };
  Call c{lib.op, lib.attr.ints, lib.dtype, g[group.outputs[0]].shape(), operand(lib.inputs[0]),
         operand(lib.inputs[1]), g[g.base(lib.inputs[1])].op == Op::Input, {}};
  for (const PostOp& p : group.post_ops)
    c.post.push_back({p.kind, p.op, p.activation, p.kind == PostOp::Kind::Binary ? operand(p.addend) : Operand{},
                      p.alpha, p.beta});
  return c;
}

std::string key_text(const Call& c) {
  std::ostringstream s;
  auto view = [&](const Operand& o) {
    s << name(o.dtype) << to_string(o.view.shape) << to_string(o.view.strides) << " ";
  };
  s << info(c.op).name << to_string(c.attr) << " " << name(c.dtype) << to_string(c.out) << " ";
  view(c.a);
  view(c.b);
  if (c.b_input) s << "input ";
  for (const CallPostOp& p : c.post) {
    switch (p.kind) {
      case PostOp::Kind::Binary:
        s << info(p.op).name << ":";
        view(p.addend);
        break;
      case PostOp::Kind::Linear: {
        // Exact and locale-free: the constants are baked into the primitive.
        char text[80];
        std::snprintf(text, sizeof text, "linear(%a,%a) ", p.alpha, p.beta);
        s << text;
        break;
      }
      case PostOp::Kind::Activation: s << name(p.activation) << " "; break;
    }
  }
  return s.str();
}

}  // namespace braze::dnn
