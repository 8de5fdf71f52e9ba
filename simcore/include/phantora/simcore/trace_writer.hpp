// Streams a Chrome/Perfetto trace (JSON "traceEvents") to disk as the run goes, so memory stays
// flat however long the run. Written to `<path>.partial` and renamed into place by finish(), so
// a reader never sees a half-written trace.json under its final name.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "phantora/units.hpp"

namespace phantora::sim {

class TraceWriter {
 public:
  explicit TraceWriter(std::filesystem::path path);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // A complete ("X") event on process `pid`, thread `tid`.
  void span(uint32_t pid, uint64_t tid, std::string_view name, std::string_view category,
            SimTime start, SimTime end, const nlohmann::json& args);
  // The per-operation fast path: `quoted_name` is already a JSON string literal (quotes and
  // escapes included), so the hot loop formats numbers only.
  void op_span(uint32_t pid, uint64_t tid, std::string_view quoted_name, std::string_view category,
               SimTime start, SimTime end, std::string_view source, SimTime submitted, int gpu,
               uint64_t bytes);
  static std::string quote(std::string_view s);
  // A counter ("C") event, e.g. memory in use on a GPU.
  void counter(uint32_t pid, std::string_view name, SimTime at, const nlohmann::json& values);
  void process_name(uint32_t pid, std::string_view name, int sort_index);
  void thread_name(uint32_t pid, uint64_t tid, std::string_view name, int sort_index);

  // Closes the JSON and moves the file to its final name.
  void finish();

 private:
  void begin_event();
  std::filesystem::path path_;
  std::filesystem::path partial_;
  std::FILE* file_ = nullptr;
  bool first_ = true;
};

}  // namespace phantora::sim
