// A status line at the bottom of a terminal that the job's own output scrolls past: cleared
// before the job's bytes are written, drawn again once they have ended a line. While the job is
// in the middle of a line (a prompt, a progress bar redrawn with \r) it is not drawn, so that
// nothing of the job's is overwritten. Used by the job-output copier (job_output.hpp), the one
// process that writes the job's output to the terminal. Returns the bytes to write rather than
// writing them, so that the rules can be tested.
#pragma once

#include <string>
#include <string_view>

namespace phantora::tools {

class StatusLine {
 public:
  // Before the job's bytes go to the terminal: clears the status line if it is shown.
  std::string before_output();
  // After them: notes whether they ended a line, and then redraws the status line.
  std::string after_output(std::string_view bytes, int columns);
  // A new text: drawn at once where the cursor is at the start of a line.
  std::string update(std::string text, int columns);
  // The end of the run: clears the status line if it is shown.
  std::string finish() { return before_output(); }

  // "\r" + erase to the end of the line (ECMA-48 EL).
  static constexpr std::string_view kClear = "\r\033[K";

 private:
  std::string draw(int columns);
  std::string text_;
  bool shown_ = false;
  bool at_line_start_ = true;  // phantora's own banner ends its line
};

}  // namespace phantora::tools
