// Argument parsing (CLI11) and error reporting for every subcommand.
#include "tools/cli.h"

#include <CLI/CLI.hpp>

#include <ostream>
#include <stdexcept>
#include <vector>

#include "graph/check.h"
#include "tools/commands.h"

namespace braze::cli {

namespace {

// A reason is printed on one line, whatever the exception's text holds, so
// scripts can show it as it is.
std::string one_line(std::string s) {
  for (size_t i = s.find('\n'); i != std::string::npos; i = s.find('\n', i)) s.replace(i, 1, "; ");
  while (!s.empty() && (s.back() == ' ' || s.back() == ';')) s.pop_back();
  return s;
}

void add_source(CLI::App* cmd, SourceOptions& src) {
  cmd->add_option("FILE", src.file, "a graph saved with bz.save_graph / save_graph_file");
  cmd->add_option("--expr", src.expr, "an expression instead of FILE, e.g. \"softmax(x, axis=-1)\" (docs/cli.md)");
  cmd->add_option("--input", src.inputs, "declares an input of --expr: NAME:DTYPE[SHAPE], e.g. x:f32[4096,4096]")
      ->allow_extra_args(false);
}

CLI::Option* add_format(CLI::App* cmd, std::string& format, std::vector<std::string> allowed) {
  return cmd->add_option("--format", format, "output format")->check(CLI::IsMember(allowed))->capture_default_str();
}

// `kernels`: each option belongs to one target; one given to the other
// target is an error, not ignored.
void show_any_kernels(const GraphSource& src, const std::string& target, const std::string& isa,
                      const std::string& emit, const std::string& arch, const std::string& format, std::ostream& out) {
  if (target == "cpu") {
    BRAZE_CHECK(emit.empty() && arch.empty(), "kernels: --emit and --arch apply to --target cuda");
    show_kernels(src, isa, format, out);
    return;
  }
  BRAZE_CHECK(isa.empty(), "kernels: --isa applies to --target cpu");
#if BRAZE_HAVE_CUDA_BACKEND
  show_cuda_kernels(src, emit.empty() ? "cuda" : emit, arch, format, out);
#else
  BRAZE_CHECK(false, "kernels: this braze was built without the CUDA toolkit's headers (cuda.h, nvrtc.h), so it has "
              "no CUDA backend; rebuild with CUDA_HOME set");
#endif
}

}  // namespace

int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  CLI::App app("braze: see what braze fuses and generates for a graph, and run it", "braze");
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) { return "braze: " + one_line(e.what()) + "\n"; });

  SourceOptions src;
  std::string format = "text", isa, target = "cpu", emit, arch;

  CLI::App* graph = app.add_subcommand("graph", "the graph: nodes, shapes, dtypes");
  add_source(graph, src);
  add_format(graph, format, {"text", "json", "dot"});

  CLI::App* fuse = app.add_subcommand("fuse", "the fused groups, and for every edge not fused, why");
  add_source(fuse, src);
  add_format(fuse, format, {"text", "json"});

  CLI::App* kernels = app.add_subcommand("kernels", "per fused group: its canonical text and generated code");
  add_source(kernels, src);
  add_format(kernels, format, {"text", "json"});
  kernels->add_option("--target", target, "the backend whose code to show")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  kernels->add_option("--isa", isa, "cpu: x86-64 vector ISA (default: the best this CPU has, or BRAZE_CPU_ISA)")
      ->check(CLI::IsMember({"avx2", "avx512"}));
  kernels
      ->add_option("--emit", emit,
                   "cuda: what to show: cuda (the source, default), ptx, cubin (size, registers, shared memory), "
                   "sass (needs the toolkit's nvdisasm or cuobjdump)")
      ->check(CLI::IsMember({"cuda", "ptx", "cubin", "sass"}));
  kernels->add_option("--arch", arch,
                      "cuda: the GPU architecture for ptx, cubin and sass (sm_80, sm_90, ...; default: the GPU's, "
                      "else sm_90)");

  RunOptions run_options;
  CLI::App* run = app.add_subcommand("run", "realize on a device, check against the reference interpreter, time it");
  add_source(run, src);
  add_format(run, run_options.format, {"text", "json"});
  run->add_option("--inputs", run_options.npy_inputs,
                  "one .npy file per graph input, in input order (default: data saved in FILE, else random)")
      ->delimiter(',');
  run->add_option("--device", run_options.device, "where to realize: cpu, cuda, cuda:N")->capture_default_str();
  run->add_option("--seed", run_options.seed, "seed of the random inputs")->capture_default_str();
  run->add_option("--repeat", run_options.repeat, "timed runs after the first")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  PlanOptions plan_options;
  CLI::App* plan = app.add_subcommand("plan", "the memory plan: each buffer's live steps, bytes and arena offset");
  add_source(plan, src);
  add_format(plan, plan_options.format, {"text", "json"});
  plan->add_option("--alignment", plan_options.alignment, "bytes every offset is a multiple of (64 CPU, 256 GPU)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  plan->add_option("--strategy", plan_options.strategy, "placement (memplan/README.md)")
      ->check(CLI::IsMember({"greedy", "heap"}))
      ->capture_default_str();

  CLI::App* doctor_cmd = app.add_subcommand("doctor", "what this machine offers braze: CPU, CUDA libraries, caches");
  add_format(doctor_cmd, format, {"text", "json"});

  CLI::App* cache = app.add_subcommand("cache", "the kernel caches: where, how big, healthy; `cache clear` empties");
  add_format(cache, format, {"text", "json"});
  cache->require_subcommand(0, 1);
  CLI::App* cache_clear = cache->add_subcommand("clear", "remove braze's entries from the disk cache");
  add_format(cache_clear, format, {"text", "json"});

  // CLI11 would call an unknown first word a missing subcommand; name it.
  std::string known;
  for (const CLI::App* sub : app.get_subcommands({})) known += (known.empty() ? "" : ", ") + sub->get_name();
  if (!args.empty() && !args[0].starts_with("-") && (", " + known + ", ").find(", " + args[0] + ", ") == std::string::npos) {
    err << "braze: unknown subcommand '" << args[0] << "' (" << known << ")\n";
    return 2;
  }
  std::vector<const char*> argv = {"braze"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e, out, err);
    return code == 0 ? 0 : 2;
  }

  try {
    if (graph->parsed()) show_graph(load_source(src), format, out);
    else if (fuse->parsed()) show_fusion(load_source(src), format, out);
    else if (kernels->parsed()) show_any_kernels(load_source(src), target, isa, emit, arch, format, out);
    else if (run->parsed()) run_graph(load_source(src), run_options, out);
    else if (plan->parsed()) show_plan(load_source(src), plan_options, out);
    else if (doctor_cmd->parsed()) doctor(format, out);
    else if (cache_clear->parsed()) clear_cache(format, out);
    else if (cache->parsed()) show_cache(format, out);
    return 0;
  } catch (const std::exception& e) {
    err << "braze: " << one_line(e.what()) << "\n";
    return 1;
  }
}

}  // namespace braze::cli
