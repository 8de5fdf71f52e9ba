#include "phantora/simcore/simulation.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "op_trace.hpp"
#include "record_reading.hpp"
#include "run_accounting.hpp"

namespace phantora::sim {

// Each completed operation goes to the run's statistics and, but for collectives (which write
// their own spans), to the trace.
class Simulation::OpObserver : public Observer {
 public:
  explicit OpObserver(Simulation& sim) : sim_(sim) {}
  void on_deferred_ready(ClientId client, StreamId stream, uint64_t token, SimTime ready) override {
    if (GpuSharing::is_kernel_token(token)) return sim_.sharing_.kernel_ready(token, ready);
    sim_.sharing_.collective_ready(token, ready, sim_.collectives_.channels(token));
    sim_.collectives_.ready(client, stream, token, ready);
  }
  void on_op(const CompletedOp& op) override {
    if (op.desc.kind == OpKind::kCollective) sim_.sharing_.collective_finished(op.token, op.end);
    const Client& c = sim_.clients_.at(op.client);
    const int gpu = sim_.global_gpu(c, op.device);
    sim_.accounting_->on_op(op, gpu);
    sim_.op_trace_->on_op(op, gpu, c.kernels);
  }

 private:
  Simulation& sim_;
};

Simulation::Simulation(SimulationConfig config, CostProvider& costs)
    : config_(std::move(config)),
      pricing_(costs),
      trace_(config_.trace_path.empty() ? nullptr
                                        : std::make_unique<TraceWriter>(config_.trace_path)),
      accounting_(std::make_unique<RunAccounting>(static_cast<size_t>(config_.hosts) *
                                                  config_.gpus_per_host)),
      op_trace_(std::make_unique<OpTrace>(trace_.get())),
      observer_(std::make_unique<OpObserver>(*this)),
      engine_(EngineConfig{config_.launch_latency}, observer_.get()),
      network_(config_.topology
                   ? *config_.topology
                   : net::Topology::for_cluster(config_.represented_hosts(), config_.gpus_per_host,
                                                config_.gpu_name)),
      sharing_(GpuCapacity{config_.device.multiprocessor_count, config_.hbm_bytes_per_s}),
      collectives_(
          engine_, network_, config_.hosts * config_.gpus_per_host,
          Collectives::Hooks{
              [this](ClientId c, uint64_t request, SimTime t, int32_t v0, int32_t v1) {
                reply(c, request, t, v0, v1);
              },
              [this](ClientId c, int device) { return global_gpu(clients_.at(c), device); },
              [this](ClientId c) { return describe(c); },
              [this](ClientId c, StreamId stream, const std::string& name, SimTime start,
                     SimTime end, const nlohmann::json& args) {
                if (trace_ != nullptr)
                  trace_->span(c, stream, name, "collective", start, end, args);
              },
              [this](ClientId c, uint64_t recvbuff, const std::vector<std::byte>& bytes) {
                if (payload_sink_ && clients_.at(c).connected) payload_sink_(c, recvbuff, bytes);
              },
              [this](ClientId c) { return !clients_.at(c).connected; },
              [this](uint64_t token, ClientId c, int device) {
                sharing_.collective_submitted(token, c, device);
              },
              [this](uint64_t token, SimTime from, SimTime to, double bytes_per_s) {
                sharing_.collective_moving(token, from, to, bytes_per_s);
              }},
          Replicas(config_.replicas, config_.hosts * config_.gpus_per_host, config_.dp_comms)) {
  if (network_.topology().hosts() != config_.represented_hosts() ||
      network_.topology().gpus_per_host() != config_.gpus_per_host) {
    throw std::invalid_argument(fmt::format(
        "the topology describes {} hosts x {} GPUs, the run {} x {}", network_.topology().hosts(),
        network_.topology().gpus_per_host(), config_.represented_hosts(), config_.gpus_per_host));
  }
}

Simulation::~Simulation() = default;

wire::Welcome Simulation::hello(const wire::Hello& h) {
  const size_t token_len = strnlen(h.token, wire::kTokenBytes);
  if (std::string_view(h.token, token_len) != config_.token) {
    throw ProtocolError("client presented a wrong run token");
  }
  if (h.host < 0 || h.host >= config_.hosts) {
    throw ProtocolError(
        fmt::format("client claims host {}, but the cluster has {} hosts", h.host, config_.hosts));
  }
  if (h.world_size > 0 && h.global_rank >= 0) {
    if (h.global_rank >= h.world_size) {
      throw ProtocolError(
          fmt::format("client says it is rank {} of {}", h.global_rank, h.world_size));
    }
    expected_ranks_ = std::max(expected_ranks_, h.world_size);
    ranks_seen_.insert(h.global_rank);
  }
  const auto id = static_cast<ClientId>(clients_.size());
  Client& c = clients_.emplace_back();
  c.info = ClientInfo{id, h.host, h.pid, h.global_rank, h.local_rank, SimTime::zero(), "running"};
  if (trace_ != nullptr) {
    std::string name = fmt::format("host {} pid {}", h.host, h.pid);
    if (h.global_rank >= 0) name += fmt::format(" (rank {})", h.global_rank);
    trace_->process_name(id, name, h.host * 100000 + std::max(h.global_rank, 0));
    trace_->thread_name(id, 0, "host", 0);
  }
  spdlog::debug("client {} connected: host {} pid {} rank {}", id, h.host, h.pid, h.global_rank);
  wire::Welcome w;
  w.client_id = id;
  w.hosts = config_.hosts;
  w.gpus_per_host = config_.gpus_per_host;
  w.cpu_time = config_.cpu_time;
  w.per_call_cost_ps = config_.per_call_cost.as_ps();
  w.launch_latency_ps = config_.launch_latency.as_ps();
  w.device = config_.device;
  return w;
}

Simulation::Client& Simulation::client(ClientId id) {
  if (id >= clients_.size()) throw ProtocolError(fmt::format("unknown client {}", id));
  return clients_[id];
}

size_t Simulation::connected_clients() const {
  return static_cast<size_t>(
      std::count_if(clients_.begin(), clients_.end(), [](const Client& c) { return c.connected; }));
}

int Simulation::global_gpu(const Client& c, int device) const {
  return c.info.host * config_.gpus_per_host + device;
}

void Simulation::check_device(const Client&, int device) const {
  if (device < 0 || device >= config_.gpus_per_host) {
    throw ProtocolError(fmt::format("device {} out of range (the host has {} GPUs)", device,
                                    config_.gpus_per_host));
  }
}

void Simulation::note_host_time(Client& c, SimTime t) {
  c.info.host_clock = std::max(c.info.host_clock, t);
}

StreamId Simulation::stream_for(ClientId id, Client& c, uint64_t stream, int device) {
  check_device(c, device);
  c.info.used_gpu = true;
  if (stream == wire::kLegacyStreamBase + static_cast<uint64_t>(device)) {
    engine_.ensure_legacy_stream(id, stream, device);
    if (!c.stream_announced[stream] && trace_ != nullptr) {
      trace_->thread_name(id, stream, fmt::format("GPU {} default stream", device),
                          1 + device * 1000);
    }
    c.stream_announced[stream] = true;
  }
  return stream;
}

void Simulation::batch(ClientId id, std::span<const std::byte> payload,
                       std::vector<wire::Reply>& replies) {
  Client& c = client(id);
  batch_client_ = id;
  batch_replies_ = &replies;
  struct Reset {
    std::vector<wire::Reply>*& slot;
    ~Reset() { slot = nullptr; }
  } reset{batch_replies_};
  while (!payload.empty()) {
    const auto h = read_body<wire::RecordHeader>(payload, "record header");
    payload = payload.subspan(sizeof(wire::RecordHeader));
    if (h.size > payload.size()) {
      throw ProtocolError(fmt::format("record of type {} claims {} bytes, {} remain",
                                      static_cast<int>(h.type), h.size, payload.size()));
    }
    if (h.host_time_ps < 0) throw ProtocolError("negative host time");
    if (h.bound_ps < 0) throw ProtocolError("negative host time bound");
    if (h.type != wire::RecordType::kHostClock) c.idle = false;
    if (h.request != 0) c.last_request = std::max(c.last_request, h.request);
    note_host_time(c, SimTime::ps(h.host_time_ps));
    c.bound = SimTime::ps(h.bound_ps);  // kNoBound is SimTime::infinite()
    try {
      apply(id, c, h, payload.first(h.size));
    } catch (const std::invalid_argument& e) {
      // The engine rejects streams that were never created or created twice.
      throw ProtocolError(e.what());
    }
    payload = payload.subspan(h.size);
  }
  progress();
  if (departed_) check_stranded();
}

SimTime Simulation::client_bound(const Client& c) {
  SimTime bound = c.bound;
  for (const auto& [request, at] : c.resuming) bound = std::min(bound, at);
  return bound;
}

SimTime Simulation::safe_time() const {
  // A launcher said how many ranks the job has (WORLD_SIZE): until all of them have connected,
  // one that has not may still submit work from time zero, so the network must not move.
  if (expected_ranks_ > 0 && ranks_seen_.size() < static_cast<size_t>(expected_ranks_))
    return SimTime::zero();
  SimTime safe = SimTime::infinite();
  for (const Client& c : clients_) {
    // The shim leaves out of its bound the threads blocked in a call the simulation answers
    // (they run again from the answer's time) and those waiting for another thread (they run
    // again from that thread's clock, or from a hand-off it counts); a reply not yet taken up
    // bounds the client from its time. A client with every thread waiting does not bound.
    if (!c.connected || c.idle) continue;
    const SimTime bound = client_bound(c);
    if (!bound.is_infinite()) safe = std::min(safe, bound + config_.launch_latency);
  }
  return safe;
}

void Simulation::progress() {
  run_network(false);
  tell_progress();
}

// The network has run to just before its next event, which lies past safe_time(): everything a
// client waits for ends at a later event, or starts from a submission no earlier than some
// client's bound (safe_time() less the launch latency), and an answer not yet taken up bounds
// its client. So no answer a client has not taken up can be earlier than that (but for a late
// start: a collective joined by a client that bounded nothing, from an older clock, starts at
// the network's time; docs/time.md, "Across ranks"). Said only to a client that holds the
// network there itself with requests waiting: then a thread of its own holds the bound (a sleep
// to its wake-up, say) while another waits for an answer, and each would wait for the other
// (docs/time.md, "Sleeps and timed waits"). Clients that do not hold it are not held back by
// their answers' time, and are not told, to keep the traffic down. Said again when requests came
// since: it covers only those read before it (a query among them may go on without its answer,
// docs/time.md, "A sleep beside a query").
void Simulation::tell_progress() {
  if (!progress_sink_) return;
  const SimTime safe = safe_time();
  if (safe.is_infinite()) return;
  const SimTime answers_from = safe - config_.launch_latency;
  for (Client& c : clients_) {
    if (!c.connected || c.idle || c.outstanding == 0) continue;
    if (client_bound(c) > answers_from) continue;
    if (answers_from <= c.answers_from_sent && c.last_request <= c.through_sent) continue;
    // The time as it is now, even below one said before (a thread that went on from an older
    // clock lowers the bound): what was said before still holds for the requests it covered.
    c.answers_from_sent = answers_from;
    c.through_sent = c.last_request;
    progress_sink_(c.info.id, wire::Progress{answers_from.as_ps(), c.through_sent});
  }
}

// Processes network completions and collective starts in time order, as far as causality
// allows (or to the end when `drain`: nobody can submit anything any more). Equal times:
// completions first, since what they release may start at that same time.
void Simulation::run_network(bool drain) {
  for (;;) {
    const SimTime done = network_.next_event_time();
    const SimTime due = collectives_.next_start();
    const SimTime shared = sharing_.next_end();
    const SimTime next = std::min({done, due, shared});
    // Completions and starts release work that bounds the network anew: ask every time.
    if (next.is_infinite() || (!drain && next > safe_time())) return;
    if (shared < std::min(done, due)) {
      // A kernel beside a collective ends before anything else happens: place it.
      const GpuSharing::Placed k = sharing_.place_next();
      engine_.complete_deferred(k.client, k.stream, k.token, k.start, k.end, k.op);
    } else if (done <= due) {
      collectives_.completed(network_.advance_to(done));
    } else {
      collectives_.completed(network_.advance_to(due));
      collectives_.start_due(due);
    }
  }
}

void Simulation::submit_kernel(ClientId id, StreamId s, int device, SimTime at, const OpDesc& op,
                               uint32_t ctas, double hbm_bytes) {
  if (!sharing_.shares(id, device)) {
    engine_.submit(id, s, at, op);
    return;
  }
  engine_.submit_deferred(id, s, at, sharing_.defer(id, s, device, op, ctas, hbm_bytes));
}

std::string Simulation::describe(ClientId id) const {
  if (id >= clients_.size()) return fmt::format("client {}", id);
  const ClientInfo& i = clients_[id].info;
  std::string s = fmt::format("host {} pid {}", i.host, i.pid);
  if (i.global_rank >= 0) s += fmt::format(" rank {}", i.global_rank);
  return s;
}

std::vector<std::string> Simulation::waiting() const {
  std::vector<std::string> lines = collectives_.waiting();
  for (const Client& c : clients_) {
    if (c.connected && c.outstanding > 0) {
      lines.push_back(
          fmt::format("{} is blocked in a synchronising CUDA/NCCL call", describe(c.info.id)));
    }
  }
  return lines;
}

std::vector<std::string> Simulation::stall_report() const {
  auto ms = [](SimTime t) {
    return t.is_infinite() ? std::string("never") : fmt::format("{:.3f} ms", t.as_ms());
  };
  const SimTime safe = safe_time();
  std::vector<std::string> lines{
      fmt::format("network at {}, next collective start {}; causality lets it run to {}",
                  ms(network_.now()), ms(collectives_.next_start()), ms(safe))};
  for (const Client& c : clients_) {
    if (!c.connected) continue;
    std::string line = fmt::format("{}: host clock {}, {} call(s) awaiting an answer",
                                   describe(c.info.id), ms(c.info.host_clock), c.outstanding);
    if (c.idle) {
      line += "; idle (waiting outside CUDA), does not bound the network";
    } else {
      const SimTime bound = client_bound(c);
      // Which answers: the shim's thread blocked on one names its request (a debugger shows it).
      std::vector<std::string> answers;
      for (const auto& [request, at] : c.resuming)
        answers.push_back(fmt::format("request {} at {}", request, ms(at)));
      line += bound.is_infinite()
                  ? "; every thread waits, does not bound the network"
                  : fmt::format("; bounds the network from {}{}", ms(bound),
                                answers.empty()
                                    ? ""
                                    : fmt::format(" ({} answer(s) not yet taken up: {})",
                                                  answers.size(), fmt::join(answers, ", ")));
      if (!bound.is_infinite() && bound + config_.launch_latency == safe) line += " <- holds it";
    }
    lines.push_back(std::move(line));
  }
  for (std::string& l : waiting()) lines.push_back(std::move(l));
  return lines;
}

void Simulation::reply(ClientId client, uint64_t request, SimTime time, int32_t v0, int32_t v1) {
  Client& c = clients_.at(client);
  c.outstanding--;
  c.idle = false;  // released: it runs again, and bounds the network from its new clock
  if (c.gone_on.erase(request) == 0) c.resuming[request] = time;
  const wire::Reply r{request, time.as_ps(), wire::ReplyStatus::kOk, v0, v1, 0};
  if (batch_replies_ != nullptr && batch_client_ == client) {
    batch_replies_->push_back(r);
  } else if (sink_ && c.connected) {
    sink_(client, r);
  }
}

void Simulation::await(ClientId id, const wire::RecordHeader& h, std::string what,
                       const std::function<void(Engine::Callback)>& when) {
  if (h.request == 0) return;
  clients_.at(id).outstanding++;
  const SimTime asked = SimTime::ps(h.host_time_ps);
  // The reply carries the completion time itself (an event's timestamp, say); the shim moves
  // its clock to max(clock, reply) where the call blocks.
  when([this, id, request = h.request, asked, what = std::move(what)](SimTime done) {
    if (trace_ != nullptr && done > asked) {
      trace_->span(id, 0, what, "host-wait", asked, done, nlohmann::json::object());
    }
    reply(id, request, done);
  });
}

// GEMMs are named by the canonical signature the cost model looked them up by (the key of the
// kernel database), so the report's top-kernel table says exactly which shape to measure.
uint32_t Simulation::gemm_label(Client& c, const wire::Gemm& g, const std::string& signature) {
  std::string name = !signature.empty() ? signature
                                        : fmt::format("gemm {}x{}x{} batch {} {}", g.m, g.n, g.k,
                                                      g.batch, wire::dtype_name(g.a_type));
  // What was assumed to price it is said where it is seen: the trace, the top kernels.
  if (g.api == wire::kGemmApiGroupedEvenSplit)
    name += " [torch._grouped_mm: group sizes assumed even]";
  auto it = c.synthetic_labels.find(name);
  if (it != c.synthetic_labels.end()) return it->second;
  // Synthetic labels count down from the top so they never meet the shim's kernel ids.
  const uint32_t label = 0xffffffffu - static_cast<uint32_t>(c.synthetic_labels.size());
  c.synthetic_labels.emplace(name, label);
  c.kernels[label] = name;
  return label;
}

void Simulation::apply(ClientId id, Client& c, const wire::RecordHeader& h,
                       std::span<const std::byte> body) {
  const SimTime at = SimTime::ps(h.host_time_ps);
  switch (h.type) {
    case wire::RecordType::kDefineKernel: {
      const auto k = read_body<wire::DefineKernel>(body, "define-kernel");
      if (body.size() != sizeof(k) + k.name_bytes)
        throw ProtocolError("define-kernel size mismatch");
      c.kernels[k.kernel] =
          std::string(reinterpret_cast<const char*>(body.data() + sizeof(k)), k.name_bytes);
      return;
    }
    case wire::RecordType::kStreamCreate: {
      const auto s = read_exact<wire::StreamCreate>(body, "stream-create");
      check_device(c, s.device);
      if (s.stream < wire::kFirstUserStream) throw ProtocolError("stream id in the reserved range");
      engine_.create_stream(id, s.stream, s.device, (s.flags & wire::kStreamNonBlocking) != 0);
      if (trace_ != nullptr) {
        trace_->thread_name(
            id, s.stream,
            fmt::format("GPU {} stream {}", s.device, s.stream - wire::kFirstUserStream + 1),
            1 + s.device * 1000 + static_cast<int>(s.stream % 1000));
      }
      return;
    }
    case wire::RecordType::kStreamDestroy: {
      const auto s = read_exact<wire::StreamRef>(body, "stream-destroy");
      engine_.destroy_stream(id, s.stream);
      return;
    }
    case wire::RecordType::kLaunch: {
      const auto l = read_exact<wire::Launch>(body, "launch");
      const Cost cost = pricing_.launch(c.kernels, l);
      const StreamId s = stream_for(id, c, l.stream, l.device);
      // A cuDNN convolution's grid is cuDNN's choice, which the shim does not see; its implicit
      // GEMM's tiles (split along K when they are few) fill the GPU as a GEMM's do, so it is
      // taken to fill the GPU beside a collective: 0 CTAs, as for a GEMM below.
      const uint32_t ctas = l.work.kind == wire::WorkKind::kConvolution
                                ? 0
                                : static_cast<uint32_t>(std::min<uint64_t>(
                                      uint64_t{l.grid[0]} * l.grid[1] * l.grid[2], UINT32_MAX));
      submit_kernel(id, s, l.device, at,
                    OpDesc{OpKind::kKernel, cost.duration, cost.source, l.kernel, 0}, ctas,
                    cost.hbm_bytes);
      // A request here is a synchronous call waiting for this very operation, the last on its
      // stream.
      await(id, h, "sync kernel",
            [&](Engine::Callback cb) { engine_.when_stream_done(id, s, std::move(cb)); });
      return;
    }
    case wire::RecordType::kCopy: {
      const auto cp = read_exact<wire::Copy>(body, "copy");
      const Cost cost = pricing_.copy(cp);
      const StreamId s = stream_for(id, c, cp.stream, cp.device);
      engine_.submit(id, s, at, OpDesc{OpKind::kCopy, cost.duration, cost.source, 0, cp.bytes});
      // A request here is a synchronous call waiting for this very operation, the last on its
      // stream.
      await(id, h, "sync memcpy",
            [&](Engine::Callback cb) { engine_.when_stream_done(id, s, std::move(cb)); });
      return;
    }
    case wire::RecordType::kMemset: {
      const auto m = read_exact<wire::Memset>(body, "memset");
      const Cost cost = pricing_.memset(m);
      const StreamId s = stream_for(id, c, m.stream, m.device);
      engine_.submit(id, s, at, OpDesc{OpKind::kMemset, cost.duration, cost.source, 0, m.bytes});
      // A request here is a synchronous call waiting for this very operation, the last on its
      // stream.
      await(id, h, "sync memset",
            [&](Engine::Callback cb) { engine_.when_stream_done(id, s, std::move(cb)); });
      return;
    }
    case wire::RecordType::kGemm: {
      const auto g = read_exact<wire::Gemm>(body, "gemm");
      const Cost cost = pricing_.gemm(g);
      const StreamId s = stream_for(id, c, g.stream, g.device);
      const uint32_t label = gemm_label(c, g, cost.signature);
      // Taken to fill the GPU beside a collective: 0 CTAs stands for "as many as it has SMs".
      submit_kernel(id, s, g.device, at,
                    OpDesc{OpKind::kKernel, cost.duration, cost.source, label, 0}, 0,
                    cost.hbm_bytes);
      return;
    }
    case wire::RecordType::kCommInit: {
      const auto init = read_exact<wire::CommInit>(body, "comm-init");
      check_device(c, init.device);
      if (h.request == 0) throw ProtocolError("comm-init must be a request");
      c.outstanding++;
      collectives_.comm_init(id, h.request, at, init);
      return;
    }
    case wire::RecordType::kCommSplit: {
      const auto split = read_exact<wire::CommSplit>(body, "comm-split");
      if (h.request == 0) throw ProtocolError("comm-split must be a request");
      c.outstanding++;
      collectives_.comm_split(id, h.request, at, split);
      return;
    }
    case wire::RecordType::kCommDestroy:
      collectives_.comm_destroy(id, read_exact<wire::CommRef>(body, "comm-destroy"));
      return;
    case wire::RecordType::kCollective: {
      const auto head = read_body<wire::CollectiveHeader>(body, "collective");
      const size_t ops_bytes = static_cast<size_t>(head.op_count) * sizeof(wire::CollectiveOp);
      if (head.op_count == 0 || body.size() < sizeof(head) + ops_bytes) {
        throw ProtocolError("collective record size mismatch");
      }
      std::vector<wire::CollectiveOp> ops(head.op_count);
      std::memcpy(ops.data(), body.data() + sizeof(head), ops_bytes);
      // The attached send buffers follow the ops, in op order.
      std::vector<std::vector<std::byte>> payloads(ops.size());
      size_t at_byte = sizeof(head) + ops_bytes;
      for (size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].payload_bytes > wire::kMaxPayloadBytes ||
            at_byte + ops[i].payload_bytes > body.size()) {
          throw ProtocolError("collective payload exceeds the record");
        }
        payloads[i].assign(
            body.begin() + static_cast<std::ptrdiff_t>(at_byte),
            body.begin() + static_cast<std::ptrdiff_t>(at_byte + ops[i].payload_bytes));
        at_byte += ops[i].payload_bytes;
      }
      if (at_byte != body.size()) throw ProtocolError("collective record has trailing bytes");
      stream_for(id, c, head.stream, head.device);
      collectives_.submit(id, at, head, ops, std::move(payloads));
      return;
    }
    case wire::RecordType::kHostFunc: {
      const auto r = read_exact<wire::StreamRef>(body, "host-func");
      const StreamId s = stream_for(id, c, r.stream, r.device);
      engine_.submit(id, s, at, OpDesc{OpKind::kHostFunc, SimTime::zero(), std::nullopt, 0, 0});
      return;
    }
    case wire::RecordType::kEventRecord: {
      const auto e = read_exact<wire::EventOp>(body, "event-record");
      engine_.record_event(id, e.event, stream_for(id, c, e.stream, e.device), at);
      return;
    }
    case wire::RecordType::kStreamWaitEvent: {
      const auto e = read_exact<wire::EventOp>(body, "stream-wait-event");
      engine_.wait_event(id, stream_for(id, c, e.stream, e.device), e.event, at);
      return;
    }
    case wire::RecordType::kAlloc:
    case wire::RecordType::kFree: {
      const auto m = read_exact<wire::MemOp>(body, "alloc/free");
      check_device(c, m.device);
      c.info.used_gpu = true;
      GpuStats& g = accounting_->stats().gpus[global_gpu(c, m.device)];
      if (h.type == wire::RecordType::kAlloc) {
        if (!c.allocations.emplace(m.address, std::make_pair(m.device, m.bytes)).second) {
          throw ProtocolError(
              fmt::format("allocation at {:#x} while that address is still allocated", m.address));
        }
        g.memory_in_use += static_cast<int64_t>(m.bytes);
        g.peak_memory = std::max(g.peak_memory, g.memory_in_use);
      } else {
        auto it = c.allocations.find(m.address);
        if (it == c.allocations.end()) throw ProtocolError("free of an address never allocated");
        // The bytes come back to the GPU the allocation was made on, whatever the record says.
        accounting_->stats().gpus[global_gpu(c, it->second.first)].memory_in_use -=
            static_cast<int64_t>(it->second.second);
        c.allocations.erase(it);
      }
      if (trace_ != nullptr) {
        trace_->counter(id, fmt::format("GPU {} memory", m.device), at,
                        {{"bytes", g.memory_in_use}});
      }
      return;
    }
    case wire::RecordType::kStreamSync: {
      const auto r = read_exact<wire::StreamRef>(body, "stream-sync");
      const StreamId s = stream_for(id, c, r.stream, r.device);
      await(id, h, "cudaStreamSynchronize",
            [&](Engine::Callback cb) { engine_.when_stream_done(id, s, std::move(cb)); });
      return;
    }
    case wire::RecordType::kEventSync: {
      const auto e = read_exact<wire::EventOp>(body, "event-sync");
      // An event never recorded counts as complete (CUDA returns cudaSuccess at once).
      await(id, h, "cudaEventSynchronize",
            [&](Engine::Callback cb) { engine_.when_event_done(id, e.event, std::move(cb)); });
      return;
    }
    case wire::RecordType::kDeviceSync: {
      const auto d = read_exact<wire::DeviceRef>(body, "device-sync");
      check_device(c, d.device);
      await(id, h, "cudaDeviceSynchronize",
            [&](Engine::Callback cb) { engine_.when_device_done(id, d.device, std::move(cb)); });
      return;
    }
    case wire::RecordType::kHostClock: {
      const auto hc = read_exact<wire::HostClock>(body, "host-clock");
      if ((hc.flags & wire::kHostResumed) != 0) {
        // Before its reply: a query that went on without it (wire::Progress).
        if (c.resuming.erase(hc.thread) == 0) c.gone_on.insert(hc.thread);
      } else {
        c.idle = (hc.flags & wire::kHostIdle) != 0;
      }
      if (c.idle) spdlog::debug("{} is idle (waiting outside CUDA)", describe(id));
      return;
    }
    case wire::RecordType::kDefineGraph: {
      const auto g = read_body<wire::DefineGraph>(body, "define-graph");
      if (body.size() != sizeof(g) + static_cast<size_t>(g.node_count) * sizeof(wire::GraphNode)) {
        throw ProtocolError("define-graph size mismatch");
      }
      std::vector<wire::GraphNode> nodes(g.node_count);
      std::memcpy(nodes.data(), body.data() + sizeof(g), nodes.size() * sizeof(wire::GraphNode));
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].dep_count > wire::kMaxGraphNodeDeps)
          throw ProtocolError("graph node with too many deps");
        for (int d = 0; d < nodes[i].dep_count; ++d) {
          if (nodes[i].deps[d] >= i) throw ProtocolError("graph node depends on a later node");
        }
      }
      c.graphs[g.graph] = std::move(nodes);
      return;
    }
    case wire::RecordType::kGraphLaunch: {
      const auto g = read_exact<wire::GraphLaunch>(body, "graph-launch");
      auto graph = c.graphs.find(g.graph);
      if (graph == c.graphs.end())
        throw ProtocolError(fmt::format("launch of unknown graph {}", g.graph));
      const SimTime cost = pricing_.graph(c.kernels, graph->second);
      const StreamId s = stream_for(id, c, g.stream, g.device);
      engine_.submit(id, s, at, OpDesc{OpKind::kGraph, cost, std::nullopt, 0, 0});
      return;
    }
  }
  throw ProtocolError(fmt::format("unknown record type {}", static_cast<int>(h.type)));
}

void Simulation::bye(ClientId id, SimTime host_time, std::string how, uint64_t lapsed_handoffs) {
  Client& c = client(id);
  note_host_time(c, host_time);
  c.info.lapsed_handoffs = lapsed_handoffs;
  c.how_ended = how == "exited" ? "exited" : how;
  c.info.end = std::move(how);
  c.connected = false;
  departed_ = true;
  progress();
  check_stranded();
}

std::string Simulation::still_waiting() const {
  const auto lines = waiting();
  return lines.empty() ? "" : "; still waiting:\n  " + fmt::format("{}", fmt::join(lines, "\n  "));
}

void Simulation::check_stranded() {
  // A rank that ended while a communicator it belongs to has an operation waiting for it (or
  // gets one later) leaves its peers waiting for ever: end the run at once, saying who, how it
  // ended and what waits for it.
  if (stranded_reported_ || !failure_sink_) return;
  if (auto s = collectives_.stranded()) {
    stranded_reported_ = true;
    failure_sink_(fmt::format("{} {} and can never reach {} (rank {} of its communicator){}",
                              describe(s->client), clients_.at(s->client).how_ended, s->op, s->rank,
                              still_waiting()));
  }
}

void Simulation::disconnected(ClientId id, std::string_view why) {
  Client& c = client(id);
  if (!c.connected) return;
  c.connected = false;
  departed_ = true;
  c.info.end = fmt::format("disconnected: {}", why);
  spdlog::warn("client {} (host {} pid {}) disconnected without saying goodbye: {}", id,
               c.info.host, c.info.pid, why);
  c.how_ended =
      fmt::format("ended without saying goodbye ({}: killed by SIGKILL, a crash, or _exit)", why);
  progress();
  // A rank that vanished (killed, crashed, os._exit) leaves its peers waiting for collectives
  // that can never complete: the run ends as soon as one waits for it (check_stranded). One
  // that used its GPU ends it within kVanishedGrace even if none does yet: its peers may still
  // be computing towards the collective that would wait for it.
  check_stranded();
  if (c.info.used_gpu && !stranded_reported_ && !vanished_) {
    vanished_ = Vanished{id, std::chrono::steady_clock::now()};
  }
}

void Simulation::check_timeouts(std::chrono::steady_clock::time_point now) {
  // Waiting for announced ranks must not hang a job in which some never use a GPU: after
  // kRankWait without a new one, the network goes on with those it has. (Ranks connect at their
  // first CUDA call, after importing torch: sixteen ranks importing at once on two loaded cores
  // came more than 10 s apart.)
  constexpr auto kRankWait = std::chrono::seconds(60);
  if (expected_ranks_ > 0 && ranks_seen_.size() < static_cast<size_t>(expected_ranks_) &&
      now - last_rank_joined_ > kRankWait) {
    spdlog::warn("{} of {} announced ranks (WORLD_SIZE) connected; going on without the others",
                 ranks_seen_.size(), expected_ranks_);
    expected_ranks_ = 0;
    progress();
  }
  constexpr auto kVanishedGrace = std::chrono::seconds(2);
  if (vanished_ && !stranded_reported_ && failure_sink_ && now - vanished_->at >= kVanishedGrace) {
    stranded_reported_ = true;
    failure_sink_(fmt::format("{} {}{}", describe(vanished_->client),
                              clients_.at(vanished_->client).how_ended, still_waiting()));
  }
  if (!failure_sink_ || config_.collective_timeout.count() <= 0) return;
  if (auto late = collectives_.overdue(now, config_.collective_timeout)) {
    failure_sink_(
        fmt::format("{} (--collective-timeout {} s)", *late, config_.collective_timeout.count()));
  }
}

const RunStats& Simulation::stats() const {
  return accounting_->stats();
}

const RunStats& Simulation::finish() {
  RunStats& stats = accounting_->stats();
  if (finished_) return stats;
  finished_ = true;
  // Nobody can submit anything any more: let the network finish what it carries.
  run_network(true);
  stats.unfinished = waiting();
  stats.late_collective_starts = collectives_.late_starts();
  stats.communication = collectives_.stats();
  stats.links = network_.link_stats();
  stats.network = network_.counters();
  accounting_->finish([this](ClientId client, uint32_t label) -> const std::string& {
    return clients_.at(client).kernels.at(label);
  });
  stats.clients.clear();
  // The run ends with its ranks. A helper's clock (a launcher's agent, a loader's worker) runs
  // on its own, and where it went by timeouts and polls (real time) it would stretch the run;
  // only a job whose processes all did without the GPU ends with theirs.
  const bool any_rank =
      std::ranges::any_of(clients_, [](const auto& c) { return c.info.used_gpu; });
  for (size_t i = 0; i < clients_.size(); ++i) {
    ClientInfo info = clients_[i].info;
    const SimTime gpu_done = engine_.client_done(static_cast<ClientId>(i));
    if (info.used_gpu || !any_rank)
      stats.simulated_end = std::max({stats.simulated_end, info.host_clock, gpu_done});
    stats.clients.push_back(info);
  }
  if (trace_ != nullptr) trace_->finish();
  return stats;
}

}  // namespace phantora::sim
