// The error for a malformed or unexpected message from a client.
#pragma once

#include <stdexcept>

namespace phantora::sim {

// A malformed or unexpected message. The connection that sent it is closed; the daemon lives on.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace phantora::sim
