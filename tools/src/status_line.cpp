#include "status_line.hpp"

#include <algorithm>

namespace phantora::tools {

std::string StatusLine::before_output() {
  if (!shown_) return "";
  shown_ = false;
  return std::string(kClear);
}

std::string StatusLine::after_output(std::string_view bytes, int columns) {
  if (!bytes.empty()) at_line_start_ = bytes.back() == '\n';
  return draw(columns);
}

std::string StatusLine::update(std::string text, int columns) {
  text_ = std::move(text);
  if (text_.empty()) return before_output();
  return draw(columns);
}

std::string StatusLine::draw(int columns) {
  if (!at_line_start_ || text_.empty()) return "";
  shown_ = true;
  // One column short of the width: a line that fills the terminal wraps on some, and a wrapped
  // line can no longer be cleared with a carriage return.
  const size_t fits = static_cast<size_t>(std::max(columns - 1, 1));
  return std::string(kClear) + text_.substr(0, fits);
}

}  // namespace phantora::tools
