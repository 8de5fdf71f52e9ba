#include "stop_signals.hpp"

#include <signal.h>

#include <csignal>

namespace phantora::tools {
namespace {

volatile std::sig_atomic_t g_caught = 0;
struct sigaction g_old_int {
}, g_old_term{};

void on_signal(int sig) {
  g_caught = sig;
}

}  // namespace

StopSignals::StopSignals() {
  g_caught = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_caught = 0;
}

bool StopSignals::caught() const {
  return g_caught != 0;
}

}  // namespace phantora::tools
