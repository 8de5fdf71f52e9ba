// Strict reading of one TOML table: every value has the expected type, every required key is
// present, and no key is left unread (a typo is an error, not a silently ignored setting).
// Errors name the source, the line and the dotted key.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

namespace phantora::kernels::detail {

// Parses `text`; a syntax error becomes a DataError "source:line:column: message".
toml::table parse_toml(std::string_view text, std::string_view source);

class TableReader {
 public:
  // `path` is the dotted name of `table` within the document ("" for the root).
  TableReader(const toml::table& table, std::string_view source, std::string path);

  int64_t integer(std::string_view key);
  double number(std::string_view key);  // an integer is accepted where a float is expected
  std::string string(std::string_view key);
  std::vector<std::string> string_array(std::string_view key);
  TableReader table(std::string_view key);

  // Keys of this table, in document order (toml++ keeps them sorted; we sort by line).
  std::vector<std::string> keys() const;

  // Throws for the first key that was never read.
  void reject_unknown() const;

  // "source:line: key 'path.key': what", with the line of the key (or of the table when the
  // key is missing).
  [[noreturn]] void fail(std::string_view key, std::string_view what) const;

 private:
  const toml::node& require(std::string_view key);
  std::string dotted(std::string_view key) const;

  const toml::table& table_;
  std::string source_;
  std::string path_;
  std::set<std::string, std::less<>> read_;
};

}  // namespace phantora::kernels::detail
