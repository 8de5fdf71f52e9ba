// The loud failure of every entry point the shim does not implement: it names the entry point,
// the library that called it, and, for a caller whose cause is known, what to do.
#include <dlfcn.h>
#include <execinfo.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace {

// Libraries the simulator does not stand in for, which reach the driver on their own: the
// entry point is one of theirs, not the program's, and the fix is to keep the program off them.
struct CallerHint {
  std::string_view library;  // the start of the library's file name
  std::string_view hint;
};
constexpr CallerHint kCallerHints[] = {
    {"libcudnn",
     "cuDNN is not simulated (docs/pytorch.md, \"cuDNN\"): a program must not call it. "
     "phantora's start-up hook turns cuDNN off for PyTorch, so a PyTorch program reaches it only "
     "by turning it back on: torch.backends.cuda.enable_cudnn_sdp(True) with the other attention "
     "backends disabled, sdpa_kernel(SDPBackend.CUDNN_ATTENTION) or "
     "torch.backends.cudnn.enabled = True. Leave it off (scaled_dot_product_attention then runs "
     "flash attention, which is priced)."},
};

std::string_view base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

// The file name of the first library on the stack that is neither this one nor the libcuda.so.1
// stand-in (whose entry points forward here): the caller of the unimplemented entry point.
// Empty when the stack cannot be read.
std::string_view calling_library(const void* self) {
  std::array<void*, 32> frames{};
  const int n = backtrace(frames.data(), static_cast<int>(frames.size()));
  Dl_info own{};
  if (dladdr(self, &own) == 0) own.dli_fname = nullptr;
  for (int i = 0; i < n; ++i) {
    Dl_info info{};
    if (dladdr(frames[i], &info) == 0 || info.dli_fname == nullptr) continue;
    if (own.dli_fname != nullptr && std::strcmp(info.dli_fname, own.dli_fname) == 0) continue;
    const std::string_view name = base_name(info.dli_fname);
    if (name.starts_with("libcuda.so")) continue;
    return name;
  }
  return {};
}

}  // namespace

extern "C" {

// Every exported symbol of the real libraries that the shim does not implement resolves to a
// generated stub that calls this (intercept/gen/gen_stubs.py).
[[noreturn]] void phantora_unimplemented(const char* name) {
  const std::string_view caller =
      calling_library(reinterpret_cast<const void*>(&phantora_unimplemented));
  if (caller.empty()) {
    std::fprintf(stderr, "phantora: %s is not implemented by the simulator", name);
  } else {
    std::fprintf(stderr, "phantora: %s (called from %.*s) is not implemented by the simulator",
                 name, static_cast<int>(caller.size()), caller.data());
  }
  std::fprintf(stderr, "; the program called it and cannot continue.");
  const CallerHint* hint = nullptr;
  for (const CallerHint& h : kCallerHints) {
    if (caller.starts_with(h.library)) {
      hint = &h;
      break;
    }
  }
  if (hint != nullptr) {
    std::fprintf(stderr, " %.*s\n", static_cast<int>(hint->hint.size()), hint->hint.data());
  } else {
    std::fprintf(stderr, " Please report which program needs it.\n");
  }
  std::fflush(stderr);
  std::abort();
}

}  // extern "C"
