// What the stub library under test links against in place of the shim core: the reporter
// the generated stubs call, and one strong definition that must win over its weak stub.
#include <cstdio>
#include <cstdlib>

extern "C" [[noreturn]] void phantora_unimplemented(const char* name) {
  std::fprintf(stderr, "phantora: %s is not implemented by the simulator\n", name);
  std::abort();
}

// A real implementation (strong) of a function the generator also stubs (weak).
extern "C" __attribute__((visibility("default"))) int cudaDriverGetVersion(int* version) {
  *version = 13000;
  return 0;
}
