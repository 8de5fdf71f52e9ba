#include "launcher_command.hpp"

namespace phantora::shim {
namespace {

// How a launcher shows on a command line: a program (the executable, or the script a Python
// interpreter runs, by its file name) or a module run with `python -m`, with the subcommand that
// makes it a launcher when the program has several.
enum class Invoked { kProgram, kModule };
struct Launcher {
  Invoked as;
  std::string_view name;
  std::string_view subcommand;  // empty: any
};
constexpr Launcher kLaunchers[] = {
    {Invoked::kProgram, "torchrun", {}},
    {Invoked::kModule, "torch.distributed.run", {}},
    {Invoked::kModule, "torch.distributed.launch", {}},
    {Invoked::kProgram, "accelerate", "launch"},
    {Invoked::kProgram, "accelerate-launch", {}},
    {Invoked::kModule, "accelerate.commands.launch", {}},
    {Invoked::kProgram, "deepspeed", {}},
    {Invoked::kModule, "deepspeed.launcher.runner", {}},
    {Invoked::kModule, "deepspeed.launcher.launch", {}},
    {Invoked::kProgram, "mpirun", {}},
    {Invoked::kProgram, "mpiexec", {}},
    {Invoked::kProgram, "orterun", {}},
    {Invoked::kProgram, "prterun", {}},
    {Invoked::kProgram, "orted", {}},
    {Invoked::kProgram, "mpiexec.hydra", {}},
    {Invoked::kProgram, "hydra_pmi_proxy", {}},
};

// In the order they are tried: a torchrun rank started under mpirun is numbered by torchrun.
constexpr RankVariables kRankVariables[] = {
    {"RANK", "LOCAL_RANK", "WORLD_SIZE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
};

std::string_view file_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// `name` run as `as`, followed by `rest` (its arguments).
bool matches(Invoked as, std::string_view name, std::span<const std::string_view> rest) {
  for (const Launcher& l : kLaunchers) {
    if (l.as != as || l.name != name) continue;
    if (l.subcommand.empty() || (!rest.empty() && rest.front() == l.subcommand)) return true;
  }
  return false;
}

}  // namespace

bool is_launcher_command(std::span<const std::string_view> argv) {
  if (argv.empty()) return false;
  const std::string_view exe = file_name(argv[0]);
  if (matches(Invoked::kProgram, exe, argv.subspan(1))) return true;
  if (!exe.starts_with("python")) return false;
  // The interpreter's own options come first; then `-m module` or the script, then theirs.
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string_view a = argv[i];
    if (a == "-m") {
      return i + 1 < argv.size() && matches(Invoked::kModule, argv[i + 1], argv.subspan(i + 2));
    }
    if (a.starts_with("-m")) return matches(Invoked::kModule, a.substr(2), argv.subspan(i + 1));
    if (a == "-c" || a == "-") return false;
    if (a.starts_with('-')) {
      // Options that take a value as the next argument.
      if (a == "-W" || a == "-X" || a == "--check-hash-based-pycs") ++i;
      continue;
    }
    return matches(Invoked::kProgram, file_name(a), argv.subspan(i + 1));
  }
  return false;
}

const RankVariables& rank_variables(const std::function<bool(const char*)>& is_set) {
  for (const RankVariables& v : kRankVariables) {
    if (is_set(v.rank)) return v;
  }
  return kRankVariables[0];
}

}  // namespace phantora::shim
