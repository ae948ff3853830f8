// Runs the workloads and modes the options ask for, one after another, through one client
// API, with live progress; returns their results in order.
#pragma once

#include <vector>

#include "metrics.hpp"
#include "options.hpp"

namespace stress {

// Instantiated for CppApi (apis.hpp), whichever database `db` is.
template <class Api>
std::vector<RunResult> run_workloads(typename Api::Database& db, const StressOptions& o);

// A "Name:" field of /proc/self/status in KiB (VmRSS:, VmHWM:), 0 if absent.
long rss_kib(const char* field);
// Starts the VmHWM: field over from the current RSS, so that it reads the peak of what
// runs next. False when the kernel refuses (VmHWM: is then the process's peak so far).
bool reset_peak_rss();

}  // namespace stress
