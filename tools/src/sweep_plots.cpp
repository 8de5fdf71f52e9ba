#include "sweep_plots.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "phantora/simcore/report.hpp"
#include "sweep_results.hpp"

namespace phantora::tools {
namespace {

constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                    "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Up to ~6 round tick values covering [lo, hi].
std::vector<double> ticks(double lo, double hi) {
  if (hi <= lo) hi = lo + 1;
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  }
  std::vector<double> out;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(v);
  return out;
}

// RFC 4648 base64, for the PNGs embedded in the page.
std::string base64(const std::string& bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = 0;
    for (size_t k = 0; k < 3; ++k) {
      v = v << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    }
    for (size_t k = 0; k < 4; ++k) out += k <= n ? kDigits[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

std::string which_gnuplot() {
  const char* path = std::getenv("PATH");
  std::string p = path != nullptr ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    const size_t colon = p.find(':', start);
    const std::string dir = p.substr(start, colon == std::string::npos ? colon : colon - start);
    const std::filesystem::path candidate = std::filesystem::path(dir) / "gnuplot";
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

}  // namespace

std::string svg_chart(const std::string& title, const std::string& x_label,
                      const std::string& y_label, const std::vector<Curve>& curves) {
  constexpr double W = 640, H = 400, L = 70, R = 20, T = 40, B = 110;
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
  for (const Curve& c : curves) {
    for (const auto& [x, y] : c.points) {
      xmin = std::min(xmin, x), xmax = std::max(xmax, x), ymax = std::max(ymax, y);
    }
  }
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<text x=\"{}\" y=\"22\" "
      "text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
      W, H, W / 2, escape(title));
  if (curves.empty() || !std::isfinite(xmin)) {
    return svg + fmt::format(
                     "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no successful "
                     "points</text>\n</svg>\n",
                     W / 2, H / 2);
  }
  const bool log_x = xmin > 0 && xmax / xmin >= 4;
  auto fx = [&](double x) {
    const double a = log_x ? std::log2(xmin) : xmin, b = log_x ? std::log2(xmax) : xmax;
    const double v = log_x ? std::log2(x) : x;
    return b > a ? L + (v - a) / (b - a) * (W - L - R) : L + (W - L - R) / 2;
  };
  const double ytop = ymax > 0 ? ymax * 1.1 : 1;
  auto fy = [&](double y) { return H - B - y / ytop * (H - T - B); };
  svg += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n"
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{3}\" stroke=\"black\"/>\n",
      L, H - B, W - R, T);
  for (double y : ticks(0, ytop)) {
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:.4g}</text>\n",
        L, fy(y), W - R, L - 6, fy(y) + 4, y);
  }
  std::vector<double> xs;
  for (const Curve& c : curves) {
    for (const auto& [x, y] : c.points) xs.push_back(x);
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  for (double x : xs) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", fx(x),
                       H - B + 16, x);
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n"
      "<text transform=\"translate(16,{}) rotate(-90)\" text-anchor=\"middle\">{}"
      "</text>\n",
      (L + W - R) / 2, H - B + 36, escape(x_label), (T + H - B) / 2, escape(y_label));
  for (size_t i = 0; i < curves.size(); ++i) {
    const char* colour = kColours[i % std::size(kColours)];
    std::string path;
    for (const auto& [x, y] : curves[i].points) {
      path += fmt::format("{}{:.1f},{:.1f} ", path.empty() ? "" : "", fx(x), fy(y));
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>\n", fx(x),
                         fy(y), colour);
    }
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                       path, colour);
    const double ly = H - B + 56 + 16 * static_cast<double>(i % 3);
    const double lx = L + 190 * static_cast<double>(i / 3);
    svg += fmt::format(
        "<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"12\" height=\"4\" fill=\"{}\"/>"
        "<text x=\"{:.0f}\" y=\"{:.0f}\">{}</text>\n",
        lx, ly - 4, colour, lx + 16, ly, escape(curves[i].label));
  }
  return svg + "</svg>\n";
}

SweepCharts sweep_charts(const std::vector<PointResult>& results) {
  std::map<std::string, size_t> index;
  SweepCharts c;
  for (const PointResult& r : results) {
    if (r.status != "ok") continue;
    auto [it, added] = index.emplace(r.series, c.step_ms.size());
    if (added) {
      c.step_ms.push_back({r.series, {}});
      c.per_gpu.push_back({r.series, {}});
      c.efficiency_pct.push_back({r.series, {}});
    }
    const double x = r.point.gpus();
    c.step_ms[it->second].points.emplace_back(x, r.step_s * 1e3);
    c.per_gpu[it->second].points.emplace_back(x, r.throughput_per_gpu);
    c.efficiency_pct[it->second].points.emplace_back(x, 100 * r.efficiency);
  }
  for (auto* set : {&c.step_ms, &c.per_gpu, &c.efficiency_pct}) {
    for (Curve& curve : *set) std::sort(curve.points.begin(), curve.points.end());
  }
  return c;
}

std::string chart_y_label(const ChartSpec& chart, const std::string& items_name) {
  return chart.per_item ? items_name + chart.y_unit : chart.y_unit;
}

std::string sweep_html(const std::vector<PointResult>& results, const std::string& items_name,
                       const std::string& title,
                       const std::optional<std::filesystem::path>& png_dir) {
  const SweepCharts c = sweep_charts(results);
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{0}</title>\n<style>"
      "body{{font-family:sans-serif;margin:24px}}table{{border-collapse:collapse}}"
      "td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}"
      "td:first-child,th:first-child{{text-align:left}}.failed{{color:#b00}}</style></head>\n"
      "<body><h1>{0}</h1>\n<table><tr><th>point</th><th>GPUs</th><th>step time (ms)</th>"
      "<th>{1}/s</th><th>{1}/s per GPU</th><th>scaling efficiency</th><th>peak memory (GiB)</th>"
      "<th>exposed comm.</th></tr>\n",
      escape(title), escape(items_name));
  for (const PointResult& r : results) {
    if (r.status != "ok") {
      html += fmt::format(
          "<tr class=\"failed\"><td>{}</td><td>{}</td><td colspan=\"6\">failed: "
          "{}</td></tr>\n",
          escape(r.point.name), r.point.gpus(), escape(r.reason));
      continue;
    }
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{:.2f}{}</td><td>{:.4g}</td><td>{:.4g}</td>"
        "<td>{:.1f}%</td><td>{:.2f}</td><td>{:.1f}%</td></tr>\n",
        escape(r.point.name), r.point.gpus(), r.step_s * 1e3, r.step_from_log ? "" : " (run)",
        r.throughput, r.throughput_per_gpu, 100 * r.efficiency, r.peak_memory_bytes / (1 << 30),
        100 * r.exposed_comm_share);
  }
  html +=
      "</table>\n<p>Step time is the median the job printed (first step left out), or the "
      "whole run's simulated time where marked (run).</p>\n";
  for (const ChartSpec& chart : kSweepCharts) {
    const std::string y_label = chart_y_label(chart, items_name);
    if (!png_dir) {
      html += fmt::format("<div id=\"{}\">\n{}</div>\n", chart.stem,
                          svg_chart(chart.title, "GPUs", y_label, c.*chart.curves));
      continue;
    }
    const std::filesystem::path png = *png_dir / (std::string(chart.stem) + ".png");
    std::ifstream in(png, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (!in.good() && !in.eof()) throw std::runtime_error("cannot read " + png.string());
    html += fmt::format(
        "<figure><img id=\"{}\" alt=\"{}\" style=\"max-width:100%\" "
        "src=\"data:image/png;base64,{}\"></figure>\n",
        chart.stem, escape(fmt::format("{} ({} against GPUs)", chart.title, y_label)),
        base64(bytes));
  }
  return html + "</body></html>\n";
}

bool write_pngs(const std::vector<PointResult>& results, const std::string& items_name,
                const std::filesystem::path& dir, std::string* why) {
  const std::string gnuplot = which_gnuplot();
  if (gnuplot.empty()) {
    *why = "gnuplot is not installed (apt-get install gnuplot-nox); the plots are in index.html";
    return false;
  }
  const SweepCharts c = sweep_charts(results);
  const std::filesystem::path data_dir = dir / "plot-data";
  std::filesystem::create_directories(data_dir);
  std::string script =
      "set terminal pngcairo size 800,500 noenhanced\nset grid\nset key outside below\n";
  // GPUs on a log2 axis when the sizes span 4x or more, as in the HTML charts.
  double xmin = INFINITY, xmax = 0;
  for (const Curve& curve : c.step_ms) {
    for (const auto& [x, y] : curve.points) xmin = std::min(xmin, x), xmax = std::max(xmax, x);
  }
  script += xmin > 0 && xmax / xmin >= 4 ? "set logscale x 2\n" : "unset logscale x\n";
  for (const ChartSpec& ch : kSweepCharts) {
    script += fmt::format(
        "set output '{}'\nset title '{}'\nset xlabel 'GPUs'\nset ylabel '{}'\n"
        "set yrange [0:*]\n",
        (dir / (std::string(ch.stem) + ".png")).string(), ch.title, chart_y_label(ch, items_name));
    const std::vector<Curve>& curves = c.*ch.curves;
    std::vector<std::string> plots;
    for (size_t i = 0; i < curves.size(); ++i) {
      const Curve& curve = curves[i];
      const std::filesystem::path data = data_dir / fmt::format("{}-{}.dat", ch.stem, i);
      std::string rows;
      for (const auto& [x, y] : curve.points) rows += fmt::format("{} {}\n", x, y);
      sim::write_file_atomically(data, rows);
      std::string label = curve.label;
      std::replace(label.begin(), label.end(), '\'', ' ');
      plots.push_back(
          fmt::format("'{}' using 1:2 with linespoints title '{}'", data.string(), label));
    }
    if (plots.empty()) {
      script +=
          "set label 1 'no successful points' at graph 0.5,0.5 center\nplot NaN notitle\n"
          "unset label 1\n";
    } else {
      std::string joined;
      for (const auto& p : plots) joined += (joined.empty() ? "" : ", ") + p;
      script += "plot " + joined + "\n";
    }
  }
  const std::filesystem::path script_file = data_dir / "plots.gp";
  sim::write_file_atomically(script_file, script);
  const std::string cmd = fmt::format("'{}' '{}' 2>'{}'", gnuplot, script_file.string(),
                                      (data_dir / "gnuplot.err").string());
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    *why =
        fmt::format("gnuplot failed (status {}); see {}", rc, (data_dir / "gnuplot.err").string());
    return false;
  }
  return true;
}

}  // namespace phantora::tools
