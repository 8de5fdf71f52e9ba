// cuDNN's queries that touch no GPU (versions, properties, error strings, version checks and the
// logging callback), forwarded to the real libcudnn the program loaded: PyTorch and cuDNN's
// frontend ask them to choose how to build their graphs, and the answer must be the library's.
// Every other cuDNN export without a definition in the shim is a loud stub (stubs.cmake): the
// shim stands in for cuDNN's attention (api_cudnn.cpp) and batch normalization
// (api_cudnn_batch_norm.cpp) only.
#include <cudnn_graph.h>
#include <dlfcn.h>

#include <initializer_list>

extern "C" [[noreturn]] void phantora_unimplemented(const char* name);

namespace {

// The real library's definition of `name`, or a loud failure. The library is found among those
// already loaded by its soname: PyTorch loads it as a dependency of a module opened with
// RTLD_LOCAL, out of RTLD_NEXT's reach.
template <typename Fn>
Fn real(const char* name) {
  void* f = nullptr;
  for (const char* soname : {"libcudnn.so.9", "libcudnn.so"}) {
    if (void* library = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) {
      f = dlsym(library, name);
      if (f != nullptr) break;
    }
  }
  if (f == nullptr) phantora_unimplemented(name);
  return reinterpret_cast<Fn>(f);
}

}  // namespace

extern "C" {

size_t cudnnGetVersion() {
  static const auto f = real<size_t (*)()>("cudnnGetVersion");
  return f();
}

size_t cudnnGetMaxDeviceVersion() {
  static const auto f = real<size_t (*)()>("cudnnGetMaxDeviceVersion");
  return f();
}

size_t cudnnGetCudartVersion() {
  static const auto f = real<size_t (*)()>("cudnnGetCudartVersion");
  return f();
}

cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int* value) {
  static const auto f = real<cudnnStatus_t (*)(libraryPropertyType, int*)>("cudnnGetProperty");
  return f(type, value);
}

const char* cudnnGetErrorString(cudnnStatus_t status) {
  static const auto f = real<const char* (*)(cudnnStatus_t)>("cudnnGetErrorString");
  return f(status);
}

void cudnnGetLastErrorString(char* message, size_t max_size) {
  static const auto f = real<void (*)(char*, size_t)>("cudnnGetLastErrorString");
  f(message, max_size);
}

cudnnStatus_t cudnnGraphVersionCheck() {
  static const auto f = real<cudnnStatus_t (*)()>("cudnnGraphVersionCheck");
  return f();
}

cudnnStatus_t cudnnGetCallback(unsigned* mask, void** udata, cudnnCallback_t* fptr) {
  static const auto f =
      real<cudnnStatus_t (*)(unsigned*, void**, cudnnCallback_t*)>("cudnnGetCallback");
  return f(mask, udata, fptr);
}

cudnnStatus_t cudnnSetCallback(unsigned mask, void* udata, cudnnCallback_t fptr) {
  static const auto f =
      real<cudnnStatus_t (*)(unsigned, void*, cudnnCallback_t)>("cudnnSetCallback");
  return f(mask, udata, fptr);
}

// The handle is the shim's: no kernel of its ran, so none reported an error.
cudnnStatus_t cudnnQueryRuntimeError(cudnnHandle_t handle, cudnnStatus_t* status,
                                     cudnnErrQueryMode_t, cudnnRuntimeTag_t*) {
  if (handle == nullptr || status == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *status = CUDNN_STATUS_SUCCESS;
  return CUDNN_STATUS_SUCCESS;
}

}  // extern "C"
