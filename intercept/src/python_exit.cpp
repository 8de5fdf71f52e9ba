// A thread that CPython ends while the interpreter finalises hangs instead of unwinding
// (docs/reliability.md, finding 14).
//
// Before 3.14, CPython ends any thread other than the finalising one that asks for the GIL once
// finalisation has begun, with pthread_exit(NULL) (PyThread_exit_thread). pthread_exit unwinds
// the thread's stack; in a thread that C++ made, as PyTorch's autograd and process-group threads
// are, the unwind meets a frame that may not throw and the C++ runtime calls std::terminate: the
// whole process aborts ("terminate called without an active exception") after the program's work
// is done. Such a thread asks for the GIL late when it drops the last reference to a tensor's
// Python object after the main thread has moved on (pytorch/pytorch#38228, #190489). The
// simulation makes that order likelier than a GPU does: the program's GPU waits end as soon as
// the simulator answers, so the main thread can reach the interpreter's exit while the autograd
// thread is still releasing its last task on a busy host.
//
// CPython settled the same problem (python/cpython#87135, "pthread_exit & PyThread_exit_thread
// from PyEval_RestoreThread etc. are harmful") by hanging such a thread instead of ending it,
// from 3.14 (PyThread_hang_thread; the C API documents the change under PyEval_RestoreThread).
// This does the same for older interpreters: a pthread_exit(NULL) made while a Python interpreter
// in this process finalises blocks for ever (the finalising thread itself ends with exit(), not
// pthread_exit); the process ends when it calls exit(). Any other pthread_exit is the C library's,
// and unwinds through this frame as it would without it (the function is not noexcept, as the C
// library's is not).
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>

namespace phantora::shim {
namespace {

// CPython's "is the runtime finalising" query, found in the process, or null where there is no
// interpreter: Py_IsFinalizing from 3.13, _Py_IsFinalizing in 3.7 to 3.12.
using IsFinalizing = int (*)();
IsFinalizing python_is_finalizing() {
  for (const char* name : {"Py_IsFinalizing", "_Py_IsFinalizing"})
    if (void* fn = dlsym(RTLD_DEFAULT, name)) return reinterpret_cast<IsFinalizing>(fn);
  return nullptr;
}

[[noreturn]] void hang_for_ever() {
  for (;;) pause();
}

}  // namespace
}  // namespace phantora::shim

extern "C" {

[[noreturn]] void pthread_exit(void* result) {
  using Real = void (*)(void*);
  static const auto real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "pthread_exit"));
  if (real == nullptr) {
    std::fprintf(stderr, "phantora: the C library has no pthread_exit\n");
    std::abort();
  }
  // CPython's own ending passes no result; its interpreter says it finalises.
  if (result == nullptr) {
    const auto finalizing = phantora::shim::python_is_finalizing();
    if (finalizing != nullptr && finalizing() != 0) phantora::shim::hang_for_ever();
  }
  real(result);
  __builtin_unreachable();
}

}  // extern "C"
