// BRAZE_DUMP: the disassembler on generated kernels and on odd bytes, the
// parsing of the variables, and the files a Dumper writes (Note [Dump files]).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "jit_cpu/disassemble.h"
#include "runtime/braze.h"
#include "runtime/dump.h"
#include "runtime/lower.h"

namespace braze {
namespace {

std::vector<jit::Isa> isas() {
  std::vector<jit::Isa> out;
  for (jit::Isa i : {jit::Isa::Avx512, jit::Isa::Avx2})
    if (jit::cpu_supports(i)) out.push_back(i);
  return out;
}

Schedule schedule_of(const Tensor& t) { return make_schedule(lower(std::vector<Tensor>{t}).graph); }

Tensor softmax_input() {
  std::vector<float> v(3 * 37);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 11) - 5.0f;
  return softmax(from_vector<float>(v, {3, 37}));
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Disassemble, SoftmaxKernelReadsAsInstructions) {
  Schedule s = schedule_of(softmax_input());
  ASSERT_EQ(s.steps.size(), 1u);
  for (jit::Isa isa : isas()) {
    std::string why;
    std::unique_ptr<jit::CompiledKernel> k = jit::compile(s.steps[0].spec, isa, why);
    ASSERT_TRUE(k) << why;
    ASSERT_GT(k->text_size(), 0u);
    ASSERT_LE(k->text_size(), k->code_size());
    std::string text = jit::disassemble(k->code(), k->text_size());
    EXPECT_NE(text.find("vmovups"), std::string::npos) << text;
    EXPECT_NE(text.find(isa == jit::Isa::Avx512 ? "zmm" : "ymm"), std::string::npos) << text;
    EXPECT_EQ(text.find(".byte"), std::string::npos) << "capstone failed to decode some of it:\n" << text;
    // The instructions end with the function's return; the pool comes after.
    EXPECT_TRUE(text.ends_with(": ret\n")) << text.substr(text.size() - 200);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) ASSERT_TRUE(line.starts_with("  0x")) << line;
  }
}

TEST(Disassemble, UndecodableBytesAreShownAndSkipped) {
  const uint8_t code[] = {0x06, 0x90, 0xc3};  // 0x06 (push es) does not exist in 64-bit mode
  EXPECT_EQ(jit::disassemble(code, sizeof code), "  0x0000: .byte 0x06\n  0x0001: nop\n  0x0002: ret\n");
  EXPECT_EQ(jit::disassemble(code, 0), "");
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

TEST_F(DumperTest, WritesFusedAndAsmOncePerKey) {
  Dumper d(DumpOptions{.fused = true, .assembly = true, .dir = dir_ / "nested"});
  Schedule s = schedule_of(softmax_input());
  const Step& step = s.steps[0];
  jit::Isa isa = isas().at(0);
  jit::Lookup found = jit::KernelCache::get().find_or_compile(step.spec, isa);
  ASSERT_TRUE(found.kernel) << found.why;
  d.kernel(s, step, found, isa);

  std::string key = kernel_key(step.spec).hex();
  std::filesystem::path fused = dir_ / "nested" / (key + ".fused.txt");
  std::filesystem::path assembly = dir_ / "nested" / (key + "." + std::string(name(isa)) + ".s");
  std::string f = read(fused), a = read(assembly);
  EXPECT_NE(f.find(canonical_text(step.spec)), std::string::npos) << "the spec's canonical text is missing:\n" << f;
  EXPECT_NE(f.find("kernel " + key + " fusing"), std::string::npos) << f;
  EXPECT_NE(f.find("runs as generated"), std::string::npos) << f;
  EXPECT_TRUE(a.starts_with("# braze kernel " + key)) << a;
  EXPECT_NE(a.find(": ret\n"), std::string::npos) << a;
  EXPECT_NE(a.find("# constant pool\n"), std::string::npos) << a;

  // The same kernel again (from another program, say) is not written again.
  std::filesystem::remove(fused);
  d.kernel(s, step, found, isa);
  EXPECT_FALSE(std::filesystem::exists(fused));
}

TEST_F(DumperTest, InterpretedKernelGetsANoteInsteadOfAsm) {
  Dumper d(DumpOptions{.fused = false, .assembly = true, .dir = dir_});
  // int32 arithmetic is not generated yet (jit_cpu/README.md).
  Tensor t = from_vector<int32_t>({1, 2, 3}, {3}) * from_vector<int32_t>({4, 5, 6}, {3});
  Schedule s = schedule_of(t);
  ASSERT_EQ(s.steps.size(), 1u);
  jit::Isa isa = isas().at(0);
  jit::Lookup found = jit::KernelCache::get().find_or_compile(s.steps[0].spec, isa);
  ASSERT_FALSE(found.kernel) << "int32 is generated now: pick another unsupported spec for this test";
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

}  // namespace
}  // namespace braze
