// The CUDA facts of `braze doctor` (built with jit_cuda only).
#pragma once

#include <nlohmann/json.hpp>

namespace braze::cli {

// Per CUDA library: found, path, version (or why not), its override variable.
nlohmann::json cuda_library_facts();
// The devices the driver sees: index, name, arch; empty without a GPU.
nlohmann::json cuda_device_facts();

}  // namespace braze::cli
