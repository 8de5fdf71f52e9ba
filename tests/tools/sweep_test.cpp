// phantora sweep's pure pieces: axes to points, placeholders, the sweep file, the table's
// derived columns, the SVG charts and the page that shows the PNGs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "sweep_plan.hpp"
#include "sweep_plots.hpp"
#include "sweep_results.hpp"

using namespace phantora::tools;

namespace {

std::filesystem::path write_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "phantora-sweep-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

PointResult ok_point(int hosts, double step_s, const std::string& series = "s") {
  PointResult r;
  r.point.hosts = hosts;
  r.point.gpus_per_host = 8;
  r.point.name = "h" + std::to_string(hosts);
  r.status = "ok";
  r.step_s = step_s;
  r.items_per_step = 1;
  r.throughput = 1 / step_s;
  r.throughput_per_gpu = r.throughput / r.point.gpus();
  r.series = series;
  return r;
}

}  // namespace

TEST(SweepPlan, AxesExpandWithHostsFastest) {
  SweepAxes a;
  a.hosts = {1, 2};
  a.gpu = {"h100", "h200"};
  a.nic_gbytes_per_s = {48.5};
  const auto points = expand_axes(a);
  ASSERT_EQ(points.size(), 4u);  // 2 hosts x 2 GPU models
  EXPECT_EQ(points[0].name, "h1-g8-h100-nic48.5");
  EXPECT_EQ(points[1].name, "h2-g8-h100-nic48.5");
  EXPECT_EQ(points[2].gpu, "h200");
  EXPECT_EQ(points[3].gpus(), 16);
  a.hosts = {0};
  EXPECT_THROW(expand_axes(a), std::invalid_argument);
}

TEST(SweepPlan, PlaceholdersAndItemsPerStep) {
  SweepSpec spec;
  spec.command = {"torchrun",        "--nnodes",         "{hosts}",
                  "--rdzv-endpoint", "localhost:{port}", "--tp={tp}"};
  spec.port_base = 29600;
  SweepPoint p;
  p.hosts = 4;
  p.vars["tp"] = "2";
  p.name = "x";
  const auto cmd = point_command(spec, p, 3);
  EXPECT_EQ(cmd[2], "4");
  EXPECT_EQ(cmd[4], "localhost:29603");  // port base + the point's index
  EXPECT_EQ(cmd[5], "--tp=2");
  spec.command = {"{nosuch}"};
  EXPECT_THROW(point_command(spec, p, 0), std::invalid_argument);
  // 4 hosts x 8 GPUs x 2 sequences x 4096 tokens.
  spec.items_per_step = "{gpus}*2*4096";
  EXPECT_DOUBLE_EQ(items_per_step(spec, p, 0), 32.0 * 2 * 4096);
  spec.items_per_step = "{gpus}*lots";
  EXPECT_THROW(items_per_step(spec, p, 0), std::invalid_argument);
}

TEST(SweepPlan, SweepFileAxesAndPoints) {
  SweepSpec spec;
  read_sweep_file(write_file("axes.toml", R"(
command = ["train.py", "--nodes", "{hosts}"]
parallel = 2
items_per_step = "{gpus}*1024"
[axes]
hosts = [1, 2, 4]
oversubscription = [1.0, 2.0]
)"),
                  spec);
  EXPECT_EQ(spec.parallel, 2);
  EXPECT_EQ(spec.command.size(), 3u);
  ASSERT_EQ(spec.points.size(), 6u);
  EXPECT_EQ(*spec.points[5].oversubscription, 2.0);

  SweepSpec explicit_points;
  read_sweep_file(write_file("points.toml", R"(
command = "echo {hosts} {batch}"
[[point]]
hosts = 2
batch = 16
[[point]]
hosts = 4
batch = 32
name = "big"
)"),
                  explicit_points);
  ASSERT_EQ(explicit_points.points.size(), 2u);
  EXPECT_EQ(explicit_points.points[0].vars.at("batch"), "16");
  EXPECT_EQ(explicit_points.points[1].name, "big");
  EXPECT_EQ(explicit_points.command[2], "echo {hosts} {batch}");  // run by /bin/sh -c

  // Other names under [axes] are the workload's own placeholders; one the command does not use
  // (a misspelt axis) is refused.
  SweepSpec vars;
  read_sweep_file(write_file("vars.toml",
                             "command = \"run --mode {mode}\"\n[axes]\n"
                             "hosts = [1, 2]\nmode = [\"a\", \"b\"]\n"),
                  vars);
  ASSERT_EQ(vars.points.size(), 4u);
  EXPECT_EQ(vars.points[0].vars.at("mode"), "a");
  EXPECT_EQ(vars.points[1].vars.at("mode"), "a");  // hosts fastest, variables outermost
  EXPECT_EQ(vars.points[2].vars.at("mode"), "b");
  EXPECT_NO_THROW(check_vars_used(vars));
  SweepSpec bad;
  read_sweep_file(write_file("bad1.toml", "command = \"run\"\n[axes]\nhostz = [1]\n"), bad);
  EXPECT_THROW(check_vars_used(bad), std::invalid_argument);
  const auto axis = parse_var_axis("sharding=table-wise,dmt");
  EXPECT_EQ(axis.first, "sharding");
  EXPECT_EQ(axis.second.size(), 2u);
  EXPECT_THROW(parse_var_axis("sharding"), std::invalid_argument);
  EXPECT_THROW(read_sweep_file(write_file("bad2.toml", "[axes]\nhosts = [\"one\"]\n"), bad),
               std::runtime_error);
  EXPECT_THROW(read_sweep_file(write_file("bad3.toml", "[axes\n"), bad), std::runtime_error);
}

TEST(SweepResults, ScalingEfficiencyAgainstTheSmallestPointOfTheSeries) {
  // 8 GPUs at 100 ms, 16 GPUs at 60 ms: per GPU 1/0.8 vs 1/0.96 steps/s: 0.8/0.96 = 83.3%.
  std::vector<PointResult> r = {ok_point(1, 0.100), ok_point(2, 0.060)};
  PointResult failed;
  failed.point.hosts = 4;
  failed.reason = "out of memory";
  failed.series = "s";
  r.push_back(failed);
  compute_efficiency(r);
  EXPECT_DOUBLE_EQ(r[0].efficiency, 1.0);
  EXPECT_NEAR(r[1].efficiency, 0.8 / 0.96, 1e-12);
  EXPECT_EQ(r[2].efficiency, 0);
  const std::string md = markdown_table(r, "steps");
  EXPECT_NE(md.find("83.3%"), std::string::npos) << md;
  EXPECT_NE(md.find("failed: out of memory"), std::string::npos) << md;
}

TEST(SweepPlots, ChartsHaveOneCurvePerSeries) {
  std::vector<PointResult> r = {ok_point(1, 0.1, "a"), ok_point(2, 0.06, "a"),
                                ok_point(1, 0.2, "b")};
  const SweepCharts c = sweep_charts(r);
  ASSERT_EQ(c.step_ms.size(), 2u);
  EXPECT_EQ(c.step_ms[0].points.size(), 2u);
  EXPECT_DOUBLE_EQ(c.step_ms[0].points[1].second, 60.0);
  const std::string svg = svg_chart("t", "GPUs", "ms", c.step_ms);
  size_t polylines = 0;
  for (size_t at = 0; (at = svg.find("<polyline", at)) != std::string::npos; ++at) ++polylines;
  EXPECT_EQ(polylines, 2u);
  const std::string html = sweep_html(r, "steps", "title <&>");
  EXPECT_NE(html.find("title &lt;&amp;&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);  // self-contained, nothing to fetch
  size_t svgs = 0;
  for (size_t at = 0; (at = html.find("<svg", at)) != std::string::npos; ++at) ++svgs;
  EXPECT_EQ(svgs, 3u);  // without PNGs the page draws its own charts
}

TEST(SweepPlots, PageShowsThePngsEmbedded) {
  // Stand-ins for gnuplot's files: "M", "Ma" and "Man" are base64 "TQ==", "TWE=" and "TWFu"
  // (RFC 4648's padding cases).
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("phantora-sweep-png-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const char* contents[] = {"M", "Ma", "Man"};
  for (size_t i = 0; i < std::size(kSweepCharts); ++i) {
    std::ofstream(dir / (std::string(kSweepCharts[i].stem) + ".png")) << contents[i];
  }
  const std::vector<PointResult> r = {ok_point(1, 0.1, "a"), ok_point(2, 0.06, "a")};
  const std::string html = sweep_html(r, "tokens", "t", dir);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  EXPECT_NE(
      html.find("id=\"step_time\" alt=\"Step time (ms against GPUs)\" style=\"max-width:100%\" "
                "src=\"data:image/png;base64,TQ==\""),
      std::string::npos)
      << html;
  EXPECT_NE(html.find("alt=\"Throughput per GPU (tokens/s per GPU against GPUs)\""),
            std::string::npos);
  EXPECT_NE(html.find("base64,TWE=\""), std::string::npos);
  EXPECT_NE(html.find("base64,TWFu\""), std::string::npos);
  // A PNG that is not there is an error, not an empty picture.
  std::filesystem::remove(dir / "scaling_efficiency.png");
  EXPECT_THROW(sweep_html(r, "tokens", "t", dir), std::runtime_error);
  std::filesystem::remove_all(dir);
}

TEST(SweepPlan, RepresentedReplicasAreAnAxis) {
  // One live host of 8 GPUs standing for 1, 16 and 128: {hosts} is what the job is launched on,
  // {gpus} the whole cluster (for throughput), {live_gpus} the job's own.
  SweepAxes axes;
  axes.hosts = {1};
  axes.represent_dp = {1, 16, 128};
  const std::vector<SweepPoint> points = expand_axes(axes);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[2].replicas, 128);
  EXPECT_EQ(points[2].gpus(), 1024);
  EXPECT_EQ(points[2].live_gpus(), 8);
  EXPECT_EQ(points[2].name, "h1-g8-h100-x128");
  EXPECT_EQ(points[0].name, "h1-g8-h100");
  SweepSpec spec;
  spec.command = {"torchrun",        "--nnodes",   "{hosts}",    "--nproc-per-node",
                  "{gpus_per_host}", "{replicas}", "{live_gpus}"};
  const auto cmd = point_command(spec, points[1], 0);
  EXPECT_EQ(cmd[2], "1");
  EXPECT_EQ(cmd[5], "16");
  EXPECT_EQ(cmd[6], "8");
  spec.items_per_step = "{gpus}*2*8192";
  EXPECT_DOUBLE_EQ(items_per_step(spec, points[1], 0), 128.0 * 2 * 8192);
  axes.represent_dp = {0};
  EXPECT_THROW(expand_axes(axes), std::invalid_argument);

  SweepSpec file;
  read_sweep_file(write_file("represent.toml",
                             "command = \"run {hosts}\"\ndp_comms = \"size:2\"\n[axes]\n"
                             "represent_dp = [2, 4]\n"),
                  file);
  ASSERT_EQ(file.points.size(), 2u);
  EXPECT_EQ(file.points[1].replicas, 4);
  EXPECT_EQ(file.dp_comms, "size:2");
}
