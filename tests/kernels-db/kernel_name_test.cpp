#include "phantora/kernels/kernel_name.hpp"

#include <gtest/gtest.h>

namespace phantora::kernels {
namespace {

// Mangled names below are what g++/nvcc emit for the declarations in the comments
// (checked with c++filt).
TEST(KernelName, PlainFunction) {
  // void busy(float*, int)
  EXPECT_EQ(demangle("_Z4busyPfi"), "busy(float*, int)");
  EXPECT_EQ(kernel_base_name("_Z4busyPfi"), "busy");
}

TEST(KernelName, ExternCNameIsItself) {
  EXPECT_EQ(demangle("busy_c"), std::nullopt);
  EXPECT_EQ(kernel_base_name("busy_c"), "busy_c");
}

TEST(KernelName, NamespacedTemplateWithReturnType) {
  // template <class T> void ns::fill<float>(T*, int): a function template's demangled form
  // starts with its return type.
  EXPECT_EQ(demangle("_ZN2ns4fillIfEEvPT_i"), "void ns::fill<float>(float*, int)");
  EXPECT_EQ(kernel_base_name("_ZN2ns4fillIfEEvPT_i"), "ns::fill<float>");
}

TEST(KernelName, NestedTemplateArguments) {
  // void at::native::elementwise_kernel<128, 4, Op<float, 2> >(int, Op<float, 2>)
  const std::string demangled =
      "void at::native::elementwise_kernel<128, 4, at::native::Op<float, 2> >(int, "
      "at::native::Op<float, 2>)";
  EXPECT_EQ(strip_signature(demangled),
            "at::native::elementwise_kernel<128, 4, "
            "at::native::Op<float, 2> >");
}

TEST(KernelName, MultiWordReturnType) {
  EXPECT_EQ(strip_signature("unsigned long long ns::count<int>(int const*)"), "ns::count<int>");
}

TEST(KernelName, AnonymousNamespace) {
  // (anonymous namespace)::k(int)
  EXPECT_EQ(kernel_base_name("_ZN12_GLOBAL__N_11kEi"), "(anonymous namespace)::k");
  EXPECT_EQ(strip_signature("void (anonymous namespace)::k<float>(float)"),
            "(anonymous namespace)::k<float>");
}

TEST(KernelName, OperatorOverloads) {
  // ns::S::operator()(int) const
  EXPECT_EQ(kernel_base_name("_ZNK2ns1SclEi"), "ns::S::operator()");
  // operator<(A const&, A const&)
  EXPECT_EQ(kernel_base_name("_ZltRK1AS1_"), "operator<");
  // bool operator< <int>(B<int> const&, B<int> const&): template operator with return type
  EXPECT_EQ(strip_signature("bool operator< <int>(B<int> const&, B<int> const&)"),
            "operator< <int>");
  EXPECT_EQ(strip_signature("ns::S::operator>>(int)"), "ns::S::operator>>");
  EXPECT_EQ(strip_signature("ns::S::operator int() const"), "ns::S::operator int");
  EXPECT_EQ(strip_signature("operator new[](unsigned long)"), "operator new[]");
}

TEST(KernelName, LambdaInTemplateArgument) {
  EXPECT_EQ(strip_signature("void k<f()::{lambda(int)#1}>(f()::{lambda(int)#1})"),
            "k<f()::{lambda(int)#1}>");
}

TEST(KernelName, IdentifierContainingOperatorIsNotAnOperator) {
  EXPECT_EQ(strip_signature("void ns::operators_kernel<int>(int)"), "ns::operators_kernel<int>");
}

}  // namespace
}  // namespace phantora::kernels
