// Where data lives: a device kind and index. Plain data, so an Array can
// say where its bytes are (Note [Device arrays] in runtime/transfer.h)
// without the graph knowing anything about backends.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace braze {

enum class DeviceKind : uint8_t { CPU, CUDA };

struct Device {
  DeviceKind kind = DeviceKind::CPU;
  int index = 0;

  static Device parse(std::string_view s);  // "cpu", "cuda", "cuda:1"
  std::string str() const;
  bool is_cpu() const { return kind == DeviceKind::CPU; }
  friend bool operator==(const Device&, const Device&) = default;
};

}  // namespace braze
