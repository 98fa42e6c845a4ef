#include "tools/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "graph/check.h"

namespace braze::cli {

namespace {

// The value text after 'key': in the header dict, up to the next ',' at
// depth 0 (the shape tuple holds commas).
std::string field(std::string_view header, std::string_view key, const std::string& name) {
  size_t at = header.find("'" + std::string(key) + "'");
  BRAZE_CHECK(at != std::string_view::npos, name, ": .npy header has no '", key, "'");
  size_t colon = header.find(':', at);
  BRAZE_CHECK(colon != std::string_view::npos, name, ": malformed .npy header");
  int depth = 0;
  size_t end = colon + 1;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if ((c == ',' && depth == 0) || c == '}') break;
  }
  std::string v(header.substr(colon + 1, end - colon - 1));
  v.erase(0, v.find_first_not_of(" "));
  v.erase(v.find_last_not_of(" ") + 1);
  return v;
}

DType dtype_of_descr(std::string descr, const std::string& name) {
  BRAZE_CHECK(descr.size() >= 4 && descr.front() == '\'' && descr.back() == '\'', name, ": malformed descr ", descr);
  descr = descr.substr(1, descr.size() - 2);
  char order = descr[0];
  std::string code = descr.substr(1);
  bool wide = code.size() > 1 && code[1] != '1';
  BRAZE_CHECK(order == '<' || order == '|' || (order == '=' && !wide) || (order == '>' && !wide), name,
              ": big-endian .npy data ('", descr, "') is not supported");
  if (code == "b1") return DType::Bool;
  if (code == "u1") return DType::UInt8;
  if (code == "i1") return DType::Int8;
  if (code == "u2") return DType::UInt16;
  if (code == "i2") return DType::Int16;
  if (code == "u4") return DType::UInt32;
  if (code == "i4") return DType::Int32;
  if (code == "i8") return DType::Int64;
  if (code == "f2") return DType::Float16;
  if (code == "f4") return DType::Float32;
  if (code == "f8") return DType::Float64;
  BRAZE_CHECK(false, name, ": .npy dtype '", descr, "' is not supported (bool, uint8, int8, uint16, int16, uint32, int32, int64, float16, ",
              "float32, float64)");
  return DType::Float32;
}

Shape shape_of_tuple(const std::string& t, const std::string& name) {
  BRAZE_CHECK(t.size() >= 2 && t.front() == '(' && t.back() == ')', name, ": malformed shape ", t);
  Shape shape;
  std::istringstream dims(t.substr(1, t.size() - 2));
  for (std::string d; std::getline(dims, d, ',');) {
    if (d.find_first_not_of(" ") == std::string::npos) continue;  // "(3,)"
    try {
      shape.push_back(std::stoll(d));
    } catch (const std::exception&) {
      BRAZE_CHECK(false, name, ": malformed shape ", t);
    }
    BRAZE_CHECK(shape.back() >= 0, name, ": negative dimension in shape ", t);
  }
  return shape;
}

}  // namespace

Array parse_npy(std::string_view bytes, const std::string& name) {
  BRAZE_CHECK(bytes.size() >= 10 && bytes.substr(0, 6) == "\x93NUMPY", name, ": not a .npy file");
  int major = static_cast<unsigned char>(bytes[6]);
  BRAZE_CHECK(major >= 1 && major <= 3, name, ": .npy format version ", major, " is not supported");
  size_t len_bytes = major == 1 ? 2 : 4, header_len = 0;
  BRAZE_CHECK(bytes.size() >= 8 + len_bytes, name, ": truncated .npy header");
  for (size_t i = 0; i < len_bytes; ++i) header_len |= size_t{static_cast<unsigned char>(bytes[8 + i])} << (8 * i);
  size_t data_at = 8 + len_bytes + header_len;
  BRAZE_CHECK(bytes.size() >= data_at, name, ": truncated .npy header");
  std::string_view header = bytes.substr(8 + len_bytes, header_len);
  BRAZE_CHECK(field(header, "fortran_order", name) == "False", name,
              ": Fortran-order .npy data is not supported (save np.ascontiguousarray(a))");
  Array a = allocate_array(dtype_of_descr(field(header, "descr", name), name),
                           shape_of_tuple(field(header, "shape", name), name));
  BRAZE_CHECK(bytes.size() - data_at == a.bytes(), name, ": holds ", bytes.size() - data_at, " bytes of data, but ",
              braze::name(a.dtype), to_string(a.shape), " needs ", a.bytes());
  std::memcpy(a.data.get(), bytes.data() + data_at, a.bytes());
  return a;
}

Array read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  BRAZE_CHECK(f.good(), path, ": cannot open");
  std::stringstream buf;
  buf << f.rdbuf();
  return parse_npy(buf.str(), path);
}

}  // namespace braze::cli
