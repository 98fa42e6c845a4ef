#include "runtime/execute.h"

#include <chrono>
#include <cstring>
#include <unordered_map>

#include "fusion/library_group.h"
#include "fusion/spec_interpreter.h"
#include "graph/check.h"
#include "graph/reference.h"
#include "jit_cpu/dnn.h"
#include "jit_cpu/kernel_cache.h"
#include "memplan/plan.h"
#include "memplan/verify.h"
#include "runtime/context.h"

namespace braze {

namespace {

class Executor {
 public:
  Executor(const Schedule& s, const ArrayAllocator& allocate, KernelMode mode, MemoryOptions memory,
           std::vector<int64_t>* step_ns)
      : s_(s), allocate_(allocate), mode_(mode), memory_(memory), step_ns_(step_ns) {}

  std::vector<Array> run(std::span<const Array> inputs) {
    const Graph& g = s_.graph;
    BRAZE_CHECK(inputs.size() == g.inputs().size(), "realize: the graph has ", g.inputs().size(), " inputs, got ",
                inputs.size());
    for (NodeId id : g.inputs()) {
      const Node& n = g[id];
      const Array& a = inputs[n.attr.ints[0]];
      BRAZE_CHECK(a.dtype == n.dtype && a.shape == n.shape(), "realize: input ", n.attr.ints[0], " is ",
                  name(a.dtype), to_string(a.shape), " but the graph expects ", name(n.dtype),
                  to_string(n.shape()));
      buffers_[id] = a;
    }
    if (memory_.arena) plan_arena();
    if (step_ns_) step_ns_->clear();
    for (size_t k = 0; k < s_.steps.size(); ++k) {
      const Step& step = s_.steps[k];
      auto start = std::chrono::steady_clock::now();
      if (step.group.kind == FusedGroup::Kind::Library) library_call(step.group);
      else kernel(step);
      if (step_ns_)
        step_ns_->push_back(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
      Runtime::get().stats().kernels_launched.fetch_add(1, std::memory_order_relaxed);
      if (memory_.poison && !dying_.empty())
        for (const memplan::Placement& b : dying_[k]) poison(b.offset, b.bytes);
    }
    std::vector<Array> out;
    for (NodeId o : g.outputs) out.push_back(buffers_.at(o));
    return out;
  }

 private:
  void kernel(const Step& step) {
    const Graph& g = s_.graph;
    std::vector<KernelArg> args(step.reads.size());
    for (size_t k = 0; k < step.reads.size(); ++k) {
      const Node& n = g[step.reads[k]];
      switch (step.spec.inputs[k].kind) {
        case KernelInput::Kind::Buffer: args[k].data = buffers_.at(step.reads[k]).data.get(); break;
        case KernelInput::Kind::Scalar:
        case KernelInput::Kind::Arange:
          for (size_t j = 0; j < n.attr.reals.size(); ++j) args[k].real[j] = n.attr.reals[j];
          for (size_t j = 0; j < n.attr.ints.size(); ++j) args[k].integer[j] = n.attr.ints[j];
          break;
      }
    }
    std::vector<std::byte*> outs;
    for (size_t k = 0; k < step.group.outputs.size(); ++k) {
      NodeId o = step.group.outputs[k];
      const KernelOutput& ko = step.spec.outputs[k];
      BRAZE_ASSERT(ko.dtype == g[o].dtype && numel(step.spec.shape_of(ko.space)) == numel(g[o].shape()),
                   "kernel output ", k, " does not match node ", o, "\n", canonical_text(step.spec));
      Array a = allocate(g[o].dtype, g[o].shape(), o);
      outs.push_back(a.data.get());
      buffers_[o] = std::move(a);
    }
    if (mode_ == KernelMode::Interpreted) {
      interpret_spec(step.spec, args, outs);
      return;
    }
    Runtime& rt = Runtime::get();
    jit::Lookup found = jit::KernelCache::get().find_or_compile(step.spec, rt.cpu_isa());
    if (found.hit) rt.stats().cache_hits_memory.fetch_add(1, std::memory_order_relaxed);
    if (!found.hit && rt.dumper().enabled()) rt.dumper().kernel(s_, step, found, rt.cpu_isa());  // Note [Dump files]
    if (found.kernel) {
      if (!found.hit) {
        rt.stats().kernels_compiled.fetch_add(1, std::memory_order_relaxed);
        rt.stats().codegen_ns.fetch_add(found.codegen_ns, std::memory_order_relaxed);
      }
      jit::launch(*found.kernel, step.spec, args, outs);
    } else {
      // What the generator does not emit yet runs on the spec interpreter
      // (found.why says what); counted so it cannot hide.
      rt.stats().kernels_interpreted.fetch_add(1, std::memory_order_relaxed);
      interpret_spec(step.spec, args, outs);
    }
  }

  // A matmul/conv2d with its epilogue: oneDNN where it takes the call
  // (jit_cpu/dnn.h), else the reference interpreter, counted.
  void library_call(const FusedGroup& group) {
    const Graph& g = s_.graph;
    NodeId o = group.outputs[0];
    auto buffer = [&](NodeId b) -> const Array& { return buffers_.at(b); };
    Stats& stats = Runtime::get().stats();
    dnn::Prepared r = mode_ == KernelMode::Generated ? dnn::prepare(g, group) : dnn::Prepared{"interpreted"};
    if (r.why_not.empty()) {
      Array out = allocate(g[o].dtype, g[o].shape(), o);
      dnn::run(r, g, group, buffer, out);
      if (r.created) stats.library_primitives_created.fetch_add(1, std::memory_order_relaxed);
      if (r.scratch_bytes > 0) {  // the primitive's scratchpad, allocated once with it
        stats.allocations.fetch_add(1, std::memory_order_relaxed);
        stats.bytes_allocated.fetch_add(r.scratch_bytes, std::memory_order_relaxed);
      }
      buffers_[o] = std::move(out);
      return;
    }
    stats.library_calls_reference.fetch_add(1, std::memory_order_relaxed);
    buffers_[o] = evaluate_library_group(
        g, group, buffer, [&](DType dtype, Shape shape) { return allocate(dtype, std::move(shape), o); });
  }

  // Places the intermediates in one arena (memplan/) and lays out what
  // poison mode clears after each step.
  void plan_arena() {
    memplan::Liveness lives = memplan::liveness(s_);
    memplan::MemoryPlan plan = memplan::plan_memory(lives);
    // Cheap beside running the program, and a wrong plan is a silently
    // wrong answer: checked every time.
    memplan::verify_plan(lives, plan);
    if (plan.arena_bytes == 0) return;  // only zero-size intermediates: nothing to share
    arena_ = allocate_(DType::UInt8, {plan.arena_bytes});
    Runtime::get().stats().arena_bytes.fetch_add(plan.arena_bytes, std::memory_order_relaxed);
    if (memory_.poison) poison(0, plan.arena_bytes);
    dying_.resize(s_.steps.size());
    for (size_t i = 0; i < plan.buffers.size(); ++i) {
      offsets_.emplace(plan.buffers[i].node, plan.buffers[i].offset);
      // The buffer's own bytes, not its padding: the verifier vouches for those only.
      dying_[lives.scratch[i].last].push_back({plan.buffers[i].node, plan.buffers[i].offset, lives.scratch[i].bytes});
    }
  }

  // The buffer of node `id`: its place in the arena when it has one.
  Array allocate(DType dtype, Shape shape, NodeId id) {
    auto it = offsets_.find(id);
    if (it == offsets_.end()) return allocate_(dtype, std::move(shape));
    BRAZE_ASSERT(dtype == s_.graph[id].dtype && shape == s_.graph[id].shape(), "arena buffer of node ", id,
                 " asked for as ", name(dtype), to_string(shape));
    // Aliases the arena and keeps it alive as long as the buffer is.
    return Array{dtype, std::move(shape), std::shared_ptr<std::byte[]>(arena_.data, arena_.data.get() + it->second)};
  }

  void poison(int64_t offset, int64_t bytes) {
    std::memset(arena_.data.get() + offset, 0xFF, static_cast<size_t>(bytes));
  }

  const Schedule& s_;
  const ArrayAllocator& allocate_;
  KernelMode mode_;
  MemoryOptions memory_;
  std::vector<int64_t>* step_ns_;
  std::unordered_map<NodeId, Array> buffers_;
  Array arena_;
  std::unordered_map<NodeId, int64_t> offsets_;        // arena-placed nodes
  std::vector<std::vector<memplan::Placement>> dying_;  // per step: the bytes of buffers it reads last
};

}  // namespace

std::vector<Array> execute(const Schedule& s, std::span<const Array> inputs, const ArrayAllocator& allocate,
                           KernelMode mode, MemoryOptions memory, std::vector<int64_t>* step_ns) {
  return Executor(s, allocate, mode, memory, step_ns).run(inputs);
}

}  // namespace braze
