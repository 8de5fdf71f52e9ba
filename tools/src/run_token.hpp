// The run's token: what a rank shows the daemon in its hello (wire::Hello::token). On the
// local launcher's Unix socket it comes on top of the socket's owner check; over TCP it is the
// only authentication, so it is random per run unless the user supplies one to hand to ranks
// started elsewhere (--token-file). Never printed.
#pragma once

#include <filesystem>
#include <string>

namespace phantora::tools {

// 32 hexadecimal characters from /dev/urandom: the whole token field.
std::string random_token();

// Why `token` cannot be a run's token (16 to 32 printable ASCII characters, no blanks), or ""
// when it can.
std::string token_problem(const std::string& token);

// The token in `path`: its first line, without the line end. Throws std::invalid_argument
// naming the file when it cannot be read or does not hold a good token.
std::string read_token_file(const std::filesystem::path& path);

// Writes `text` to `path` (replaced whole, through a temporary file) readable by the user only
// (mode 0600) from the first byte on.
void write_private_file(const std::filesystem::path& path, const std::string& text);

}  // namespace phantora::tools
