// The CUDA source braze renders, compiled by the host C++ compiler against
// jit_cuda/device/host_emulation.h and run on CPU threads (blocks, warps,
// shuffles, shared memory, barriers), against the spec interpreter: the
// generated kernels' results checked on a machine with no GPU.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "fusion/spec_interpreter.h"
#include "jit_cuda/cuda_source.h"
#include "jit_cuda/embedded_headers.h"
#include "tests/cpp/jit_check.h"
#include "tests/cpp/jit_cuda_specs.h"

namespace braze::cuda {
namespace {

namespace fs = std::filesystem;

// A shared object of many kernels, each with a host trampoline taking
// cuLaunchKernel-style parameter pointers.
class EmulatedKernels {
 public:
  EmulatedKernels(const std::vector<CudaKernelSource>& kernels, const fs::path& dir) {
    fs::create_directories(dir);
    for (const EmbeddedHeader& h : device_headers()) {
      fs::create_directories((dir / h.include_name).parent_path());
      std::ofstream(dir / h.include_name) << h.text;
    }
    std::ofstream src(dir / "kernels.cpp");
    for (const CudaKernelSource& k : kernels) {
      src << k.source << "\nextern \"C\" void " << k.name << "_host(void* const* p) { " << k.name << "(";
      for (size_t i = 0; i < k.param_types.size(); ++i)
        src << (i ? ", " : "") << "*static_cast<" << k.param_types[i] << "*>(p[" << i << "])";
      src << "); }\n";
    }
    src.close();
    std::string cmd = std::string(BRAZE_TEST_CXX) + " -std=c++20 -O1 -shared -fPIC -pthread -w -I" + dir.string() +
                      " -I" BRAZE_SOURCE_DIR " -include " BRAZE_SOURCE_DIR "/jit_cuda/device/host_emulation.h " +
                      (dir / "kernels.cpp").string() + " -o " + (dir / "kernels.so").string() + " 2>" +
                      (dir / "log.txt").string();
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(dir / "log.txt");
      error_ = std::string(std::istreambuf_iterator<char>(log), {}).substr(0, 20000);
      return;
    }
    handle_ = dlopen((dir / "kernels.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) error_ = dlerror();
  }
  ~EmulatedKernels() {
    if (handle_) dlclose(handle_);
  }
  const std::string& error() const { return error_; }

  void run(const CudaKernelSource& k, void* const* params) const {
    using Entry = void (*)(void* const*);
    using Launch = void (*)(Entry, void* const*, unsigned, unsigned);
    auto entry = reinterpret_cast<Entry>(dlsym(handle_, (k.name + "_host").c_str()));
    auto launch = reinterpret_cast<Launch>(dlsym(handle_, "bz_emu_launch"));
    ASSERT_TRUE(entry && launch) << k.name;
    // Few blocks of few threads (each one a std::thread): the loops are
    // grid- and block-stride, so two blocks cover every index and check the
    // strides, and two warps check the shared-memory step of block_reduce.
    if (k.launch.work > 0)
      launch(entry, params, static_cast<unsigned>(k.launch.blocks(2)), std::min(k.launch.threads, 64));
  }

 private:
  void* handle_ = nullptr;
  std::string error_;
};

// Random contents for a buffer of `t` large enough for the view.
Array random_buffer(DType t, const View& v, std::mt19937& rng) {
  int64_t hi = v.offset;
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] > 1 && v.strides[d] > 0) hi += (v.shape[d] - 1) * v.strides[d];
  Array a = allocate_array(t, {hi + 1});
  std::normal_distribution<double> normal(0.0, 1.5);
  std::uniform_int_distribution<int64_t> small(-8, 8);
  for (int64_t i = 0; i <= hi; ++i) {
    if (is_float(t)) store_double(t, a.data.get(), i, normal(rng));
    else store_int(t, a.data.get(), i, t == DType::UInt8 || t == DType::Bool ? small(rng) & (t == DType::Bool ? 1 : 15) : small(rng));
  }
  return a;
}

double tolerance(DType t) {
  if (t == DType::Float16) return 1e-2;
  if (t == DType::BFloat16) return 3e-2;
  return 1e-4;
}

// Runs one spec both ways on the same random inputs and compares outputs.
void check(const KernelSpec& spec, const CudaKernelSource& k, const EmulatedKernels& so, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Array> buffers;
  std::vector<KernelArg> args(spec.inputs.size());
  std::vector<const void*> pointers;
  std::vector<double> reals;
  std::vector<long long> ints;
  pointers.reserve(64), reals.reserve(64), ints.reserve(64);
  std::vector<void*> params;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const KernelInput& in = spec.inputs[i];
    bool real = is_float(in.dtype);
    switch (in.kind) {
      case KernelInput::Kind::Buffer:
        buffers.push_back(random_buffer(in.dtype, in.view, rng));
        args[i].data = buffers.back().data.get();
        pointers.push_back(args[i].data);
        params.push_back(&pointers.back());
        break;
      case KernelInput::Kind::Scalar:
        args[i].real[0] = 0.75, args[i].integer[0] = 3;
        if (real) reals.push_back(0.75), params.push_back(&reals.back());
        else ints.push_back(3), params.push_back(&ints.back());
        break;
      case KernelInput::Kind::Arange:
        args[i].real[0] = -1.5, args[i].real[1] = 0.25, args[i].integer[0] = -3, args[i].integer[1] = 2;
        if (real) reals.push_back(-1.5), params.push_back(&reals.back()), reals.push_back(0.25), params.push_back(&reals.back());
        else ints.push_back(-3), params.push_back(&ints.back()), ints.push_back(2), params.push_back(&ints.back());
        break;
    }
  }
  std::vector<Array> want, got;
  std::vector<std::byte*> want_ptrs;
  for (const KernelOutput& o : spec.outputs) {
    want.push_back(allocate_array(o.dtype, spec.shape_of(o.space)));
    got.push_back(allocate_array(o.dtype, spec.shape_of(o.space)));
    want_ptrs.push_back(want.back().data.get());
    pointers.push_back(got.back().data.get());
    params.push_back(&pointers.back());
  }
  interpret_spec(spec, args, want_ptrs);
  so.run(k, params.data());
  for (size_t o = 0; o < want.size(); ++o)
    EXPECT_TRUE(testing::close(got[o], want[o], tolerance(want[o].dtype)))
        << "output " << o << " of " << k.name << "\n" << k.source;
}

TEST(JitCudaEmulation, GeneratedKernelsMatchTheSpecInterpreter) {
  auto t0 = std::chrono::steady_clock::now();
  testing::SpecCollection c;
  testing::add_elementwise_ops(c);
  testing::add_casts(c);
  testing::add_reductions(c);
  testing::add_composites(c);
  testing::add_random_graphs(c, testing::fuzz_graphs(60));
  std::vector<CudaKernelSource> kernels;
  for (const auto& [key, spec] : c.specs()) kernels.push_back(render_cuda(spec));
  fs::path dir = fs::path(::testing::TempDir()) / ("braze_cuda_emulation_" + std::to_string(::getpid()));
  EmulatedKernels so(kernels, dir);
  ASSERT_TRUE(so.error().empty()) << so.error();
  double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  size_t n = 0;
  for (const auto& [key, spec] : c.specs()) {
    check(spec, kernels[n], so, static_cast<uint32_t>(n));
    ++n;
    if (::testing::Test::HasFailure()) break;
  }
  fs::remove_all(dir);
  std::cout << n << " kernels emulated and checked; host compile " << build_s << " s, total "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
}

}  // namespace
}  // namespace braze::cuda
