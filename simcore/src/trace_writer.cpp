#include "phantora/simcore/trace_writer.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace phantora::sim {
namespace {

// Chrome trace timestamps are microseconds; keep picosecond resolution in the fraction.
std::string micros(SimTime t) {
  return fmt::format("{}.{:06}", t.as_ps() / 1000000, t.as_ps() % 1000000);
}

}  // namespace

TraceWriter::TraceWriter(std::filesystem::path path)
    : path_(std::move(path)), partial_(path_.string() + ".partial") {
  file_ = std::fopen(partial_.c_str(), "w");
  if (file_ == nullptr) {
    throw std::runtime_error(fmt::format("cannot write trace file {}", partial_.string()));
  }
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", file_);
}

TraceWriter::~TraceWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void TraceWriter::begin_event() {
  if (!first_) std::fputs(",\n", file_);
  first_ = false;
}

void TraceWriter::span(uint32_t pid, uint64_t tid, std::string_view name, std::string_view category,
                       SimTime start, SimTime end, const nlohmann::json& args) {
  begin_event();
  nlohmann::json n = std::string(name);
  nlohmann::json c = std::string(category);
  fmt::print(
      file_, R"({{"ph":"X","pid":{},"tid":{},"name":{},"cat":{},"ts":{},"dur":{},"args":{}}})", pid,
      tid, n.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      c.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), micros(start),
      micros(end - start), args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string TraceWriter::quote(std::string_view s) {
  return nlohmann::json(std::string(s)).dump();
}

void TraceWriter::op_span(uint32_t pid, uint64_t tid, std::string_view quoted_name,
                          std::string_view category, SimTime start, SimTime end,
                          std::string_view source, SimTime submitted, int gpu, uint64_t bytes) {
  begin_event();
  fmt::memory_buffer buf;
  fmt::format_to(
      std::back_inserter(buf),
      R"({{"ph":"X","pid":{},"tid":{},"name":{},"cat":"{}","ts":{},"dur":{},"args":{{"source":"{}","submitted_us":{},"gpu":{})",
      pid, tid, quoted_name, category, micros(start), micros(end - start), source,
      micros(submitted), gpu);
  if (bytes != 0) fmt::format_to(std::back_inserter(buf), R"(,"bytes":{})", bytes);
  buf.append(std::string_view("}}"));
  std::fwrite(buf.data(), 1, buf.size(), file_);
}

void TraceWriter::counter(uint32_t pid, std::string_view name, SimTime at,
                          const nlohmann::json& values) {
  begin_event();
  nlohmann::json n = std::string(name);
  fmt::print(file_, R"({{"ph":"C","pid":{},"name":{},"ts":{},"args":{}}})", pid,
             n.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), micros(at),
             values.dump());
}

void TraceWriter::process_name(uint32_t pid, std::string_view name, int sort_index) {
  nlohmann::json n = std::string(name);
  begin_event();
  fmt::print(file_, R"({{"ph":"M","pid":{},"name":"process_name","args":{{"name":{}}}}})", pid,
             n.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  begin_event();
  fmt::print(file_,
             R"({{"ph":"M","pid":{},"name":"process_sort_index","args":{{"sort_index":{}}}}})", pid,
             sort_index);
}

void TraceWriter::thread_name(uint32_t pid, uint64_t tid, std::string_view name, int sort_index) {
  nlohmann::json n = std::string(name);
  begin_event();
  fmt::print(file_, R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":{}}}}})",
             pid, tid, n.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  begin_event();
  fmt::print(
      file_,
      R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})",
      pid, tid, sort_index);
}

void TraceWriter::finish() {
  if (file_ == nullptr) return;
  std::fputs("\n]}\n", file_);
  const bool ok = std::fflush(file_) == 0;
  std::fclose(file_);
  file_ = nullptr;
  if (!ok) throw std::runtime_error(fmt::format("writing {} failed", partial_.string()));
  std::filesystem::rename(partial_, path_);
}

}  // namespace phantora::sim
