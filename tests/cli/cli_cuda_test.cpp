// `braze kernels --target cuda` and the CUDA part of `braze doctor`: no GPU
// needed; the tests that compile need NVRTC and skip without it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "jit_cuda/cuda_error.h"
#include "jit_cuda/driver_api.h"
#include "jit_cuda/nvrtc_api.h"
#include "runtime/dump_cuda.h"
#include "tests/cli/run_cli.h"
#include "tools/sass.h"

namespace braze {
namespace {

using Result = testing::CliResult;
using testing::cli;
using testing::one_line;

std::vector<std::string> softmax_args(std::vector<std::string> extra) {
  std::vector<std::string> a = {"kernels", "--target", "cuda", "--expr", "softmax(x, axis=-1)", "--input",
                                "x:f16[64,1000]"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}


// Sets an environment variable (or unsets it: nullopt) for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A directory of fake CUDA toolkit tools, removed afterwards.
class FakeTools {
 public:
  FakeTools() : dir_(std::filesystem::path(::testing::TempDir()) / ("braze_fake_cuda_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~FakeTools() { std::filesystem::remove_all(dir_); }
  std::string add(const std::string& name, const std::string& script) {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << script;
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
    return p.string();
  }
  std::string dir() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

TEST(CliCuda, KernelsShowsTheCudaSourceOfSoftmaxAsOneBlockPerRowKernel) {
  Result r = cli(softmax_args({}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("kernel bz_row_max_sub_exp_"), std::string::npos) << r.out;
  // Rows of 1000 halves are read 8 at a time: 125 vectors, 128 threads.
  EXPECT_NE(r.out.find("block per row, 128 threads per block, 64 row(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bz::load_vec<bz::f16_bits, 8>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("extern \"C\" __global__"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bz::block_reduce"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("=== step 1 ==="), std::string::npos) << "softmax is one kernel\n" << r.out;
  EXPECT_EQ(cli(softmax_args({})).out, r.out) << "the same graph gives the same source";
}

TEST(CliCuda, KernelsCompilesToCubinAndPtxWithoutAGpu) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
  for (std::string arch : {"sm_80", "sm_90"}) {
    Result r = cli(softmax_args({"--emit", "cubin", "--arch", arch, "--format", "json"}));
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["arch"], arch);
    const nlohmann::json& k = j["kernels"][0];
    EXPECT_GT(k["cubin_bytes"].get<int>(), 1000) << k;
    EXPECT_GT(k["registers"].get<int>(), 0) << k;
    EXPECT_EQ(k["shared_bytes"].get<int>(), 2 * 32 * 4) << "two reductions of 32 floats each: " << k;
    EXPECT_EQ(k["spill_store_bytes"].get<int>(), 0) << k;
  }
  Result ptx = cli(softmax_args({"--emit", "ptx", "--arch", "sm_90"}));
  ASSERT_EQ(ptx.code, 0) << ptx.err;
  EXPECT_NE(ptx.out.find(".target sm_90"), std::string::npos) << ptx.out.substr(0, 2000);
  EXPECT_NE(ptx.out.find("shfl.sync.bfly"), std::string::npos) << "warp-shuffle reductions";
  Result text = cli(softmax_args({"--emit", "cubin"}));
  EXPECT_NE(text.out.find("registers"), std::string::npos) << text.out;
}

TEST(CliCuda, BadOptionsAreOneLineErrors) {
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string says;
  };
  std::vector<Case> cases = {
      {softmax_args({"--emit", "sas"}), 2, "--emit"},
      {softmax_args({"--isa", "avx2"}), 1, "--isa applies to --target cpu"},
      {{"kernels", "--expr", "exp(x)", "--input", "x:f32[4]", "--emit", "ptx"}, 1, "--target cuda"},
  };
  if (cuda::nvrtc_available()) {
    cases.push_back({softmax_args({"--arch", "sm_70"}), 1, "need sm_80 or later"});
    cases.push_back({softmax_args({"--arch", "hopper"}), 1, "bad CUDA architecture 'hopper'"});
    cases.push_back({softmax_args({"--emit", "cubin", "--arch", "sm_999"}), 1, "cannot compile for sm_999"});
  }
  for (const Case& c : cases) {
    Result r = cli(c.args);
    EXPECT_EQ(r.code, c.code) << c.args.back() << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(CliCuda, DoctorListsEveryCudaLibraryWithItsOverride) {
  Result r = cli({"doctor", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["cuda_backend"].get<bool>());
  std::vector<std::string> names;
  for (const nlohmann::json& lib : j["cuda"]) {
    names.push_back(lib["library"]);
    EXPECT_TRUE(lib["override"].get<std::string>().starts_with("BRAZE_LIB")) << lib;
    EXPECT_EQ(lib["found"].get<bool>(), lib.contains("path")) << lib;
    if (!lib["found"].get<bool>()) {
      EXPECT_FALSE(lib["tried"].empty()) << lib;
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"libcuda", "libnvrtc", "libcublasLt", "libcudnn"}));
  if (cuda::nvrtc_available()) {
    EXPECT_EQ(j["cuda"][1]["version"], cuda::nvrtc().version());
  }
  ::setenv("BRAZE_LIBCUDNN", "/nonexistent/libcudnn.so", 1);
  Result text = cli({"doctor"});
  ::unsetenv("BRAZE_LIBCUDNN");
  EXPECT_NE(text.out.find("libcudnn: not found (set BRAZE_LIBCUDNN)"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace braze

namespace braze {
namespace {

using testing::cli;

std::vector<std::string> sass_args(std::vector<std::string> extra) {
  std::vector<std::string> a = {"kernels", "--target", "cuda", "--emit", "sass", "--arch", "sm_90",
                                "--expr",  "softmax(x, axis=-1)", "--input", "x:f32[8,100]"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Whether a real disassembler sits where no PATH change can hide it.
bool toolkit_disassembler_installed() {
  ScopedEnv path("PATH", std::nullopt), home("CUDA_HOME", std::nullopt), cuda_path("CUDA_PATH", std::nullopt);
  return cli::find_cuda_disassembler().has_value();
}

TEST(CliCudaSass, WithoutADisassemblerItIsAOneLineErrorNamingWhatWasLookedFor) {
  if (toolkit_disassembler_installed()) GTEST_SKIP() << "nvdisasm/cuobjdump is installed under /usr/local/cuda*";
  FakeTools empty;
  ScopedEnv path("PATH", empty.dir()), home("CUDA_HOME", empty.dir()), cuda_path("CUDA_PATH", std::nullopt);
  testing::CliResult r = cli(sass_args({}));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(testing::one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("no CUDA disassembler (nvdisasm or cuobjdump)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/usr/local/cuda*/bin"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "nothing is compiled or printed first";
  nlohmann::json doctor = nlohmann::json::parse(cli({"doctor", "--format", "json"}).out);
  EXPECT_TRUE(doctor["cuda_disassembler"].is_null()) << doctor;
}

// The fake prints what it was given: its option, and the first bytes of
// the file (a cubin is an ELF file), with trailing spaces and blank lines
// that braze tidies away.
const char* kFakeDisassembler =
    "printf '\\t.headerflags @\"EF_CUDA_SM90\"   \\n'\n"
    "echo; echo; echo\n"
    "echo \"option $1\"\n"
    "printf 'magic '; head -c 4 \"$2\" | tail -c 3; echo '   '\n"
    "echo '        /*0000*/                   LDC R1, c[0x0][0x37c] ;  '\n"
    "echo\n";

TEST(CliCudaSass, TheCubinGoesToNvdisasmAndItsTextIsTidied) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
  FakeTools tools;
  std::string nvdisasm = tools.add("nvdisasm", kFakeDisassembler);
  tools.add("cuobjdump", "echo cuobjdump must not be chosen over nvdisasm in the same directory; exit 1\n");
  ScopedEnv path("PATH", tools.dir() + ":/usr/bin:/bin");  // the fake runs head and tail
  testing::CliResult r = cli(sass_args({}));
  ASSERT_EQ(r.code, 0) << r.err;
  std::string sass = "// SASS for sm_90, disassembled by " + nvdisasm + "\n" +
                     "\t.headerflags @\"EF_CUDA_SM90\"\n\noption -c\nmagic ELF\n"
                     "        /*0000*/                   LDC R1, c[0x0][0x37c] ;\n";
  EXPECT_NE(r.out.find("registers, 256 bytes shared memory"), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.ends_with(sass)) << r.out;
  EXPECT_NE(r.out.find("// kernel bz_row_max_sub_exp_"), std::string::npos) << r.out;

  nlohmann::json j = nlohmann::json::parse(cli(sass_args({"--format", "json"})).out);
  EXPECT_EQ(j["disassembler"], nvdisasm);
  EXPECT_EQ(j["kernels"][0]["sass"], sass.substr(sass.find('\n') + 1));
  EXPECT_GT(j["kernels"][0]["registers"].get<int>(), 0);

  nlohmann::json doctor = nlohmann::json::parse(cli({"doctor", "--format", "json"}).out);
  EXPECT_EQ(doctor["cuda_disassembler"], nvdisasm);
}

// The real nvdisasm (the toolkit's, or the `nvidia-cuda-nvdisasm` wheel
// that scripts/test.sh puts on PATH): the SASS of the softmax kernel names
// the kernel's function and ends in the EXIT and branch-to-self that close
// every kernel.
TEST(CliCudaSass, TheRealNvdisasmShowsTheKernelsInstructions) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
  std::optional<cli::CudaDisassembler> tool = cli::find_cuda_disassembler();
  if (!tool) GTEST_SKIP() << "no nvdisasm or cuobjdump installed (scripts/test.sh puts the pip wheel's on PATH)";
  testing::CliResult r = cli(sass_args({}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("disassembled by " + tool->path), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bz_row_max_sub_exp_"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("EXIT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SHFL.BFLY"), std::string::npos) << "the row reductions are warp shuffles:\n" << r.out;
}

TEST(CliCudaSass, CuobjdumpServesWhenNvdisasmIsMissing) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
  FakeTools tools;
  std::string cuobjdump = tools.add("cuobjdump", kFakeDisassembler);
  ScopedEnv path("PATH", tools.dir() + ":/usr/bin:/bin");
  testing::CliResult r = cli(sass_args({}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("disassembled by " + cuobjdump + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("option -sass\n"), std::string::npos) << r.out;
}

TEST(CliCudaSass, AFailingDisassemblerIsAOneLineErrorWithItsFirstLine) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "no libnvrtc on this machine";
  FakeTools tools;
  std::string nvdisasm = tools.add("nvdisasm", "echo 'nvdisasm fatal   : Input file is not a cubin' >&2\necho more >&2\nexit 3\n");
  ScopedEnv path("PATH", tools.dir());
  testing::CliResult r = cli(sass_args({}));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(testing::one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find(nvdisasm + " failed (exit 3): nvdisasm fatal   : Input file is not a cubin\n"), std::string::npos)
      << r.err;
}

TEST(CliCudaSass, TidyingDropsTrailingSpaceAndRunsOfBlankLines) {
  EXPECT_EQ(cli::tidy_disassembly("\n\n  a  \r\n\n\n\tb\t\n\n"), "  a\n\n\tb\n");
  EXPECT_EQ(cli::tidy_disassembly(""), "");
  EXPECT_EQ(cli::tidy_disassembly("x"), "x\n");
}

TEST(CliCudaSass, DirectoriesAreSearchedInTheDocumentedOrder) {
  ScopedEnv path("PATH", "/a:/b"), home("CUDA_HOME", "/home/cuda"), cuda_path("CUDA_PATH", std::nullopt);
  std::vector<std::string> dirs = cli::cuda_disassembler_dirs();
  ASSERT_GE(dirs.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(dirs.begin(), dirs.begin() + 4),
            (std::vector<std::string>{"/a", "/b", "/home/cuda/bin", "/usr/local/cuda/bin"}));
}

// The device facts of `doctor` on a machine with no GPU, whatever the
// reason: the line says it. The GPU branch is cli_gpu_test.cpp (label gpu).
TEST(CliCudaDoctor, WithoutAGpuTheDevicesLineSaysWhy) {
  std::string expected;
  try {
    const cuda::DriverApi& d = cuda::driver();
    int n = 0;
    d.cuDeviceGetCount(&n);
    if (n > 0) GTEST_SKIP() << "this machine has a GPU: the gpu-labelled test covers it";
    expected = "cuda devices: none: the driver finds no CUDA device\n";
  } catch (const cuda::CudaUnavailable&) {
    expected = "cuda devices: none: libcuda was not found (set BRAZE_LIBCUDA to its path";
  } catch (const cuda::CudaError& e) {
    expected = "cuda devices: none: cuInit failed: " + e.error_name();
  }
  testing::CliResult r = cli({"doctor"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
  nlohmann::json j = nlohmann::json::parse(cli({"doctor", "--format", "json"}).out);
  EXPECT_TRUE(j["cuda_devices"].empty());
  EXPECT_NE(r.out.find(j["cuda_devices_none_because"].get<std::string>()), std::string::npos) << j;
}

TEST(CliCudaRun, ACudaDeviceIsAOneLineErrorAndBadDevicesAreNamed) {
  std::vector<std::string> run = {"run", "--expr", "exp(x)", "--input", "x:f32[4]", "--repeat", "1", "--device"};
  struct Case {
    std::string device, says;
  };
  for (const Case& c : std::vector<Case>{{"cuda", "run --device cuda: "},
                                         {"cuda:1", "run --device cuda:1: "},
                                         {"tpu", "unknown device 'tpu'"},
                                         {"cuda:x", "bad device index in 'cuda:x'"}}) {
    std::vector<std::string> args = run;
    args.push_back(c.device);
    testing::CliResult r = cli(args);
    EXPECT_EQ(r.code, 1) << c.device << ": " << r.out;
    EXPECT_TRUE(testing::one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "nothing runs";
  }
  std::vector<std::string> cpu = run;
  cpu.push_back("cpu");
  testing::CliResult r = cli(cpu);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("match the reference interpreter"), std::string::npos) << r.out;
}

// With BRAZE_CUDA=emulate, `run --device cuda` runs the generated CUDA
// kernels (host emulation) and checks them against the reference.
TEST(CliCudaRun, EmulatedCudaRunsAndMatchesTheReference) {
  ScopedEnv mode("BRAZE_CUDA", "emulate");
  testing::CliResult r = cli({"run", "--expr", "softmax(x * 2) + x", "--input", "x:f32[8,33]", "--repeat", "1",
                              "--device", "cuda"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("step(s) on cuda:0 (host emulation"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 output(s) match the reference interpreter"), std::string::npos) << r.out;
}

// `kernels --emit cuda|ptx` prints exactly the texts BRAZE_DUMP=cuda,ptx
// writes (the golden test in tests/python checks the files themselves).
TEST(CliCuda, SourceAndPtxTextsAreTheDumpTexts) {
  testing::CliResult r = cli(softmax_args({}));
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(r.out.starts_with("=== step 0 ===\n// kernel ")) << r.out.substr(0, 200);
  std::string text = r.out.substr(r.out.find('\n') + 1);
  if (!cuda::nvrtc_available()) return;
  testing::CliResult ptx = cli(softmax_args({"--emit", "ptx", "--arch", "sm_80"}));
  ASSERT_EQ(ptx.code, 0) << ptx.err;
  EXPECT_EQ(ptx.out.substr(0, ptx.out.find('\n', ptx.out.find("// kernel"))),
            "=== step 0 ===\n" + text.substr(0, text.find('\n')) + "; PTX for sm_80 by NVRTC " +
                cuda::nvrtc().version());
  EXPECT_EQ(cli(softmax_args({"--emit", "ptx", "--arch", "sm_80"})).out, ptx.out) << "deterministic";
  testing::CliResult native = cli(softmax_args({"--emit", "ptx"}));
  EXPECT_NE(native.out.find("; PTX for sm_" + std::to_string(default_cuda_arch()) + " by NVRTC"), std::string::npos)
      << "without --arch: the GPU's architecture, else sm_90";
}

}  // namespace
}  // namespace braze
