// The pipes this job's processes made, as this process sees them (pipe_clocks.hpp; the C
// library's pipe, read and write stand-ins are in api_pipes.cpp).
#pragma once

#include <poll.h>

namespace phantora::shim {

// Every descriptor of a poll is one end of a pipe the job made: its wait is for another of the
// job's threads or processes, whose message carries the clock it was written at.
bool polls_only_job_pipes(const pollfd* fds, nfds_t n);

}  // namespace phantora::shim
