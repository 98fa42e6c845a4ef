#include "jit_cpu/dnn_call.h"

#include <sstream>

namespace braze::dnn {

Call describe_call(const Graph& g, const FusedGroup& group) {
  const Node& lib = g[group.nodes[0]];
  auto operand = [&](NodeId i) { return Operand{g[i].dtype, g[i].view, g.base(i)}; };
  Call c{lib.op, lib.attr.ints, lib.dtype, g[group.outputs[0]].shape(), operand(lib.inputs[0]),
         operand(lib.inputs[1]), {}};
  for (const PostOp& p : group.post_ops)
    c.post.push_back({p.kind, p.activation, p.kind == PostOp::Kind::Add ? operand(p.addend) : Operand{}});
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
  for (const CallPostOp& p : c.post) {
    if (p.kind == PostOp::Kind::Add) {
      s << "add:";
      view(p.addend);
    } else {
      s << name(p.activation) << " ";
    }
  }
  return s.str();
}

}  // namespace braze::dnn
