#include "graph/device.h"

#include <charconv>

#include "graph/check.h"

namespace braze {

Device Device::parse(std::string_view s) {
  std::string_view kind = s.substr(0, s.find(':'));
  Device d;
  if (kind == "cpu") d.kind = DeviceKind::CPU;
  else if (kind == "cuda" || kind == "gpu") d.kind = DeviceKind::CUDA;
  else BRAZE_CHECK(false, "unknown device '", s, "'; expected 'cpu', 'cuda' or 'cuda:N'");
  if (kind.size() < s.size()) {
    std::string_view num = s.substr(kind.size() + 1);
    auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), d.index);
    BRAZE_CHECK(ec == std::errc() && end == num.data() + num.size() && d.index >= 0,
                "bad device index in '", s, "'");
  }
  return d;
}

std::string Device::str() const {
  if (kind == DeviceKind::CPU) return "cpu";
  return "cuda:" + std::to_string(index);
}

}  // namespace braze
