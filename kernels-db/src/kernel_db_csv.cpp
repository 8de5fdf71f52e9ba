// CSV import and export of kernel database rows (columns in docs/kernels-db.md).
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "csv.hpp"
#include "phantora/kernels/data_error.hpp"
#include "phantora/kernels/kernel_db.hpp"
#include "phantora/kernels/op_desc.hpp"

namespace phantora::kernels {
namespace {

constexpr std::string_view kHeader =
    "gpu,signature,count,mean_us,min_us,max_us,stddev_us,source,device_name,driver_version,"
    "library_versions,recorded_at";
constexpr size_t kColumns = 12;

std::string csv_field(std::string_view field) {
  if (field.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string_view trim_cr(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string entries_to_csv(const std::vector<DbEntry>& rows) {
  std::string out = std::string(kHeader) + "\n";
  for (const DbEntry& e : rows) {
    // {} prints the shortest text that reads back to the same double: export is lossless.
    out +=
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(e.gpu),
                    csv_field(e.signature), e.stats.count, e.stats.mean_us, e.stats.min_us,
                    e.stats.max_us, e.stats.stddev_us, to_string(e.source),
                    csv_field(e.provenance.device_name), csv_field(e.provenance.driver_version),
                    csv_field(e.provenance.library_versions), csv_field(e.provenance.recorded_at));
  }
  return out;
}

std::string missing_to_csv(const std::vector<MissingEntry>& rows) {
  std::string out = "gpu,signature,occurrences,modelled_us\n";
  for (const MissingEntry& m : rows) {
    out += fmt::format("{},{},{},{}\n", csv_field(m.gpu), csv_field(m.signature), m.occurrences,
                       m.modelled_us);
  }
  return out;
}

std::vector<DbEntry> entries_from_csv(std::string_view text, std::string_view source) {
  std::vector<DbEntry> rows;
  std::map<std::pair<std::string, std::string>, size_t> line_of;
  size_t line_no = 0;
  bool seen_header = false;
  auto fail = [&](std::string_view what) {
    return DataError(fmt::format("{}:{}: {}", source, line_no, what));
  };
  auto number = [&](const std::string& field, std::string_view column) {
    double v = 0;
    const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (field.empty() || ec != std::errc() || ptr != field.data() + field.size() ||
        !std::isfinite(v) || v < 0) {
      throw fail(fmt::format("{} '{}' is not a finite, non-negative number", column, field));
    }
    return v;
  };

  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = trim_cr(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (line.empty()) continue;
    if (!seen_header) {
      if (line != kHeader) {
        throw fail(fmt::format("bad header '{}': expected exactly '{}'", line, kHeader));
      }
      seen_header = true;
      continue;
    }
    std::string error;
    const auto fields = detail::split_csv_line(line, error);
    if (!fields) throw fail(error);
    if (fields->size() != kColumns) {
      throw fail(fmt::format("expected {} fields, found {}", kColumns, fields->size()));
    }
    const std::vector<std::string>& f = *fields;
    DbEntry e;
    e.gpu = f[0];
    e.signature = f[1];
    if (e.gpu.empty()) throw fail("empty gpu");
    if (!is_canonical_signature(e.signature)) {
      throw fail(
          fmt::format("'{}' is not a canonical signature (docs/kernels-db.md)", e.signature));
    }
    uint64_t count = 0;
    const auto [ptr, ec] = std::from_chars(f[2].data(), f[2].data() + f[2].size(), count);
    if (f[2].empty() || ec != std::errc() || ptr != f[2].data() + f[2].size() || count == 0) {
      throw fail(fmt::format("count '{}' is not a positive integer", f[2]));
    }
    e.stats.count = count;
    e.stats.mean_us = number(f[3], "mean_us");
    e.stats.min_us = number(f[4], "min_us");
    e.stats.max_us = number(f[5], "max_us");
    e.stats.stddev_us = number(f[6], "stddev_us");
    if (!(e.stats.min_us <= e.stats.mean_us && e.stats.mean_us <= e.stats.max_us)) {
      throw fail("needs min_us <= mean_us <= max_us");
    }
    const std::optional<EntrySource> src = parse_entry_source(f[7]);
    if (!src) throw fail(fmt::format("source '{}' is not measured, imported or pinned", f[7]));
    e.source = *src;
    e.provenance = {f[8], f[9], f[10], f[11]};
    const auto [it, inserted] = line_of.emplace(std::make_pair(e.gpu, e.signature), line_no);
    if (!inserted) {
      throw fail(fmt::format("({}, {}) is listed twice (first on line {})", e.gpu, e.signature,
                             it->second));
    }
    rows.push_back(std::move(e));
  }
  if (!seen_header) {
    throw DataError(fmt::format("{}:1: empty file: expected the header '{}'", source, kHeader));
  }
  return rows;
}

std::vector<DbEntry> entries_from_csv_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("{}: cannot open CSV file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return entries_from_csv(text.str(), path.string());
}

}  // namespace phantora::kernels
