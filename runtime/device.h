// Where a tensor lives.
#pragma once

#include <string>
#include <string_view>

namespace braze {

enum class DeviceKind : uint8_t { CPU, CUDA };

struct Device {
  DeviceKind kind = DeviceKind::CPU;
  int index = 0;

  static Device parse(std::string_view s);  // "cpu", "cuda", "cuda:1"
  std::string str() const;
  friend bool operator==(const Device&, const Device&) = default;
};

// Throws std::runtime_error saying why `d` cannot hold tensors in this
// process (today: every CUDA device, until the CUDA backend lands).
void check_available(Device d);

}  // namespace braze
