// A minimal CSV line splitter (RFC 4180 quoting: fields may be wrapped in double quotes, a
// doubled quote inside stands for one). Demangled kernel names contain commas, so quoting is
// needed: "ns::f<int, float>",12.5
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phantora::kernels::detail {

// The fields of one line, or nullopt with `error` set when a quoted field is malformed.
std::optional<std::vector<std::string>> split_csv_line(std::string_view line, std::string& error);

}  // namespace phantora::kernels::detail
