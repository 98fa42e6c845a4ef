#include "runtime/device.h"

#include "runtime/cuda_executors.h"

namespace braze {

void check_available(Device d) {
  if (d.kind == DeviceKind::CPU) return;
  cuda_executor(d);  // throws what was not found
}

}  // namespace braze
