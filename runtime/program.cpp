#include "runtime/program.h"

#include "graph/check.h"
#include "jit_cuda/executor.h"
#include "runtime/context.h"
#include "runtime/transfer.h"

namespace braze {

Schedule program_schedule(const Graph& g, cuda::DeviceExecutor* device) {
  Schedule s = make_schedule(g, device ? device->library_rules() : cpu_library_rules());
  // A 0-d input read by a kernel is passed by value, as a Const is: the
  // code is the same as for a constant and the value is loaded once per
  // launch (Note [Scalar parameters]).
  for (Step& step : s.steps) {
    if (step.group.kind == FusedGroup::Kind::Library) continue;
    for (size_t k = 0; k < step.reads.size(); ++k) {
      const Node& n = s.graph[step.reads[k]];
      KernelInput& in = step.spec.inputs[k];
      if (n.op != Op::Input || n.rank() != 0 || in.kind != KernelInput::Kind::Buffer) continue;
      in.kind = KernelInput::Kind::Scalar;
      in.view = View{};  // a scalar reads no layout
    }
  }
  size_workspaces(s, device);  // the plan holds the library calls' workspaces (Note [Step workspaces])
  return s;
}

Program::Program(const Lowered& lowered, KernelMode mode, MemoryOptions memory, const ArrayAllocator& allocate,
                 std::shared_ptr<cuda::DeviceExecutor> device)
    : schedule_(program_schedule(lowered.graph, device.get())) {
  const bool on_device = device != nullptr;
  prepared_ = prepare(schedule_, mode, memory, allocate, std::move(device));
  // Made once per structure, so a loop dumps its program once (Note [Dump files]).
  if (Dumper& dump = Runtime::get().dumper(); dump.enabled())
    dump.program(lowered.graph, schedule_, prepared_.lives, prepared_.plan);
  params_.resize(lowered.graph.inputs().size());
  // Host memory on a device too: a kernel takes them by value (read_scalar).
  for (const ScalarParam& p : lowered.scalars)
    params_[p.input] = on_device ? allocate_on(Device{}, p.dtype, {}) : allocate(p.dtype, {});
}

std::vector<Array> Program::run(std::vector<Array>& inputs, std::span<const ScalarParam> scalars,
                                const ArrayAllocator& allocate, std::span<const Array> out,
                                std::vector<int64_t>* step_ns) {
  std::lock_guard lock(mu_);
  for (const ScalarParam& p : scalars) {
    const Array& slot = params_[p.input];
    BRAZE_ASSERT(slot.data && slot.dtype == p.dtype, "parameter ", p.input, " has no slot of its dtype");
    store_scalar(p, slot);
    inputs[p.input] = slot;
  }
  return run_prepared(schedule_, prepared_, inputs, allocate, out, step_ns);
}

ProgramCache::Found ProgramCache::find_or_make(const std::string& key,
                                               const std::function<std::shared_ptr<Program>()>& make) {
  std::promise<std::shared_ptr<Program>> promise;
  {
    std::unique_lock lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      recent_.splice(recent_.begin(), recent_, it->second.place);
      return {it->second.program, false};
    }
    if (auto it = making_.find(key); it != making_.end()) {
      std::shared_future<std::shared_ptr<Program>> made = it->second;
      lock.unlock();
      return {made.get(), false};  // waits for the thread making it; rethrows its exception
    }
    making_.emplace(key, promise.get_future().share());
  }
  // Made outside the lock: compiling takes long, other programs may replay
  // meanwhile.
  std::shared_ptr<Program> made;
  try {
    made = make();
  } catch (...) {
    std::lock_guard lock(mu_);
    making_.erase(key);
    promise.set_exception(std::current_exception());
    throw;
  }
  std::lock_guard lock(mu_);
  making_.erase(key);
  promise.set_value(made);
  recent_.push_front(key);
  entries_.emplace(key, Entry{made, recent_.begin()});
  if (entries_.size() > kMaxPrograms) {
    entries_.erase(recent_.back());
    recent_.pop_back();
  }
  return {made, true};
}

void ProgramCache::clear() {
  std::lock_guard lock(mu_);
  entries_.clear();
  recent_.clear();
}

size_t ProgramCache::size() {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace braze
