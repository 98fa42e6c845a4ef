// Matching the post-op chain after a library node (Note [Library epilogues]).
#include "fusion/epilogue.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "fusion/library_rules.h"

namespace braze {

std::string_view name(Activation a) {
  switch (a) {
    case Activation::Relu: return "relu";
    case Activation::Gelu: return "gelu";
    case Activation::GeluTanh: return "gelu_tanh";
    case Activation::Silu: return "silu";
    case Activation::Sigmoid: return "sigmoid";
    case Activation::Tanh: return "tanh";
  }
  return "?";
}

namespace {

// A pattern over one value x: the ops an activation is built from
// (runtime/composites.cpp), with its constants. Commutative ops match their
// inputs in either order, so the simplifier's operand order does not matter.
struct Pattern {
  enum class Kind : uint8_t { X, Constant, Apply } kind;
  Op op = Op::Input;
  double value = 0;
  std::vector<Pattern> args;
};
Pattern x() { return {Pattern::Kind::X, Op::Input, 0, {}}; }
Pattern c(double v) { return {Pattern::Kind::Constant, Op::Input, v, {}}; }
Pattern p(Op op, std::vector<Pattern> args) { return {Pattern::Kind::Apply, op, 0, std::move(args)}; }

struct ActivationPattern {
  Activation activation;
  Pattern pattern;
};

const std::vector<ActivationPattern>& activation_patterns() {
  static const std::vector<ActivationPattern> table = [] {
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    Pattern half_x = p(Op::Mul, {c(0.5), x()});
    return std::vector<ActivationPattern>{
        {Activation::Relu, p(Op::Relu, {x()})},
        {Activation::Relu, p(Op::Maximum, {x(), c(0.0)})},
        {Activation::Sigmoid, p(Op::Sigmoid, {x()})},
        {Activation::Tanh, p(Op::Tanh, {x()})},
        {Activation::Silu, p(Op::Mul, {x(), p(Op::Sigmoid, {x()})})},
        // 0.5 * x * (1 + erf(x * (1/sqrt 2)))
        {Activation::Gelu,
         p(Op::Mul, {half_x, p(Op::Add, {c(1.0), p(Op::Erf, {p(Op::Mul, {x(), c(1.0 / std::sqrt(2.0))})})})})},
        // 0.5 * x * (1 + tanh(k * (x + 0.044715 * x * x * x)))
        {Activation::GeluTanh,
         p(Op::Mul,
           {half_x,
            p(Op::Add,
              {c(1.0),
               p(Op::Tanh,
                 {p(Op::Mul,
                    {c(k), p(Op::Add, {x(), p(Op::Mul, {p(Op::Mul, {p(Op::Mul, {c(0.044715), x()}), x()}),
                                                         x()})})})})})})},
    };
  }();
  return table;
}

bool is_constant(const Graph& g, NodeId input, double v) {
  const Node& b = g[g.base(input)];
  if (b.op != Op::Const) return false;
  double have = b.attr.reals.empty() ? static_cast<double>(b.attr.ints[0]) : b.attr.reals[0];
  // Constants pass through float32 in the graph: compare at that precision.
  return std::abs(have - v) <= 1e-6 * std::max(1.0, std::abs(v));
}

// Matches `pat` at `input` (an input edge of a node) with X bound to `xv`;
// collects the computed nodes matched.
bool match(const Graph& g, NodeId input, const Pattern& pat, NodeId xv, std::vector<NodeId>& nodes) {
  switch (pat.kind) {
    case Pattern::Kind::X: return input == xv;
    case Pattern::Kind::Constant: return is_constant(g, input, pat.value);
    case Pattern::Kind::Apply: break;
  }
  const Node& n = g[input];
  if (n.op != pat.op || n.inputs.size() != pat.args.size() || n.dtype != g[xv].dtype) return false;
  size_t mark = nodes.size();
  auto all = [&](bool swapped) {
    nodes.resize(mark);
    for (size_t k = 0; k < pat.args.size(); ++k) {
      size_t from = swapped ? pat.args.size() - 1 - k : k;
      if (!match(g, n.inputs[k], pat.args[from], xv, nodes)) return false;
    }
    nodes.push_back(input);
    return true;
  };
  if (all(false)) return true;
  return pat.args.size() == 2 && (info(pat.op).flags & kCommutative) && all(true);
}

struct Found {
  Activation activation;
  std::vector<NodeId> nodes;  // sorted; the last is the result
};

// An activation of `t` whose nodes read nothing else of the graph's values
// and are read only inside it (but its result).
std::optional<Found> match_activation(const Graph& g, NodeId t, const std::vector<std::vector<NodeId>>& users,
                                      const std::vector<bool>& is_output) {
  // The pattern's root is some node downstream of t (gelu's last multiply
  // reads t only through other nodes): try those a few steps away, latest
  // first, so the largest activation wins.
  std::set<NodeId> cone;
  std::vector<NodeId> frontier{t};
  for (int depth = 0; depth < 8; ++depth) {
    std::vector<NodeId> next;
    for (NodeId n : frontier)
      for (NodeId u : users[n])
        if (cone.insert(u).second) next.push_back(u);
    frontier = std::move(next);
  }
  for (auto it = cone.rbegin(); it != cone.rend(); ++it) {
    NodeId root = *it;
    for (const ActivationPattern& ap : activation_patterns()) {
      std::vector<NodeId> nodes;
      if (!match(g, root, ap.pattern, t, nodes)) continue;
      std::sort(nodes.begin(), nodes.end());
      nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
      std::set<NodeId> inside(nodes.begin(), nodes.end());
      bool closed = std::all_of(users[t].begin(), users[t].end(), [&](NodeId u) { return inside.count(u); });
      for (NodeId m : nodes) {
        if (m == root) continue;
        closed = closed && !is_output[m];
        for (NodeId u : users[m]) closed = closed && inside.count(u);
      }
      if (closed && nodes.back() == root) return Found{ap.activation, std::move(nodes)};
    }
  }
  return std::nullopt;
}

}  // namespace

Readers readers_of(const Graph& g) {
  Readers r{std::vector<std::vector<NodeId>>(g.size()), std::vector<bool>(g.size())};
  for (NodeId id = 0; id < g.size(); ++id) {
    if (info(g[id].op).kind == FusionKind::Leaf || is_movement(g[id].op)) continue;
    for (NodeId i : g[id].inputs) {
      std::vector<NodeId>& u = r.users[g.base(i)];
      if (u.empty() || u.back() != id) u.push_back(id);
    }
  }
  for (NodeId o : g.outputs) r.is_output[o] = true;
  return r;
}

std::vector<bool> epilogue_members(const Graph& g) {
  Readers r = readers_of(g);
  std::vector<bool> member(g.size());
  for (NodeId id = 0; id < g.size(); ++id)
    if (info(g[id].op).kind == FusionKind::Opaque)
      for (NodeId e : match_epilogue(g, id, r.users, r.is_output).nodes) member[e] = true;
  return member;
}

EpilogueMatch match_epilogue(const Graph& g, NodeId library, const std::vector<std::vector<NodeId>>& users,
                             const std::vector<bool>& is_output, const LibraryRules& rules) {
  EpilogueMatch m;
  m.last = library;
  const Node& lib = g[library];
  auto stop = [&](std::string why) {
    for (NodeId u : users[m.last]) m.stopped.push_back({u, why});
    return m;
  };
  // Note [Library capabilities]: why the target's library cannot apply
  // `next` after the post-ops of `taken` ("" when it can).
  auto refused = [&](std::span<const PostOp> taken, const PostOp& next) {
    return rules.refuse ? rules.refuse(g, library, taken, next) : std::string();
  };
  while (true) {
    NodeId t = m.last;
    if (users[t].empty()) return m;
    if (is_output[t]) return stop("the value is also a result, so the library writes it");
    if (m.post_ops.size() == kMaxPostOps)
      return stop("the library call already has " + std::to_string(kMaxPostOps) + " post-ops");
    if (std::optional<Found> f = match_activation(g, t, users, is_output)) {
      PostOp a{.kind = PostOp::Kind::Activation, .activation = f->activation, .result = f->nodes.back()};
      if (std::string why = refused(m.post_ops, a); !why.empty()) return stop(why);
      m.post_ops.push_back(a);
      m.nodes.insert(m.nodes.end(), f->nodes.begin(), f->nodes.end());
      m.last = f->nodes.back();
      continue;
    }
    if (users[t].size() > 1)
      return stop("the value is read by " + std::to_string(users[t].size()) + " ops, so the library writes it");
    NodeId u = users[t][0];
    const Node& n = g[u];
    if (info(n.op).kind == FusionKind::Opaque)
      return stop(std::string(info(n.op).name) + " is a library call: its operands are written to memory");
    const bool commutes = n.op == Op::Add || n.op == Op::Mul;
    if (!commutes && n.op != Op::Sub && n.op != Op::Div)
      return stop(std::string(info(n.op).name) +
                  " is not a post-op the library applies (add, sub, mul, div, relu, gelu, silu, sigmoid, tanh)");
    if (n.inputs[0] != t && n.inputs[1] != t) return stop("it reads the library's value through a view");
    if (n.inputs[0] != t && !commutes)
      return stop(std::string(info(n.op).name) + " has the library's value on its right; a post-op computes value " +
                  std::string(info(n.op).name) + " operand");
    NodeId addend = n.inputs[0] == t ? n.inputs[1] : n.inputs[0];
    NodeId base = g.base(addend);
    if (g[addend].view.windowed())
      return stop("the operand is padded (Note [Windows]): a library reads no zeros it has not got in memory");
    if (n.dtype != lib.dtype || g[addend].dtype != lib.dtype || n.shape() != lib.shape())
      return stop("the " + std::string(info(n.op).name) + " changes the dtype or the shape of the library's result");
    if (g[base].op == Op::Const && commutes) {  // a Const is one value, whatever its shape
      const Node& c = g[base];
      double v = c.attr.reals.empty() ? static_cast<double>(c.attr.ints[0]) : c.attr.reals[0];
      // Consecutive constants make one linear post-op: oneDNN 2.6's gemm
      // matmul gives wrong results for two eltwise_linear post-ops in a row
      // (measured: (x @ w) * 2 + 2 off by about 2).
      bool merge = !m.post_ops.empty() && m.post_ops.back().kind == PostOp::Kind::Linear;
      PostOp lin = merge ? m.post_ops.back() : PostOp{.kind = PostOp::Kind::Linear, .op = n.op};
      if (n.op == Op::Mul) lin.alpha *= v, lin.beta *= v;
      else lin.beta += v;
      lin.result = u;
      std::span<const PostOp> before(m.post_ops.data(), m.post_ops.size() - (merge ? 1 : 0));
      if (std::string why = refused(before, lin); !why.empty()) return stop(why);
      if (merge) m.post_ops.back() = lin;
      else m.post_ops.push_back(lin);
      m.nodes.push_back(u);
      m.last = u;
      continue;
    }
    if (base == t || (g[base].op != Op::Input && info(g[base].op).kind == FusionKind::Leaf))
      return stop("the operand is the value itself or a constant the library cannot take, not a tensor in memory");
    // The operand must be in memory before the call runs. A computed
    // operand recorded after the library node may be another library
    // call's value whose own chain reaches this node (a @ b + c @ d): only
    // the later call takes the add, so no node has two owners and no call
    // reads a value that is not written yet.
    if (info(g[base].op).kind != FusionKind::Leaf && base > library)
      return stop("the operand " + std::string(info(g[base].op).name) + "#" + std::to_string(base) +
                  " is computed after this library call");
    PostOp b{.kind = PostOp::Kind::Binary, .op = n.op, .addend = addend, .result = u};
    if (std::string why = refused(m.post_ops, b); !why.empty()) return stop(why);
    m.post_ops.push_back(b);
    m.nodes.push_back(u);
    m.last = u;
  }
}

std::string describe(const Graph& g, const PostOp& p) {
  if (p.kind == PostOp::Kind::Activation) return std::string(name(p.activation));
  std::ostringstream s;
  if (p.kind == PostOp::Kind::Linear) {
    s << "linear " << p.alpha << " * x + " << p.beta << " (a constant of the graph)";
    return s.str();
  }
  NodeId b = g.base(p.addend);
  std::string op(info(p.op).name);
  for (char& ch : op) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  s << op << " " << info(g[b].op).name << "#" << b << " as " << to_string(g[p.addend].shape()) << " strides "
    << to_string(g[p.addend].view.strides);
  return s.str();
}

}  // namespace braze
