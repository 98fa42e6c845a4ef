// The `braze` CLI through run_cli(): every subcommand on a good graph, and
// bad input (missing file, malformed JSON, unknown subcommand or option)
// giving one line on stderr and a non-zero exit.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "graph/serialize.h"
#include "jit_cpu/disassemble.h"
#include "jit_cpu/dnn.h"
#include "runtime/braze.h"
#include "runtime/disk_cache.h"
#include "runtime/lower.h"
#include "tests/cli/run_cli.h"

namespace braze {
namespace {

using Result = testing::CliResult;
using testing::cli;
using testing::one_line;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("braze_cli_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Saves the graph computing `t` (with its input data) and returns its path.
  std::string save(const std::string& name, const Tensor& t) {
    Lowered l = lower(std::vector<Tensor>{t});
    std::string path = (dir_ / name).string();
    save_graph_file(path, l.graph, l.inputs);
    return path;
  }
  std::string softmax_file() {
    std::vector<float> v(4 * 37);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7) - 3.0f;
    return save("softmax.json", softmax(from_vector<float>(v, {4, 37}), -1));
  }
  std::filesystem::path dir_;
};

TEST_F(CliTest, GraphListsNodesShapesAndDtypes) {
  Result r = cli({"graph", softmax_file()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(r.out.find("Input#0: float32[4, 37] = input(input 0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Max#"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("float32[4, 1]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(output 0)"), std::string::npos) << r.out;
}

TEST_F(CliTest, GraphJsonLoadsBackAsTheSameGraph) {
  std::string file = softmax_file();
  Result r = cli({"graph", file, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  SavedGraph printed = graph_from_json(r.out);
  SavedGraph saved = load_graph_file(file);
  EXPECT_EQ(printed.graph.nodes(), saved.graph.nodes());
  EXPECT_EQ(printed.graph.outputs, saved.graph.outputs);
}

TEST_F(CliTest, GraphDotHasOneEdgePerInput) {
  std::string file = softmax_file();
  Result r = cli({"graph", file, "--format=dot"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("digraph braze {")) << r.out;
  size_t edges = 0;
  SavedGraph saved = load_graph_file(file);
  for (const Node& n : saved.graph.nodes()) edges += n.inputs.size();
  size_t arrows = 0;
  for (size_t i = r.out.find(" -> "); i != std::string::npos; i = r.out.find(" -> ", i + 1)) ++arrows;
  EXPECT_EQ(arrows, edges) << r.out;
}

TEST_F(CliTest, FuseExplainsSoftmaxAsOneKernel) {
  Result r = cli({"fuse", softmax_file()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 step(s): 1 fused kernel(s), 0 library call(s)"), std::string::npos) << r.out;

  r = cli({"fuse", softmax_file(), "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["steps"].size(), 1u) << r.out;
  EXPECT_EQ(j["steps"][0]["kind"], "kernel");
  EXPECT_EQ(j["steps"][0]["reduce_axes"], std::vector<int64_t>{1});
}

TEST_F(CliTest, FuseSaysWhyAnEdgeWasNotFused) {
  std::vector<float> v(16, 1.0f);
  Tensor a = from_vector<float>(v, {4, 4});
  Result r = cli({"fuse", save("mm.json", exp(matmul(a, a)))});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("library call MatMul#"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not fused:"), std::string::npos) << r.out;
}

TEST_F(CliTest, PlanShowsEachBufferAndTheArenaAgainstItsBounds) {
  // exp -> matmul -> exp -> matmul (exp is no post-op): library calls between kernels, so
  // intermediates live over several steps.
  std::vector<float> v(64, 0.5f);
  Tensor a = from_vector<float>(v, {8, 8});
  Tensor chain = matmul(exp(matmul(exp(a), a)), a);
  std::string file = save("chain.json", chain);
  // Each matmul may have a workspace, alive during its step (Note [Step
  // workspaces]): what oneDNN's kernels for this CPU ask for (AVX2's gemm
  // nothing, AVX-512's brgemm a scratchpad), read from the schedule.
  Schedule s = program_schedule(lower(std::vector<Tensor>{chain}).graph);
  ASSERT_EQ(s.steps.size(), 4u);
  const int64_t workspace = s.steps[1].workspace_bytes;
  ASSERT_EQ(s.steps[3].workspace_bytes, workspace) << "two calls of one shape";
  const size_t workspaces = workspace > 0 ? 2 : 0;
  Result r = cli({"plan", file});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("4 step(s):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::to_string(3 + workspaces) + " scratch buffer(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("256 B  at "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lower bound"), std::string::npos) << r.out;

  r = cli({"plan", file, "--format", "json", "--alignment", "256"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["alignment"], 256);
  EXPECT_EQ(j["steps"], 4);
  ASSERT_EQ(j["buffers"].size(), 3 + workspaces) << r.out;
  size_t values = 0;
  for (const auto& b : j["buffers"]) {
    EXPECT_EQ(b["offset"].get<int64_t>() % 256, 0);
    EXPECT_LE(b["first_step"].get<int64_t>(), b["last_step"].get<int64_t>());
    if (b["workspace"].get<bool>()) {
      EXPECT_EQ(b["bytes"], workspace);
      EXPECT_EQ(b["first_step"], b["last_step"]) << "a workspace lives in its step only";
      continue;
    }
    ++values;
    EXPECT_EQ(b["bytes"], 256);
  }
  EXPECT_EQ(values, 3u) << r.out;
  EXPECT_LE(j["lower_bound_bytes"].get<int64_t>(), j["arena_bytes"].get<int64_t>());
  EXPECT_LE(j["arena_bytes"].get<int64_t>(), j["no_reuse_bytes"].get<int64_t>());
  // Each value dies before the one after the next is born: two slots
  // suffice, and the first matmul's workspace, alive beside both, one more.
  EXPECT_EQ(j["arena_bytes"], 2 * 256 + (workspace + 255) / 256 * 256);

  r = cli({"plan", "--expr", "exp(x) + 1", "--input", "x:f32[4,4]", "--strategy", "heap"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("0 scratch buffer(s)"), std::string::npos) << r.out;  // one kernel: nothing to plan
}

TEST_F(CliTest, KernelsShowTheFusedTextAndTheAssemblyOfEitherIsa) {
  std::string file = softmax_file();
  Schedule s = make_schedule(load_graph_file(file).graph);
  std::string key = kernel_key(s.steps.at(0).spec).hex();
  for (std::string isa : {"avx2", "avx512"}) {
    Result r = cli({"kernels", file, "--target", "cpu", "--isa", isa});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("=== step 0 ==="), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("kernel " + key + " fusing"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("# braze kernel " + key + ", x86-64 " + isa), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("# constant pool"), std::string::npos) << r.out;
    if (!jit::disassembler().empty()) {
      EXPECT_NE(r.out.find(isa == "avx512" ? "zmm" : "ymm"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find(": ret\n"), std::string::npos) << r.out;
    }
  }
  Result j = cli({"kernels", file, "--isa", "avx2", "--format", "json"});
  ASSERT_EQ(j.code, 0) << j.err;
  nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["isa"], "avx2");
  ASSERT_EQ(doc["kernels"].size(), 1u);
  EXPECT_EQ(doc["kernels"][0]["key"], key);
  EXPECT_EQ(doc["kernels"][0]["generated"], true);
}

// A .npy file as numpy.save writes it (format 1.0), for `run --inputs`.
void write_npy(const std::string& path, const std::string& descr, const std::string& shape, const void* data,
               size_t bytes) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f << "\x93NUMPY" << '\x01' << '\x00' << static_cast<char>(header.size() & 0xff)
    << static_cast<char>(header.size() >> 8) << header;
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

TEST_F(CliTest, RunChecksAgainstTheReferenceAndTimesEachStep) {
  std::string file = softmax_file();
  Result r = cli({"run", file, "--repeat", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("inputs saved with the graph"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 0:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("whole run: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" GB/s (roofline 1.00 = that)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  roofline "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check: 1 output(s) match the reference interpreter"), std::string::npos) << r.out;

  // Structure only: random inputs, the same for the same seed.
  Lowered l = lower(std::vector<Tensor>{softmax(from_vector<float>(std::vector<float>(4 * 37), {4, 37}), -1)});
  std::string bare = (dir_ / "bare.json").string();
  save_graph_file(bare, l.graph, {});
  r = cli({"run", bare, "--seed", "7", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["inputs"], "random (seed 7)");
  EXPECT_EQ(j["matches_reference"], true);
  ASSERT_EQ(j["steps"].size(), 1u);
  EXPECT_EQ(j["steps"][0]["bytes"], 2 * 4 * 37 * 4);
  EXPECT_GT(j["steps"][0]["ns"].get<int64_t>(), 0);
  // The roofline ratio is the step's bytes over the copy probe's rate, over its time.
  const double copy = j["copy_gb_per_s"].get<double>();
  ASSERT_GT(copy, 0.0);
  EXPECT_NEAR(j["steps"][0]["roofline"].get<double>(),
              2 * 4 * 37 * 4 / copy / static_cast<double>(j["steps"][0]["ns"].get<int64_t>()), 1e-9);
}

TEST_F(CliTest, RunReadsNpyInputs) {
  std::vector<float> a(4 * 37), b(37);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.01f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 1.0f + static_cast<float>(i);
  std::string file = save("two.json", from_vector<float>(a, {4, 37}) * from_vector<float>(b, {37}));
  std::string pa = (dir_ / "a.npy").string(), pb = (dir_ / "b.npy").string();
  write_npy(pa, "<f4", "(4, 37)", a.data(), a.size() * 4);
  write_npy(pb, "<f4", "(37,)", b.data(), b.size() * 4);
  Result r = cli({"run", file, "--inputs", pa + "," + pb});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("inputs .npy files"), std::string::npos) << r.out;

  // Wrong shape, wrong count, not .npy, unsupported dtype: one line each.
  write_npy((dir_ / "d.npy").string(), "<f8", "(37,)", std::vector<double>(37).data(), 37 * 8);
  write_npy((dir_ / "c.npy").string(), "<c8", "(37,)", std::vector<double>(37).data(), 37 * 8);
  std::ofstream(dir_ / "junk.npy") << "hello";
  for (auto [inputs, says] : std::vector<std::pair<std::string, std::string>>{
           {pb + "," + pa, "is float32[37] but input 0 of the graph is float32[4, 37]"},
           {pa, "the graph has 2 input(s) but 1 .npy file(s) were given"},
           {pa + "," + (dir_ / "junk.npy").string(), "not a .npy file"},
           {pa + "," + (dir_ / "d.npy").string(), "is float64[37] but input 1"},
           {pa + "," + (dir_ / "c.npy").string(), "dtype '<c8' is not supported"},
           {pa + "," + (dir_ / "none.npy").string(), "cannot open"}}) {
    r = cli({"run", file, "--inputs", inputs});
    EXPECT_EQ(r.code, 1) << says;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
}

TEST_F(CliTest, DoctorReportsCpuCudaLibrariesAndCaches) {
  std::filesystem::create_directories(dir_ / "cache" / "sub");
  std::ofstream(dir_ / "cache" / "sub" / "entry") << "12345";  // not braze's: not counted
  DiskCache disk(dir_ / "cache");
  ASSERT_TRUE(disk.store("kernel", std::vector<std::byte>(5))) << disk.disabled_reason();
  const auto entry_bytes = static_cast<int64_t>(std::filesystem::file_size(disk.entry_path("kernel")));
  ::setenv("BRAZE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  Result r = cli({"doctor", "--format", "json"});
  Result text = cli({"doctor"});
  ::unsetenv("BRAZE_CACHE_DIR");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cpu"]["avx2"], jit::cpu_supports(jit::Isa::Avx2));
  EXPECT_EQ(j["cpu"]["avx512"], jit::cpu_supports(jit::Isa::Avx512));
  EXPECT_EQ(j["cpu"]["isa"], std::string(jit::name(jit::host_isa())));
  EXPECT_GE(j["cpu"]["threads"].get<int>(), 1);
  EXPECT_EQ(j["library_calls"]["onednn"], dnn::available());
  EXPECT_EQ(j["library_calls"]["bfloat16"], dnn::runs_bfloat16());
  if (dnn::available()) {
    EXPECT_EQ(j["library_calls"]["isa"], dnn::isa());
  }
  ASSERT_EQ(j["cuda"].size(), j["cuda_backend"].get<bool>() ? 4u : 3u);  // libcuda, libnvrtc, cuBLAS(Lt), (cuDNN)
  for (const nlohmann::json& lib : j["cuda"]) EXPECT_EQ(lib["found"].get<bool>(), lib.contains("path")) << lib;
  EXPECT_EQ(j["cache"]["exists"], true);
  EXPECT_EQ(j["cache"]["entries"], 1);
  EXPECT_EQ(j["cache"]["bytes"], entry_bytes);
  EXPECT_TRUE(j["cache"]["not_used_because"].is_null()) << j["cache"];
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("cpu: generated code targets " + std::string(jit::name(jit::host_isa()))),
            std::string::npos) << text.out;
  EXPECT_NE(text.out.find("libnvrtc: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1 entry, " + std::to_string(entry_bytes) + " bytes"), std::string::npos) << text.out;
}

TEST_F(CliTest, HelpForEverySubcommandExitsZero) {
  Result top = cli({"--help"});
  EXPECT_EQ(top.code, 0) << top.err;
  for (std::string sub : {"graph", "fuse", "kernels", "run", "plan", "doctor"}) EXPECT_NE(top.out.find("  " + sub + " "), std::string::npos) << top.out;
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"graph", "--help"}, {"fuse", "-h"}, {"kernels", "--help"}, {"run", "--help"}, {"plan", "--help"},
           {"doctor", "--help"}}) {
    Result r = cli(args);
    EXPECT_EQ(r.code, 0) << args[0] << r.err;
    EXPECT_NE(r.out.find("--format"), std::string::npos) << args[0] << ": " << r.out;
  }
  EXPECT_NE(cli({"kernels", "--help"}).out.find("--isa"), std::string::npos);
}

TEST_F(CliTest, BadInputIsOneLineAndNonZero) {
  std::string garbage = (dir_ / "garbage.json").string();
  std::ofstream(garbage) << "{\"format\": \"braze-graph\", ";
  std::string not_graph = (dir_ / "list.json").string();
  std::ofstream(not_graph) << "[1, 2, 3]";
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string says;
  };
  std::vector<Case> cases = {
      {{"fuse", (dir_ / "missing.json").string()}, 1, "no such file"},
      {{"graph", garbage}, 1, "not valid JSON"},
      {{"kernels", not_graph}, 1, "not a braze graph"},
      {{"fuse"}, 1, "no graph"},
      {{"frobnicate", softmax_file()}, 2, "frobnicate"},
      {{"fuse", softmax_file(), "--bogus"}, 2, "--bogus"},
      {{"graph", softmax_file(), "--format", "yaml"}, 2, "yaml"},
      {{"kernels", softmax_file(), "--isa", "sse2"}, 2, "sse2"},
      {{"kernels", softmax_file(), "--target", "tpu"}, 2, "tpu"},
      {{}, 2, "subcommand"},
      {{"doctor", "--format", "dot"}, 2, "dot"},
      {{"run", softmax_file(), "--repeat", "0"}, 2, "--repeat"},
      {{"plan", (dir_ / "missing.json").string()}, 1, "no such file"},
      {{"plan", softmax_file(), "--format", "dot"}, 2, "dot"},
      {{"plan", softmax_file(), "--strategy", "best"}, 2, "best"},
      {{"plan", softmax_file(), "--alignment", "0"}, 2, "--alignment"},
      {{"plan", softmax_file(), "--alignment", "48"}, 1, "not a power of two"},
  };
  for (const Case& c : cases) {
    Result r = cli(c.args);
    std::string what = c.args.empty() ? "(no args)" : c.args[0] + " " + c.says;
    EXPECT_EQ(r.code, c.code) << what << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << what << ": " << r.out;
    EXPECT_TRUE(one_line(r.err)) << what << ": '" << r.err << "'";
    EXPECT_NE(r.err.find(c.says), std::string::npos) << what << ": " << r.err;
    EXPECT_TRUE(r.err.starts_with("braze: ")) << r.err;
  }
}

}  // namespace
}  // namespace braze
