// StepProgram: per-rank CUDA-stream-like queues of ops (Compute, Kernel, Collective, event Record
// and Wait). Ranks of a data-parallel step are identical, so one program stands for every rank and
// each Collective op carries all of its concurrent groups; run_program executes it on the engine
// with a network model, run_program_direct without the engine on a contention-free one. Module
// program (sim/program): the interpreter sits above engine and net, so that the engine stays
// generic.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/engine/engine.hpp"
#include "sim/net/network_model.hpp"

namespace zerosim {

enum class OpKind { Compute, Kernel, Collective, Record, Wait };

// What an op's time is charged to in the breakdown.
enum class Category {
  Compute,
  Recompute,
  Optimizer,
  ParamFetch,  // ZeRO stage 3's re-assembly of gathered parameters: host dispatch and the cat
  QuantKernel,
  AllGather,
  ReduceScatter,
  AllToAll,
  AllReduce,
  OffloadCopy,    // ZeRO-Offload: host <-> GPU copies over PCIe
  NvmeIo,         // ZeRO-Infinity: reads and writes of the node's NVMe drives
  HostOptimizer,  // ZeRO-Offload: CPU Adam on the host
  Other
};
const char* to_string(Category c);

struct StepOp {
  OpKind kind = OpKind::Compute;
  Category category = Category::Compute;
  double duration_s = 0;  // Compute / Kernel
  int collective = -1;    // index into StepProgram::collectives
  int event = -1;         // Record / Wait
  int label = -1;         // index into StepProgram::labels (for traces); -1: none
};

// An op's name for traces, stored in parts so that lowering thousands of ops writes no string per
// op, nor per module pass: text = the program's prefix_text(prefix) + suffix (a string literal).
struct OpLabel {
  int prefix = -1;
  const char* suffix = "";
};

struct Stream {
  std::string name;  // "compute", "allgather", "reduce", ...
  std::vector<StepOp> ops;
};

struct StepProgram {
  std::vector<Stream> streams;
  std::vector<CollectiveOp> collectives;
  // Per collective: a class in [0, collective_classes). Collectives of one class are equal in all
  // a contention-free network's cost reads (kind, algorithm, group list object, bytes), so a
  // direct run asks for one cost per class: a step repeats each layer's few collectives hundreds
  // of times. Empty: every collective its own class.
  std::vector<int> collective_class;
  int collective_classes = 0;
  // Label text pieces (a pass's "mb0.fwd.", a module's name, a bucket's "mb0.bucket3"),
  // concatenated in one buffer: piece i is piece_text[piece_ends[i - 1] (0 for i = 0),
  // piece_ends[i]). A label prefix is a head piece followed by an optional tail piece, so a module
  // pass's prefixes reuse the pass's and the modules' pieces.
  struct LabelPrefix {
    int head = -1, tail = -1;  // pieces; -1: none
  };
  std::string piece_text;
  std::vector<std::size_t> piece_ends;
  std::vector<LabelPrefix> prefixes;
  std::vector<OpLabel> labels;
  int event_count = 0;

  // Appends a piece made of the parts, returns its index.
  int add_piece(std::initializer_list<std::string_view> parts);
  // Appends the prefix piece(head) + piece(tail) (tail -1: none), returns its index.
  int add_prefix(int head, int tail = -1);
  std::string_view piece(int i) const;
  std::string prefix_text(int prefix) const;
  std::string label_text(int label) const;  // "op" for -1
};

// Plain fields, no member initializers: a run's lanes are sized up front and zero-filled (one
// memset) before the schedule writes them.
struct OpTiming {
  int stream, op;
  double start, end;
  bool operator==(const OpTiming&) const = default;
};

struct RunResult {
  double makespan_s = 0;
  // Per stream, its timed (Compute/Kernel/Collective) ops in program order, which is their
  // completion order too: a stream runs one op at a time. Consumers that sum per stream need no
  // merged timeline; completion_order builds one.
  std::vector<std::vector<OpTiming>> lanes;
  std::uint64_t events = 0;
  NetStats net;
};

// Every timed op of the run in completion order; ties by start, then stream.
std::vector<OpTiming> completion_order(const RunResult& run);

// A run's state where it is quiescent: no engine event pending, the network idle (no collective
// live) and no op running, taken as a stream records the run's capture event. A program that
// begins with the same ops goes on from there (resume_program) instead of running them again:
// the second run of a step with one more micro-step (accumulation.hpp) repeats the first's
// micro-step 0 up to the point where every stream is drained.
struct RunSnapshot {
  int event = -1;            // the Record it was taken at; -1: not taken
  double t0 = 0, now = 0;    // the run's start; the clock when taken
  std::uint64_t events = 0;  // engine events of the run up to here
  NetStats net0, net;        // the network's stats when the run started and when taken
  std::vector<std::vector<OpTiming>> lanes;
  std::vector<std::size_t> pc;  // per stream: its next op
  std::vector<char> recorded;
  // Per event, the streams parked at a Wait for it in arrival order (a list through wait_next).
  std::vector<int> wait_head, wait_tail, wait_next;
  // Per stream: the order in which it last parked at a Wait or ran out of ops (0: never).
  std::vector<std::uint64_t> parked;
  // The streams to pump next, in order: the one that took the snapshot, then those ready before
  // it recorded the event, then the `woken` ones its Record woke.
  std::vector<std::size_t> ready;
  std::size_t woken = 0;
  // The snapshot's program: its ops per stream and its event count (a check that a resume is
  // handed the program the snapshot was taken of).
  std::vector<std::size_t> ops;
  int event_count = 0;
};

// SM sharing: an NCCL collective kernel holds one thread block, a whole SM, per channel
// (enqueue.cc: the launch grid is the plan's channel count), so while collectives are live on the
// rank its Compute and Kernel ops (GPU kernels; not host or copy-engine work) run on the SMs left
// and progress at rate (gpu_sms - sum of live collectives' SMs) / gpu_sms, processor-sharing
// style. gpu_sms 0: no sharing (every op at full rate).
struct SmShare {
  int gpu_sms = 0;
  std::vector<double> collective_sms;  // per collective of the program: SMs its kernel holds
  bool enabled() const { return gpu_sms > 0; }
};

// Executes the program: each stream runs its ops in order; Wait blocks until the matching Record
// has executed; a Collective starts on the network model and completes when it says so. Throws
// std::logic_error on a deadlock (a Wait whose Record never runs) or a malformed program.
// Dispatches: run_program_direct when the network is contention_free() and the engine has nothing
// pending, else on the engine.
// With SM sharing enabled, runs on the engine.
RunResult run_program(const StepProgram& program, Engine& engine, NetworkModel& network,
                      const SmShare& share = {});

// Whether run_program takes the one-pass schedule (run_program_direct) rather than the engine.
bool runs_in_one_pass(const Engine& engine, const NetworkModel& network, const SmShare& share);

// The event-driven execution: every timed op is an engine event. With a snapshot to fill, the
// run copies its state into it when a stream records capture_event at a quiescent point (a
// network that is not idle() there, or a pending event, leaves it untaken: event -1).
RunResult run_program_on_engine(const StepProgram& program, Engine& engine, NetworkModel& network,
                                const SmShare& share = {}, int capture_event = -1,
                                RunSnapshot* snapshot = nullptr);

// The run of `program` that goes on from `from`, a snapshot of a run of `source` on an equal
// network (same topology, profile, tier and SM sharing): the result is that of
// run_program_on_engine on `program`, bit for bit. nullopt (nothing run) unless `program` begins
// as `source`: the same streams, the ops each had reached equal (those before its position and,
// for a stream parked or woken, the one it stands at: kind, category, duration, event,
// collective), and every stream `source` had run to its end standing in `program` at a Wait for
// an event not yet recorded or recorded by the snapshot's Record (where it has waited since; the
// Record woke it). `engine` must not have run: its clock is set to the snapshot's; `network` is
// fresh and takes the snapshot's stats.
std::optional<RunResult> resume_program(const StepProgram& program, const StepProgram& source,
                                        const RunSnapshot& from, Engine& engine,
                                        NetworkModel& network, const SmShare& share = {});

// One pass without events, for contention-free networks: a stream's op starts when its previous op
// ends, or, after a Wait, at max(that, the Record's time); ends after its duration (network.cost
// for collectives). The same additions as the engine's, so every start and end time, the makespan
// and the event count (one per timed op) are identical. Starts at t0 (the engine's clock in
// run_program).
RunResult run_program_direct(const StepProgram& program, double t0, NetworkModel& network);

// logic_error naming stream and op for a negative duration or an out-of-range collective/event,
// or naming the collectives of a malformed or unequal class.
void validate_program(const StepProgram& program);

// A program's collective classes read one way by everyone who prices collectives: the class of
// collective k, and each class's first member (every collective its own class when the program
// has none; -1 for a class no collective has). Throws validate_program's logic_error for a class
// list of another length than the collectives' or a class outside [0, collective_classes); does
// not compare the members (validate_program does).
class CollectiveClasses {
 public:
  explicit CollectiveClasses(const StepProgram& p);
  std::size_t of(std::size_t k) const { return cls_ ? static_cast<std::size_t>(cls_[k]) : k; }
  const std::vector<int>& first() const { return first_; }

 private:
  const int* cls_ = nullptr;
  std::vector<int> first_;
};
// "stream S ('name') op I", for messages.
std::string op_where(const StepProgram& p, std::size_t stream, std::size_t op);
// Why stream `stream` is stuck at op `op` when nothing else can run.
std::string deadlock_message(const StepProgram& p, std::size_t stream, std::size_t op);

}  // namespace zerosim
