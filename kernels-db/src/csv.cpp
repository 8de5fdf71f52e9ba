#include "csv.hpp"

namespace phantora::kernels::detail {

std::optional<std::vector<std::string>> split_csv_line(std::string_view line, std::string& error) {
  std::vector<std::string> fields(1);
  size_t i = 0;
  while (i <= line.size()) {
    std::string& field = fields.back();
    if (i < line.size() && line[i] == '"') {
      // Quoted field: runs to the next lone quote, which must end the field.
      for (++i;; ++i) {
        if (i >= line.size()) {
          error = "unterminated quoted field";
          return std::nullopt;
        }
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            ++i;
            continue;
          }
          ++i;
          break;
        }
        field += line[i];
      }
      if (i < line.size() && line[i] != ',') {
        error = "text after a closing quote";
        return std::nullopt;
      }
    } else {
      while (i < line.size() && line[i] != ',') field += line[i++];
    }
    if (i >= line.size()) break;
    ++i;  // the comma
    fields.emplace_back();
  }
  return fields;
}

}  // namespace phantora::kernels::detail
