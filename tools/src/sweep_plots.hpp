// The sweep's plots: step time, throughput per GPU and scaling efficiency against the number of
// GPUs, one curve per series (everything but the cluster size). As SVG inside a self-contained
// HTML page with the table, and as PNG files drawn by gnuplot where it is installed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sweep_results.hpp"

namespace phantora::tools {

struct Curve {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), in x order
};

// A line chart with axes, ticks and a legend; x on a log2 scale when it spans 4x or more.
std::string svg_chart(const std::string& title, const std::string& x_label,
                      const std::string& y_label, const std::vector<Curve>& curves);

// The three charts' curves from the ok points.
struct SweepCharts {
  std::vector<Curve> step_ms, per_gpu, efficiency_pct;
};
SweepCharts sweep_charts(const std::vector<PointResult>& results);

// index.html: the table and the three charts, no external resources.
std::string sweep_html(const std::vector<PointResult>& results, const std::string& items_name,
                       const std::string& title);

// step_time.png, throughput_per_gpu.png, scaling_efficiency.png in `dir` with gnuplot; false
// with the reason when gnuplot is not available or fails.
bool write_pngs(const std::vector<PointResult>& results, const std::string& items_name,
                const std::filesystem::path& dir, std::string* why);

}  // namespace phantora::tools
