// Device-code images as programs hand them over: a fat binary registered by nvcc-generated code
// (__cudaRegisterFatBinary) or an image loaded through the driver (cuModuleLoadData: a cubin,
// a fat binary or PTX). The shim never runs them; it needs their extent to keep a copy (driver
// modules) and to save the image a recorded launch's kernel lives in (launch_recorder.hpp).
#pragma once

#include <cstddef>

namespace phantora::shim {

// How many bytes an image passed by address holds: an ELF file (cubin) ends after its section
// or program header table, whichever is last; a fat binary states its size in its header; PTX
// is NUL-terminated text.
size_t image_size(const void* image);

// The fat binary an nvcc registration wrapper (__fatBinC_Wrapper_t: int magic, int version,
// const void* data, void* reserved) points to; null when `wrapper` is not one.
const void* fatbin_of_wrapper(const void* wrapper);

}  // namespace phantora::shim
