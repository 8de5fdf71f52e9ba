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
