// Reading memory a program handed over without risking a fault: a kernel parameter is read
// through its address, and how far it extends is only known from how PyTorch was built.
#pragma once

#include <cstddef>
#include <string>

namespace phantora::shim {

// Up to `n` bytes at `p`, fewer where the memory ends (a page that is not mapped): reads go
// through /proc/self/mem, which reports an error instead of faulting. Empty when that file
// cannot be opened.
std::string read_up_to(const void* p, size_t n);

}  // namespace phantora::shim
