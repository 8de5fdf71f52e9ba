#include "recorded_launches.hpp"

#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

namespace phantora::profiler {

RecordedLaunches::RecordedLaunches(const CudaApi& api, const std::vector<LaunchRecord>& records)
    : api_(api), by_signature_(launches_by_signature(records)) {}

RecordedLaunches::~RecordedLaunches() {
  for (const auto& [path, module] : modules_) api_.cu_module_unload(module);
}

const LaunchRecord* RecordedLaunches::find(const std::string& signature) const {
  const auto it = by_signature_.find(signature);
  return it == by_signature_.end() ? nullptr : it->second;
}

CUfunction RecordedLaunches::function(const LaunchRecord& r) {
  const std::string path = r.image.string();
  auto it = modules_.find(path);
  if (it == modules_.end()) {
    std::ifstream in(r.image, std::ios::binary);
    if (!in) throw std::runtime_error(fmt::format("{}: cannot read the kernel's image", path));
    const std::string image{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    CUmodule module = nullptr;
    check(api_, api_.cu_module_load_data(&module, image.data()),
          fmt::format("cuModuleLoadData ({})", path).c_str());
    it = modules_.emplace(path, module).first;
  }
  CUfunction f = nullptr;
  check(api_, api_.cu_module_get_function(&f, it->second, r.kernel.c_str()),
        fmt::format("cuModuleGetFunction ({})", r.kernel).c_str());
  return f;
}

}  // namespace phantora::profiler
