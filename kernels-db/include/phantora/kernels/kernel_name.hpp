// Kernel names as users write them. A launched kernel is known by its mangled name
// (`_Z4busyPfi`); people write `busy` or `ns::fill<float>`. These helpers turn the first into
// the second with the C++ ABI demangler.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace phantora::kernels {

// The full demangled signature, or nullopt when `mangled` is not an Itanium-mangled name
// (an extern "C" kernel is called by its plain name).
std::optional<std::string> demangle(std::string_view mangled);

// A demangled function signature without its return type and parameter list:
// "void ns::fill<float>(float*, int)" -> "ns::fill<float>",
// "ns::S::operator()(int) const" -> "ns::S::operator()".
std::string strip_signature(std::string_view demangled);

// demangle + strip_signature; the input itself when it is not a mangled name.
std::string kernel_base_name(std::string_view mangled);

}  // namespace phantora::kernels
