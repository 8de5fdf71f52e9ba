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

// Libraries the simulator stands in for only in part: an entry point of theirs (by its name's
// prefix), or a driver entry point one of them called (by the calling library's file name), is
// one the program reached through them, and the fix is to keep the program off that part.
struct Hint {
  std::string_view prefix;  // of the entry point's name, or of the calling library's file name
  std::string_view hint;
};
constexpr std::string_view kCudnnHint =
    "cuDNN is simulated for convolutions and attention, through its graph API, and for batch "
    "normalization (docs/pytorch.md, \"cuDNN\"); the rest of it is not. phantora's start-up "
    "hook keeps PyTorch's RNNs, CTC loss, grid_sample and affine_grid off cuDNN; for another "
    "call, run it with torch.backends.cudnn.enabled = False around it.";
// cuGetProcAddress is how a CUDA runtime asks the driver for every entry point it uses. The
// shared runtime, libcudart.so, is the shim itself and never asks; a runtime linked into the
// program or a library (nvcc's default, libcudart_static.a) does, and would drive the stand-in
// driver through its private export tables, which are not simulated.
constexpr std::string_view kStaticRuntimeHint =
    "The program (or the library named) has the CUDA runtime linked into it, nvcc's default "
    "(libcudart_static); phantora stands in for the shared runtime, libcudart.so. Build it with "
    "`nvcc -cudart shared` (CMake: CUDA_RUNTIME_LIBRARY Shared; a Makefile: link -lcudart "
    "instead of cudart_static) and run it again.";
constexpr Hint kEntryPointHints[] = {{"cudnn", kCudnnHint},
                                     {"cuGetProcAddress", kStaticRuntimeHint}};
constexpr Hint kCallerHints[] = {{"libcudnn", kCudnnHint}};

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
  const Hint* hint = nullptr;
  for (const Hint& h : kEntryPointHints) {
    if (std::string_view(name).starts_with(h.prefix)) hint = &h;
  }
  for (const Hint& h : kCallerHints) {
    if (hint == nullptr && caller.starts_with(h.prefix)) hint = &h;
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
