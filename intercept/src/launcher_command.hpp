// Which command lines start ranks rather than run one. A launcher's waits (rendezvous, the
// agent's monitoring loop, its children's exits) are real time, so its process keeps real
// clocks (api_host_clocks.cpp); it is also no rank, and its clock must not end the run.
#pragma once

#include <span>
#include <string_view>

namespace phantora::shim {

// True when `argv` (a process's command line, /proc/self/cmdline split at its NULs) runs one of
// the launchers this knows: torchrun and `python -m torch.distributed.run`/`.launch`, Hugging
// Face's `accelerate launch` (torch's elastic agent, in its own process), DeepSpeed's runner
// (`deepspeed`) and the per-node `deepspeed.launcher.launch` it starts.
bool is_launcher_command(std::span<const std::string_view> argv);

}  // namespace phantora::shim
