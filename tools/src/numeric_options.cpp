#include "numeric_options.hpp"

#include <charconv>
#include <climits>
#include <cmath>

#include <fmt/format.h>

namespace phantora::tools {

namespace {

// Shortest text of a bound: 1, 0.5, 65535.
std::string bound(double v) {
  return fmt::format("{:g}", v);
}

// Whole: digits with an optional sign; real: what from_chars accepts, finite. The whole text.
std::optional<double> read(std::string_view text, bool whole) {
  if (text.empty()) return std::nullopt;
  const char* end = text.data() + text.size();
  if (whole) {
    long long v = 0;
    const auto [p, ec] = std::from_chars(text.data(), end, v);
    if (ec == std::errc::result_out_of_range) return HUGE_VAL;  // outside any int range
    if (ec != std::errc() || p != end) return std::nullopt;
    return static_cast<double>(v);
  }
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::string NumberRule::words() const {
  const std::string kind = whole ? "a whole number" : "a number";
  if (max) return fmt::format("{} from {} to {}", kind, bound(min), bound(*max));
  if (min_exclusive) return fmt::format("{} greater than {}", kind, bound(min));
  return fmt::format("{} of at least {}", kind, bound(min));
}

NumberRule whole_at_least(int min) {
  return {.whole = true, .min = static_cast<double>(min), .min_exclusive = false, .max = {}};
}

NumberRule whole_from_to(int min, int max) {
  return {.whole = true,
          .min = static_cast<double>(min),
          .min_exclusive = false,
          .max = static_cast<double>(max)};
}

NumberRule number_at_least(double min) {
  return {.whole = false, .min = min, .min_exclusive = false, .max = {}};
}

NumberRule number_above(double bound) {
  return {.whole = false, .min = bound, .min_exclusive = true, .max = {}};
}

double parse_number(std::string_view option, std::string_view text, const NumberRule& rule) {
  const std::optional<double> v = read(text, rule.whole);
  const bool ok = v && (rule.min_exclusive ? *v > rule.min : *v >= rule.min) &&
                  (!rule.max || *v <= *rule.max) && (!rule.whole || *v <= INT_MAX);
  if (!ok) {
    const bool too_large = v && rule.whole && *v > INT_MAX && (!rule.max || *rule.max >= INT_MAX);
    throw OptionValueError(fmt::format("{} must be {}, got {}{}", option, rule.words(),
                                       text.empty() ? "nothing" : text,
                                       too_large ? " (too large)" : ""));
  }
  return *v;
}

CLI::Validator in_range(std::string option, NumberRule rule) {
  return CLI::Validator(
      [option, rule](std::string& value) {
        parse_number(option, value, rule);
        return std::string();
      },
      rule.words());
}

}  // namespace phantora::tools
