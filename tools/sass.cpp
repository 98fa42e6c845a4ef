#include "tools/sass.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "graph/check.h"

extern char** environ;

namespace braze::cli {

namespace {

namespace fs = std::filesystem;

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// A temporary file holding `bytes`, removed with this object.
class TempFile {
 public:
  explicit TempFile(std::span<const std::byte> bytes) {
    std::string pattern = (fs::temp_directory_path() / "braze-XXXXXX.cubin").string();
    int fd = ::mkstemps(pattern.data(), 6);
    BRAZE_CHECK(fd >= 0, "kernels --emit sass: cannot make a temporary file in ", fs::temp_directory_path().string(),
                ": ", std::strerror(errno));
    path_ = pattern;
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    BRAZE_CHECK(done == bytes.size(), "kernels --emit sass: cannot write the cubin to ", path_);
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct ProcessResult {
  int status = 0;   // the exit code, or 128 + the signal that ended it
  std::string output;  // stdout and stderr, interleaved as written
};

// Runs `argv` (argv[0] a path, not searched) with this environment.
ProcessResult run_process(const std::vector<std::string>& argv) {
  int fds[2];
  BRAZE_CHECK(::pipe(fds) == 0, "kernels --emit sass: pipe: ", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int err = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (err != 0) {
    ::close(fds[0]);
    BRAZE_CHECK(false, "kernels --emit sass: cannot run ", argv[0], ": ", std::strerror(err));
  }
  ProcessResult r;
  char buf[65536];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    r.output.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string first_line(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "no output";
  return s.substr(b, s.find('\n', b) - b);
}

}  // namespace

std::vector<std::string> cuda_disassembler_dirs() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (size_t b = 0; b <= p.size();) {
      size_t e = std::min(p.find(':', b), p.size());
      if (e > b) dirs.push_back(p.substr(b, e - b));
      b = e + 1;
    }
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(var); home && *home) dirs.push_back((fs::path(home) / "bin").string());
  dirs.push_back("/usr/local/cuda/bin");
  std::vector<std::string> versioned;  // /usr/local/cuda-13.0/bin, ...
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/usr/local", ec))
    if (e.path().filename().string().starts_with("cuda-")) versioned.push_back((e.path() / "bin").string());
  std::sort(versioned.rbegin(), versioned.rend());
  dirs.insert(dirs.end(), versioned.begin(), versioned.end());
  return dirs;
}

std::optional<CudaDisassembler> find_cuda_disassembler() {
  for (const std::string& dir : cuda_disassembler_dirs()) {
    // nvdisasm -c: the code sections only; cuobjdump -sass: the SASS of each kernel.
    if (fs::path p = fs::path(dir) / "nvdisasm"; executable(p)) return CudaDisassembler{p.string(), {"-c"}};
    if (fs::path p = fs::path(dir) / "cuobjdump"; executable(p)) return CudaDisassembler{p.string(), {"-sass"}};
  }
  return std::nullopt;
}

CudaDisassembler require_cuda_disassembler() {
  std::optional<CudaDisassembler> tool = find_cuda_disassembler();
  BRAZE_CHECK(tool, "kernels --emit sass: no CUDA disassembler (nvdisasm or cuobjdump) in $PATH, $CUDA_HOME/bin, "
              "$CUDA_PATH/bin or /usr/local/cuda*/bin; install the CUDA toolkit's nvdisasm (package cuda-nvdisasm), "
              "or use --emit cubin for registers and shared memory");
  return *tool;
}

std::string disassemble_cubin(const CudaDisassembler& tool, std::span<const std::byte> cubin) {
  TempFile file(cubin);
  std::vector<std::string> argv = {tool.path};
  argv.insert(argv.end(), tool.args.begin(), tool.args.end());
  argv.push_back(file.path());
  ProcessResult r = run_process(argv);
  BRAZE_CHECK(r.status == 0, "kernels --emit sass: ", tool.path, " failed (exit ", r.status,
              "): ", first_line(r.output));
  return tidy_disassembly(r.output);
}

std::string tidy_disassembly(const std::string& text) {
  std::string out;
  bool blank_pending = false;
  for (size_t b = 0; b < text.size();) {
    size_t e = std::min(text.find('\n', b), text.size());
    std::string line = text.substr(b, e - b);
    b = e + 1;
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) {
      blank_pending = !out.empty();
      continue;
    }
    if (blank_pending) out += "\n";
    blank_pending = false;
    out += line + "\n";
  }
  return out;
}

}  // namespace braze::cli
