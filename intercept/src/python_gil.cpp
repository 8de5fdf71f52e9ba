#include "python_gil.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdint>

namespace phantora::shim {
namespace {

struct Span {
  uintptr_t begin = 0;
  uintptr_t end = 0;
};

// Where `_PyRuntime` lies, from the dynamic symbol table (the interpreter exports it for
// extension modules); empty where there is none.
Span python_runtime() {
  void* at = dlsym(RTLD_DEFAULT, "_PyRuntime");
  if (at == nullptr) return {};
  Dl_info info{};
  void* entry = nullptr;  // the symbol's ElfW(Sym)
  if (dladdr1(at, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return {};
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  const auto begin = reinterpret_cast<uintptr_t>(at);
  return {begin, begin + symbol->st_size};
}

}  // namespace

bool is_python_gil(const void* object) {
  static const Span runtime = python_runtime();
  const auto at = reinterpret_cast<uintptr_t>(object);
  return at >= runtime.begin && at < runtime.end;
}

}  // namespace phantora::shim
