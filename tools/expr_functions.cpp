// The functions of the `--expr` language: every `Auto` row of the op table
// by its api name (generated from graph/ops.def, so a new element-wise op
// is callable with no change here), then the hand-written builders of
// runtime/ops.h with their Python signatures (docs/cli.md).
#include <functional>
#include <set>

#include "graph/check.h"
#include "runtime/braze.h"
#include "tools/expr.h"

namespace braze::cli {

namespace {

// Reads a call's arguments by position or keyword, Python style; finish()
// rejects any that no parameter took.
class Args {
 public:
  Args(std::string name, CallArgs args) : name_(std::move(name)), args_(std::move(args)) {}

  // Parameter `key` at position `pos`; nullopt when not given (or None).
  std::optional<Value> get(const std::string& key, size_t pos) {
    taken_.insert(key);
    std::optional<Value> v;
    if (auto it = args_.keyword.find(key); it != args_.keyword.end()) {
      BRAZE_CHECK(pos >= args_.positional.size(), name_, ": argument '", key, "' given twice");
      v = it->second;
    } else if (pos < args_.positional.size()) {
      v = args_.positional[pos];
      positions_.insert(pos);
    }
    if (v && std::holds_alternative<std::monostate>(*v)) return std::nullopt;
    return v;
  }
  Value need(const std::string& key, size_t pos) {
    std::optional<Value> v = get(key, pos);
    BRAZE_CHECK(v, name_, ": missing argument '", key, "'");
    return *v;
  }

  Tensor tensor(const std::string& key, size_t pos) { return as_tensor(key, need(key, pos)); }
  std::optional<Tensor> maybe_tensor(const std::string& key, size_t pos) {
    std::optional<Value> v = get(key, pos);
    return v ? std::optional<Tensor>(as_tensor(key, *v)) : std::nullopt;
  }
  Operand operand(const std::string& key, size_t pos) {
    Value v = need(key, pos);
    if (const Scalar* s = std::get_if<Scalar>(&v)) return *s;
    return as_tensor(key, v);
  }
  Scalar number(const std::string& key, size_t pos, std::optional<Scalar> fallback = std::nullopt) {
    std::optional<Value> v = get(key, pos);
    if (!v && fallback) return *fallback;
    BRAZE_CHECK(v, name_, ": missing argument '", key, "'");
    const Scalar* s = std::get_if<Scalar>(&*v);
    BRAZE_CHECK(s, name_, ": '", key, "' must be a number");
    return *s;
  }
  int64_t integer(const std::string& key, size_t pos, std::optional<int64_t> fallback = std::nullopt) {
    Scalar s = number(key, pos, fallback ? std::optional<Scalar>(Scalar(*fallback)) : std::nullopt);
    BRAZE_CHECK(s.kind != DTypeKind::Float, name_, ": '", key, "' must be an integer");
    return s.integer;
  }
  bool flag(const std::string& key, size_t pos, bool fallback) { return integer(key, pos, fallback) != 0; }
  // An integer or a list of them (axes, a shape); nullopt when not given.
  std::optional<std::vector<int64_t>> ints(const std::string& key, size_t pos) {
    std::optional<Value> v = get(key, pos);
    if (!v) return std::nullopt;
    if (const auto* list = std::get_if<std::vector<int64_t>>(&*v)) return *list;
    const Scalar* s = std::get_if<Scalar>(&*v);
    BRAZE_CHECK(s && s->kind != DTypeKind::Float, name_, ": '", key, "' must be an integer or a list of integers");
    return std::vector<int64_t>{s->integer};
  }
  std::vector<int64_t> need_ints(const std::string& key, size_t pos) {
    std::optional<std::vector<int64_t>> v = ints(key, pos);
    BRAZE_CHECK(v, name_, ": missing argument '", key, "'");
    return *v;
  }
  std::string word(const std::string& key, size_t pos, std::string fallback) {
    std::optional<Value> v = get(key, pos);
    if (!v) return fallback;
    const Word* w = std::get_if<Word>(&*v);
    BRAZE_CHECK(w, name_, ": '", key, "' must be a word such as 'tanh' or f32");
    return w->text;
  }
  std::optional<DType> dtype(const std::string& key, size_t pos) {
    std::string w = word(key, pos, "");
    return w.empty() ? std::nullopt : std::optional<DType>(parse_dtype(w));
  }
  // A pair such as a stride: one integer for both, or [h, w].
  std::array<int64_t, 2> pair(const std::string& key, size_t pos, int64_t fallback) {
    std::vector<int64_t> v = ints(key, pos).value_or(std::vector<int64_t>{fallback});
    BRAZE_CHECK(v.size() == 1 || v.size() == 2, name_, ": '", key, "' takes one or two integers");
    return {v[0], v.back()};
  }

  Tensor finish(Tensor t) {
    BRAZE_CHECK(positions_.size() == args_.positional.size(), name_, ": takes at most ", positions_.size(),
                " positional argument(s) here, got ", args_.positional.size());
    for (const auto& [key, _] : args_.keyword)
      BRAZE_CHECK(taken_.count(key), name_, ": unknown argument '", key, "'");
    return t;
  }

 private:
  Tensor as_tensor(const std::string& key, const Value& v) {
    if (const Tensor* t = std::get_if<Tensor>(&v)) return *t;
    if (const Word* w = std::get_if<Word>(&v)) BRAZE_CHECK(false, name_, ": unknown name '", w->text, "'");
    BRAZE_CHECK(false, name_, ": '", key, "' must be a tensor");
    return {};
  }

  std::string name_;
  CallArgs args_;
  std::set<std::string> taken_;
  std::set<size_t> positions_;
};

using Function = std::function<Tensor(Args&)>;

Axes axes(Args& a) { return a.ints("axis", 1); }

Tensor slice_of(Args& a) {
  Tensor x = a.tensor("x", 0);
  int64_t axis = normalize_axis(a.integer("axis", 1), x.ndim(), "slice");
  std::optional<Value> start = a.get("start", 2), stop = a.get("stop", 3);
  Slice s{start ? std::optional<int64_t>(a.integer("start", 2)) : std::nullopt,
          stop ? std::optional<int64_t>(a.integer("stop", 3)) : std::nullopt, a.integer("step", 4, 1)};
  std::vector<Index> items(static_cast<size_t>(axis), Slice{});
  items.push_back(s);
  return index(x, items);
}

std::map<std::string, Function> make_table() {
  std::map<std::string, Function> t;
  for (const OpInfo& op : kOpInfo) {
    if (op.builder != Builder::Auto) continue;
    Op id = *op_from_name(op.name);
    t[std::string(op.api)] = [id, arity = op.arity](Args& a) {
      static const char* kNames[] = {"x", "y", "z"};
      std::vector<Operand> xs;
      for (int i = 0; i < arity; ++i) xs.push_back(a.operand(kNames[i], i));
      return record(id, std::span<const Operand>(xs));
    };
  }
  // Leaves and Cast.
  t["full"] = [](Args& a) { return full(a.need_ints("shape", 0), a.number("fill_value", 1), a.dtype("dtype", 2)); };
  t["arange"] = [](Args& a) {
    Scalar first = a.number("start", 0);
    std::optional<Value> stop = a.get("stop", 1);
    if (!stop) return arange(Scalar(int64_t{0}), first, a.number("step", 2, Scalar(int64_t{1})), a.dtype("dtype", 3));
    return arange(first, a.number("stop", 1), a.number("step", 2, Scalar(int64_t{1})), a.dtype("dtype", 3));
  };
  t["astype"] = [](Args& a) {
    Tensor x = a.tensor("x", 0);
    std::optional<DType> d = a.dtype("dtype", 1);
    BRAZE_CHECK(d, "astype: missing argument 'dtype'");
    return astype(x, *d);
  };
  // Movement.
  t["broadcast_to"] = [](Args& a) { return broadcast_to(a.tensor("x", 0), a.need_ints("shape", 1)); };
  t["reshape"] = [](Args& a) { return reshape(a.tensor("x", 0), a.need_ints("shape", 1)); };
  t["permute"] = [](Args& a) { return permute(a.tensor("x", 0), a.need_ints("axes", 1)); };
  t["transpose"] = [](Args& a) { return transpose(a.tensor("x", 0), a.ints("axes", 1)); };
  t["matrix_transpose"] = [](Args& a) { return matrix_transpose(a.tensor("x", 0)); };
  t["expand_dims"] = [](Args& a) { return expand_dims(a.tensor("x", 0), a.integer("axis", 1)); };
  t["squeeze"] = [](Args& a) { return squeeze(a.tensor("x", 0), a.ints("axis", 1)); };
  t["flatten"] = [](Args& a) { return flatten(a.tensor("x", 0)); };
  t["slice"] = slice_of;
  t["pad"] = [](Args& a) {  // zeros before and after each axis (Note [Windows])
    return pad(a.tensor("x", 0), a.need_ints("before", 1), a.need_ints("after", 2));
  };
  // Reductions.
  t["sum"] = [](Args& a) { Tensor x = a.tensor("x", 0); return sum(x, axes(a), a.flag("keepdims", 2, false)); };
  t["prod"] = [](Args& a) { Tensor x = a.tensor("x", 0); return prod(x, axes(a), a.flag("keepdims", 2, false)); };
  t["max"] = [](Args& a) { Tensor x = a.tensor("x", 0); return max(x, axes(a), a.flag("keepdims", 2, false)); };
  t["min"] = [](Args& a) { Tensor x = a.tensor("x", 0); return min(x, axes(a), a.flag("keepdims", 2, false)); };
  t["mean"] = [](Args& a) { Tensor x = a.tensor("x", 0); return mean(x, axes(a), a.flag("keepdims", 2, false)); };
  t["logsumexp"] = [](Args& a) {
    Tensor x = a.tensor("x", 0);
    return logsumexp(x, axes(a), a.flag("keepdims", 2, false));
  };
  for (auto [n, f] : std::vector<std::pair<std::string, Tensor (*)(const Tensor&, Axes, double, bool)>>{
           {"var", var}, {"std", std}}) {
    t[n] = [f](Args& a) {
      Tensor x = a.tensor("x", 0);
      Axes ax = axes(a);
      return f(x, ax, a.number("correction", 2, Scalar(0.0)).real, a.flag("keepdims", 3, false));
    };
  }
  for (auto [n, f] : std::vector<std::pair<std::string, Tensor (*)(const Tensor&, std::optional<int64_t>, bool)>>{
           {"argmax", argmax}, {"argmin", argmin}}) {
    t[n] = [f](Args& a) {
      Tensor x = a.tensor("x", 0);
      std::optional<Value> axis = a.get("axis", 1);
      return f(x, axis ? std::optional<int64_t>(a.integer("axis", 1)) : std::nullopt, a.flag("keepdims", 2, false));
    };
  }
  // Composites.
  t["softmax"] = [](Args& a) { Tensor x = a.tensor("x", 0); return softmax(x, a.integer("axis", 1, -1)); };
  t["log_softmax"] = [](Args& a) { Tensor x = a.tensor("x", 0); return log_softmax(x, a.integer("axis", 1, -1)); };
  t["layer_norm"] = [](Args& a) {
    Tensor x = a.tensor("x", 0);
    std::optional<Tensor> w = a.maybe_tensor("weight", 1), b = a.maybe_tensor("bias", 2);
    return layer_norm(x, w, b, a.number("eps", 3, Scalar(1e-5)).real);
  };
  t["rms_norm"] = [](Args& a) {
    Tensor x = a.tensor("x", 0);
    std::optional<Tensor> w = a.maybe_tensor("weight", 1);
    return rms_norm(x, w, a.number("eps", 2, Scalar(1e-6)).real);
  };
  t["gelu"] = [](Args& a) { Tensor x = a.tensor("x", 0); return gelu(x, a.word("approximate", 1, "none")); };
  t["silu"] = [](Args& a) { return silu(a.tensor("x", 0)); };
  t["mse_loss"] = [](Args& a) { Tensor p = a.tensor("prediction", 0); return mse_loss(p, a.tensor("target", 1)); };
  t["cross_entropy"] = [](Args& a) {
    Tensor l = a.tensor("logits", 0);
    return cross_entropy(l, a.tensor("labels", 1));
  };
  // Library calls.
  t["matmul"] = [](Args& a) { Tensor x = a.tensor("x", 0); return matmul(x, a.tensor("y", 1)); };
  t["conv2d"] = [](Args& a) {
    Tensor x = a.tensor("x", 0), w = a.tensor("weight", 1);
    std::optional<Tensor> b = a.maybe_tensor("bias", 2);
    Conv2dOptions o{a.pair("stride", 3, 1), a.pair("padding", 4, 0), a.pair("dilation", 5, 1), 1};
    o.groups = a.integer("groups", 6, 1);
    return conv2d(x, w, b, o);
  };
  return t;
}

const std::map<std::string, Function>& table() {
  static const std::map<std::string, Function> t = make_table();
  return t;
}

}  // namespace

Tensor call_function(const std::string& name, CallArgs args) {
  auto it = table().find(name);
  BRAZE_CHECK(it != table().end(), "unknown function '", name, "' (docs/cli.md lists them)");
  Args a(name, std::move(args));
  return a.finish(it->second(a));
}

std::vector<std::string> function_names() {
  std::vector<std::string> names;
  for (const auto& [n, _] : table()) names.push_back(n);
  return names;
}

}  // namespace braze::cli
