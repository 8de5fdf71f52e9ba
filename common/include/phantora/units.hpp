// Strong unit types shared by every component: simulated time, bytes, bandwidth.
// Time is an integer count of picoseconds (as in htsim): exact addition, no rounding drift,
// and 2^63 ps is about 106 days of simulated time.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace phantora {

class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime ps(int64_t v) { return SimTime(v); }
  static constexpr SimTime ns(double v) { return SimTime(static_cast<int64_t>(v * 1e3 + 0.5)); }
  static constexpr SimTime us(double v) { return SimTime(static_cast<int64_t>(v * 1e6 + 0.5)); }
  static constexpr SimTime ms(double v) { return SimTime(static_cast<int64_t>(v * 1e9 + 0.5)); }
  static constexpr SimTime seconds(double v) {
    return SimTime(static_cast<int64_t>(v * 1e12 + 0.5));
  }
  static constexpr SimTime zero() { return SimTime(0); }
  static constexpr SimTime infinite() { return SimTime(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t as_ps() const { return ps_; }
  constexpr double as_ns() const { return static_cast<double>(ps_) / 1e3; }
  constexpr double as_us() const { return static_cast<double>(ps_) / 1e6; }
  constexpr double as_ms() const { return static_cast<double>(ps_) / 1e9; }
  constexpr double as_seconds() const { return static_cast<double>(ps_) / 1e12; }
  constexpr bool is_infinite() const { return ps_ == std::numeric_limits<int64_t>::max(); }

  constexpr SimTime operator+(SimTime o) const { return SimTime(ps_ + o.ps_); }
  constexpr SimTime operator-(SimTime o) const { return SimTime(ps_ - o.ps_); }
  constexpr SimTime& operator+=(SimTime o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr SimTime operator*(int64_t k) const { return SimTime(ps_ * k); }
  constexpr auto operator<=>(const SimTime&) const = default;

 private:
  constexpr explicit SimTime(int64_t v) : ps_(v) {}
  int64_t ps_ = 0;
};

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(uint64_t v) : v_(v) {}
  constexpr uint64_t count() const { return v_; }
  constexpr Bytes operator+(Bytes o) const { return Bytes(v_ + o.v_); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(v_ - o.v_); }
  constexpr Bytes& operator+=(Bytes o) {
    v_ += o.v_;
    return *this;
  }
  constexpr Bytes& operator-=(Bytes o) {
    v_ -= o.v_;
    return *this;
  }
  constexpr auto operator<=>(const Bytes&) const = default;

 private:
  uint64_t v_ = 0;
};

// Bandwidth in bytes per second (GB/s means 1e9 B/s, as nccl-tests and datasheets use it).
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_s(double v) { return Bandwidth(v); }
  static constexpr Bandwidth gbytes_per_s(double v) { return Bandwidth(v * 1e9); }
  static constexpr Bandwidth gbits_per_s(double v) { return Bandwidth(v * 1e9 / 8); }
  constexpr double as_bytes_per_s() const { return bps_; }
  constexpr double as_gbytes_per_s() const { return bps_ / 1e9; }
  constexpr auto operator<=>(const Bandwidth&) const = default;

  // Time to move `b` at this bandwidth, rounded up to the next picosecond so that a
  // transfer is never free.
  constexpr SimTime transfer_time(Bytes b) const {
    const double ps = static_cast<double>(b.count()) / bps_ * 1e12;
    const auto whole = static_cast<int64_t>(ps);
    return SimTime::ps(whole + (static_cast<double>(whole) < ps ? 1 : 0));
  }

 private:
  constexpr explicit Bandwidth(double v) : bps_(v) {}
  double bps_ = 0;
};

}  // namespace phantora
