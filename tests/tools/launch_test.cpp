// The pure pieces of starting ranks elsewhere: HOST:PORT, tokens, the address ranks are given,
// srun's command line, when a served job is over, and the Kubernetes objects.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "daemon_address.hpp"
#include "job_completion.hpp"
#include "k8s_manifests.hpp"
#include "phantora/host_port.hpp"
#include "run_token.hpp"
#include "slurm_launch.hpp"

namespace t = phantora::tools;
using phantora::HostPort;
using phantora::parse_host_port;

TEST(HostPort, ParsesNamesIPv4AndBracketedIPv6) {
  auto a = parse_host_port("node07:29620");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "node07");
  EXPECT_EQ(a->port, 29620);
  auto b = parse_host_port("0.0.0.0:0");  // every address, any port
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "0.0.0.0");
  EXPECT_EQ(b->port, 0);
  auto c = parse_host_port("[fe80::1]:65535");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->host, "fe80::1");
  EXPECT_EQ(c->port, 65535);
  // Printed back as written: brackets only around IPv6.
  EXPECT_EQ(c->to_string(), "[fe80::1]:65535");
  EXPECT_EQ(a->to_string(), "node07:29620");
}

TEST(HostPort, RefusesWhatIsNotHostColonPort) {
  std::string why;
  for (const char* bad :
       {"", "node07", "node07:", ":80", "node07:65536", "node07:80x", "node07:-1", "fe80::1:80",
        "[fe80::1]80", "[fe80::1", "[]:80", "a b:80", "node07:1234567"}) {
    why.clear();
    EXPECT_FALSE(parse_host_port(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
  parse_host_port("fe80::1:80", &why);
  EXPECT_NE(why.find("brackets"), std::string::npos) << why;
  EXPECT_THROW(t::parse_listen("nowhere"), std::invalid_argument);
  try {
    t::parse_listen("host:99999");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--listen host:99999"), std::string::npos);
  }
}

TEST(RankAddress, WildcardsBecomeLoopbackHereAndTheHostNameElsewhere) {
  const HostPort any{"0.0.0.0", 0};
  EXPECT_EQ(t::rank_address(any, 4242, std::nullopt, false), "127.0.0.1:4242");
  EXPECT_EQ(t::rank_address(HostPort{"::", 0}, 4242, std::nullopt, false), "[::1]:4242");
  EXPECT_EQ(t::rank_address(any, 4242, std::nullopt, true), t::this_host_name() + ":4242");
  // A named address is kept; --advertise wins over everything.
  EXPECT_EQ(t::rank_address(HostPort{"10.1.2.3", 0}, 7, std::nullopt, true), "10.1.2.3:7");
  EXPECT_EQ(t::rank_address(any, 7, std::string("login1.cluster"), true), "login1.cluster:7");
  EXPECT_TRUE(t::is_loopback("127.0.0.1"));
  EXPECT_TRUE(t::is_loopback("::1"));
  EXPECT_FALSE(t::is_loopback("10.0.0.1"));
}

TEST(Token, RandomTokensFillTheFieldAndDiffer) {
  const std::string a = t::random_token(), b = t::random_token();
  EXPECT_EQ(a.size(), 32u);  // wire::kTokenBytes
  EXPECT_NE(a, b);
  EXPECT_EQ(t::token_problem(a), "");
}

TEST(Token, FileTokensAreLongEnoughAndPrintable) {
  EXPECT_EQ(t::token_problem("0123456789abcdef"), "");  // 16: the shortest
  EXPECT_NE(t::token_problem("0123456789abcde"), "");   // 15
  EXPECT_NE(t::token_problem(std::string(33, 'x')), "");
  EXPECT_NE(t::token_problem("0123456789 abcdef"), "");  // a blank
  EXPECT_NE(t::token_problem("0123456789abcdef\x01"), "");
}

TEST(Srun, OneTaskPerHostEachBecomingItsHost) {
  t::RunOptions o;
  o.command = {"./job", "--steps", "3"};
  o.hosts_per_node = 2;
  o.srun_args = {"--cpus-per-task=1"};
  const t::JobShape shape{4, 8, "model", 123, 1.5, 1, true, "h100-0123456789abcdef"};
  const std::vector<std::string> argv =
      t::srun_argv("/usr/bin/srun", "/opt/p/bin/phantora", o, shape);
  const std::vector<std::string> expected = {"/usr/bin/srun",
                                             "--ntasks=4",
                                             "--ntasks-per-node=2",
                                             "--kill-on-bad-exit=1",
                                             "--export=ALL",
                                             "--job-name=phantora-hosts",
                                             "--cpus-per-task=1",
                                             "/opt/p/bin/phantora",
                                             "__host",
                                             "--host-from",
                                             "SLURM_PROCID",
                                             "--hosts",
                                             "4",
                                             "--gpus-per-host",
                                             "8",
                                             "--cpu-time",
                                             "model",
                                             "--epoch-ns",
                                             "123",
                                             "--moe-imbalance",
                                             "1.5",
                                             "--host-speed",
                                             "1",
                                             "--warm-ranks",
                                             "--prices-key",
                                             "h100-0123456789abcdef",
                                             "--",
                                             "./job",
                                             "--steps",
                                             "3"};
  EXPECT_EQ(argv, expected);
  // Nothing secret on the command line.
  for (const auto& a : argv) EXPECT_EQ(a.find("TOKEN"), std::string::npos);
}

TEST(JobCompletion, EndsWhenEveryHostCameAndEveryoneLeftAndThingsSettled) {
  using namespace std::chrono_literals;
  const auto t0 = t::JobCompletion::Clock::now();
  t::JobCompletion c(2, 1s);
  EXPECT_FALSE(c.done(t0 + 1h));  // nobody came yet
  c.joined(0, 0, -1, -1, t0);
  c.left(0, t0 + 1s);
  EXPECT_FALSE(c.done(t0 + 1h));  // host 1 never came
  EXPECT_NE(c.waiting_for().find("host 1 has not connected"), std::string::npos);
  c.joined(1, 1, -1, -1, t0 + 2s);
  EXPECT_FALSE(c.done(t0 + 1h));  // still connected
  c.left(1, t0 + 3s);
  EXPECT_FALSE(c.done(t0 + 3500ms));  // within the settling time
  EXPECT_TRUE(c.done(t0 + 4s));
  EXPECT_EQ(c.first_joined(), t0);
  EXPECT_EQ(c.last_change(), t0 + 3s);
}

TEST(JobCompletion, WaitsForEveryAnnouncedRank) {
  using namespace std::chrono_literals;
  const auto t0 = t::JobCompletion::Clock::now();
  t::JobCompletion c(1, 0s);
  // torchrun-style: WORLD_SIZE 2 on one host; rank 0 comes and goes before rank 1 arrives.
  c.joined(0, 0, 0, 2, t0);
  c.left(0, t0 + 1s);
  EXPECT_FALSE(c.done(t0 + 1h));
  EXPECT_NE(c.waiting_for().find("1 of 2 ranks"), std::string::npos);
  c.joined(1, 0, 1, 2, t0 + 2s);
  c.left(1, t0 + 3s);
  EXPECT_TRUE(c.done(t0 + 3s));
}

TEST(K8s, NamesMustMakeValidHostNames) {
  EXPECT_EQ(t::k8s_name_problem("phantora"), "");
  EXPECT_EQ(t::k8s_name_problem("run-7b"), "");
  for (const char* bad : {"", "Phantora", "7run", "run_7", "run-", "a.b"})
    EXPECT_NE(t::k8s_name_problem(bad), "") << bad;
  EXPECT_NE(t::k8s_name_problem(std::string(41, 'a')), "");
}

TEST(K8s, IndexedJobOfOnePodPerHostAndADaemonBehindAService) {
  t::K8sSpec s;
  s.name = "sim";
  s.image = "registry/phantora:1";
  s.phantora = "/opt/phantora/bin/phantora";
  s.port = 29620;
  s.token = "0123456789abcdef0123456789abcdef";
  s.shape = t::JobShape{3, 4, "model", 99};
  s.command = {"python", "train.py"};
  s.serve_args = {"--gpu", "h100"};
  const auto objects = t::k8s_objects(s);
  ASSERT_EQ(objects.size(), 5u);  // no inputs: no ConfigMap
  std::vector<std::string> kinds;
  for (const auto& [file, o] : objects)
    kinds.push_back(o["kind"].get<std::string>() + " " + o["metadata"]["name"].get<std::string>());
  EXPECT_EQ(kinds,
            (std::vector<std::string>{"Secret sim-token", "Service sim-daemon", "Job sim-daemon",
                                      "Service sim-ranks", "Job sim-ranks"}));
  EXPECT_EQ(objects[0].first, "00-token-secret.json");  // applied first
  EXPECT_EQ(objects[0].second["stringData"]["token"], s.token);

  const auto& service = objects[1].second;
  EXPECT_EQ(service["spec"]["ports"][0]["port"], 29620);
  const auto& daemon = objects[2].second;
  const auto& dpod = daemon["spec"]["template"];
  // The Service selects the daemon's pod, and no other.
  for (const auto& [k, v] : service["spec"]["selector"].items())
    EXPECT_EQ(dpod["metadata"]["labels"][k], v) << k;
  EXPECT_EQ(objects[4].second["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/"
                                                                        "component"],
            "rank");
  const auto& dc = dpod["spec"]["containers"][0];
  EXPECT_EQ(dc["ports"][0]["containerPort"], 29620);
  const auto dcmd = dc["command"].get<std::vector<std::string>>();
  EXPECT_EQ(dcmd[0], s.phantora);
  EXPECT_EQ(dcmd[1], "serve");
  EXPECT_NE(std::find(dcmd.begin(), dcmd.end(), "0.0.0.0:29620"), dcmd.end());
  EXPECT_EQ(dpod["spec"]["volumes"][0]["secret"]["secretName"], "sim-token");

  const auto& ranks = objects[4].second["spec"];
  EXPECT_EQ(ranks["completionMode"], "Indexed");
  EXPECT_EQ(ranks["completions"], 3);
  EXPECT_EQ(ranks["parallelism"], 3);
  const auto& rc = ranks["template"]["spec"]["containers"][0];
  const auto rcmd = rc["command"].get<std::vector<std::string>>();
  EXPECT_EQ(rcmd, t::host_argv(s.phantora, "JOB_COMPLETION_INDEX", s.shape, s.command));
  EXPECT_EQ(rc["env"][0]["name"], "PHANTORA_ADDRESS");
  EXPECT_EQ(rc["env"][0]["value"], "sim-daemon:29620");
  EXPECT_EQ(rc["env"][1]["name"], "PHANTORA_TOKEN");
  EXPECT_EQ(rc["env"][1]["valueFrom"]["secretKeyRef"]["name"], "sim-token");
  // The token itself appears in the Secret only.
  for (size_t i = 1; i < objects.size(); ++i)
    EXPECT_EQ(objects[i].second.dump().find(s.token), std::string::npos) << objects[i].first;

  s.inputs["topology.toml"] = "[cluster]\n";
  s.k8s_namespace = "team";
  const auto with_inputs = t::k8s_objects(s);
  ASSERT_EQ(with_inputs.size(), 6u);
  EXPECT_EQ(with_inputs[1].second["kind"], "ConfigMap");
  for (const auto& [file, o] : with_inputs) EXPECT_EQ(o["metadata"]["namespace"], "team") << file;
}
