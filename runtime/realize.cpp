// realize(): find the program of the lazy DAG's structure, or lower the
// DAG to a Graph and compile one, and run it (Note [Lazy tensors], Note
// [Programs]).
#include <cstdio>
#include <unordered_set>

#include <xxhash.h>

#include "graph/log.h"
#include "graph/reference.h"
#include "runtime/context.h"
#include "runtime/execute.h"
#include "runtime/lower.h"
#include "runtime/ops.h"
#include "runtime/cuda_executors.h"
#include "runtime/program.h"
#include "runtime/tensor.h"
#include "runtime/transfer.h"

namespace braze {

namespace {

// BRAZE_LOG's name for a program: its structure key hashed (the key itself
// is binary and long).
std::string program_name(const std::string& key) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(XXH3_64bits(key.data(), key.size())));
  return hex;
}

// What makes this program's structure new to a reader of the log: the
// dtypes and shapes of its data inputs (a new shape or dtype is the usual
// reason a loop compiles again) and how many scalars are parameters.
std::string describe_inputs(const Walk& w) {
  std::vector<bool> parameter(w.inputs.size(), false);
  for (const ScalarParam& p : w.scalars) parameter[p.input] = true;
  std::string text;
  for (size_t i = 0; i < w.inputs.size(); ++i)
    if (!parameter[i]) text += " " + std::string(name(w.inputs[i].dtype)) + to_string(w.inputs[i].shape);
  return (text.empty() ? " none" : text) + "; " + std::to_string(w.scalars.size()) + " scalar parameter(s)";
}

// The executor a graph on `device` runs on (null on the CPU), checked
// against the memory of its inputs (Note [CUDA executors]).
std::shared_ptr<cuda::DeviceExecutor> executor_for(Device device, std::span<const Array> inputs) {
  if (device.is_cpu()) return nullptr;
  std::shared_ptr<cuda::DeviceExecutor> ex = cuda_executor(device);
  for (const Array& a : inputs)
    BRAZE_CHECK(!a.data || a.device.is_cpu() || cuda::executor_of(a.data) == ex.get(), "realize: an input on ",
                a.device.str(), " was made by another CUDA executor than ", ex->describe(),
                " (BRAZE_CUDA changed in between?); move it with .to('cpu') first");
  return ex;
}

// Evaluates `roots` (none realized, all on one device) into new arrays or
// into `out`. Without `out`, the values Note [Held values are kept] keeps
// join the roots, and their results follow the roots'.
std::vector<Array> evaluate(std::vector<Tensor>& roots, std::span<const Array> out) {
  Runtime& rt = Runtime::get();
  const Device device = roots[0].device();
  ArrayAllocator counted = counted_allocator(device);
  std::vector<Array> results;
  if (rt.backend() == BackendKind::Reference) {
    // The oracle reads host memory: device inputs go to the host and the
    // results come back (a copy per input and output: a checking mode).
    Lowered lowered = lower(roots);
    for (Array& a : lowered.inputs)
      if (a.data) a = to_host(a);
    results = reference::evaluate(lowered.graph, lowered.inputs, lowered.graph.outputs, counted_allocator(Device{}));
    rt.stats().reference_evaluations.fetch_add(1, std::memory_order_relaxed);
    for (Array& r : results) r = copy_to(r, device);
    for (size_t i = 0; i < out.size(); ++i) copy_array(out[i], results[i]);
  } else {
    MemoryOptions memory{.arena = rt.arena(), .poison = rt.poison()};
    Walk w = walk(roots, {.scalars_as_inputs = true, .elements_as_inputs = true}, /*with_key=*/true);
    if (out.empty() && keep_held_values())
      if (std::vector<Tensor> held = held_values(w, roots); !held.empty()) {
        rt.stats().values_kept.fetch_add(static_cast<int64_t>(held.size()), std::memory_order_relaxed);
        roots.insert(roots.end(), held.begin(), held.end());
        w = walk(roots, {.scalars_as_inputs = true, .elements_as_inputs = true}, /*with_key=*/true);
      }
    std::shared_ptr<cuda::DeviceExecutor> executor = executor_for(device, w.inputs);
    w.key.push_back(static_cast<char>(memory.arena));
    w.key.push_back(static_cast<char>(memory.poison));
    if (executor) {  // Note [Device programs]: one program per device and executor
      w.key += device.str() + ":";
      w.key += executor->emulated() ? 'e' : 'd';
      w.key += cuda::allow_tf32() ? 't' : 'f';  // the libraries' math (BRAZE_ALLOW_TF32)
    }
    ProgramCache::Found found = rt.programs().find_or_make(w.key, [&] {
      return std::make_shared<Program>(lower(w, roots), KernelMode::Generated, memory, counted, executor);
    });
    (found.compiled ? rt.stats().programs_compiled : rt.stats().programs_replayed)
        .fetch_add(1, std::memory_order_relaxed);
    rt.stats().programs_evicted.fetch_add(found.evicted, std::memory_order_relaxed);
    if (found.compiled)
      BRAZE_LOG(Info, "program ", program_name(w.key), ": compiled (no cached program has this structure: ",
                found.program->schedule().steps.size(), " step(s), inputs", describe_inputs(w), ")");
    else
      BRAZE_LOG(Debug, "program ", program_name(w.key), ": replayed");
    results = found.program->run(w.inputs, w.scalars, counted, out);
  }
  rt.stats().realizations.fetch_add(1, std::memory_order_relaxed);
  return results;
}

// Two tensors realized together may be the same value (bz.zeros twice, x * 3
// twice: one node once interned), which the program returns once. Each
// realized tensor owns its storage, though: bz.copyto, x[i] = v and
// assign write into it in place, and one must not change the other.
void own_storage(std::vector<Array>& results, Device device) {
  if (results.size() < 2) return;  // every realize of one tensor: nothing to share
  std::unordered_set<const std::byte*> seen;
  ArrayAllocator allocate = counted_allocator(device);
  for (Array& r : results) {
    if (!r.data || seen.insert(r.data.get()).second) continue;
    Array copy = allocate(r.dtype, r.shape);
    copy_array(copy, r);
    r = std::move(copy);
  }
}

}  // namespace

void realize(std::span<const Tensor> tensors) {
  ComputeScope computing;  // Note [Calls that compute]
  std::vector<Tensor> todo;
  for (const Tensor& t : tensors) {
    BRAZE_CHECK(t.defined(), "realize: an empty Tensor handle");
    if (!t.is_realized()) todo.push_back(t);
  }
  // A program runs on one device: tensors on several are realized per device.
  while (!todo.empty()) {
    std::vector<Tensor> here, elsewhere;
    for (const Tensor& t : todo) (t.device() == todo[0].device() ? here : elsewhere).push_back(t);
    std::vector<Array> results = evaluate(here, {});
    own_storage(results, here[0].device());
    // Dropped after the lock is let go: freeing a large DAG takes a while.
    std::vector<std::vector<std::shared_ptr<TensorNode>>> dropped(here.size());
    {
      std::unique_lock lock(tensor_nodes_mutex());  // Note [Shared lazy tensors]
      for (size_t i = 0; i < here.size(); ++i) {
        TensorNode& n = *here[i].node();
        if (n.data) continue;  // another thread realized it meanwhile: its result stays
        n.data = std::move(results[i]);
        // A realized tensor is a leaf from now on; one a gradient flows
        // through keeps its inputs for the backward walk (Note [Reverse mode]).
        if (!n.requires_grad) dropped[i].swap(n.inputs);
        n.depth = 0;
      }
    }
    todo = std::move(elsewhere);
  }
}

void assign(std::span<const Tensor> out, std::span<const Tensor> values) {
  ComputeScope computing;  // Note [Calls that compute]
  BRAZE_CHECK(out.size() == values.size(), "assign: ", out.size(), " targets but ", values.size(), " values");
  std::vector<Tensor> todo;
  std::vector<Array> targets;
  for (size_t i = 0; i < out.size(); ++i) {
    BRAZE_CHECK(out[i].defined() && values[i].defined(), "assign: an empty Tensor handle");
    BRAZE_CHECK(out[i].is_realized(), "assign: target ", i, " is lazy; only a realized tensor has storage to write into");
    BRAZE_CHECK(out[i].dtype() == values[i].dtype() && out[i].shape() == values[i].shape(), "assign: target ", i,
                " is ", name(out[i].dtype()), to_string(out[i].shape()), " but the value is ", name(values[i].dtype()),
                to_string(values[i].shape()));
    for (size_t j = 0; j < i; ++j)
      BRAZE_CHECK(out[j].node()->data->data != out[i].node()->data->data, "assign: targets ", j, " and ", i,
                  " are the same storage");
    const Array& target = *out[i].node()->data;
    BRAZE_CHECK(out[i].device() == values[i].device(), "assign: target ", i, " is on ", out[i].device().str(),
                " but the value is on ", values[i].device().str(), "; move one with .to()");
    // A realized value is copied by the program too, not before it: it may
    // be another target's old value (assign([a, b], [b, a]) swaps).
    todo.push_back(values[i].is_realized() ? record(Op::Copy, {values[i]}) : values[i]);
    targets.push_back(target);
  }
  for (const Tensor& t : todo)
    BRAZE_CHECK(t.device() == todo[0].device(), "assign: targets on ", todo[0].device().str(), " and ",
                t.device().str(), " in one call; assign them separately");
  // Bumped after the writes, even a failed one: a program that read a
  // target as an input meanwhile (w = step(w), staged) saw, and may have
  // kept, the old contents (Note [Storage versions]).
  struct BumpAfter {
    const std::vector<Array>& targets;
    ~BumpAfter() {
      for (const Array& t : targets) Runtime::get().storage_versions().written(t.data);
    }
  } bump{targets};
  if (!todo.empty()) evaluate(todo, targets);
}

}  // namespace braze
