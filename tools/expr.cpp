// A recursive-descent parser for `--expr` (grammar: docs/cli.md). It
// records as it parses: every operator and call goes straight to the C++
// API (runtime/ops.h), so shapes and dtypes are checked by the same
// builders as in any other braze program.
#include "tools/expr.h"

#include <cctype>
#include <cmath>
#include <limits>

#include "graph/check.h"
#include "runtime/braze.h"
#include "runtime/lower.h"

namespace braze::cli {

namespace {

class Parser {
 public:
  Parser(std::string_view text, const std::map<std::string, Tensor>& inputs) : text_(text), inputs_(inputs) {}

  Tensor parse() {
    Value v = expression();
    skip_space();
    check(pos_ == text_.size(), "unexpected '", text_.substr(pos_, 1), "'");
    const Tensor* t = std::get_if<Tensor>(&v);
    check(t, "the expression must be a tensor, not a number or a word");
    return *t;
  }

 private:
  template <class... Args>
  void check(bool ok, Args&&... why) {
    BRAZE_CHECK(ok, "expr: at column ", pos_ + 1, ": ", std::forward<Args>(why)...);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool eat(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  void expect(std::string_view token) { check(eat(token), "expected '", token, "'"); }

  // comparison := sum (('<' | '<=' | '>' | '>=' | '==' | '!=') sum)?
  Value expression() {
    Value a = sum();
    static constexpr std::pair<std::string_view, Op> kCompare[] = {
        {"<=", Op::Le}, {">=", Op::Ge}, {"==", Op::Eq}, {"!=", Op::Ne}, {"<", Op::Lt}, {">", Op::Gt}};
    for (auto [token, op] : kCompare)
      if (eat(token)) return binary(op, a, sum());
    return a;
  }
  // sum := product (('+' | '-') product)*
  Value sum() {
    Value a = product();
    for (;;) {
      if (eat("+")) a = binary(Op::Add, a, product());
      else if (eat("-")) a = binary(Op::Sub, a, product());
      else return a;
    }
  }
  // product := unary (('*' | '/' | '%' | '@') unary)*
  Value product() {
    Value a = unary();
    for (;;) {
      if (eat("*")) a = binary(Op::Mul, a, unary());
      else if (eat("/")) a = binary(Op::Div, a, unary());
      else if (eat("%")) a = binary(Op::Mod, a, unary());
      else if (eat("@")) a = binary(Op::MatMul, a, unary());
      else return a;
    }
  }
  // unary := ('-' | '+') unary | power
  Value unary() {
    if (eat("-")) {
      Value v = unary();
      if (Scalar* s = std::get_if<Scalar>(&v)) {
        s->real = -s->real;
        s->integer = -s->integer;
        return v;
      }
      return negative(tensor(v, "-"));
    }
    if (eat("+")) return unary();
    return power();
  }
  // power := primary ('**' unary)?   (right-associative, as in Python)
  Value power() {
    Value base = primary();
    if (eat("**")) return binary(Op::Pow, base, unary());
    return base;
  }
  // primary := number | name | name '(' args ')' | '(' expression ')' | '[' ints ']' | string
  Value primary() {
    skip_space();
    check(pos_ < text_.size(), "unexpected end of the expression");
    char c = text_[pos_];
    if (eat("(")) {
      Value v = expression();
      expect(")");
      return v;
    }
    if (eat("[")) return list();
    if (c == '\'' || c == '"') return string(c);
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    check(std::isalpha(static_cast<unsigned char>(c)) || c == '_', "expected a number, a name or '('");
    size_t start = pos_;
    std::string name = identifier();
    if (eat("(")) return call(name, start);
    if (auto it = inputs_.find(name); it != inputs_.end()) return it->second;
    if (name == "True" || name == "False") return Scalar(name == "True");
    if (name == "None") return std::monostate{};
    if (name == "inf") return Scalar(std::numeric_limits<double>::infinity());
    if (name == "nan") return Scalar(std::numeric_limits<double>::quiet_NaN());
    return Word{name};
  }

  std::string identifier() {
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  Value number() {
    size_t start = pos_;
    bool real = false;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c))) ++pos_;
      else if (c == '.') real = true, ++pos_;
      else if ((c == 'e' || c == 'E') && pos_ > start) {
        real = true;
        ++pos_;
        if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
      } else break;
    }
    std::string digits(text_.substr(start, pos_ - start));
    try {
      size_t used = 0;
      Scalar s = real ? Scalar(std::stod(digits, &used)) : Scalar(static_cast<int64_t>(std::stoll(digits, &used)));
      if (used == digits.size()) return s;
    } catch (const std::exception&) {
    }
    pos_ = start;
    check(false, "malformed number '", digits, "'");
    return {};
  }

  Value string(char quote) {
    size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) ++pos_;
    check(pos_ < text_.size(), "unterminated string");
    return Word{std::string(text_.substr(start, pos_++ - start))};
  }

  Value list() {
    std::vector<int64_t> items;
    if (eat("]")) return items;
    do {
      Value v = expression();
      const Scalar* s = std::get_if<Scalar>(&v);
      check(s && s->kind == DTypeKind::Int, "a list holds integers (a shape, axes)");
      items.push_back(s->integer);
    } while (eat(","));
    expect("]");
    return items;
  }

  Value call(const std::string& name, size_t start) {
    CallArgs args;
    if (!eat(")")) {
      do {
        skip_space();
        size_t at = pos_;
        std::string key = pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_])) ? identifier() : "";
        if (!key.empty() && eat("=") && !(skip_space(), text_.substr(pos_, 1) == "=")) {
          check(!args.keyword.count(key), name, ": argument '", key, "' given twice");
          args.keyword[key] = expression();
          continue;
        }
        pos_ = at;
        check(args.keyword.empty(), name, ": a positional argument after a keyword argument");
        args.positional.push_back(expression());
      } while (eat(","));
      expect(")");
    }
    size_t end = pos_;
    pos_ = start;  // errors from the call point at its name
    try {
      Tensor t = call_function(name, std::move(args));
      pos_ = end;
      return t;
    } catch (const std::invalid_argument& e) {
      check(false, e.what());
      return {};
    }
  }

  Tensor tensor(const Value& v, std::string_view op) {
    if (const Tensor* t = std::get_if<Tensor>(&v)) return *t;
    if (const Word* w = std::get_if<Word>(&v)) {
      std::string names;
      for (const auto& [n, _] : inputs_) names += (names.empty() ? "" : ", ") + n;
      check(false, "unknown name '", w->text, "' (inputs: ", names.empty() ? "none" : names,
            "; declare one with --input NAME:DTYPE[SHAPE])");
    }
    check(false, op, " needs a tensor operand");
    return {};
  }

  Operand operand(const Value& v, std::string_view op) {
    if (const Scalar* s = std::get_if<Scalar>(&v)) return *s;
    return tensor(v, op);
  }

  Value binary(Op op, const Value& a, const Value& b) {
    const Scalar* x = std::get_if<Scalar>(&a);
    const Scalar* y = std::get_if<Scalar>(&b);
    if (x && y) return fold(op, *x, *y);
    std::string_view api = info(op).api;
    if (op == Op::MatMul) return matmul(tensor(a, api), tensor(b, api));
    return record(op, {operand(a, api), operand(b, api)});
  }

  // Numbers combine as Python numbers do: ints stay ints under + - * and a
  // non-negative power; everything else is a float.
  Value fold(Op op, const Scalar& x, const Scalar& y) {
    bool ints = x.kind != DTypeKind::Float && y.kind != DTypeKind::Float;
    switch (op) {
      case Op::Add: return ints ? Scalar(x.integer + y.integer) : Scalar(x.real + y.real);
      case Op::Sub: return ints ? Scalar(x.integer - y.integer) : Scalar(x.real - y.real);
      case Op::Mul: return ints ? Scalar(x.integer * y.integer) : Scalar(x.real * y.real);
      case Op::Div: return Scalar(x.real / y.real);
      case Op::Pow:
        if (ints && y.integer >= 0) return Scalar(static_cast<int64_t>(std::llround(std::pow(x.real, y.real))));
        return Scalar(std::pow(x.real, y.real));
      default: check(false, info(op).api, " of two numbers: write the result instead"); return {};
    }
  }

  std::string_view text_;
  const std::map<std::string, Tensor>& inputs_;
  size_t pos_ = 0;
};

}  // namespace

ExprInput parse_input_decl(std::string_view decl) {
  size_t colon = decl.find(':'), open = decl.find('['), close = decl.rfind(']');
  BRAZE_CHECK(colon != std::string_view::npos && colon > 0 && open != std::string_view::npos && open > colon + 1 &&
                  close == decl.size() - 1,
              "--input '", decl, "': expected NAME:DTYPE[SHAPE], e.g. x:f32[4096,4096]");
  ExprInput in;
  in.name = std::string(decl.substr(0, colon));
  for (char c : in.name)
    BRAZE_CHECK(std::isalnum(static_cast<unsigned char>(c)) || c == '_', "--input '", decl, "': '", in.name,
                "' is not a name");
  in.dtype = parse_dtype(decl.substr(colon + 1, open - colon - 1));
  std::string dims(decl.substr(open + 1, close - open - 1));
  size_t at = 0;
  while (at < dims.size()) {
    size_t comma = dims.find(',', at);
    std::string d = dims.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    size_t used = 0;
    int64_t n = -1;
    try {
      n = std::stoll(d, &used);
    } catch (const std::exception&) {
    }
    BRAZE_CHECK(n >= 0 && used > 0 && d.find_first_not_of(" ", used) == std::string::npos, "--input '", decl,
                "': '", d, "' is not a dimension");
    in.shape.push_back(n);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return in;
}

ExprGraph graph_of_expression(std::string_view text, const std::vector<ExprInput>& declared) {
  // Each input is a realized tensor over an untouched (so free) allocation;
  // lowering makes it an Input node, and its data pointer tells which.
  std::map<std::string, Tensor> inputs;
  std::map<const std::byte*, std::string> names;
  for (const ExprInput& in : declared) {
    BRAZE_CHECK(!inputs.count(in.name), "--input '", in.name, "' is declared twice");
    Tensor t = from_array(allocate_array(in.dtype, in.shape));
    names[t.data().data.get()] = in.name;
    inputs.emplace(in.name, t);
  }
  Tensor root = Parser(text, inputs).parse();
  BRAZE_CHECK(!root.is_realized(), "expr: '", text, "' is an input itself; nothing to compute");
  Lowered lowered = lower(std::vector<Tensor>{root});
  ExprGraph out{std::move(lowered.graph), {}};
  for (const Array& a : lowered.inputs) out.input_names.push_back(names.at(a.data.get()));
  return out;
}

}  // namespace braze::cli
