#include "launcher_command.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string_view>
#include <vector>

namespace phantora::shim {
namespace {

bool launcher(std::initializer_list<std::string_view> args) {
  const std::vector<std::string_view> argv(args);
  return is_launcher_command(argv);
}

// Command lines as /proc/PID/cmdline shows them: a console script runs as its interpreter with
// the script's path first (the kernel's reading of its #! line).
TEST(LauncherCommand, TorchsLaunchersEachWay) {
  EXPECT_TRUE(launcher({"/venv/bin/python3", "/venv/bin/torchrun", "--nnodes", "1", "train.py"}));
  EXPECT_TRUE(launcher({"/venv/bin/torchrun", "--nproc-per-node", "8", "train.py"}));
  EXPECT_TRUE(launcher({"python", "-m", "torch.distributed.run", "train.py"}));
  EXPECT_TRUE(launcher({"python3.11", "-u", "-m", "torch.distributed.launch", "train.py"}));
  EXPECT_TRUE(launcher({"python", "-mtorch.distributed.run", "train.py"}));
  EXPECT_TRUE(launcher({"python", "-W", "ignore", "/venv/bin/torchrun", "train.py"}));
}

TEST(LauncherCommand, AccelerateLaunchButNotItsOtherCommands) {
  EXPECT_TRUE(
      launcher({"/venv/bin/python3", "/venv/bin/accelerate", "launch", "--multi_gpu", "train.py"}));
  EXPECT_TRUE(
      launcher({"python", "-m", "accelerate.commands.launch", "--num_processes", "2", "train.py"}));
  EXPECT_TRUE(launcher({"/venv/bin/python3", "/venv/bin/accelerate-launch", "train.py"}));
  EXPECT_FALSE(launcher({"/venv/bin/python3", "/venv/bin/accelerate", "env"}));
  EXPECT_FALSE(launcher({"/venv/bin/python3", "/venv/bin/accelerate"}));
}

TEST(LauncherCommand, DeepSpeedsRunnerAndItsPerNodeLauncher) {
  EXPECT_TRUE(
      launcher({"/venv/bin/python3", "/venv/bin/deepspeed", "--num_gpus", "2", "train.py"}));
  // What the runner starts on each node (deepspeed/launcher/runner.py builds this command).
  EXPECT_TRUE(
      launcher({"/venv/bin/python3", "-u", "-m", "deepspeed.launcher.launch",
                "--world_info=eyJsb2NhbGhvc3QiOiBbMCwgMV19", "--master_port=29500", "train.py"}));
}

TEST(LauncherCommand, MpiLaunchersAndTheirNodeDaemons) {
  // llm.c's scripts start their ranks as `mpirun -np 8 ./train_gpt2cu ...`.
  EXPECT_TRUE(launcher({"mpirun", "--oversubscribe", "-np", "8", "./train_gpt2cu", "-b", "64"}));
  EXPECT_TRUE(launcher({"/usr/bin/mpiexec", "-n", "2", "./a.out"}));
  EXPECT_TRUE(launcher({"/usr/lib/openmpi/bin/orted", "-mca", "ess", "env"}));
  EXPECT_TRUE(launcher({"/usr/bin/hydra_pmi_proxy", "--control-port", "node0:4000"}));
  // The ranks it starts are not.
  EXPECT_FALSE(launcher({"./train_gpt2cu", "-b", "64"}));
}

std::string_view numbered_by(std::initializer_list<const char*> set) {
  const RankVariables& v = rank_variables([&](const char* name) {
    for (const char* s : set) {
      if (std::string_view(s) == name) return true;
    }
    return false;
  });
  return v.rank;
}

TEST(LauncherCommand, RanksAreNumberedByTheLauncherThatStartedThem) {
  EXPECT_EQ(numbered_by({"RANK", "OMPI_COMM_WORLD_RANK"}), "RANK");  // torchrun under mpirun
  EXPECT_EQ(numbered_by({"OMPI_COMM_WORLD_RANK", "PMI_RANK"}), "OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(numbered_by({"PMI_RANK"}), "PMI_RANK");
  EXPECT_EQ(numbered_by({}), "RANK");  // a program started directly: unnumbered (-1)
  const RankVariables& ompi = rank_variables(
      [](const char* name) { return std::string_view(name) == "OMPI_COMM_WORLD_RANK"; });
  EXPECT_STREQ(ompi.local_rank, "OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_STREQ(ompi.world_size, "OMPI_COMM_WORLD_SIZE");
}

TEST(LauncherCommand, RanksAreNotLaunchersWhateverTheirArguments) {
  // A rank as torchrun or DeepSpeed's launcher starts it.
  EXPECT_FALSE(launcher({"/venv/bin/python3", "-u", "train.py", "--local_rank=0"}));
  // Launchers' names as a rank's own arguments, or in its script's directory.
  EXPECT_FALSE(launcher({"python", "train.py", "--launcher", "deepspeed", "torchrun"}));
  EXPECT_FALSE(launcher({"python", "examples/deepspeed/train.py"}));
  EXPECT_FALSE(launcher({"python", "/home/u/torchrun/train.py"}));
  EXPECT_FALSE(launcher({"python", "-m", "my_trainer", "torch.distributed.run"}));
  EXPECT_FALSE(launcher({"python", "-c", "import torch", "/venv/bin/torchrun"}));
  EXPECT_FALSE(launcher({"./overlap"}));
  EXPECT_FALSE(launcher({}));
}

}  // namespace
}  // namespace phantora::shim
