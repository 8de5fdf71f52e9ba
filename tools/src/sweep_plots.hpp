// The sweep's plots: step time, throughput per GPU and scaling efficiency against the number of
// GPUs, one curve per series (everything but the cluster size). As PNG files drawn by gnuplot
// where it is installed, and in a self-contained HTML page with the table that shows those PNGs
// (embedded), or SVG charts of its own where gnuplot drew none.
#pragma once

#include <filesystem>
#include <optional>
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

// The charts, in the order the page shows them; the PNGs and the page's images are named by
// `stem`.
struct ChartSpec {
  const char* stem;  // <stem>.png, and the id of the chart in index.html
  const char* title;
  const char* y_unit;  // the y axis label, after the items' name where per_item
  bool per_item;
  std::vector<Curve> SweepCharts::*curves;
};
inline constexpr ChartSpec kSweepCharts[] = {
    {"step_time", "Step time", "ms", false, &SweepCharts::step_ms},
    {"throughput_per_gpu", "Throughput per GPU", "/s per GPU", true, &SweepCharts::per_gpu},
    {"scaling_efficiency", "Scaling efficiency", "% of the smallest point", false,
     &SweepCharts::efficiency_pct},
};
std::string chart_y_label(const ChartSpec& chart, const std::string& items_name);

// index.html: the table and the three charts, no external resources. `png_dir`: where
// write_pngs drew the charts; the page then shows those PNGs, as data: URIs. Without it the
// page draws SVG charts of its own. Throws std::runtime_error when a PNG cannot be read.
std::string sweep_html(const std::vector<PointResult>& results, const std::string& items_name,
                       const std::string& title,
                       const std::optional<std::filesystem::path>& png_dir = std::nullopt);

// step_time.png, throughput_per_gpu.png, scaling_efficiency.png in `dir` with gnuplot; false
// with the reason when gnuplot is not available or fails.
bool write_pngs(const std::vector<PointResult>& results, const std::string& items_name,
                const std::filesystem::path& dir, std::string* why);

}  // namespace phantora::tools
