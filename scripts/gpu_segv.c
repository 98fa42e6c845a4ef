// LD_PRELOADed by scripts/gpu_check.sh into the device run's test processes:
// on SIGSEGV or SIGBUS, the native stack (module(+offset) per frame) goes to
// stderr, then the signal is raised again, so the process dies as it would
// have. The device machine has no gdb; gpu_check.sh turns each frame into a
// function and a line with addr2line. (The first H100 run found its crash,
// ostream << size_t in a second libstdc++, this way.)
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

static void on_fault(int sig, siginfo_t* info, void* context) {
  (void)info;
  (void)context;
  void* frames[64];
  int n = backtrace(frames, 64);
  static const char header[] = "\n=== native backtrace (gpu_segv.c) ===\n";
  (void)!write(2, header, sizeof header - 1);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  struct sigaction sa = {0};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigaction(SIGSEGV, &sa, 0);
  sigaction(SIGBUS, &sa, 0);
}
