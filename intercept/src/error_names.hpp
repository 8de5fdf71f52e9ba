// cudaError_t names, generated from the toolkit header at build time.
#pragma once

namespace phantora::shim {

// "cudaErrorMemoryAllocation" for 2; nullptr for a code the header does not define.
const char* error_name(int code);

}  // namespace phantora::shim
