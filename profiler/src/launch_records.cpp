#include "phantora/profiler/launch_records.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "phantora/kernels/cost_model.hpp"
#include "phantora/kernels/data_error.hpp"
#include "phantora/kernels/op_desc.hpp"

namespace phantora::profiler {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> unhex(std::string_view h) {
  if (h == "-") return std::string();
  if (h.size() % 2 != 0) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out(h.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(h[2 * i]), lo = digit(h[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

void read_file(const fs::path& file, const fs::path& images, std::vector<LaunchRecord>& out) {
  std::ifstream in(file);
  if (!in) throw kernels::DataError(fmt::format("{}: cannot read", file.string()));
  std::optional<LaunchRecord> r;
  size_t line_no = 0;
  auto bad = [&](std::string_view what) {
    return kernels::DataError(
        fmt::format("{}:{}: {} (docs/kernels-db.md, \"Measuring\")", file.string(), line_no, what));
  };
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::istringstream s(line);
    std::string tag;
    s >> tag;
    if (tag == "launch") {
      r.emplace();  // a record without `end` before this one was cut short: dropped
      std::string image, work;
      s >> r->kernel >> image;
      for (uint32_t& v : r->grid) s >> v;
      for (uint32_t& v : r->block) s >> v;
      s >> r->shared_mem >> work;
      const std::optional<std::string> w = unhex(work);
      if (!s || !w || w->size() != sizeof(wire::KernelWork)) {
        throw bad("a launch line needs: name image grid(3) block(3) shared-memory work-bytes");
      }
      std::memcpy(&r->work, w->data(), sizeof(wire::KernelWork));
      if (image != "-") r->image = images / image;
      continue;
    }
    if (!r) {
      if (tag.empty()) continue;
      throw bad("'" + tag + "' outside a launch record");
    }
    if (tag == "param") {
      std::string kind, bytes;
      s >> kind >> bytes;
      const std::optional<std::string> b = unhex(bytes);
      if (!s || !b || (kind != "exact" && kind != "window")) {
        throw bad("a param line is: param exact|window HEX");
      }
      r->params.push_back({*b, kind == "exact"});
    } else if (tag == "pointer") {
      RecordedPointer p;
      s >> p.param >> p.offset >> p.allocation >> p.at;
      if (!s || p.param >= r->params.size())
        throw bad("a pointer line is: param offset allocation at");
      r->pointers.push_back(p);
    } else if (tag == "allocation") {
      uint64_t size = 0;
      s >> size;
      if (!s) throw bad("an allocation line is: allocation SIZE");
      r->allocations.push_back(size);
    } else if (tag == "end") {
      for (const RecordedPointer& p : r->pointers) {
        if (p.allocation >= r->allocations.size() || p.at >= r->allocations[p.allocation]) {
          throw bad("a pointer names an allocation the record does not have");
        }
      }
      out.push_back(std::move(*r));
      r.reset();
    } else {
      throw bad("unknown line '" + tag + "'");
    }
  }
}

}  // namespace

std::vector<LaunchRecord> read_launch_records(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("launches-") && name.ends_with(".txt")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());  // one order for every reading of the same records
  std::vector<LaunchRecord> out;
  for (const fs::path& f : files) read_file(f, dir / "images", out);
  return out;
}

std::string modelled_signature(const LaunchRecord& r) {
  if (const auto attention = kernels::attention_desc(r.work)) return kernels::signature(*attention);
  if (const auto conv = kernels::conv_desc(r.work)) return kernels::signature(*conv);
  if (const auto work =
          kernels::memory_op_desc(r.work.kind, r.work.bytes_read, r.work.bytes_written)) {
    return kernels::signature(*work);
  }
  return kernels::kernel_signature(
      kernels::KernelLaunchInfo{r.kernel, r.grid, r.block, r.shared_mem});
}

std::map<std::string, const LaunchRecord*> launches_by_signature(
    const std::vector<LaunchRecord>& records) {
  std::map<std::string, const LaunchRecord*> out;
  for (const LaunchRecord& r : records) out.try_emplace(modelled_signature(r), &r);
  return out;
}

}  // namespace phantora::profiler
