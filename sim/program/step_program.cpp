// run_program: every stream is a cursor over its ops; a stream advances until an op takes time
// (Compute/Kernel on the engine, Collective on the network) or a Wait finds its event unrecorded.
// Completions and Records make streams ready again; a ready list keeps this iterative.
#include "sim/program/step_program.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/core/merge_lanes.hpp"

namespace zerosim {

const char* to_string(Category c) {
  switch (c) {
    case Category::Compute:
      return "compute";
    case Category::Recompute:
      return "recompute";
    case Category::Optimizer:
      return "optimizer";
    case Category::ParamFetch:
      return "param_fetch";
    case Category::QuantKernel:
      return "quant_kernel";
    case Category::OffloadCopy:
      return "offload_copy";
    case Category::NvmeIo:
      return "nvme_io";
    case Category::HostOptimizer:
      return "host_optimizer";
    case Category::AllGather:
      return "all_gather";
    case Category::ReduceScatter:
      return "reduce_scatter";
    case Category::AllToAll:
      return "all_to_all";
    case Category::AllReduce:
      return "all_reduce";
    case Category::Other:
      return "other";
  }
  return "?";
}

int StepProgram::add_piece(std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) piece_text.append(p);
  piece_ends.push_back(piece_text.size());
  return static_cast<int>(piece_ends.size()) - 1;
}

int StepProgram::add_prefix(int head, int tail) {
  prefixes.push_back({head, tail});
  return static_cast<int>(prefixes.size()) - 1;
}

std::string_view StepProgram::piece(int i) const {
  const auto k = static_cast<std::size_t>(i);
  const std::size_t begin = k == 0 ? 0 : piece_ends[k - 1];
  return std::string_view(piece_text).substr(begin, piece_ends[k] - begin);
}

std::string StepProgram::prefix_text(int prefix) const {
  const LabelPrefix& p = prefixes[static_cast<std::size_t>(prefix)];
  std::string text;
  if (p.head >= 0) text += piece(p.head);
  if (p.tail >= 0) text += piece(p.tail);
  return text;
}

std::string StepProgram::label_text(int label) const {
  if (label < 0) return "op";
  const OpLabel& l = labels[static_cast<std::size_t>(label)];
  std::string text = l.prefix >= 0 ? prefix_text(l.prefix) : std::string();
  return text += l.suffix;
}

std::string op_where(const StepProgram& p, std::size_t s, std::size_t i) {
  return "stream " + std::to_string(s) + " ('" + p.streams[s].name + "') op " + std::to_string(i);
}

std::string deadlock_message(const StepProgram& p, std::size_t s, std::size_t i) {
  const StepOp& op = p.streams[s].ops[i];
  return "run_program: deadlock: " + op_where(p, s, i) +
         (op.kind == OpKind::Wait
              ? " waits for event " + std::to_string(op.event) + " which is never recorded"
              : " never completed");
}

CollectiveClasses::CollectiveClasses(const StepProgram& p) {
  const std::size_t C = p.collectives.size();
  if (p.collective_class.empty()) {
    first_.resize(C);
    for (std::size_t k = 0; k < C; ++k) first_[k] = static_cast<int>(k);
    return;
  }
  if (p.collective_class.size() != C)
    throw std::logic_error("run_program: " + std::to_string(p.collective_class.size()) +
                           " collective classes for " + std::to_string(C) + " collectives");
  cls_ = p.collective_class.data();
  first_.assign(static_cast<std::size_t>(std::max(0, p.collective_classes)), -1);
  for (std::size_t k = 0; k < C; ++k) {
    const int c = cls_[k];
    if (c < 0 || c >= p.collective_classes)
      throw std::logic_error("run_program: collective " + std::to_string(k) + " has class " +
                             std::to_string(c) + " outside [0, collective_classes)");
    int& f = first_[static_cast<std::size_t>(c)];
    if (f < 0) f = static_cast<int>(k);
  }
}

namespace {

// validate_program's check of the collective classes: the members of a class are equal.
void validate_classes(const StepProgram& p) {
  const CollectiveClasses classes(p);
  for (std::size_t k = 0; k < p.collectives.size(); ++k) {
    const int f = classes.first()[classes.of(k)];
    const CollectiveOp &a = p.collectives[static_cast<std::size_t>(f)], &b = p.collectives[k];
    if (a.kind != b.kind || a.algorithm != b.algorithm || &a.groups.get() != &b.groups.get() ||
        !(a.bytes == b.bytes))
      throw std::logic_error("run_program: collectives " + std::to_string(f) + " and " +
                             std::to_string(k) + " share class " + std::to_string(classes.of(k)) +
                             " but differ");
  }
}

// Out of line, off the interpreter's path: an op validate_program rejects was reached.
[[noreturn, gnu::cold, gnu::noinline]] void reject(const StepProgram& p) {
  validate_program(p);  // throws for this op, or for an earlier one
  throw std::logic_error("run_program: malformed program");  // not reached
}

}  // namespace

void validate_program(const StepProgram& p) {
  validate_classes(p);
  for (std::size_t s = 0; s < p.streams.size(); ++s) {
    for (std::size_t i = 0; i < p.streams[s].ops.size(); ++i) {
      const StepOp& op = p.streams[s].ops[i];
      switch (op.kind) {
        case OpKind::Compute:
        case OpKind::Kernel:
          if (!(op.duration_s >= 0))
            throw std::logic_error("run_program: " + op_where(p, s, i) +
                                   " has a negative duration");
          break;
        case OpKind::Collective:
          if (op.collective < 0 || op.collective >= static_cast<int>(p.collectives.size()))
            throw std::logic_error("run_program: " + op_where(p, s, i) + " names collective " +
                                   std::to_string(op.collective) + " out of range");
          break;
        case OpKind::Record:
        case OpKind::Wait:
          if (op.event < 0 || op.event >= p.event_count)
            throw std::logic_error("run_program: " + op_where(p, s, i) + " names event " +
                                   std::to_string(op.event) + " outside [0, event_count)");
          break;
      }
    }
  }
}

namespace {

class Runner {
 public:
  Runner(const StepProgram& p, Engine& e, NetworkModel& net, const SmShare& share,
         int capture_event = -1, RunSnapshot* snapshot = nullptr)
      : p_(p),
        e_(e),
        net_(net),
        share_(share),
        pc_(p.streams.size(), 0),
        start_(p.streams.size(), 0),
        left_(p.streams.size(), 0),
        since_(p.streams.size(), 0),
        share_event_(p.streams.size()),
        sharing_(p.streams.size(), 0),
        recorded_(static_cast<std::size_t>(std::max(0, p.event_count)), 0),
        wait_head_(static_cast<std::size_t>(std::max(0, p.event_count)), -1),
        wait_tail_(static_cast<std::size_t>(std::max(0, p.event_count)), -1),
        wait_next_(p.streams.size(), -1),
        parked_(p.streams.size(), 0),
        capture_event_(capture_event),
        snapshot_(snapshot) {}

  // A run from the program's start.
  RunResult run() {
    t0_ = e_.now();
    ev0_ = e_.events_processed();
    net0_ = net_.stats();
    result_.lanes.resize(p_.streams.size());
    for (std::size_t s = 0; s < p_.streams.size(); ++s) ready_.push_back(s);
    return finish();
  }

  // The run that goes on from `from` (resume_program has checked that it may). The streams the
  // snapshot's program ran to their end stand here at a Wait: parking, for an event not recorded
  // yet; waking, for the snapshot's event (its Record woke them).
  RunResult resume(const RunSnapshot& from, const std::vector<std::size_t>& parking,
                   const std::vector<std::size_t>& waking) {
    t0_ = from.t0;
    ev0_ = e_.events_processed();
    net0_ = from.net0;
    carried_events_ = from.events;
    net_.resume_stats(from.net);
    // Each lane with room for all of its stream's ops, then the snapshot's (one copy).
    result_.lanes.resize(p_.streams.size());
    for (std::size_t s = 0; s < p_.streams.size(); ++s) {
      result_.lanes[s].reserve(p_.streams[s].ops.size());
      result_.lanes[s].assign(from.lanes[s].begin(), from.lanes[s].end());
    }
    pc_ = from.pc;
    std::copy(from.recorded.begin(), from.recorded.end(), recorded_.begin());
    std::copy(from.wait_head.begin(), from.wait_head.end(), wait_head_.begin());
    std::copy(from.wait_tail.begin(), from.wait_tail.end(), wait_tail_.begin());
    wait_next_ = from.wait_next;
    parked_ = from.parked;
    park_clock_ = *std::max_element(parked_.begin(), parked_.end());
    // Each joins its event's waiters where its arrival (when it ran out of ops there) puts it.
    for (const std::size_t s : parking) {
      const auto ev = static_cast<std::size_t>(p_.streams[s].ops[pc_[s]].event);
      int* link = &wait_head_[ev];
      while (*link >= 0 && parked_[static_cast<std::size_t>(*link)] < parked_[s])
        link = &wait_next_[static_cast<std::size_t>(*link)];
      wait_next_[s] = *link;
      *link = static_cast<int>(s);
      if (wait_next_[s] < 0) wait_tail_[ev] = static_cast<int>(s);
    }
    // The Record woke its waiters in arrival order, after the streams ready before it.
    ready_ = from.ready;
    for (const std::size_t s : waking) {
      auto at = ready_.end();
      while (at - ready_.begin() > static_cast<std::ptrdiff_t>(ready_.size() - from.woken) &&
             parked_[*(at - 1)] > parked_[s])
        --at;
      ready_.insert(at, s);
    }
    return finish();
  }

 private:
  RunResult finish() {
    // Room for every op of a stream up front: a lane never grows while the engine runs.
    for (std::size_t s = 0; s < p_.streams.size(); ++s)
      result_.lanes[s].reserve(p_.streams[s].ops.size());
    drain();
    e_.run();
    for (std::size_t s = 0; s < p_.streams.size(); ++s) {
      if (pc_[s] >= p_.streams[s].ops.size()) continue;
      validate_program(p_);  // a malformed op the run did not reach is reported first
      throw std::logic_error(deadlock_message(p_, s, pc_[s]));
    }
    double end = t0_;
    for (const auto& lane : result_.lanes)  // a lane's ops end in order
      if (!lane.empty()) end = std::max(end, lane.back().end);
    result_.makespan_s = end - t0_;
    result_.events = carried_events_ + (e_.events_processed() - ev0_);
    const NetStats& n = net_.stats();
    result_.net.inter_node_bytes = n.inter_node_bytes - net0_.inter_node_bytes;
    result_.net.intra_node_bytes = n.intra_node_bytes - net0_.intra_node_bytes;
    result_.net.flows = n.flows - net0_.flows;
    return std::move(result_);
  }

  // At the capture event's Record: the state, if the run is quiescent (nothing pending on the
  // engine, the network idle, no op running on the SMs) and no snapshot was taken yet.
  void capture(std::size_t s, std::size_t woken) {
    RunSnapshot& snap = *snapshot_;
    if (snap.event >= 0 || e_.pending() != 0 || !net_.idle() ||
        std::find(sharing_.begin(), sharing_.end(), 1) != sharing_.end())
      return;
    snap.event = capture_event_;
    snap.woken = woken;
    snap.t0 = t0_;
    snap.now = e_.now();
    snap.events = e_.events_processed() - ev0_;
    snap.net0 = net0_;
    snap.net = net_.stats();
    snap.lanes = result_.lanes;
    snap.pc = pc_;
    snap.recorded = recorded_;
    snap.wait_head = wait_head_;
    snap.wait_tail = wait_tail_;
    snap.wait_next = wait_next_;
    snap.parked = parked_;
    snap.ops.clear();
    for (const Stream& stream : p_.streams) snap.ops.push_back(stream.ops.size());
    snap.event_count = p_.event_count;
    snap.ready.assign(1, s);
    snap.ready.insert(snap.ready.end(), ready_.begin() + static_cast<std::ptrdiff_t>(drain_at_ + 1),
                      ready_.end());
  }

  // FIFO over the ready list; re-entrant calls (a model that completes inside start()) only
  // enqueue.
  void drain() {
    if (draining_) return;
    draining_ = true;
    for (drain_at_ = 0; drain_at_ < ready_.size(); ++drain_at_) pump(ready_[drain_at_]);
    ready_.clear();
    draining_ = false;
  }

  // Runs stream s's instantaneous ops until one takes time or blocks. Each op is checked as it is
  // reached: one validate_program would reject makes it run (reject) before the bad reference is
  // used, so the errors are validate_program's.
  void pump(std::size_t s) {
    const auto& ops = p_.streams[s].ops;
    const auto events = recorded_.size(), collectives = p_.collectives.size();
    while (pc_[s] < ops.size()) {
      const StepOp& op = ops[pc_[s]];
      if (op.kind == OpKind::Record || op.kind == OpKind::Wait) {
        if (static_cast<std::size_t>(op.event) >= events) reject(p_);
      } else if (op.kind == OpKind::Collective) {
        if (static_cast<std::size_t>(op.collective) >= collectives) reject(p_);
      } else if (!(op.duration_s >= 0)) {
        reject(p_);
      }
      switch (op.kind) {
        case OpKind::Record: {
          recorded_[op.event] = 1;
          const std::size_t ready_before = ready_.size();
          for (int w = wait_head_[op.event]; w >= 0; w = wait_next_[static_cast<std::size_t>(w)])
            ready_.push_back(static_cast<std::size_t>(w));
          wait_head_[op.event] = wait_tail_[op.event] = -1;
          ++pc_[s];
          if (op.event == capture_event_ && snapshot_ != nullptr)
            capture(s, ready_.size() - ready_before);
          break;
        }
        case OpKind::Wait:
          if (!recorded_[op.event]) {  // s joins the event's waiters, in arrival order
            const int tail = std::exchange(wait_tail_[op.event], static_cast<int>(s));
            (tail >= 0 ? wait_next_[static_cast<std::size_t>(tail)] : wait_head_[op.event]) =
                static_cast<int>(s);
            wait_next_[s] = -1;
            parked_[s] = ++park_clock_;
            return;
          }
          ++pc_[s];
          break;
        case OpKind::Compute:
        case OpKind::Kernel:
          start_[s] = e_.now();
          if (share_.enabled() && on_sms(op.category)) {
            sharing_[s] = 1;
            left_[s] = op.duration_s;
            since_[s] = e_.now();
            // The stream's previous end ran: a fresh event, none when no SM is left (it starts
            // when a collective ends).
            const double r = rate();
            if (r > 0) share_event_[s] = e_.schedule_at(e_.now() + left_[s] / r, end_share(s));
          } else {
            e_.schedule_after(op.duration_s, Engine::bind<&Runner::complete>(this, s));
          }
          return;
        case OpKind::Collective:
          start_[s] = e_.now();
          if (share_.enabled()) {
            // The collective holds its SMs until it ends (sharing_collective_ended).
            set_taken(taken_ + share_.collective_sms[static_cast<std::size_t>(op.collective)]);
            net_.start(p_.collectives[op.collective],
                       Engine::bind<&Runner::sharing_collective_ended>(this, s));
          } else {
            net_.start(p_.collectives[op.collective], Engine::bind<&Runner::complete>(this, s));
          }
          return;
      }
    }
    parked_[s] = ++park_clock_;  // ran out of ops
  }

  static bool on_sms(Category c) {
    return c != Category::OffloadCopy && c != Category::NvmeIo && c != Category::HostOptimizer;
  }
  double rate() const {
    return std::max(0.0, static_cast<double>(share_.gpu_sms) - taken_) / share_.gpu_sms;
  }
  // The end of stream s's collective under SM sharing: the SMs it held are read back from the op,
  // still stream s's current one.
  void sharing_collective_ended(std::size_t s) {
    const StepOp& done = p_.streams[s].ops[pc_[s]];
    set_taken(taken_ - share_.collective_sms[static_cast<std::size_t>(done.collective)]);
    complete(s);
  }
  // The end of stream s's SM-bound op.
  Engine::Action end_share(std::size_t s) { return Engine::bind<&Runner::share_ended>(this, s); }
  void share_ended(std::size_t s) {
    sharing_[s] = 0;
    complete(s);
  }
  // The SMs live collectives hold change: every running SM-bound op is charged its progress at
  // the old rate and its end moved to the new one (reschedule: the engine counts the end it
  // replaces), dropped when no SM is left (cancel counts it), or scheduled afresh if it had none.
  // Each stream's end moves in stream order, so the sequence numbers are those of one move per
  // stream.
  void set_taken(double taken) {
    const double r = rate(), now = e_.now();
    taken_ = taken;
    const double r_new = rate();
    for (std::size_t s = 0; s < sharing_.size(); ++s) {
      if (!sharing_[s]) continue;
      left_[s] = std::max(0.0, left_[s] - (now - since_[s]) * r);
      since_[s] = now;
      if (!(r_new > 0)) {
        e_.cancel(share_event_[s]);
        continue;
      }
      const double t = now + left_[s] / r_new;
      if (!e_.reschedule(share_event_[s], t)) share_event_[s] = e_.schedule_at(t, end_share(s));
    }
  }

  void complete(std::size_t s) {
    result_.lanes[s].push_back(
        OpTiming{static_cast<int>(s), static_cast<int>(pc_[s]), start_[s], e_.now()});
    ++pc_[s];
    ready_.push_back(s);
    drain();
  }

  const StepProgram& p_;
  Engine& e_;
  NetworkModel& net_;
  const SmShare& share_;
  std::vector<std::size_t> pc_;
  std::vector<double> start_;
  // SM sharing: per stream, its running SM-bound op's work left (seconds at full rate) as of
  // since_, its scheduled end and whether one runs; the SMs collectives hold.
  std::vector<double> left_, since_;
  std::vector<Engine::EventId> share_event_;  // the scheduled end of each stream's SM-bound op
  std::vector<char> sharing_;
  double taken_ = 0;
  std::vector<char> recorded_;
  // Per event, the streams waiting for it in arrival order, as a list through wait_next_ (a
  // stream waits for one event at a time): no allocation per waiting stream.
  std::vector<int> wait_head_, wait_tail_, wait_next_;
  std::vector<std::size_t> ready_;
  std::size_t drain_at_ = 0;  // the ready entry being pumped
  bool draining_ = false;
  // Per stream, when it last parked at a Wait or ran out of ops, by park_clock_ (snapshots).
  std::vector<std::uint64_t> parked_;
  std::uint64_t park_clock_ = 0;
  int capture_event_;
  RunSnapshot* snapshot_;
  double t0_ = 0;
  std::uint64_t ev0_ = 0, carried_events_ = 0;
  NetStats net0_;
  RunResult result_;
};

// Equal ops of two programs: what a run reads of them (labels aside).
bool same_op(const StepProgram& a, const StepOp& x, const StepProgram& b, const StepOp& y) {
  if (x.kind != y.kind || x.category != y.category || !(x.duration_s == y.duration_s) ||
      x.event != y.event)
    return false;
  if (x.kind != OpKind::Collective) return true;
  const auto in = [](const StepProgram& p, int k) {
    return k >= 0 && static_cast<std::size_t>(k) < p.collectives.size();
  };
  if (!in(a, x.collective) || !in(b, y.collective)) return false;
  const CollectiveOp &c = a.collectives[static_cast<std::size_t>(x.collective)],
                     &d = b.collectives[static_cast<std::size_t>(y.collective)];
  return c.kind == d.kind && c.algorithm == d.algorithm && c.bytes == d.bytes &&
         c.nccl_algo == d.nccl_algo && c.nccl_proto == d.nccl_proto && c.groups == d.groups;
}

// resume_program's check that `program` begins as `source`. The streams `source` ran to their
// end wait in `program` at their next op: parking, for an event not recorded yet; waking, for the
// snapshot's own event.
bool begins_as(const StepProgram& program, const StepProgram& source, const RunSnapshot& from,
               std::vector<std::size_t>& parking, std::vector<std::size_t>& waking) {
  const std::size_t S = source.streams.size();
  if (from.event < 0 || program.streams.size() != S || from.pc.size() != S ||
      from.event_count != source.event_count || program.event_count < source.event_count)
    return false;
  for (std::size_t s = 0; s < S; ++s)
    if (from.ops[s] != source.streams[s].ops.size()) return false;
  // Streams standing at their op: parked at a Wait, or woken at it (the ready streams after the
  // one that took the snapshot, which goes on to its next op).
  std::vector<char> standing(S, 0);
  for (std::size_t i = 1; i < from.ready.size(); ++i) standing[from.ready[i]] = 1;
  for (const int head : from.wait_head)
    for (int w = head; w >= 0; w = from.wait_next[static_cast<std::size_t>(w)])
      standing[static_cast<std::size_t>(w)] = 1;
  for (std::size_t s = 0; s < S; ++s) {
    const auto &ops = program.streams[s].ops, &was = source.streams[s].ops;
    if (program.streams[s].name != source.streams[s].name) return false;
    const std::size_t pc = from.pc[s];
    const std::size_t upto = pc + (standing[s] && pc < was.size() ? 1 : 0);
    if (upto > ops.size() || upto > was.size()) return false;
    for (std::size_t i = 0; i < upto; ++i)
      if (!same_op(program, ops[i], source, was[i])) return false;
    if (pc < was.size() || pc == ops.size()) continue;
    // `source` ran s to its end; `program` has more: s has waited at its next op since, which
    // must be a Wait for an event recorded by the snapshot's Record or not yet.
    const StepOp& next = ops[pc];
    if (next.kind != OpKind::Wait || next.event < 0 || next.event >= program.event_count)
      return false;
    const auto ev = static_cast<std::size_t>(next.event);
    if (next.event == from.event)
      waking.push_back(s);
    else if (ev < from.recorded.size() && from.recorded[ev])
      return false;  // it would not have waited
    else
      parking.push_back(s);
  }
  return true;
}

// The ops are checked as the run reaches them (Runner::pump), the classes and the share here.
void validate_run(const StepProgram& program, const SmShare& share) {
  validate_classes(program);
  if (share.enabled() && share.collective_sms.size() != program.collectives.size())
    throw std::logic_error("run_program: SM share names " +
                           std::to_string(share.collective_sms.size()) + " collectives of " +
                           std::to_string(program.collectives.size()));
}

}  // namespace

RunResult run_program_on_engine(const StepProgram& program, Engine& engine, NetworkModel& network,
                                const SmShare& share, int capture_event, RunSnapshot* snapshot) {
  validate_run(program, share);
  Runner runner(program, engine, network, share, capture_event, snapshot);
  return runner.run();
}

std::optional<RunResult> resume_program(const StepProgram& program, const StepProgram& source,
                                        const RunSnapshot& from, Engine& engine,
                                        NetworkModel& network, const SmShare& share) {
  std::vector<std::size_t> parking, waking;
  if (!begins_as(program, source, from, parking, waking)) return std::nullopt;
  validate_run(program, share);
  engine.start_at(from.now);
  Runner runner(program, engine, network, share);
  return runner.resume(from, parking, waking);
}

std::vector<OpTiming> completion_order(const RunResult& run) {
  return merge_lanes(run.lanes, [](const OpTiming& a, const OpTiming& b) {
    return a.end < b.end ||
           (a.end == b.end && (a.start < b.start || (a.start == b.start && a.stream < b.stream)));
  });
}

bool runs_in_one_pass(const Engine& engine, const NetworkModel& network, const SmShare& share) {
  return !share.enabled() && network.contention_free() && engine.pending() == 0;
}

RunResult run_program(const StepProgram& program, Engine& engine, NetworkModel& network,
                      const SmShare& share) {
  if (runs_in_one_pass(engine, network, share))
    return run_program_direct(program, engine.now(), network);
  return run_program_on_engine(program, engine, network, share);
}

}  // namespace zerosim
