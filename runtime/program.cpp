#include "runtime/program.h"

#include <optional>

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
      if (in.view.windowed()) continue;  // padded (Note [Windows]): a masked load of its one element
      in.kind = KernelInput::Kind::Scalar;
      in.view = View{};  // a scalar reads no layout
    }
  }
  size_workspaces(s, device);  // the plan holds the library calls' workspaces (Note [Step workspaces])
  return s;
}

Schedule realize_schedule(const Graph& g, cuda::DeviceExecutor* device) {
  return program_schedule(with_scalar_parameters(g), device);
}

Program::Program(const Lowered& lowered, KernelMode mode, MemoryOptions memory, const ArrayAllocator& allocate,
                 std::shared_ptr<cuda::DeviceExecutor> device)
    : schedule_(program_schedule(lowered.graph, device.get())) {
  const bool on_device = device != nullptr;
  memory.lend = true;  // Note [Arena pool]
  prepared_ = prepare(schedule_, mode, memory, allocate, std::move(device));
  // Made once per structure, so a loop dumps its program once (Note [Dump files]).
  if (Dumper& dump = Runtime::get().dumper(); dump.enabled())
    dump.program(lowered.graph, schedule_, prepared_.lives, prepared_.plan);
  params_.resize(lowered.graph.inputs().size());
  // Host memory on a device too: a kernel takes them by value (read_scalar).
  for (const ScalarParam& p : lowered.scalars)
    params_[p.input] = on_device ? allocate_on(Device{}, p.dtype, {}) : allocate(p.dtype, {});
  own_bytes_ = count_own_bytes();
}

namespace {

// Note [Bounded caches]: what a program's schedule, plan and prepared
// vectors take on the heap, estimated per graph node and per step (the
// nodes with their shapes and attributes, the steps with their specs,
// groups and reasons), beside the arrays it keeps, counted exactly.
// Measured with mallinfo2 (tests/cpp/program_cache_test.cpp checks it): a
// program of 2 steps and 20 nodes takes 29 KB of heap beside its kernels
// (estimate 49 KB), one of 5 steps and 52 nodes with 128 KB of kept packed
// weights 173 KB (estimate 213 KB).
constexpr int64_t kProgramBytes = 8 << 10, kNodeBytes = 1 << 10, kStepBytes = 4 << 10;

int64_t bytes_of(const Array& a) { return a.data ? static_cast<int64_t>(a.bytes()) : 0; }

}  // namespace

int64_t Program::count_own_bytes() const {
  int64_t bytes = kProgramBytes + kNodeBytes * static_cast<int64_t>(schedule_.graph.size()) +
                  kStepBytes * static_cast<int64_t>(schedule_.steps.size());
  for (const Array& a : prepared_.workspace) bytes += bytes_of(a);
  for (const Prepared::KeptPacked& k : prepared_.kept) bytes += bytes_of(k.packed);
  for (const Array& a : prepared_.staging) bytes += bytes_of(a);
  for (const Array& a : params_) bytes += bytes_of(a);
  return bytes;
}

std::vector<std::pair<const void*, int64_t>> Program::shared_parts() const {
  // CUDA kernels and library calls: their host-side state and, for a
  // kernel, its module's code on the device, estimated.
  constexpr int64_t kDeviceKernelBytes = 16 << 10, kDeviceLibraryBytes = 16 << 10;
  std::vector<std::pair<const void*, int64_t>> parts;
  for (const auto& k : prepared_.kernels)
    if (k) parts.emplace_back(k.get(), k->memory_bytes());
  for (const dnn::Prepared& r : prepared_.library)
    if (r.entry) parts.emplace_back(r.entry.get(), dnn::memory_bytes(*r.entry));
  for (const auto& k : prepared_.device_kernels)
    if (k) parts.emplace_back(k.get(), kDeviceKernelBytes + static_cast<int64_t>(k->source.source.size()));
  for (const auto& c : prepared_.device_library)
    if (c) parts.emplace_back(c.get(), kDeviceLibraryBytes);
  return parts;
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
  // Note [Arena pool]: borrowed for this run, given back when it ends
  // (the lease is destroyed after `borrowed`, which lets go of it first).
  std::optional<ArenaPool::Lease> lease;
  struct Borrowed {
    Prepared& p;
    ~Borrowed() { p.arena = {}; }
  } borrowed{prepared_};
  if (prepared_.memory.arena && prepared_.plan.arena_bytes > 0) {
    lease.emplace(Runtime::get().arenas().lend(prepared_.device.get(), prepared_.plan.arena_bytes, allocate));
    prepared_.arena = lease->arena();
  }
  // A run into outputs that alias its inputs keeps a staging buffer from
  // then on (Executor::bind_out): part of the program's bytes.
  auto staging_bytes = [&] {
    int64_t bytes = 0;
    for (const Array& a : prepared_.staging) bytes += bytes_of(a);
    return bytes;
  };
  const int64_t staged = out.empty() ? 0 : staging_bytes();
  std::vector<Array> results = run_prepared(schedule_, prepared_, inputs, allocate, out, step_ns);
  if (!out.empty() && staging_bytes() != staged) own_bytes_ = count_own_bytes();
  return results;
}

std::shared_ptr<Program> ProgramCache::touch(const std::string& key) {
  Entry* e = entries_.find(key);
  if (!e) return nullptr;
  if (int64_t own = e->program->own_bytes(); own != e->own) {  // it staged an output since
    e->own = own;
    entries_.resize(key, own);
  }
  return e->program;
}

void ProgramCache::charge_shared(const Program& p, int sign) {
  for (const auto& [part, bytes] : p.shared_parts()) {
    Shared& s = shared_[part];
    if (s.users == 0) s.bytes = bytes;
    s.users += sign;
    if (sign > 0 && s.users == 1) shared_bytes_ += s.bytes;
    if (s.users == 0) {
      shared_bytes_ -= s.bytes;
      shared_.erase(part);
    }
  }
}

int64_t ProgramCache::keep(const std::string& key, std::shared_ptr<Program> program,
                           std::vector<std::shared_ptr<Program>>& dropped) {
  charge_shared(*program, +1);
  int64_t own = program->own_bytes();
  entries_.insert(key, Entry{std::move(program), own}, own);
  int64_t evicted = 0;
  // The newest stays, however large: its caller runs it now, and a loop
  // over one program bigger than the bound still replays it.
  while (total() > limit_ && entries_.size() > 1) {
    Entry e = entries_.pop_oldest();
    charge_shared(*e.program, -1);
    dropped.push_back(std::move(e.program));
    ++evicted;
  }
  return evicted;
}

ProgramCache::Found ProgramCache::find_or_make(const std::string& key,
                                               const std::function<std::shared_ptr<Program>()>& make) {
  std::vector<std::shared_ptr<Program>> dropped;  // released after the lock: a program frees its memory
  std::promise<std::shared_ptr<Program>> promise;
  {
    std::unique_lock lock(mu_);
    if (std::shared_ptr<Program> p = touch(key)) return {std::move(p), false, 0};
    if (auto it = making_.find(key); it != making_.end()) {
      std::shared_future<std::shared_ptr<Program>> made = it->second;
      lock.unlock();
      return {made.get(), false, 0};  // waits for the thread making it; rethrows its exception
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
  int64_t evicted = keep(key, made, dropped);
  return {std::move(made), true, evicted};
}

void ProgramCache::clear() {
  std::vector<Entry> dropped;
  std::lock_guard lock(mu_);
  dropped = entries_.clear();
  shared_.clear();
  shared_bytes_ = 0;
}

size_t ProgramCache::size() {
  std::lock_guard lock(mu_);
  return entries_.size();
}

int64_t ProgramCache::bytes() {
  std::lock_guard lock(mu_);
  return total();
}

}  // namespace braze
