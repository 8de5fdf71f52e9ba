// Reading a record's fixed-size body from the bytes a client sent, with the size checked.
#pragma once

#include <cstring>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "phantora/simcore/protocol_error.hpp"

namespace phantora::sim {

// A record that starts with a T (and may carry more after it, such as a name).
template <typename T>
T read_body(std::span<const std::byte> body, std::string_view what) {
  if (body.size() < sizeof(T)) {
    throw ProtocolError(
        fmt::format("{} record is {} bytes, expected {}", what, body.size(), sizeof(T)));
  }
  T value;
  std::memcpy(&value, body.data(), sizeof(T));
  return value;
}

// A record that is exactly one T.
template <typename T>
T read_exact(std::span<const std::byte> body, std::string_view what) {
  if (body.size() != sizeof(T)) {
    throw ProtocolError(
        fmt::format("{} record is {} bytes, expected {}", what, body.size(), sizeof(T)));
  }
  return read_body<T>(body, what);
}

}  // namespace phantora::sim
