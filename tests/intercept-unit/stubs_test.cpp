#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

// Path of the test library built from the generated stubs (set by CMake).
#ifndef PHANTORA_STUB_LIBRARY
#error "PHANTORA_STUB_LIBRARY must name the stub test library"
#endif

namespace {

void* stub_library() {
  static void* handle = dlopen(PHANTORA_STUB_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  return handle;
}

template <class Fn>
Fn symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(stub_library(), name));
}

TEST(Stubs, LibraryLoads) {
  ASSERT_NE(stub_library(), nullptr) << dlerror();
}

TEST(Stubs, UnimplementedFunctionDiesNamingItself) {
  ASSERT_NE(stub_library(), nullptr) << dlerror();
  auto fn = symbol<void (*)()>("cudaGraphicsGLRegisterBuffer");
  ASSERT_NE(fn, nullptr);
  // The death test forks; the child calls the stub, which must abort with the message.
  EXPECT_DEATH(fn(), "phantora: cudaGraphicsGLRegisterBuffer is not implemented");
}

TEST(Stubs, Cuda12OnlyFunctionsAreStubbedToo) {
  ASSERT_NE(stub_library(), nullptr) << dlerror();
  // cudaThreadSynchronize was removed from libcudart.so.13 but CUDA 12 programs call it.
  auto fn = symbol<void (*)()>("cudaThreadSynchronize");
  ASSERT_NE(fn, nullptr);
  EXPECT_DEATH(fn(), "phantora: cudaThreadSynchronize is not implemented");
}

TEST(Stubs, StrongImplementationWinsOverItsStub) {
  ASSERT_NE(stub_library(), nullptr) << dlerror();
  auto fn = symbol<int (*)(int*)>("cudaDriverGetVersion");
  ASSERT_NE(fn, nullptr);
  int version = 0;
  EXPECT_EQ(fn(&version), 0);
  EXPECT_EQ(version, 13000);
}

TEST(Stubs, DataSymbolsAndMangledNamesAreNotStubbed) {
  // The generated file defines functions only, all extern "C".
  std::ifstream in(PHANTORA_STUB_SOURCE);
  ASSERT_TRUE(in.good());
  int stubs = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("__attribute__((weak") == std::string::npos) continue;
    ++stubs;
    EXPECT_EQ(line.find(" _Z"), std::string::npos) << line;
  }
  // libcudart.so.13 exports ~420 functions; CUDA 12 adds ~30.
  EXPECT_GT(stubs, 400);
}

}  // namespace
