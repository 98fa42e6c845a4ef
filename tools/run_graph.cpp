// `braze run`: the graph realized on the CPU or a CUDA device, timed per
// step, and checked against the reference interpreter (graph/reference.h).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "fusion/schedule.h"
#include "graph/check.h"
#include "graph/reference.h"
#include "jit_cpu/thread_pool.h"
#include "runtime/context.h"
#include "runtime/cuda_executors.h"
#include "runtime/device.h"
#include "runtime/device_program.h"
#include "runtime/execute.h"
#include "runtime/transfer.h"
#include "tools/commands.h"
#include "runtime/copy_bandwidth.h"
#include "tools/node_names.h"
#include "tools/run_inputs.h"

namespace braze::cli {

namespace {

// Generated code differs from the reference (which computes in double) by
// its vector math's error bounds and its summation order; these bounds hold
// for both with room (docs/semantics.md). Integers and bools are exact.
struct Tolerance {
  double rtol, atol;
};
Tolerance tolerance(DType t) {
  switch (t) {
    case DType::Float16:
    case DType::BFloat16: return {2e-2, 1e-2};
    case DType::Float32: return {1e-3, 1e-4};
    case DType::Float64: return {1e-9, 1e-12};
    default: return {0, 0};
  }
}

// "" when `got` matches `want`; else where and by how much it does not.
// `max_error` receives the largest absolute difference of finite values.
std::string mismatch(const Array& got, const Array& want, double& max_error) {
  if (got.dtype != want.dtype || got.shape != want.shape)
    return "is " + std::string(name(got.dtype)) + to_string(got.shape) + ", the reference " +
           std::string(name(want.dtype)) + to_string(want.shape);
  Tolerance tol = tolerance(want.dtype);
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = load_double(got.dtype, got.data.get(), i), w = load_double(want.dtype, want.data.get(), i);
    if (std::isnan(g) && std::isnan(w)) continue;
    if (std::isinf(w) && g == w) continue;
    double err = std::abs(g - w);
    if (std::isfinite(err)) max_error = std::max(max_error, err);
    if (!(err <= tol.atol + tol.rtol * std::abs(w))) {
      std::ostringstream s;
      s << std::setprecision(9) << "differs at element " << i << ": " << g << ", the reference " << w;
      return s.str();
    }
  }
  return "";
}

int64_t median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Bytes a step reads and writes: each buffer it reads once, each output once.
int64_t bytes_moved(const Schedule& s, const Step& st) {
  const Graph& g = s.graph;
  int64_t bytes = 0;
  auto size = [&](NodeId id) { return numel(g[id].shape()) * static_cast<int64_t>(itemsize(g[id].dtype)); };
  if (st.group.kind == FusedGroup::Kind::Kernel) {
    for (size_t k = 0; k < st.reads.size(); ++k)
      if (st.spec.inputs[k].kind == KernelInput::Kind::Buffer) bytes += size(st.reads[k]);
  } else {
    for (NodeId in : g[st.group.nodes[0]].inputs) bytes += size(g.base(in));
  }
  for (NodeId o : st.group.outputs) bytes += size(o);
  return bytes;
}

std::string step_name(const Schedule& s, const Step& st) {
  if (st.group.kind == FusedGroup::Kind::Library) return "library " + node_name(s.graph, st.group.nodes[0]);
  std::string text = "kernel " + kernel_key(st.spec).hex().substr(0, 8) + " (";
  for (size_t i = 0; i < st.group.nodes.size(); ++i) text += (i ? " " : "") + node_name(s.graph, st.group.nodes[i]);
  return text + ")";
}

std::string ms(int64_t ns) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(3) << ns / 1e6 << " ms";
  return s.str();
}

// --device, checked before anything runs: a CUDA device that this process
// cannot use gets the runtime's own reason (no CUDA backend, driver or
// device; BRAZE_CUDA=emulate runs on host emulation).
Device check_run_device(const std::string& word) {
  Device d;
  try {
    d = Device::parse(word);
    check_available(d);
  } catch (const std::exception& e) {
    BRAZE_CHECK(false, "run --device ", word, ": ", e.what());
  }
  return d;
}

// One run of the schedule on `d`, inputs already there: on a CUDA device,
// the program's kernels found (cached after the first run) and launched,
// and the device waited for, so the time is the work's (Note [Device
// programs]).
std::vector<Array> run_on(const Schedule& s, Device d, std::span<const Array> inputs, std::vector<int64_t>* step_ns) {
  if (d.is_cpu()) return execute(s, inputs, allocate_array, KernelMode::Generated, {}, step_ns);
  Prepared p = prepare(s, KernelMode::Generated, {}, counted_allocator(d), cuda_executor(d));
  std::vector<Array> out = run_prepared(s, p, inputs, counted_allocator(d), {}, step_ns);
  p.device->synchronize();
  return out;
}

// The copy probe on a CUDA device: 64 MB copied device to device, the best
// of a few after a warm-up, in bytes moved (read + write) per second.
double device_copy_bandwidth(Device d) {
  std::shared_ptr<cuda::DeviceExecutor> ex = cuda_executor(d);
  constexpr size_t kBytes = size_t{64} << 20;
  std::shared_ptr<std::byte[]> from = cuda::device_block(ex, kBytes), to = cuda::device_block(ex, kBytes);
  ex->fill(from.get(), 0, kBytes);
  double best = 0;
  for (int i = 0; i < 4; ++i) {
    auto start = std::chrono::steady_clock::now();
    ex->copy_on_device(to.get(), from.get(), kBytes);
    ex->synchronize();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i > 0 && s > 0) best = std::max(best, 2.0 * kBytes / s);
  }
  return best;
}

}  // namespace

void run_graph(const GraphSource& src, const RunOptions& o, std::ostream& out) {
  const Device device = check_run_device(o.device);
  BRAZE_CHECK(o.repeat >= 1, "run: --repeat must be at least 1, got ", o.repeat);
  RunInputs inputs = choose_inputs(src, o.npy_inputs, o.seed);
  Schedule s = make_schedule(src.graph);
  std::vector<Array> placed;  // the inputs on the device, copied before any timing
  for (const Array& a : inputs.arrays) placed.push_back(copy_to(a, device));
  using Clock = std::chrono::steady_clock;
  auto ns_since = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
  };

  // The first run generates the code; the timed runs after it find it cached.
  std::vector<int64_t> step_ns;
  Clock::time_point start = Clock::now();
  std::vector<Array> got = run_on(s, device, placed, &step_ns);
  int64_t first_ns = ns_since(start);
  std::vector<std::vector<int64_t>> per_step(s.steps.size());
  std::vector<int64_t> whole;
  for (int r = 0; r < o.repeat; ++r) {
    start = Clock::now();
    got = run_on(s, device, placed, &step_ns);
    whole.push_back(ns_since(start));
    for (size_t k = 0; k < step_ns.size(); ++k) per_step[k].push_back(step_ns[k]);
  }

  for (Array& a : got) a = to_host(a);
  std::vector<Array> want = reference::evaluate(src.graph, inputs.arrays, src.graph.outputs);
  double max_error = 0;
  std::string failure;
  for (size_t k = 0; k < want.size() && failure.empty(); ++k)
    if (std::string m = mismatch(got.at(k), want[k], max_error); !m.empty())
      failure = "output " + std::to_string(k) + " (" + node_name(src.graph, src.graph.outputs[k]) + ") " + m;

  nlohmann::json steps = nlohmann::json::array();
  for (size_t k = 0; k < s.steps.size(); ++k) {
    int64_t t = median(per_step[k]), b = bytes_moved(s, s.steps[k]);
    steps.push_back({{"step", k}, {"what", step_name(s, s.steps[k])}, {"ns", t}, {"bytes", b},
                     {"gb_per_s", t > 0 ? static_cast<double>(b) / static_cast<double>(t) : 0.0}});
  }
  // The roofline ratio of each step against a copy measured just now
  // (shared/bench/WORKLOADS.md): the machines are shared, times alone mean
  // little.
  const double copy_bytes_per_ns = (device.is_cpu() ? copy_bandwidth() : device_copy_bandwidth(device)) / 1e9;
  for (nlohmann::json& st : steps) {
    int64_t t = st["ns"].get<int64_t>();
    st["roofline"] = t > 0 ? static_cast<double>(st["bytes"].get<int64_t>()) / copy_bytes_per_ns / t : 0.0;
  }
  jit::Isa isa = Runtime::get().cpu_isa();
  if (o.format == "json") {
    out << nlohmann::json{{"device", device.str()},  {"isa", name(isa)},
                          {"threads", jit::ThreadPool::get().size()},
                          {"inputs", inputs.origin}, {"repeat", o.repeat},
                          {"copy_gb_per_s", copy_bytes_per_ns},
                          {"steps", steps},          {"whole_ns", median(whole)},
                          {"first_ns", first_ns},    {"matches_reference", failure.empty()},
                          {"max_abs_error", max_error}}
               .dump(1)
        << "\n";
  } else {
    if (device.is_cpu())
      out << s.steps.size() << " step(s) on the CPU (" << name(isa) << ", " << jit::ThreadPool::get().size()
          << " thread(s))";
    else
      out << s.steps.size() << " step(s) on " << device.str() << " (" << cuda_executor(device)->describe() << ")";
    out << "; inputs " << inputs.origin << "; times are medians of " << o.repeat << " run(s); copy "
        << std::fixed << std::setprecision(1) << copy_bytes_per_ns << " GB/s (roofline 1.00 = that)\n";
    for (const nlohmann::json& st : steps)
      out << "  step " << st["step"].get<size_t>() << ": " << std::setw(12) << ms(st["ns"].get<int64_t>()) << "  "
          << std::setw(10) << std::fixed << std::setprecision(1) << st["bytes"].get<int64_t>() / 1e6 << " MB  "
          << std::setw(7) << st["gb_per_s"].get<double>() << " GB/s  roofline " << std::setprecision(2)
          << st["roofline"].get<double>() << "  " << st["what"].get<std::string>() << "\n";
    out << "whole run: " << ms(median(whole)) << " (first run " << ms(first_ns) << ", with code generation)\n";
    if (failure.empty())
      out << "check: " << want.size() << " output(s) match the reference interpreter (max abs error "
          << std::setprecision(3) << std::scientific << max_error << ")\n";
  }
  BRAZE_CHECK(failure.empty(), "run: ", failure);
}

}  // namespace braze::cli
