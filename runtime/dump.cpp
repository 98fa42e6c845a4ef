#include "runtime/dump.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <system_error>

#include <xxhash.h>

#include "graph/check.h"
#include "graph/serialize.h"
#include "jit_cpu/disassemble.h"
#include "runtime/dump_cuda.h"

namespace braze {

namespace {

std::string trim(std::string_view s) {
  const char* space = " \t\n";
  size_t b = s.find_first_not_of(space);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(space) - b + 1));
}

std::string runs_on_interpreter(const jit::Lookup& found, jit::Isa isa) {
  return "no " + std::string(name(isa)) + " code: this kernel runs on the spec interpreter because " + found.why;
}

std::string asm_file_name(const KernelKey& key, jit::Isa isa) { return key.hex() + "." + std::string(name(isa)) + ".s"; }

std::string ptx_file_name(const KernelKey& key, int arch) { return key.hex() + ".sm_" + std::to_string(arch) + ".ptx"; }

// A CUDA text, or a comment saying why there is none: a dump never fails
// the realize that wrote it.
template <class Make>
std::string cuda_text_or_why(const char* what, Make make) {
  try {
    return make();
  } catch (const std::exception& e) {
    std::string why = e.what();
    for (char& c : why)
      if (c == '\n') c = ' ';
    return std::string("// no ") + what + ": " + why + "\n";
  }
}

}  // namespace

DumpOptions parse_dump_options(const char* what, const char* dir, std::vector<std::string>& unknown) {
  DumpOptions o;
  if (dir && *dir) o.dir = dir;
  std::istringstream words(what ? what : "");
  for (std::string w; std::getline(words, w, ',');) {
    w = trim(w);
    if (w.empty()) continue;
    if (w == "fused") o.fused = true;
    else if (w == "asm") o.assembly = true;
    else if (w == "graph") o.graph = true;
    else if (w == "plan") o.plan = true;
    else if (w == "cuda") o.cuda = true;
    else if (w == "ptx") o.ptx = true;
    else unknown.push_back(w);
  }
  return o;
}

DumpOptions dump_options_from_env() {
  std::vector<std::string> unknown;
  DumpOptions o = parse_dump_options(std::getenv("BRAZE_DUMP"), std::getenv("BRAZE_DUMP_DIR"), unknown);
  BRAZE_CHECK(unknown.empty(), "BRAZE_DUMP: '", unknown.empty() ? "" : unknown.front(),
              "' is not something braze can dump; expected a comma-separated list of: ", kDumpWords);
  o.ptx_arch = check_cuda_dumps(o.cuda, o.ptx);
  return o;
}

std::string fused_text(const Schedule& s, const Step& step, const jit::Lookup& found, jit::Isa isa) {
  std::string text = explain_kernel(s, step);
  if (found.kernel)
    text += "runs as generated " + std::string(name(isa)) + " code (" + asm_file_name(kernel_key(step.spec), isa) +
            ")\n";
  else
    text += runs_on_interpreter(found, isa) + "\n";
  return text;
}

std::string asm_text(const KernelKey& key, const jit::Lookup& found, jit::Isa isa) {
  std::string head = "# braze kernel " + key.hex() + ", x86-64 " + std::string(name(isa)) + "\n";
  if (!found.kernel) return head + "# " + runs_on_interpreter(found, isa) + "\n";
  const jit::CompiledKernel& k = *found.kernel;
  const uint8_t* code = k.code();
  const size_t text = k.text_size(), pool = k.code_size() - k.text_size();
  head += "# " + std::to_string(text) + " bytes of instructions, " + std::to_string(pool) + " bytes of constants\n";
  std::string out;
  if (std::string tool = jit::disassembler(); !tool.empty()) {
    out = head + "# disassembled by " + tool + ", Intel syntax, offsets from the entry point\n" +
          jit::disassemble(code, text);
  } else {
    out = head + jit::disassemble(code, text) + "# the instructions' bytes\n" + jit::dump_words(code, text, 0);
  }
  if (pool > 0) out += "# constant pool\n" + jit::dump_words(code + text, pool, text);
  return out;
}

std::string plan_text(const Schedule& s, const memplan::Liveness& l, const memplan::MemoryPlan& p) {
  std::ostringstream out;
  out << s.steps.size() << " step(s):\n";
  for (size_t k = 0; k < s.steps.size(); ++k) {
    out << "  step " << k << ":";
    for (NodeId o : s.steps[k].group.outputs) out << " " << info(s.graph[o].op).name << "#" << o;
    out << "\n";
  }
  out << memplan::to_string(l, p);
  return out.str();
}

void Dumper::configure(DumpOptions options) {
  std::lock_guard<std::mutex> lock(mu_);
  enabled_.store(options.any(), std::memory_order_relaxed);
  options_ = std::move(options);
}

DumpOptions Dumper::options() {
  std::lock_guard<std::mutex> lock(mu_);
  return options_;
}

void Dumper::kernel(const Schedule& s, const Step& step, const jit::Lookup& found, jit::Isa isa) {
  if (!enabled()) return;
  KernelKey key = kernel_key(step.spec);
  // The texts are made outside the lock (disassembly is the slow part);
  // the lock keeps configure() and a failed write consistent.
  DumpOptions o = options();
  std::string fused = o.fused ? fused_text(s, step, found, isa) : "";
  std::string assembly = o.assembly ? asm_text(key, found, isa) : "";
  CudaTexts cuda = cuda_texts(o, step);
  std::lock_guard<std::mutex> lock(mu_);
  if (!enabled()) return;  // a write failed meanwhile
  if (o.fused && !write(o.dir / (key.hex() + ".fused.txt"), fused)) return;
  if (o.assembly && !write(o.dir / asm_file_name(key, isa), assembly)) return;
  write_cuda_texts(o, key, cuda);
}

void Dumper::device_kernel(const Step& step) {
  if (!enabled()) return;
  DumpOptions o = options();
  if (!o.cuda && !o.ptx) return;
  CudaTexts cuda = cuda_texts(o, step);
  std::lock_guard<std::mutex> lock(mu_);
  if (enabled()) write_cuda_texts(o, kernel_key(step.spec), cuda);
}

Dumper::CudaTexts Dumper::cuda_texts(const DumpOptions& o, const Step& step) {
  return {o.cuda ? cuda_text_or_why("CUDA source", [&] { return cuda_dump_text(step.spec); }) : "",
          o.ptx ? cuda_text_or_why("PTX", [&] { return ptx_dump_text(step.spec, o.ptx_arch); }) : ""};
}

void Dumper::write_cuda_texts(const DumpOptions& o, const KernelKey& key, const CudaTexts& texts) {
  if (o.cuda && !write(o.dir / (key.hex() + ".cu"), texts.source)) return;
  if (o.ptx) write(o.dir / ptx_file_name(key, o.ptx_arch), texts.ptx);
}

void Dumper::program(const Graph& graph, const Schedule& s, const memplan::Liveness& l,
                     const memplan::MemoryPlan& p) {
  if (!enabled()) return;
  DumpOptions o = options();
  if (!o.graph && !o.plan) return;
  std::string json = graph_to_json(graph, {});
  char name[17];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(XXH3_64bits(json.data(), json.size())));
  std::string plan = o.plan ? plan_text(s, l, p) : "";
  std::lock_guard<std::mutex> lock(mu_);
  if (!enabled()) return;
  if (o.graph && !write(o.dir / (std::string(name) + ".graph.json"), json + "\n")) return;
  if (o.plan) write(o.dir / (std::string(name) + ".plan.txt"), plan);
}

bool Dumper::write(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (out) return true;
  std::cerr << "braze: warning: BRAZE_DUMP cannot write " << path.string()
            << (ec ? " (" + ec.message() + ")" : std::string()) << "; dumping is off from now on\n";
  enabled_.store(false, std::memory_order_relaxed);
  return false;
}

}  // namespace braze
