// What the shim's stand-ins for C library functions share: the real definition each one
// calls, and whether a call is the simulated program's (api_host_clocks.cpp, api_pipes.cpp).
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace phantora::shim {

// The next definition of a C library function (the real one).
template <typename Fn>
Fn next_definition(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}
#define PHANTORA_REAL(name)                                                                    \
  static const auto real_##name = ::phantora::shim::next_definition<decltype(&::name)>(#name); \
  if (real_##name == nullptr) {                                                                \
    std::fprintf(stderr, "phantora: the C library has no %s\n", #name);                        \
    std::abort();                                                                              \
  }

// Whether this process's clocks are simulated: it runs under phantora, is no launcher
// (launcher_command.hpp) and was not started with PHANTORA_REAL_CLOCKS=1. Decided once.
bool simulated();

// The calls of this thread are the program's, and simulated.
bool active();

}  // namespace phantora::shim
