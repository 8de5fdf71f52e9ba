// Defines an entry point together with its per-thread-default-stream twin (`_ptsz`/`_ptds`),
// which nvcc selects under --default-stream per-thread. Both forward to NAME##_impl with a
// leading `bool per_thread` that says how stream 0 is to be read.
#pragma once

#define PHANTORA_UNPAREN(...) __VA_ARGS__

#define PHANTORA_DEFINE_PT(NAME, SUFFIX, PARAMS, ARGS) \
  extern "C" cudaError_t NAME PARAMS {                 \
    return NAME##_impl(false, PHANTORA_UNPAREN ARGS);  \
  }                                                    \
  extern "C" cudaError_t NAME##SUFFIX PARAMS {         \
    return NAME##_impl(true, PHANTORA_UNPAREN ARGS);   \
  }
