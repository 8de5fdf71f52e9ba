// Numeric options say their accepted range in words, whatever was wrong with the value.
#include <gtest/gtest.h>

#include <string>

#include "numeric_options.hpp"

namespace t = phantora::tools;

namespace {

std::string error_of(const char* option, const char* text, const t::NumberRule& rule) {
  try {
    t::parse_number(option, text, rule);
  } catch (const t::OptionValueError& e) {
    return e.what();
  }
  return "";
}

TEST(NumericOptions, RangesInWords) {
  EXPECT_EQ(t::whole_at_least(1).words(), "a whole number of at least 1");
  EXPECT_EQ(t::whole_from_to(1, 63).words(), "a whole number from 1 to 63");
  EXPECT_EQ(t::number_above(0).words(), "a number greater than 0");
  EXPECT_EQ(t::number_at_least(1).words(), "a number of at least 1");
}

TEST(NumericOptions, AcceptsValuesInRange) {
  EXPECT_EQ(t::parse_number("--represent-dp", "128", t::whole_at_least(1)), 128);
  EXPECT_EQ(t::parse_number("--gpus-per-host", "63", t::whole_from_to(1, 63)), 63);
  EXPECT_EQ(t::parse_number("--nic-gbytes-per-s", "48.5", t::number_above(0)), 48.5);
  EXPECT_EQ(t::parse_number("--oversubscription", "1", t::number_at_least(1)), 1);
}

TEST(NumericOptions, RefusesWithTheRangeAndTheValue) {
  EXPECT_EQ(error_of("--represent-dp", "0", t::whole_at_least(1)),
            "--represent-dp must be a whole number of at least 1, got 0");
  EXPECT_EQ(error_of("--represent-dp", "1.5", t::whole_at_least(1)),
            "--represent-dp must be a whole number of at least 1, got 1.5");
  EXPECT_EQ(error_of("--hosts", "two", t::whole_at_least(1)),
            "--hosts must be a whole number of at least 1, got two");
  EXPECT_EQ(error_of("--hosts", "99999999999", t::whole_at_least(1)),
            "--hosts must be a whole number of at least 1, got 99999999999 (too large)");
  EXPECT_EQ(error_of("--gpus-per-host", "64", t::whole_from_to(1, 63)),
            "--gpus-per-host must be a whole number from 1 to 63, got 64");
  EXPECT_EQ(error_of("--nic-gbytes-per-s", "0", t::number_above(0)),
            "--nic-gbytes-per-s must be a number greater than 0, got 0");
  EXPECT_EQ(error_of("--nic-gbytes-per-s", "inf", t::number_above(0)),
            "--nic-gbytes-per-s must be a number greater than 0, got inf");
  EXPECT_EQ(error_of("--oversubscription", "0.5", t::number_at_least(1)),
            "--oversubscription must be a number of at least 1, got 0.5");
}

}  // namespace
