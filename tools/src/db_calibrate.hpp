// `phantora db calibrate`: for every measured row of the kernel database, what the cost models
// would have charged without it, per row and summarised per GPU model and family. Fits nothing.
#pragma once

#include <string>

namespace phantora::tools {

// Prints the comparison; `gpu` limits it to one GPU model (all when empty). Returns 0.
int run_db_calibrate(const std::string& db_path, const std::string& gpu);

}  // namespace phantora::tools
