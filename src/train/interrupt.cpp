// SIGINT/SIGTERM handlers that record the signal and return (train/interrupt.h).
#include "train/interrupt.h"

#include <atomic>
#include <csignal>

#include "util/error.h"

namespace gpstream::train {
namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler's store must be async-signal-safe");
bool g_installed = false;
struct sigaction g_previous_int, g_previous_term;

void on_signal(int signal) {
  int none = 0;
  g_signal.compare_exchange_strong(none, signal);
}

}  // namespace

InterruptHandler::InterruptHandler() {
  GPS_ASSERT(!g_installed, "one InterruptHandler at a time");
  g_installed = true;
  g_signal.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  // SA_RESTART: a read or write the signal lands in carries on instead of failing with EINTR.
  // SA_RESETHAND: the next signal of the kind takes its default action (ends the process).
  sa.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(SIGINT, &sa, &g_previous_int);
  sigaction(SIGTERM, &sa, &g_previous_term);
}

InterruptHandler::~InterruptHandler() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
  g_installed = false;
}

int interrupt_signal() {
  return g_signal.load();
}

int interrupted_exit_status(int signal) {
  return 128 + signal;
}

std::string interrupt_signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

}  // namespace gpstream::train
