// `phantora db calibrate`: for every measured row of the kernel database (or every row of another
// source: a published table brought in with `db import` is `imported`), what the cost models
// would have charged without it, per row and summarised per GPU model and family. Fits nothing.
#pragma once

#include <string>

namespace phantora::tools {

// Prints the comparison of the rows of `source` (measured, imported or pinned); `gpu` limits it
// to one GPU model (all when empty). Returns 0.
int run_db_calibrate(const std::string& db_path, const std::string& gpu, const std::string& source);

}  // namespace phantora::tools
