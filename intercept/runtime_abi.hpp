// What differs between the CUDA runtimes a program may be built against. The shim is one
// library for programs of CUDA 12 and CUDA 13 (PyTorch wheels of both exist), and the two
// runtimes lay out some structs the caller owns differently: where a name is shared, the shim
// must write no more than the caller's layout holds.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace phantora::intercept {

// The CUDA major of the runtime the program loaded (libcudart.so.<major>, which the shim's
// definitions shadow); the toolkit's major when the process has none. Read once.
int linked_cudart_major();

// sizeof(struct cudaPointerAttributes) in a program of that CUDA major: CUDA 13 appended
// `long reserved[8]` to CUDA 12's four fields (24 bytes to 88 on LP64).
std::size_t pointer_attributes_size(int cudart_major);

// Copies `attributes` into the caller's struct, in the caller's layout.
void write_pointer_attributes(void* out, const cudaPointerAttributes& attributes, int cudart_major);

}  // namespace phantora::intercept
