// BRAZE_DUMP: the disassembler on generated kernels and on odd bytes, the
// parsing of the variables, the files a Dumper writes, and what a realize
// dumps through the runtime context (Note [Dump files]).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "graph/serialize.h"
#include "jit_cpu/disassemble.h"
#include "jit_cpu/host_call.h"
#include "memplan/liveness.h"
#include "runtime/braze.h"
#include "runtime/context.h"
#include "runtime/dump.h"
#include "runtime/lower.h"
#include "runtime/program.h"

namespace braze {
namespace {

std::vector<jit::Isa> isas() {
  std::vector<jit::Isa> out;
  for (jit::Isa i : {jit::Isa::Avx512, jit::Isa::Avx2})
    if (jit::cpu_supports(i)) out.push_back(i);
  return out;
}

Schedule schedule_of(const Tensor& t) { return make_schedule(lower(std::vector<Tensor>{t}).graph); }

Tensor softmax_input(int64_t rows = 3, int64_t cols = 37) {
  std::vector<float> v(rows * cols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 11) - 5.0f;
  return softmax(from_vector<float>(v, {rows, cols}));
}

bool have_disassembler() { return !jit::disassembler().empty(); }

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Tensor ramp(int64_t rows, int64_t cols) {
  std::vector<float> v(rows * cols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 13) * 0.25f - 1.0f;
  return from_vector<float>(v, {rows, cols});
}

// Every shape of code the generator emits decodes completely, and the
// instructions end with the return and the nops that align the pool.
TEST(Disassemble, GeneratedKernelsReadAsInstructions) {
  if (!have_disassembler()) {
    GTEST_SKIP() << "built without Zydis";
  }
  Tensor a = ramp(130, 70);
  std::vector<std::pair<std::string, Tensor>> programs = {
      {"softmax", softmax_input()},
      {"tiled transpose", tanh(transpose(a)) + ramp(70, 130)},  // Note [Tiled transposes]
      {"column sum", sum(a, Axes{{0}})},                       // Note [Column reductions]
      {"half input", exp(astype(a, DType::Float16)) * 2.0f},
      // Note [Wide kernels]: int64 lanes (AVX2's sequences, idiv lane by lane).
      {"int64", argmax(astype(a, DType::Int64) * 3 % 7 - astype(transpose(ramp(70, 130)), DType::Int64), -1)},
  };
  for (const auto& [what, t] : programs) {
    Schedule s = schedule_of(t);
    ASSERT_EQ(s.steps.size(), 1u) << what;
    for (jit::Isa isa : isas()) {
      std::string why;
      std::unique_ptr<jit::CompiledKernel> k = jit::compile(s.steps[0].spec, isa, why);
      ASSERT_TRUE(k) << what << ": " << why;
      ASSERT_GT(k->text_size(), 0u);
      ASSERT_LT(k->text_size(), k->code_size()) << what << ": every kernel has constants";
      EXPECT_EQ(k->text_size() % 64, 0u) << "the pool starts on a cache line";
      std::string text = jit::disassemble(k->code(), k->text_size());
      EXPECT_NE(text.find(isa == jit::Isa::Avx512 ? "zmm" : "ymm"), std::string::npos) << what << text;
      EXPECT_EQ(text.find(".byte"), std::string::npos) << what << ": Zydis failed to decode some of it:\n" << text;
      std::istringstream lines(text);
      bool returned = false;
      for (std::string line; std::getline(lines, line);) {
        ASSERT_TRUE(line.starts_with("  0x")) << line;
        if (returned) {
          EXPECT_NE(line.find(": nop"), std::string::npos) << what << ": after ret: " << line;
        }
        returned = returned || line.ends_with(": ret");
      }
      EXPECT_TRUE(returned) << what << text;
    }
  }
}

TEST(Disassemble, UndecodableBytesAreShownAndSkipped) {
  if (!have_disassembler()) {
    GTEST_SKIP() << "built without Zydis";
  }
  const uint8_t code[] = {0x06, 0x90, 0xc3};  // 0x06 (push es) does not exist in 64-bit mode
  EXPECT_EQ(jit::disassemble(code, sizeof code), "  0x0000: .byte 0x06\n  0x0001: nop\n  0x0002: ret\n");
  EXPECT_EQ(jit::disassemble(code, 0), "");
}

// Capstone 4.0 read the first two as "vpmovm2d zmm2, k5" and ".byte 0x62"
// plus garbage. The text is objdump -M intel's (its spelling of compare
// predicates and conditions), in our layout.
TEST(Disassemble, Avx512AndAvx2EncodingsReadAsObjdumpReadsThem) {
  if (!have_disassembler()) {
    GTEST_SKIP() << "built without Zydis";
  }
  const uint8_t code[] = {
      0x62, 0xf2, 0x7e, 0x48, 0x38, 0xea,                          // mask to vector
      0x62, 0xf2, 0x7e, 0x48, 0x39, 0xd5,                          // vector to mask
      0x62, 0xb1, 0x7c, 0xc9, 0x10, 0x44, 0x80, 0x01,              // masked, zeroing load
      0x62, 0xf2, 0x7d, 0x49, 0x92, 0x0c, 0x90,                    // AVX-512 gather
      0xc4, 0xe2, 0x65, 0x92, 0x0c, 0x90,                          // AVX2 gather
      0x62, 0xf2, 0x7d, 0x48, 0x13, 0x06,                          // float16 to float32, zmm
      0xc4, 0xe2, 0x7d, 0x13, 0xc1,                                // float16 to float32, ymm
      0x62, 0xf1, 0x74, 0x58, 0x58, 0x05, 0x00, 0x01, 0x00, 0x00,  // a pool constant, broadcast
      0x62, 0xf1, 0x7c, 0x4a, 0xc2, 0xc9, 0x01,                    // vcmpps, predicate 1
      0x62, 0xf3, 0x7d, 0x48, 0x1f, 0xc9, 0x05,                    // vpcmpd, predicate 5
      0x7e, 0xba,                                                  // back to the start
      0x7f, 0x03,                                                  // jnle, forward to the ret
      0x0f, 0x1f, 0x00,                                            // padding
      0xc3,
  };
  EXPECT_EQ(jit::disassemble(code, sizeof code),
            "  0x0000: vpmovm2d zmm5, k2\n"
            "  0x0006: vpmovd2m k2, zmm5\n"
            "  0x000c: vmovups zmm0 {k1} {z}, zmmword ptr [rax+r8*4+0x40]\n"
            "  0x0014: vgatherdps zmm1 {k1}, dword ptr [rax+zmm2*4]\n"
            "  0x001b: vgatherdps ymm1, dword ptr [rax+ymm2*4], ymm3\n"
            "  0x0021: vcvtph2ps zmm0, ymmword ptr [rsi]\n"
            "  0x0027: vcvtph2ps ymm0, xmm1\n"
            "  0x002c: vaddps zmm0, zmm1, dword ptr [rip+0x100] {1to16}  # 0x0136\n"
            "  0x0036: vcmpltps k1 {k2}, zmm0, zmm1\n"
            "  0x003d: vpcmpnltd k1, zmm0, zmm1\n"
            "  0x0044: jle 0x0000\n"
            "  0x0046: jg 0x004b\n"
            "  0x0048: nop dword ptr [rax]\n"
            "  0x004b: ret\n");
}

void a_host_function(double*, const double*, int64_t) {}

// Note [Host calls]: the address in the code differs from run to run, the
// name in the text does not.
TEST(Disassemble, HostFunctionAddressesAreNamed) {
  if (!have_disassembler()) {
    GTEST_SKIP() << "built without Zydis";
  }
  jit::name_host_function(a_host_function, "a_host_function");
  uint64_t address = reinterpret_cast<uint64_t>(&a_host_function);
  uint8_t code[] = {0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0x48, 0xb9, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
  std::memcpy(code + 2, &address, sizeof address);
  EXPECT_EQ(jit::disassemble(code, sizeof code),
            "  0x0000: movabs rax, a_host_function\n"
            "  0x000a: movabs rcx, 0x1122334455667788\n");
}

TEST(Disassemble, WordsFourPerLineThenBytes) {
  const uint8_t data[] = {0, 0, 0x80, 0x3f, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xaa};
  EXPECT_EQ(jit::dump_words(data, sizeof data, 0x40),
            "  0x0040: .long 0x3f800000, 0x00000001, 0x00000002, 0x00000003\n"
            "  0x0050: .long 0x00000004; .byte 0xaa\n");
}

TEST(DumpOptions, CommaListAndDirectory) {
  std::vector<std::string> unknown;
  DumpOptions o = parse_dump_options(" fused, asm ,,bogus", nullptr, unknown);
  EXPECT_TRUE(o.fused);
  EXPECT_TRUE(o.assembly);
  EXPECT_EQ(o.dir, std::filesystem::path("braze_dump"));
  EXPECT_EQ(unknown, std::vector<std::string>{"bogus"});

  unknown.clear();
  o = parse_dump_options("plan,graph", nullptr, unknown);
  EXPECT_TRUE(o.graph && o.plan && o.any());
  EXPECT_FALSE(o.fused || o.assembly);
  EXPECT_TRUE(unknown.empty());

  o = parse_dump_options(nullptr, "/tmp/x", unknown);
  EXPECT_FALSE(o.any());
  EXPECT_EQ(o.dir, std::filesystem::path("/tmp/x"));
  EXPECT_TRUE(unknown.empty());
}

class DumperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("braze_dump_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(DumperTest, WritesFusedAndAsmFiles) {
  Dumper d(DumpOptions{.fused = true, .assembly = true, .dir = dir_ / "nested"});
  Schedule s = schedule_of(softmax_input());
  const Step& step = s.steps[0];
  jit::Isa isa = isas().at(0);
  jit::Lookup found = jit::KernelCache::get().find_or_compile(step.spec, isa);
  ASSERT_TRUE(found.kernel) << found.why;
  d.kernel(s, step, found, isa);

  std::string key = kernel_key(step.spec).hex();
  std::string f = read(dir_ / "nested" / (key + ".fused.txt"));
  std::string a = read(dir_ / "nested" / (key + "." + std::string(name(isa)) + ".s"));
  std::istringstream spec_text(canonical_text(step.spec));
  for (std::string line; std::getline(spec_text, line);)
    EXPECT_NE(f.find("\n  " + line), std::string::npos) << "a line of the spec's canonical text is missing:\n" << f;
  EXPECT_NE(f.find("kernel " + key + " fusing"), std::string::npos) << f;
  EXPECT_NE(f.find("runs as generated"), std::string::npos) << f;
  EXPECT_TRUE(a.starts_with("# braze kernel " + key + ", x86-64 " + std::string(name(isa)))) << a;
  EXPECT_NE(a.find("# constant pool\n"), std::string::npos) << a;
  if (have_disassembler()) {
    EXPECT_NE(a.find(": ret\n"), std::string::npos) << a;
    // The pool is data words, never decoded as instructions: after the
    // marker every line is a .long line.
    std::istringstream pool(a.substr(a.find("# constant pool\n") + 16));
    for (std::string line; std::getline(pool, line);) EXPECT_NE(line.find(": .long 0x"), std::string::npos) << line;
  } else {
    EXPECT_NE(a.find("built without Zydis"), std::string::npos) << a;
  }
}

TEST_F(DumperTest, InterpretedKernelGetsANoteInsteadOfAsm) {
  Dumper d(DumpOptions{.fused = false, .assembly = true, .dir = dir_});
  // Strides past 32 bits are not generated (jit_cpu/README.md): an arange,
  // which takes no memory, read 2^32 apart.
  const int64_t far = int64_t{1} << 32;
  Tensor t = index(arange(Scalar(int64_t{0}), Scalar(2 * far), Scalar(int64_t{1}), DType::Float64),
                   std::vector<Index>{Slice{std::nullopt, std::nullopt, far}}) * 3.0;
  Schedule s = schedule_of(t);
  ASSERT_EQ(s.steps.size(), 1u);
  jit::Isa isa = isas().at(0);
  jit::Lookup found = jit::KernelCache::get().find_or_compile(s.steps[0].spec, isa);
  ASSERT_FALSE(found.kernel) << "strides past 32 bits are generated now: pick another unsupported spec for this test";
  d.kernel(s, s.steps[0], found, isa);
  std::string key = kernel_key(s.steps[0].spec).hex();
  std::string a = read(dir_ / (key + "." + std::string(name(isa)) + ".s"));
  EXPECT_NE(a.find("runs on the spec interpreter because " + found.why), std::string::npos) << a;
  EXPECT_FALSE(std::filesystem::exists(dir_ / (key + ".fused.txt")));  // fused was not asked for
}

TEST_F(DumperTest, UnwritableDirectoryWarnsAndDoesNotThrow) {
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";  // a file where the directory should be
  Dumper d(DumpOptions{.fused = true, .assembly = false, .dir = dir_ / "file"});
  Schedule s = schedule_of(softmax_input());
  jit::Lookup found = jit::KernelCache::get().find_or_compile(s.steps[0].spec, isas().at(0));
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(d.kernel(s, s.steps[0], found, isas().at(0)));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("BRAZE_DUMP cannot write"), std::string::npos) << err;
}

// Through realize(): the runtime context's dumper, set as BRAZE_DUMP would.
class RealizeDumpTest : public DumperTest {
 protected:
  void SetUp() override {
    DumperTest::SetUp();
    saved_ = Runtime::get().dumper().options();
    // So each case compiles (dumps happen on compiles, and a cached program
    // replays without looking its kernels up).
    jit::KernelCache::get().clear();
    Runtime::get().programs().clear();
  }
  void TearDown() override {
    Runtime::get().dumper().configure(saved_);
    DumperTest::TearDown();
  }
  static void dump_to(const std::filesystem::path& dir) {
    Runtime::get().dumper().configure(DumpOptions{.fused = true, .assembly = true, .dir = dir});
  }
  static std::map<std::string, std::string> files_in(const std::filesystem::path& dir) {
    std::map<std::string, std::string> out;
    if (std::filesystem::exists(dir))
      for (const auto& e : std::filesystem::directory_iterator(dir)) out[e.path().filename().string()] = read(e.path());
    return out;
  }
  DumpOptions saved_;
};

TEST_F(RealizeDumpTest, SoftmaxDumpsItsKernelOnceWithOpsAndAssembly) {
  dump_to(dir_);
  Tensor y = softmax_input();
  realize({y});
  std::map<std::string, std::string> files = files_in(dir_);
  ASSERT_EQ(files.size(), 2u) << "one kernel: a .fused.txt and a .s";
  std::string fused, assembly;
  for (const auto& [file, text] : files) (file.ends_with(".fused.txt") ? fused : assembly) = text;
  for (const char* op : {"Max#", "Exp#", "Sum#", "Div#"}) EXPECT_NE(fused.find(op), std::string::npos) << op << fused;
  EXPECT_NE(fused.find("in0 "), std::string::npos) << fused;
  EXPECT_NE(fused.find("out0 "), std::string::npos) << fused;
  if (have_disassembler()) {
    EXPECT_NE(assembly.find("vmaxps"), std::string::npos) << assembly;
    EXPECT_NE(assembly.find("vfmadd"), std::string::npos) << assembly;
  }

  // The same program again is a cache hit: nothing is written.
  std::filesystem::remove_all(dir_);
  realize({softmax_input()});
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

TEST_F(RealizeDumpTest, ANewProgramDumpsItsGraphAndPlanOnce) {
  Runtime::get().dumper().configure(DumpOptions{.graph = true, .plan = true, .dir = dir_});
  Tensor x = from_vector<float>(std::vector<float>(64 * 128, 0.5f), {64, 128});
  Tensor w = from_vector<float>(std::vector<float>(128 * 128, 0.01f), {128, 128});
  realize({matmul(exp(matmul(exp(x), w)), w)});
  std::map<std::string, std::string> files = files_in(dir_);
  ASSERT_EQ(files.size(), 2u);
  std::string graph_file = files.begin()->first, plan = std::next(files.begin())->second;
  ASSERT_TRUE(graph_file.ends_with(".graph.json")) << graph_file;
  // The graph reloads (the format braze graph FILE reads) and plans to the
  // text that was dumped: the dump is what `braze plan` prints.
  SavedGraph saved = load_graph_file((dir_ / graph_file).string());
  EXPECT_EQ(saved.graph.outputs.size(), 1u);
  Schedule s = program_schedule(saved.graph);
  memplan::Liveness l = memplan::liveness(s);
  EXPECT_EQ(plan, plan_text(s, l, memplan::plan_memory(l)));
  EXPECT_NE(plan.find("4 step(s):"), std::string::npos) << plan;
  // Three 32 KB values, two alive at once, and each matmul's workspace,
  // alive during its step only (Note [Step workspaces]): what oneDNN's
  // kernels for this CPU ask for (AVX2's gemm nothing, AVX-512's brgemm a
  // scratchpad), so the expected figures are computed from it.
  auto aligned = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
  int64_t w1 = aligned(s.steps[1].workspace_bytes), w3 = aligned(s.steps[3].workspace_bytes);
  int64_t bound = std::max(2 * 32768 + w1, 32768 + w3);  // at step 1 (#2, #3, its workspace) or 3 (#4, its)
  EXPECT_NE(plan.find(std::to_string(3 + (w1 > 0) + (w3 > 0)) + " scratch buffer(s)"), std::string::npos) << plan;
  std::string figures = "arena " + std::to_string(bound) + " B, lower bound " + std::to_string(bound) +
                        " B, no reuse " + std::to_string(3 * 32768 + w1 + w3) + " B";
  EXPECT_NE(plan.find(figures), std::string::npos) << figures << "\n" << plan;

  // A replay of the same structure writes nothing.
  std::filesystem::remove_all(dir_);
  realize({matmul(exp(matmul(exp(x), w)), w)});
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

TEST_F(RealizeDumpTest, SameProgramSameFilesAcrossRuns) {
  // A run is a fresh kernel cache; the files must not depend on anything
  // but the program (no addresses, no hash-map order).
  dump_to(dir_ / "a");
  realize({softmax_input(5, 100), exp(softmax_input(2, 9)) + 1.0f});
  jit::KernelCache::get().clear();
  Runtime::get().programs().clear();
  dump_to(dir_ / "b");
  realize({softmax_input(5, 100), exp(softmax_input(2, 9)) + 1.0f});
  std::map<std::string, std::string> a = files_in(dir_ / "a"), b = files_in(dir_ / "b");
  EXPECT_GE(a.size(), 4u);
  EXPECT_EQ(a, b);
}

TEST_F(RealizeDumpTest, NothingIsWrittenWhenBrazeDumpIsUnset) {
  const char* was = std::getenv("BRAZE_DUMP");
  std::string saved_value = was ? was : "";
  ::unsetenv("BRAZE_DUMP");
  ::setenv("BRAZE_DUMP_DIR", dir_.c_str(), 1);
  Runtime::get().dumper().configure(dump_options_from_env());
  ::unsetenv("BRAZE_DUMP_DIR");
  if (was) ::setenv("BRAZE_DUMP", saved_value.c_str(), 1);
  EXPECT_FALSE(Runtime::get().dumper().enabled());
  realize({softmax_input(4, 21)});
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

TEST_F(RealizeDumpTest, KernelsCompiledOnSeveralThreadsAreAllWritten) {
  dump_to(dir_);
  std::vector<std::thread> threads;
  for (int64_t t = 0; t < 8; ++t) threads.emplace_back([t] { realize({softmax_input(2, 40 + t)}); });
  for (std::thread& t : threads) t.join();
  std::map<std::string, std::string> files = files_in(dir_);
  EXPECT_EQ(files.size(), 16u);
  for (const auto& [file, text] : files)
    EXPECT_TRUE(text.starts_with(file.ends_with(".s") ? "# braze kernel" : "kernel ")) << file << ":\n" << text;
}

}  // namespace
}  // namespace braze
