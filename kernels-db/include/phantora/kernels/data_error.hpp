// The one error type of kernels-db: bad input data (a preset file, a cost-model file, a CSV of
// pinned kernel times). Its message names the file, the line and what is wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace phantora::kernels {

class DataError : public std::runtime_error {
 public:
  explicit DataError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace phantora::kernels
