// Which command lines start ranks rather than run one. A launcher's waits (rendezvous, the
// agent's monitoring loop, its children's exits) are real time, so its process keeps real
// clocks (api_host_clocks.cpp); it is also no rank, and its clock must not end the run.
#pragma once

#include <functional>
#include <span>
#include <string_view>

namespace phantora::shim {

// True when `argv` (a process's command line, /proc/self/cmdline split at its NULs) runs one of
// the launchers this knows: torchrun and `python -m torch.distributed.run`/`.launch`, Hugging
// Face's `accelerate launch` (torch's elastic agent, in its own process), DeepSpeed's runner
// (`deepspeed`) and the per-node `deepspeed.launcher.launch` it starts; MPI's `mpirun` /
// `mpiexec` (OpenMPI's orterun, prterun and orted; MPICH's mpiexec.hydra and the
// hydra_pmi_proxy that forks a node's ranks).
bool is_launcher_command(std::span<const std::string_view> argv);

// The environment variables by which a launcher numbers the ranks it starts.
struct RankVariables {
  const char* rank;
  const char* local_rank;
  const char* world_size;
};
// Those of the first launcher whose rank variable `is_set`: torchrun's RANK, LOCAL_RANK and
// WORLD_SIZE (which DeepSpeed and accelerate set too), OpenMPI's OMPI_COMM_WORLD_RANK,
// _LOCAL_RANK and _SIZE, MPICH's (Hydra) PMI_RANK, MPI_LOCALRANKID and PMI_SIZE; torchrun's when
// none is set.
const RankVariables& rank_variables(const std::function<bool(const char*)>& is_set);

}  // namespace phantora::shim
