#include "runtime/execute.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <unordered_map>

#include "fusion/library_group.h"
#include "fusion/spec_interpreter.h"
#include "graph/check.h"
#include "graph/log.h"
#include "graph/reference.h"
#include "jit_cpu/dnn.h"
#include "jit_cpu/kernel_cache.h"
#include "memplan/plan.h"
#include "memplan/verify.h"
#include "runtime/context.h"
#include "runtime/device_program.h"
#include "runtime/in_place.h"
#include "runtime/slow_paths.h"
#include "runtime/transfer.h"

namespace braze {

namespace {

// Bytes at the start of a library step's workspace that hold its packed
// operand (none when the program keeps it), padded so that the scratchpad
// after them is 64-byte aligned.
int64_t packed_in_workspace(const dnn::Prepared& r, bool kept) {
  return kept ? 0 : (r.packed_bytes + 63) / 64 * 64;
}

// Note [Kept packed weights]: the program keeps the packed right operand
// when it is a graph input.
bool keeps_packed(const Graph& g, const FusedGroup& group, const dnn::Prepared& r) {
  return r.why_not.empty() && r.packed_bytes > 0 && g[g.base(g[group.nodes[0]].inputs[1])].op == Op::Input;
}

// What the step's workspace must hold (Note [Step workspaces]): a CUDA
// library call's, or oneDNN's packed operand and scratchpad.
int64_t workspace_need(const Graph& g, const FusedGroup& group, const dnn::Prepared& r,
                       const cuda::DeviceLibraryCall* device) {
  if (device) return device->workspace_bytes;
  if (!r.why_not.empty()) return 0;
  return packed_in_workspace(r, keeps_packed(g, group, r)) + r.scratch_bytes;
}

// Note [When a program is a graph]: every library step is a device call,
// none scaled by a 0-d value the program computes.
bool steps_can_be_captured(const Schedule& s, const Prepared& p) {
  for (size_t k = 0; k < s.steps.size(); ++k) {
    if (s.steps[k].group.kind != FusedGroup::Kind::Library) continue;
    if (!p.device_library[k]) return false;
    for (NodeId b : library_reads(s.graph, s.steps[k].group))
      if (s.graph[b].shape().empty() && s.graph[b].op != Op::Input) return false;
  }
  return true;
}

class Executor {
 public:
  Executor(const Schedule& s, Prepared& p, const ArrayAllocator& allocate, std::span<const Array> out,
           std::vector<int64_t>* step_ns)
      : s_(s), p_(p), allocate_(allocate), out_(out), step_ns_(step_ns), buffers_(s.graph.size()) {}

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
    bind_out();
    if (p_.memory.poison && p_.arena.data) poison(0, p_.plan.arena_bytes);
    if (step_ns_) step_ns_->clear();
    if (std::vector<uint64_t> signature; graphed(signature)) run_graph(std::move(signature));
    else run_steps();
    Runtime::get().stats().kernels_launched.fetch_add(static_cast<int64_t>(s_.steps.size()), std::memory_order_relaxed);
    std::vector<Array> result;
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      const Array& a = buffers_[g.outputs[i]];
      if (!out_.empty() && a.data != out_[i].data) {
        // Staged (the target aliases an input) or the same node returned twice.
        copy_array(out_[i], a);
        result.push_back(out_[i]);
      } else {
        result.push_back(a);
      }
    }
    return result;
  }

 private:
  void run_steps() {
    for (size_t k = 0; k < s_.steps.size(); ++k) {
      const Step& step = s_.steps[k];
      auto start = std::chrono::steady_clock::now();
      if (step.group.kind == FusedGroup::Kind::Library) {
        if (p_.device_library[k]) device_library_call(k, step.group);
        else library_call(k, step.group, p_.library[k]);
      } else if (p_.device) {
        device_kernel(step, k);
      } else {
        kernel(step, p_.kernels[k].get());
      }
      if (step_ns_ && p_.device) p_.device->synchronize();  // a launch returns before the kernel ends
      if (step_ns_)
        step_ns_->push_back(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
      if (p_.memory.poison && !p_.dying.empty())
        for (const memplan::Placement& b : p_.dying[k]) poison(b.offset, b.bytes);
    }
  }

  // Note [When a program is a graph]: whether this run is one, and then
  // its signature; a graphed run takes its outputs before its steps
  // (nothing is allocated while capturing).
  bool graphed(std::vector<uint64_t>& signature) {
    DeviceGraphState& gs = p_.device_graph;
    if (!p_.device || !gs.possible || gs.failed || step_ns_ || p_.memory.poison || !p_.memory.arena || gs.runs++ == 0)
      return false;
    const Graph& g = s_.graph;
    auto bits = [](const Array& a) {
      uint64_t v = 0;
      std::memcpy(&v, a.data.get(), std::min(sizeof v, static_cast<size_t>(a.bytes())));
      return v;
    };
    for (NodeId id : g.inputs()) {
      const Array& a = buffers_[id];
      signature.push_back(reinterpret_cast<uintptr_t>(a.data.get()));
      if (!a.shape.empty()) continue;
      if (!a.device.is_cpu()) return false;  // read on the host at each run: not in a graph
      signature.push_back(bits(a));
    }
    if (out_.empty()) {  // fresh outputs, taken now
      out_of_.assign(g.size(), -1);
      for (size_t i = 0; i < g.outputs.size(); ++i) {
        NodeId o = g.outputs[i];
        if (out_of_[o] < 0) out_of_[o] = static_cast<int64_t>(i);
        target_.push_back(out_of_[o] == static_cast<int64_t>(i) ? allocate_(g[o].dtype, g[o].shape())
                                                                : target_[out_of_[o]]);
      }
    }
    for (const Array& t : target_) signature.push_back(reinterpret_cast<uintptr_t>(t.data.get()));
    signature.push_back(reinterpret_cast<uintptr_t>(p_.arena.data.get()));
    return true;
  }

  // Note [Programs as CUDA graphs]: launches the graph as it is when the
  // signature is the last one's; else goes through the steps patching its
  // kernel nodes, or capturing it (first, or after a library call's
  // addresses changed), then launches it. A capture that fails leaves the
  // program step by step (a real error is raised again by the steps).
  void run_graph(std::vector<uint64_t> signature) {
    DeviceGraphState& gs = p_.device_graph;
    Stats& stats = Runtime::get().stats();
    const Graph& g = s_.graph;
    if (gs.graph && signature == gs.signature) {
      for (size_t i = 0; i < g.outputs.size(); ++i) buffers_[g.outputs[i]] = target_[out_of_[g.outputs[i]]];
      gs.graph->launch();
      stats.graphs_launched.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    try {
      if (gs.graph) {
        graph_ = GraphMode::Patch;
        run_steps();
        if (recapture_) gs.graph.reset();
      }
      if (!gs.graph) {
        graph_ = GraphMode::Capture;
        gs.node.assign(s_.steps.size(), -1);
        gs.params.assign(s_.steps.size(), {});
        gs.library.assign(s_.steps.size(), {});
        next_node_ = 0;
        p_.device->begin_capture();
        run_steps();
        gs.graph = p_.device->end_capture();
        stats.graphs_captured.fetch_add(1, std::memory_order_relaxed);
      }
    } catch (const std::exception& e) {
      p_.device->abort_capture();
      gs.graph.reset();
      gs.failed = true;
      graph_ = GraphMode::Off;
      BRAZE_LOG(Info, "a program runs step by step from now on: capturing its CUDA graph failed: ",
                e.what());
      run_steps();
      return;
    }
    graph_ = GraphMode::Off;
    gs.signature = std::move(signature);
    gs.graph->launch();
    stats.graphs_launched.fetch_add(1, std::memory_order_relaxed);
  }

  // Where each graph output is written when the caller gives the arrays.
  void bind_out() {
    if (out_.empty()) return;
    const Graph& g = s_.graph;
    BRAZE_CHECK(out_.size() == g.outputs.size(), "realize: ", g.outputs.size(), " outputs, but ", out_.size(),
                " arrays to write them into");
    if (p_.staging.empty()) p_.staging.resize(out_.size());
    out_of_.assign(g.size(), -1);
    for (size_t i = 0; i < out_.size(); ++i) {
      const Node& n = g[g.outputs[i]];
      BRAZE_CHECK(out_[i].dtype == n.dtype && out_[i].shape == n.shape(), "realize: output ", i, " is ",
                  name(n.dtype), to_string(n.shape()), " but the array to write it into is ", name(out_[i].dtype),
                  to_string(out_[i].shape));
      if (out_of_[g.outputs[i]] >= 0) continue;  // the same node twice: copied at the end
      out_of_[g.outputs[i]] = static_cast<int64_t>(i);
    }
    for (size_t i = 0; i < out_.size(); ++i) {
      // Staged unless every input it shares memory with is exactly its
      // memory and one it may overwrite (Note [In-place outputs]).
      bool staged = false;
      for (NodeId id : g.inputs()) {
        const Array& in = buffers_[id];
        if (!overlap(in, out_[i])) continue;
        const bool exact = in.data == out_[i].data && in.bytes() == out_[i].bytes();
        staged = staged || !exact || std::count(p_.in_place[i].begin(), p_.in_place[i].end(), id) == 0;
      }
      if (staged) {
        Array& st = p_.staging[i];
        if (!st.data) st = allocate_(out_[i].dtype, out_[i].shape);  // once per program
        target_.push_back(st);
      } else {
        target_.push_back(out_[i]);
      }
    }
  }

  static bool overlap(const Array& a, const Array& b) {
    const std::byte* x = a.data.get();
    const std::byte* y = b.data.get();
    return x && y && x < y + b.bytes() && y < x + a.bytes();
  }

  void kernel(const Step& step, const jit::CompiledKernel* compiled) {
    bind_arguments(step);
    if (compiled) {
      jit::launch(*compiled, step.spec, args_, outs_);
      return;
    }
    // Interpreted on request, or what the generator does not emit yet
    // (counted, so it cannot hide).
    if (p_.mode == KernelMode::Generated)
      Runtime::get().stats().kernels_interpreted.fetch_add(1, std::memory_order_relaxed);
    interpret_spec(step.spec, args_, outs_);
  }

  // A kernel step on a device: launched, captured (its node and parameter
  // values remembered) or, in a graph, its node's parameters set anew where
  // they changed (Note [Programs as CUDA graphs]).
  void device_kernel(const Step& step, size_t k) {
    bind_arguments(step);
    const cuda::DeviceKernel& kernel = *p_.device_kernels[k];
    std::vector<uint64_t> params = kernel_parameters(kernel, step.spec, args_, outs_);
    std::vector<void*> pointers = parameter_pointers(params);
    DeviceGraphState& gs = p_.device_graph;
    if (graph_ == GraphMode::Patch) {
      if (gs.node[k] < 0 || params == gs.params[k]) return;
      gs.graph->set_params(static_cast<size_t>(gs.node[k]), kernel, pointers.data());
      gs.params[k] = std::move(params);
      Runtime::get().stats().graph_nodes_updated.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    p_.device->launch(kernel, pointers.data());
    if (graph_ != GraphMode::Capture) return;
    if (kernel.source.launch.work > 0) gs.node[k] = next_node_++;
    gs.params[k] = std::move(params);
  }

  // args_ and outs_ for a kernel step: its inputs' buffers and scalars, and
  // its outputs' buffers, allocated (or placed in the arena) here.
  void bind_arguments(const Step& step) {
    const Graph& g = s_.graph;
    args_.assign(step.reads.size(), KernelArg{});
    for (size_t k = 0; k < step.reads.size(); ++k) {
      const Node& n = g[step.reads[k]];
      KernelArg& arg = args_[k];
      switch (step.spec.inputs[k].kind) {
        case KernelInput::Kind::Buffer: arg.data = buffers_[step.reads[k]].data.get(); break;
        case KernelInput::Kind::Scalar:
          if (n.op == Op::Input) {  // a 0-d input passed by value (Note [Scalar parameters])
            read_scalar(buffers_[step.reads[k]], arg);
            break;
          }
          [[fallthrough]];
        case KernelInput::Kind::Arange:
          for (size_t j = 0; j < n.attr.reals.size(); ++j) arg.real[j] = n.attr.reals[j];
          for (size_t j = 0; j < n.attr.ints.size(); ++j) arg.integer[j] = n.attr.ints[j];
          break;
        case KernelInput::Kind::Window: break;  // only in lowered specs, computed from the index
      }
    }
    outs_.clear();
    for (size_t k = 0; k < step.group.outputs.size(); ++k) {
      NodeId o = step.group.outputs[k];
      const KernelOutput& ko = step.spec.outputs[k];
      BRAZE_ASSERT(ko.dtype == g[o].dtype && numel(step.spec.shape_of(ko.space)) == numel(g[o].shape()),
                   "kernel output ", k, " does not match node ", o, "\n", canonical_text(step.spec));
      Array a = allocate(g[o].dtype, g[o].shape(), o);
      outs_.push_back(a.data.get());
      buffers_[o] = std::move(a);
    }
  }

  // A matmul/conv2d with its epilogue: oneDNN where it takes the call
  // (jit_cpu/dnn.h), else the reference interpreter, counted.
  // The primitive was looked up once, in prepare().
  void library_call(size_t k, const FusedGroup& group, const dnn::Prepared& r) {
    const Graph& g = s_.graph;
    NodeId o = group.outputs[0];
    auto buffer = [&](NodeId b) -> const Array& { return buffers_.at(b); };
    Stats& stats = Runtime::get().stats();
    if (r.why_not.empty()) {
      Array out = allocate(g[o].dtype, g[o].shape(), o);
      dnn::run(r, g, group, buffer, out, run_memory(k, group));
      buffers_[o] = std::move(out);
      return;
    }
    stats.library_calls_reference.fetch_add(1, std::memory_order_relaxed);
    buffers_[o] = evaluate_library_group(
        g, group, buffer, [&](DType dtype, Shape shape) { return allocate(dtype, std::move(shape), o); });
  }

  // A matmul/conv2d with its epilogue on a CUDA device: cuBLASLt or cuDNN
  // (Note [CUDA library calls]), prepared once in prepare().
  // In a graph, a call whose addresses or scale changed is captured again
  // (Note [Programs as CUDA graphs]).
  void device_library_call(size_t k, const FusedGroup& group) {
    NodeId o = group.outputs[0];
    Array out = allocate(s_.graph[o].dtype, s_.graph[o].shape(), o);
    if (graph_ != GraphMode::Off) {
      std::vector<uint64_t> key{reinterpret_cast<uintptr_t>(out.data.get()), reinterpret_cast<uintptr_t>(workspace(k))};
      for (NodeId b : library_reads(s_.graph, group)) {
        const Array& a = buffers_.at(b);
        key.push_back(reinterpret_cast<uintptr_t>(a.data.get()));
        if (a.shape.empty() && a.device.is_cpu()) {  // a scale read as the call is made
          uint64_t v = 0;
          std::memcpy(&v, a.data.get(), static_cast<size_t>(a.bytes()));
          key.push_back(v);
        }
      }
      std::vector<uint64_t>& captured = p_.device_graph.library[k];
      if (graph_ == GraphMode::Patch) {
        recapture_ = recapture_ || key != captured;
        buffers_[o] = std::move(out);
        return;
      }
      captured = std::move(key);
    }
    p_.device->run_library(*p_.device_library[k], [&](NodeId b) -> const Array& { return buffers_.at(b); }, out,
                           workspace(k));
    buffers_[o] = std::move(out);
  }

  // Step k's workspace (Note [Step workspaces]): in the arena where the
  // plan placed it, else the program's own buffer; null when it needs none.
  std::byte* workspace(size_t k) {
    if (p_.workspace_offset.empty()) return nullptr;
    if (p_.workspace_offset[k] >= 0) return p_.arena.data.get() + p_.workspace_offset[k];
    return p_.workspace[k].data.get();
  }

  // Where step k's library call finds its packed operand and scratchpad;
  // a kept packed operand is packed again only when stale (Note [Kept
  // packed weights]).
  dnn::RunMemory run_memory(size_t k, const FusedGroup& group) {
    const dnn::Prepared& r = p_.library[k];
    std::byte* ws = workspace(k);
    Prepared::KeptPacked& kept = p_.kept[k];
    if (!kept.packed.data) return {ws + packed_in_workspace(r, false), ws, true};
    const Array& source = buffers_[s_.graph.base(s_.graph[group.nodes[0]].inputs[1])];
    uint64_t version = Runtime::get().storage_versions().version(source.data);
    bool same = !kept.source.expired() && kept.source_data == source.data.get() &&
                !kept.source.owner_before(source.data) && !source.data.owner_before(kept.source) &&
                kept.version == version;
    if (!same) kept = {kept.packed, source.data, source.data.get(), version};
    return {ws, kept.packed.data.get(), !same};
  }

  // The buffer of node `id`: its place in the arena when it has one, the
  // caller's array when it is an output written in place.
  Array allocate(DType dtype, Shape shape, NodeId id) {
    if (!out_of_.empty() && out_of_[id] >= 0) return target_[out_of_[id]];
    int64_t offset = p_.offset.empty() ? -1 : p_.offset[id];
    if (offset < 0) return allocate_(dtype, std::move(shape));
    BRAZE_ASSERT(dtype == s_.graph[id].dtype && shape == s_.graph[id].shape(), "arena buffer of node ", id,
                 " asked for as ", name(dtype), to_string(shape));
    // Aliases the arena and keeps it alive as long as the buffer is.
    return Array{dtype, std::move(shape), std::shared_ptr<std::byte[]>(p_.arena.data, p_.arena.data.get() + offset),
                 p_.arena.device};
  }

  void poison(int64_t offset, int64_t bytes) {
    if (p_.device) p_.device->fill(p_.arena.data.get() + offset, 0xFF, static_cast<size_t>(bytes));
    else std::memset(p_.arena.data.get() + offset, 0xFF, static_cast<size_t>(bytes));
  }

  const Schedule& s_;
  Prepared& p_;
  const ArrayAllocator& allocate_;
  std::span<const Array> out_;
  std::vector<int64_t>* step_ns_;
  std::vector<Array> buffers_;     // per graph node
  std::vector<int64_t> out_of_;    // per graph node: the output it is written as, or -1
  std::vector<Array> target_;      // per output: where it is written
  std::vector<KernelArg> args_;
  std::vector<std::byte*> outs_;
  // Note [Programs as CUDA graphs]: what the steps do with a device's work.
  enum class GraphMode { Off, Capture, Patch };
  GraphMode graph_ = GraphMode::Off;
  bool recapture_ = false;  // Patch: a library call's addresses changed
  int64_t next_node_ = 0;   // Capture: the node the next kernel launch becomes
};

// Places the intermediates in one arena (memplan/) and lays out what
// poison mode clears after each step.
void plan_arena(const Schedule& s, Prepared& p, const ArrayAllocator& allocate) {
  p.lives = memplan::liveness(s);
  p.plan = memplan::plan_memory(p.lives, p.device ? device_plan_options() : memplan::PlanOptions{});
  // Once per program, and a wrong plan is a silently wrong answer: always checked.
  memplan::verify_plan(p.lives, p.plan);
  if (p.plan.arena_bytes == 0) return;  // only zero-size intermediates: nothing to share
  if (!p.memory.lend) {
    p.arena = allocate(DType::UInt8, {p.plan.arena_bytes});
    Runtime::get().stats().arena_bytes.fetch_add(p.plan.arena_bytes, std::memory_order_relaxed);
  }
  p.offset.assign(s.graph.size(), -1);
  p.dying.resize(s.steps.size());
  // An input an output took over in place holds that output after its last
  // read: not poisoned (Note [In-place outputs]).
  std::vector<bool> taken_over(p.lives.scratch.size(), false);
  for (const memplan::BufferLife& b : p.lives.scratch)
    if (b.in_place_of >= 0) taken_over[b.in_place_of] = true;
  for (size_t i = 0; i < p.plan.buffers.size(); ++i) {
    const memplan::Placement& b = p.plan.buffers[i];
    const memplan::BufferLife& life = p.lives.scratch[i];
    // A workspace the backend needs no more than the schedule said is used from the arena.
    if (life.workspace && workspace_need(s.graph, s.steps[life.first].group, p.library[life.first],
                                         p.device_library[life.first].get()) <= life.bytes)
      p.workspace_offset[life.first] = b.offset;
    if (!life.workspace) p.offset[b.node] = b.offset;
    if (taken_over[i]) continue;
    // The buffer's own bytes, not its padding: the verifier vouches for those only.
    p.dying[p.lives.scratch[i].last].push_back({b.node, b.offset, p.lives.scratch[i].bytes});
  }
}

std::atomic<int64_t> library_lookup_count{0};

// Note [No silent slow paths]: a library call that will run on the
// reference interpreter, said (or refused) when its program is prepared.
// An empty operand or result is no slow path: there is nothing to compute.
void report_reference_library_call(const Graph& g, const FusedGroup& group, const std::string& why) {
  const Node& call = g[group.nodes[0]];
  bool empty = numel(call.shape()) == 0;
  std::string shapes;
  for (NodeId in : call.inputs) {
    empty = empty || numel(g[in].shape()) == 0;
    shapes += (shapes.empty() ? "" : " x ") + to_string(g[in].shape());
  }
  if (empty) return;
  std::string kind = detail::concat(info(call.op).api, " of ", name(g[call.inputs[0]].dtype));
  report_slow_path(kind, kind + " " + shapes, why);
}

// ... and a fused kernel the generator does not emit (found.why).
void report_interpreted_kernel(const Step& step, const std::string& why) {
  std::string kind = "a fused kernel";
  report_slow_path(kind + ": " + why, detail::concat(kind, " over ", to_string(step.group.domain)), why);
}

// A library call, found or created once per program instead of once per
// run: on a GPU its cuBLASLt/cuDNN call (Note [CUDA library calls]), else
// (the CPU, host emulation) its oneDNN primitive (Note [oneDNN
// primitives]).
struct LibraryCall {
  dnn::Prepared cpu;
  std::shared_ptr<const cuda::DeviceLibraryCall> device;
};
LibraryCall find_library_call(const Graph& g, const FusedGroup& group, cuda::DeviceExecutor* device) {
  Stats& stats = Runtime::get().stats();
  if (device) {
    cuda::PreparedLibraryCall c = prepare_device_library(*device, g, group);
    if (c.created) stats.library_primitives_created.fetch_add(1, std::memory_order_relaxed);
    if (c.call) return {{}, std::move(c.call)};
  }
  dnn::Prepared r = dnn::prepare(g, group);
  if (r.created) stats.library_primitives_created.fetch_add(1, std::memory_order_relaxed);
  stats.library_primitives_evicted.fetch_add(r.evicted, std::memory_order_relaxed);
  return {std::move(r), nullptr};
}

// prepare()'s lookups, counted (library_lookups()).
LibraryCall prepare_library_call(const Graph& g, const FusedGroup& group, cuda::DeviceExecutor* device) {
  library_lookup_count.fetch_add(1, std::memory_order_relaxed);
  return find_library_call(g, group, device);
}

// Each library call's workspace that the arena does not hold, allocated
// once per program.
void allocate_workspaces(const Schedule& s, Prepared& p, const ArrayAllocator& allocate) {
  p.workspace_offset.resize(s.steps.size(), -1);
  p.workspace.resize(s.steps.size());
  p.kept.resize(s.steps.size());
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const FusedGroup& group = s.steps[k].group;
    if (group.kind != FusedGroup::Kind::Library) continue;
    int64_t bytes = workspace_need(s.graph, group, p.library[k], p.device_library[k].get());
    if (bytes > 0 && p.workspace_offset[k] < 0) p.workspace[k] = allocate(DType::UInt8, {bytes});
    if (keeps_packed(s.graph, group, p.library[k]))
      p.kept[k].packed = allocate(DType::UInt8, {p.library[k].packed_bytes});
  }
}

}  // namespace

int64_t library_lookups() { return library_lookup_count.load(std::memory_order_relaxed); }

void size_workspaces(Schedule& s, cuda::DeviceExecutor* device) {
  for (Step& step : s.steps) {
    if (step.group.kind != FusedGroup::Kind::Library) continue;
    LibraryCall c = find_library_call(s.graph, step.group, device);
    step.workspace_bytes = workspace_need(s.graph, step.group, c.cpu, c.device.get());
  }
}

Prepared prepare(const Schedule& s, KernelMode mode, MemoryOptions memory, const ArrayAllocator& allocate,
                 std::shared_ptr<cuda::DeviceExecutor> device) {
  Prepared p;
  p.mode = mode;
  p.memory = memory;
  p.kernels.resize(s.steps.size());
  p.library.resize(s.steps.size());
  p.device_library.resize(s.steps.size());
  p.device = std::move(device);
  if (p.device) {
    BRAZE_ASSERT(mode == KernelMode::Generated, "a device program runs generated kernels");
    load_device_kernels(s, p);  // CUDA kernels instead of CPU ones; library calls below
  }
  for (size_t k = 0; k < s.steps.size(); ++k)
    if (s.steps[k].group.kind == FusedGroup::Kind::Library && mode != KernelMode::Generated)
      p.library[k].why_not = "interpreted";
  if (mode == KernelMode::Generated) {
    Runtime& rt = Runtime::get();
    for (size_t k = 0; k < s.steps.size(); ++k) {
      const Step& step = s.steps[k];
      if (step.group.kind == FusedGroup::Kind::Library) {
        LibraryCall c = prepare_library_call(s.graph, step.group, p.device.get());
        p.library[k] = std::move(c.cpu);
        p.device_library[k] = std::move(c.device);
        if (!p.device_library[k] && !p.library[k].why_not.empty())
          report_reference_library_call(s.graph, step.group, p.library[k].why_not);
        continue;
      }
      if (p.device) continue;
      jit::Lookup found = jit::KernelCache::get().find_or_compile(step.spec, rt.cpu_isa());
      if (found.hit) rt.stats().cache_hits_memory.fetch_add(1, std::memory_order_relaxed);
      if (!found.hit && rt.dumper().enabled()) rt.dumper().kernel(s, step, found, rt.cpu_isa());  // Note [Dump files]
      if (found.kernel && !found.hit) {
        rt.stats().kernels_compiled.fetch_add(1, std::memory_order_relaxed);
        rt.stats().codegen_ns.fetch_add(found.codegen_ns, std::memory_order_relaxed);
      }
      rt.stats().kernels_evicted.fetch_add(found.evicted, std::memory_order_relaxed);
      p.kernels[k] = found.kernel;  // null: the spec interpreter runs it (found.why says why)
      if (!found.kernel) report_interpreted_kernel(step, found.why);
    }
  }
  // Generated CUDA kernels declare every pointer __restrict__, which an
  // output over its input would break (NVRTC may reload an input after a
  // store, or read it through the non-coherent cache): CPU programs only.
  p.in_place = p.device ? std::vector<std::vector<NodeId>>(s.graph.outputs.size()) : in_place_inputs(s);
  p.workspace_offset.assign(s.steps.size(), -1);
  if (memory.arena) plan_arena(s, p, allocate);
  allocate_workspaces(s, p, allocate);
  p.device_graph.possible = p.device && cuda_graphs_enabled() && steps_can_be_captured(s, p);
  return p;
}

std::vector<Array> run_prepared(const Schedule& s, Prepared& p, std::span<const Array> inputs,
                                const ArrayAllocator& allocate, std::span<const Array> out,
                                std::vector<int64_t>* step_ns) {
  return Executor(s, p, allocate, out, step_ns).run(inputs);
}

std::vector<Array> execute(const Schedule& s, std::span<const Array> inputs, const ArrayAllocator& allocate,
                           KernelMode mode, MemoryOptions memory, std::vector<int64_t>* step_ns) {
  Prepared p = prepare(s, mode, memory, allocate);
  return run_prepared(s, p, inputs, allocate, {}, step_ns);
}

}  // namespace braze
