// The topology presets compiled into the library (generated from netmodel/data/*.toml).
#pragma once

#include <string_view>
#include <vector>

namespace phantora::net::detail {

struct EmbeddedPreset {
  std::string_view name;
  std::string_view toml;
};

const std::vector<EmbeddedPreset>& embedded_presets();

}  // namespace phantora::net::detail
