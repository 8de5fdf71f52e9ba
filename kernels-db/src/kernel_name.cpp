#include "phantora/kernels/kernel_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace phantora::kernels {
namespace {

bool is_ident(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool opens(char c) {
  return c == '(' || c == '<' || c == '[' || c == '{';
}
bool closes(char c) {
  return c == ')' || c == '>' || c == ']' || c == '}';
}

// Position of the last "operator" token in s (not part of a longer identifier), or npos.
size_t find_operator(std::string_view s) {
  constexpr std::string_view kWord = "operator";
  for (size_t pos = s.rfind(kWord); pos != std::string_view::npos;
       pos = pos == 0 ? std::string_view::npos : s.rfind(kWord, pos - 1)) {
    const size_t end = pos + kWord.size();
    const bool starts = pos == 0 || !is_ident(s[pos - 1]);
    const bool ends = end == s.size() || !is_ident(s[end]);
    if (starts && ends) return pos;
  }
  return std::string_view::npos;
}

// Start of the qualified name that ends at `end` (exclusive): walk back over scopes and
// template argument lists until a space outside any brackets, which separates the name from
// a return type. Brackets inside the name are balanced (operator symbols are handled by the
// caller).
size_t qualified_name_start(std::string_view s, size_t end) {
  int depth = 0;
  for (size_t i = end; i > 0; --i) {
    const char c = s[i - 1];
    if (closes(c)) {
      ++depth;
    } else if (opens(c)) {
      --depth;
    } else if (c == ' ' && depth == 0) {
      return i;
    }
  }
  return 0;
}

// The signature without the cv/ref/noexcept qualifiers a member function may end with.
std::string_view strip_trailing_qualifiers(std::string_view s) {
  for (bool again = true; again;) {
    again = false;
    for (std::string_view q : {" const", " volatile", " &&", " &", " noexcept"}) {
      if (s.ends_with(q)) {
        s.remove_suffix(q.size());
        again = true;
      }
    }
  }
  return s;
}

}  // namespace

std::optional<std::string> demangle(std::string_view mangled) {
  if (!mangled.starts_with("_Z")) return std::nullopt;
  int status = 0;
  const std::string copy(mangled);  // __cxa_demangle needs a NUL-terminated string
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(copy.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || out == nullptr) return std::nullopt;
  return std::string(out.get());
}

std::string strip_signature(std::string_view demangled) {
  std::string_view s = strip_trailing_qualifiers(demangled);
  // The parameter list is the bracket group that closes at the very end.
  if (!s.ends_with(')')) return std::string(s);
  int depth = 0;
  size_t open = std::string_view::npos;
  for (size_t i = s.size(); i > 0; --i) {
    const char c = s[i - 1];
    if (c == ')') ++depth;
    if (c == '(' && --depth == 0) {
      open = i - 1;
      break;
    }
  }
  if (open == std::string_view::npos || open == 0) return std::string(s);
  s = s.substr(0, open);

  // Operator names ("operator<", "operator()", "operator new[]", "operator int") contain
  // brackets and spaces of their own: take them whole and find the name's start before them.
  const size_t op = find_operator(s);
  if (op != std::string_view::npos) return std::string(s.substr(qualified_name_start(s, op)));
  return std::string(s.substr(qualified_name_start(s, s.size())));
}

std::string kernel_base_name(std::string_view mangled) {
  const std::optional<std::string> full = demangle(mangled);
  if (!full) return std::string(mangled);
  return strip_signature(*full);
}

}  // namespace phantora::kernels
