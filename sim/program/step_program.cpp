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
  Runner(const StepProgram& p, Engine& e, NetworkModel& net, const SmShare& share)
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
        wait_next_(p.streams.size(), -1) {}

  RunResult run() {
    const double t0 = e_.now();
    const std::uint64_t ev0 = e_.events_processed();
    const NetStats net0 = net_.stats();
    double end = t0;
    result_.lanes.resize(p_.streams.size());
    // Room for every op of a stream up front: a lane never grows while the engine runs.
    for (std::size_t s = 0; s < p_.streams.size(); ++s)
      result_.lanes[s].reserve(p_.streams[s].ops.size());
    for (std::size_t s = 0; s < p_.streams.size(); ++s) ready_.push_back(s);
    drain();
    e_.run();
    for (std::size_t s = 0; s < p_.streams.size(); ++s) {
      if (pc_[s] >= p_.streams[s].ops.size()) continue;
      validate_program(p_);  // a malformed op the run did not reach is reported first
      throw std::logic_error(deadlock_message(p_, s, pc_[s]));
    }
    for (const auto& lane : result_.lanes)  // a lane's ops end in order
      if (!lane.empty()) end = std::max(end, lane.back().end);
    result_.makespan_s = end - t0;
    result_.events = e_.events_processed() - ev0;
    const NetStats& n = net_.stats();
    result_.net.inter_node_bytes = n.inter_node_bytes - net0.inter_node_bytes;
    result_.net.intra_node_bytes = n.intra_node_bytes - net0.intra_node_bytes;
    result_.net.flows = n.flows - net0.flows;
    return std::move(result_);
  }

 private:
  // FIFO over the ready list; re-entrant calls (a model that completes inside start()) only
  // enqueue.
  void drain() {
    if (draining_) return;
    draining_ = true;
    for (std::size_t i = 0; i < ready_.size(); ++i) pump(ready_[i]);
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
          for (int w = wait_head_[op.event]; w >= 0; w = wait_next_[static_cast<std::size_t>(w)])
            ready_.push_back(static_cast<std::size_t>(w));
          wait_head_[op.event] = wait_tail_[op.event] = -1;
          ++pc_[s];
          break;
        }
        case OpKind::Wait:
          if (!recorded_[op.event]) {  // s joins the event's waiters, in arrival order
            const int tail = std::exchange(wait_tail_[op.event], static_cast<int>(s));
            (tail >= 0 ? wait_next_[static_cast<std::size_t>(tail)] : wait_head_[op.event]) =
                static_cast<int>(s);
            wait_next_[s] = -1;
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
            e_.schedule_after(op.duration_s, [this, s] { complete(s); });
          }
          return;
        case OpKind::Collective:
          start_[s] = e_.now();
          if (share_.enabled()) {
            // The callbacks capture (this, s) only, which std::function holds without allocating;
            // the SMs are read back from the op, still stream s's current one at its end.
            set_taken(taken_ + share_.collective_sms[static_cast<std::size_t>(op.collective)]);
            net_.start(p_.collectives[op.collective], [this, s] {
              const StepOp& done = p_.streams[s].ops[pc_[s]];
              set_taken(taken_ - share_.collective_sms[static_cast<std::size_t>(done.collective)]);
              complete(s);
            });
          } else {
            net_.start(p_.collectives[op.collective], [this, s] { complete(s); });
          }
          return;
      }
    }
  }

  static bool on_sms(Category c) {
    return c != Category::OffloadCopy && c != Category::NvmeIo && c != Category::HostOptimizer;
  }
  double rate() const {
    return std::max(0.0, static_cast<double>(share_.gpu_sms) - taken_) / share_.gpu_sms;
  }
  // The end of stream s's SM-bound op. The callback captures (this, s) only, which
  // std::function holds without allocating.
  Engine::Callback end_share(std::size_t s) {
    return [this, s] {
      sharing_[s] = 0;
      complete(s);
    };
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
  bool draining_ = false;
  RunResult result_;
};

}  // namespace

RunResult run_program_on_engine(const StepProgram& program, Engine& engine, NetworkModel& network,
                                const SmShare& share) {
  // The ops are checked as the run reaches them (Runner::pump), the classes here.
  validate_classes(program);
  if (share.enabled() && share.collective_sms.size() != program.collectives.size())
    throw std::logic_error("run_program: SM share names " +
                           std::to_string(share.collective_sms.size()) + " collectives of " +
                           std::to_string(program.collectives.size()));
  Runner runner(program, engine, network, share);
  return runner.run();
}

std::vector<OpTiming> completion_order(const RunResult& run) {
  return merge_lanes(run.lanes, [](const OpTiming& a, const OpTiming& b) {
    return a.end < b.end ||
           (a.end == b.end && (a.start < b.start || (a.start == b.start && a.stream < b.stream)));
  });
}

RunResult run_program(const StepProgram& program, Engine& engine, NetworkModel& network,
                      const SmShare& share) {
  if (!share.enabled() && network.contention_free() && engine.pending() == 0)
    return run_program_direct(program, engine.now(), network);
  return run_program_on_engine(program, engine, network, share);
}

}  // namespace zerosim
