// Numeric command-line options whose errors state the accepted range in words, the same way for
// every option and subcommand: "--represent-dp must be a whole number of at least 1, got 0".
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace phantora::tools {

// What an option accepts.
struct NumberRule {
  bool whole = false;          // an integer, within int's range
  double min = 0;              // the least value ...
  bool min_exclusive = false;  // ... or the bound it must exceed
  std::optional<double> max;   // the largest value, if any

  std::string words() const;  // "a whole number of at least 1", "a number greater than 0"
};

NumberRule whole_at_least(int min);
NumberRule whole_from_to(int min, int max);
NumberRule number_at_least(double min);
NumberRule number_above(double bound);

// A value outside its option's rule. Thrown through CLI11 as it is (not as CLI11's own
// ValidationError, which would prefix the option's name and exit with CLI11's code 105).
class OptionValueError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// `text` as a number under `rule`; OptionValueError "<option> must be <words>, got <text>".
double parse_number(std::string_view option, std::string_view text, const NumberRule& rule);

// A CLI11 check applying `rule` to the value of `option`.
CLI::Validator in_range(std::string option, NumberRule rule);

}  // namespace phantora::tools
