#include "jit_cpu/host_call.h"

#include <mutex>
#include <unordered_map>

namespace braze::jit {

namespace {

struct HostFunctionNames {
  std::mutex mutex;
  std::unordered_map<uint64_t, const char*> by_address;
};

HostFunctionNames& names() {
  static HostFunctionNames table;
  return table;
}

}  // namespace

void name_host_function(LaneFn fn, const char* name) {
  HostFunctionNames& t = names();
  std::lock_guard lock(t.mutex);
  t.by_address[reinterpret_cast<uint64_t>(fn)] = name;
}

const char* host_function_name(uint64_t address) {
  HostFunctionNames& t = names();
  std::lock_guard lock(t.mutex);
  auto it = t.by_address.find(address);
  return it == t.by_address.end() ? nullptr : it->second;
}

}  // namespace braze::jit
