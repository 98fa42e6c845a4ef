#include "graph/serialize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "graph/check.h"

namespace braze {

using nlohmann::json;

namespace {

constexpr char kFormatName[] = "braze-graph";
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(const std::byte* p, size_t n) {
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = static_cast<uint32_t>(p[i]) << 16;
    if (i + 1 < n) v |= static_cast<uint32_t>(p[i + 1]) << 8;
    if (i + 2 < n) v |= static_cast<uint32_t>(p[i + 2]);
    for (size_t k = 0; k < 4; ++k) out += k <= (n - i) ? kBase64[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

std::vector<std::byte> base64_decode(std::string_view s) {
  BRAZE_CHECK(s.size() % 4 == 0, "load_graph: input data is not base64");
  std::vector<std::byte> out;
  for (size_t i = 0; i < s.size(); i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = s[i + k];
      const char* at = std::strchr(kBase64, c);
      BRAZE_CHECK(c == '=' || (c != '\0' && at != nullptr), "load_graph: input data is not base64");
      pad += c == '=';
      v = (v << 6) | (c == '=' ? 0 : static_cast<uint32_t>(at - kBase64));
    }
    for (int k = 0; k < 3 - pad; ++k) out.push_back(static_cast<std::byte>((v >> (16 - 8 * k)) & 255));
  }
  return out;
}

// JSON has no NaN or infinity; those reals are written as strings.
json real_to_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double real_from_json(const json& j) {
  if (j.is_number()) return j.get<double>();
  std::string s = j.get<std::string>();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  BRAZE_CHECK(s == "-inf", "load_graph: '", s, "' is not a number");
  return -std::numeric_limits<double>::infinity();
}

}  // namespace

std::string graph_to_json(const Graph& g, std::span<const Array> inputs) {
  BRAZE_CHECK(inputs.empty() || inputs.size() == g.inputs().size(), "save_graph: ", inputs.size(),
              " input arrays for ", g.inputs().size(), " inputs");
  json nodes = json::array();
  for (const Node& n : g.nodes()) {
    json reals = json::array();
    for (double r : n.attr.reals) reals.push_back(real_to_json(r));
    nodes.push_back({{"op", info(n.op).name}, {"dtype", name(n.dtype)}, {"shape", n.shape()},
                     {"inputs", n.inputs}, {"ints", n.attr.ints}, {"reals", reals}});
  }
  json data = json::array();
  for (const Array& a : inputs) data.push_back(base64_encode(a.data.get(), a.bytes()));
  json doc = {{"format", kFormatName}, {"version", kGraphFormatVersion}, {"nodes", nodes},
              {"outputs", g.outputs}};
  if (!inputs.empty()) doc["input_data"] = data;
  return doc.dump(1);
}

SavedGraph graph_from_json(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  BRAZE_CHECK(!doc.is_discarded(), "load_graph: not valid JSON");
  SavedGraph out;
  // The header is read inside the try too: json::value() throws a
  // json::type_error when a field has the wrong type ("version": "1"), which
  // must reach the user as a load_graph error, not a raw nlohmann exception.
  try {
    BRAZE_CHECK(doc.is_object() && doc.value("format", "") == kFormatName,
                "load_graph: not a braze graph (no \"format\": \"", kFormatName, "\")");
    int version = doc.value("version", 0);
    BRAZE_CHECK(version == kGraphFormatVersion, "load_graph: format version ", version,
                " is not supported (this braze reads version ", kGraphFormatVersion, ")");
    std::vector<NodeId> ids;  // file index -> id in the rebuilt graph
    for (const json& jn : doc.at("nodes")) {
      std::string op_name = jn.at("op").get<std::string>();
      std::optional<Op> op = op_from_name(op_name);
      BRAZE_CHECK(op.has_value(), "load_graph: unknown op '", op_name, "'");
      Node n{*op, parse_dtype(jn.at("dtype").get<std::string>()),
             View::contiguous(jn.at("shape").get<Shape>()), {}, {}};
      for (size_t i : jn.at("inputs").get<std::vector<size_t>>()) {
        BRAZE_CHECK(i < ids.size(), "load_graph: node ", ids.size(), " reads node ", i,
                    ", which does not come before it");
        n.inputs.push_back(ids[i]);
      }
      n.attr.ints = jn.at("ints").get<std::vector<int64_t>>();
      for (const json& r : jn.at("reals")) n.attr.reals.push_back(real_from_json(r));
      ids.push_back(out.graph.add(n));
    }
    for (size_t i : doc.at("outputs").get<std::vector<size_t>>()) {
      BRAZE_CHECK(i < ids.size(), "load_graph: output ", i, " is not a node");
      out.graph.outputs.push_back(ids[i]);
    }
    if (doc.contains("input_data")) {
      const json& data = doc.at("input_data");
      BRAZE_CHECK(data.size() == out.graph.inputs().size(), "load_graph: ", data.size(),
                  " input arrays for ", out.graph.inputs().size(), " inputs");
      for (size_t k = 0; k < data.size(); ++k) {
        const Node& in = out.graph[out.graph.inputs()[k]];
        std::vector<std::byte> bytes = base64_decode(data[k].get<std::string>());
        Array a = allocate_array(in.dtype, in.shape());
        BRAZE_CHECK(bytes.size() == a.bytes(), "load_graph: input ", k, " has ", bytes.size(),
                    " bytes of data, expected ", a.bytes());
        // Not memcpy: an empty input's bytes.data() is null, and memcpy from
        // null is undefined even for 0 bytes (UBSan).
        std::copy(bytes.begin(), bytes.end(), a.data.get());
        out.inputs.push_back(std::move(a));
      }
    }
  } catch (const json::exception& e) {
    BRAZE_CHECK(false, "load_graph: malformed graph: ", e.what());
  }
  return out;
}

void save_graph_file(const std::string& path, const Graph& graph, std::span<const Array> inputs) {
  std::string text = graph_to_json(graph, inputs);
  std::ofstream f(path, std::ios::binary);
  BRAZE_CHECK(f.good(), "save_graph: cannot open '", path, "' for writing");
  f << text;
  BRAZE_CHECK(f.good(), "save_graph: writing '", path, "' failed");
}

SavedGraph load_graph_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  BRAZE_CHECK(f.good(), "load_graph: cannot open '", path, "'");
  std::stringstream buf;
  buf << f.rdbuf();
  return graph_from_json(buf.str());
}

}  // namespace braze
