// The CUDA facts of `braze doctor` (built with jit_cuda only).
#pragma once

#include <nlohmann/json.hpp>

namespace braze::cli {

// Per CUDA library: found, path, version (or why not), its override variable.
nlohmann::json cuda_library_facts();
// {"devices": [{index, name, arch, compute_capability, memory_bytes,
// multiprocessors, braze_can_target}], "driver_version", "none_because"}:
// the devices the driver sees; without any, why (no libcuda, cuInit's
// error, or a driver that counts none).
nlohmann::json cuda_device_facts();

}  // namespace braze::cli
