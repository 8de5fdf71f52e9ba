#include "toml_reader.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "phantora/kernels/data_error.hpp"

namespace phantora::kernels::detail {

toml::table parse_toml(std::string_view text, std::string_view source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw DataError(fmt::format("{}:{}:{}: {}", source, e.source().begin.line,
                                e.source().begin.column, e.description()));
  }
}

TableReader::TableReader(const toml::table& table, std::string_view source, std::string path)
    : table_(table), source_(source), path_(std::move(path)) {}

std::string TableReader::dotted(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

void TableReader::fail(std::string_view key, std::string_view what) const {
  const toml::node* node = table_.get(key);
  const auto line = node != nullptr ? node->source().begin.line : table_.source().begin.line;
  throw DataError(fmt::format("{}:{}: key '{}': {}", source_, line, dotted(key), what));
}

const toml::node& TableReader::require(std::string_view key) {
  const toml::node* node = table_.get(key);
  if (node == nullptr) fail(key, "missing");
  read_.emplace(key);
  return *node;
}

int64_t TableReader::integer(std::string_view key) {
  const toml::node& node = require(key);
  if (!node.is_integer()) fail(key, "expected an integer");
  return node.as_integer()->get();
}

double TableReader::number(std::string_view key) {
  const toml::node& node = require(key);
  if (node.is_integer()) return static_cast<double>(node.as_integer()->get());
  if (!node.is_floating_point()) fail(key, "expected a number");
  return node.as_floating_point()->get();
}

std::string TableReader::string(std::string_view key) {
  const toml::node& node = require(key);
  if (!node.is_string()) fail(key, "expected a string");
  return node.as_string()->get();
}

std::vector<std::string> TableReader::string_array(std::string_view key) {
  const toml::node& node = require(key);
  const toml::array* array = node.as_array();
  if (array == nullptr) fail(key, "expected an array of strings");
  std::vector<std::string> out;
  for (const toml::node& element : *array) {
    if (!element.is_string()) fail(key, "expected an array of strings");
    out.push_back(element.as_string()->get());
  }
  return out;
}

TableReader TableReader::table(std::string_view key) {
  const toml::node& node = require(key);
  if (!node.is_table()) fail(key, "expected a table");
  return TableReader(*node.as_table(), source_, dotted(key));
}

std::vector<std::string> TableReader::keys() const {
  std::vector<std::pair<toml::source_index, std::string>> by_line;
  for (const auto& [key, node] : table_) {
    by_line.emplace_back(node.source().begin.line, std::string(key.str()));
  }
  std::stable_sort(by_line.begin(), by_line.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& entry : by_line) out.push_back(std::move(entry.second));
  return out;
}

void TableReader::reject_unknown() const {
  for (const auto& [key, node] : table_) {
    if (!read_.contains(key.str())) fail(key.str(), "unknown key");
  }
}

}  // namespace phantora::kernels::detail
