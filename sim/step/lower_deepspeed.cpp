// DeepSpeed's lowering policy: ZeRO stages 1, 2 and 3, hybrid sharding (MiCS), ZeRO++ (qwZ, hpZ,
// qgZ) and ZeRO-Offload / ZeRO-Infinity, written with the program-building machinery of
// program_builder.hpp. What runs, in which order and on which stream is documented in lower.hpp
// and docs/step-model.md.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "sim/step/program_builder.hpp"
#include "sim/strategy/quant_groups.hpp"

namespace zerosim::lowering {
namespace {

// kGather: NCCL's all-gathers (and qwZ's quantize before them); kFetch: DeepSpeed's
// __allgather_stream, where AllGatherCoalescedHandle.wait re-assembles the gathered parameters.
enum DeepSpeedStream { kGather = 1, kReduce = 2, kFetch = 3, kReduceInter = 4 };

class DeepSpeedLowering : ProgramBuilder {
 public:
  DeepSpeedLowering(const StepSetup& setup, const Topology& topo, const CostProfile& profile,
                    ModuleCache* modules, GroupListCache* groups, LoweredStep& out)
      : ProgramBuilder(setup, topo, profile, modules, groups, out) {
    add_stream("allgather");  // kGather
    add_stream("reduce");     // kReduce
    add_stream("fetch");      // kFetch
    if (st_.qgz && st_.qgz_chunks > 1) {
      add_stream("reduce.inter");
      drained_.push_back(kReduceInter);
    }
    // ZeRO-Offload's work on streams of its own, only when something is offloaded (a program
    // without offload is unchanged): PCIe copies each way, CPU Adam, NVMe reads and writes.
    if (st_.offloads()) {
      h2d_ = add_stream("offload.h2d");
      d2h_ = add_stream("offload.d2h");
      // The gradient copies to the host end with the backward too.
      if (st_.offload_optimizer != OffloadDevice::None) drained_.push_back(d2h_);
      if (st_.offload_optimizer != OffloadDevice::None) host_ = host_stream();
      if (st_.offload_optimizer == OffloadDevice::Nvme || st_.offload_param == OffloadDevice::Nvme)
        nvme_ = add_stream("offload.nvme");
    }
    // Stage 3's parameter waits dispatch on the host thread (reassemble).
    if (st_.stage >= 3) host_stream();
    world_ = world_groups();
    if (st_.hpz) hpz_groups_ = block_groups(st_.hpz_size);
    // The ranks one parameter is sharded over: the world, or HSDP's groups of S consecutive ranks
    // and the replicas (one rank of each group) that all-reduce the gradient shards.
    shard_ = world_;
    S_ = st_.shard_ranks(W_);
    if (S_ != W_) {
      shard_ = block_groups(S_);
      shard_algo_ = S_ <= N_ ? Algorithm::IntraNode : Algorithm::Ring;
      replicas_ = strided_groups(S_);
    }
    out_.qgz_active = st_.qgz && topo.node_count() > 1;
    if (out_.qgz_active) {
      node_groups_ = node_groups();
      rails_ = rail_groups();
    }
  }

  void build() {
    load_modules();
    out_.buckets = make_grad_buckets(*out_.modules, st_.reduce_bucket_elems, out_.qgz_active, W_,
                                     qgz_divisibility_fallback(st_.deepspeed_version));
    out_.trace = fetch_trace(*out_.modules, s_.checkpointing, st_.max_reuse_distance);
    held_ = held_elems(out_.trace, *out_.modules);
    out_.max_held_elems = held_.empty() ? 0 : *std::max_element(held_.begin(), held_.end());
    // Generous capacities: a module emits <= 6 ops per stream in each of its forward, recompute
    // and backward runs, a bucket's tensor <= 7 per chunk.
    std::size_t B = 0;  // the buckets' tensors
    for (const GradBucket& b : out_.buckets) B += b.tensors.size();
    const std::size_t G = static_cast<std::size_t>(s_.grad_accum), M = out_.modules->size(),
                      C = static_cast<std::size_t>(std::max(1, st_.qgz_chunks));
    reserve(G * (18 * M + 7 * B * C), G * (3 * M + B * (C + 1)), M + G * (3 + B * (C + 1)),
            G * (6 * M + 4 * B * C));
    // Module names are pieces of every pass's prefixes.
    name_modules();
    int boundary = -1;
    for (int mu = 0; mu < s_.grad_accum; ++mu) {
      boundary = micro_step(mu, boundary);
      if (mu == 0) out_.first_micro_step_end = boundary;
    }
    const std::int64_t params = total_params();
    const auto psi = static_cast<double>(params);
    // HSDP: the replicas all-reduce their gradient shards (Psi / S elements) at the boundary.
    if (!replicas_.empty()) {
      wait(kReduce, boundary);
      collective(kReduce, CollKind::AllReduce, Algorithm::Ring, replicas_,
                 st_.grad_comm_bytes * psi / S_, Category::AllReduce, CommPhase::GradientReduction,
                 prefix(piece({"replicas"})), ".ar");
      boundary = event();
      record(kReduce, boundary);
      wait(kCompute, boundary);
    }
    if (st_.offload_optimizer != OffloadDevice::None) {
      host_optimizer(psi / S_);
    } else {
      gpu_optimizer(psi / S_, prefix(piece({"optimizer"})));
      if (st_.offload_param != OffloadDevice::None) {
        // The updated 16-bit partition goes back to where the parameters live.
        const int pre = prefix(piece({"optimizer"}));
        const int done = event();
        record(kCompute, done);
        wait(d2h_, done);
        pcie(d2h_, 2 * psi / S_, pre, ".params.d2h");
        if (st_.offload_param == OffloadDevice::Nvme) {
          after(d2h_, nvme_);
          nvme(nvme_, false, 2 * psi / S_, pre, ".params.nvme_write");
          join(nvme_);
        }
        join(d2h_);
      }
    }
    if (st_.stage < 3) gather_updated_params(params);
  }

 private:
  // Stages 1 and 2: after the optimizer each rank's updated 16-bit shard is all-gathered, in
  // buckets of allgather_bucket_size elements; the step ends when the parameters are whole again.
  void gather_updated_params(std::int64_t psi) {
    const int opt_done = event();
    record(kCompute, opt_done);
    wait(kGather, opt_done);
    const std::int64_t bucket = std::max<std::int64_t>(1, st_.allgather_bucket_elems);
    int no = 0;
    for (std::int64_t left = psi; left > 0; left -= bucket, ++no)
      collective(kGather, CollKind::AllGather, Algorithm::Ring, world_,
                 2 * static_cast<double>(std::min(left, bucket)), Category::AllGather,
                 CommPhase::ParameterGather, prefix(piece({"params.bucket", Digits(no)})), ".ag");
    const int done = event();
    record(kGather, done);
    wait(kCompute, done);
  }
  // A copy of `bytes` over this GPU's PCIe link (h2d_ or d2h_ stream), counted per direction.
  void pcie(int stream, double bytes, int pre, const char* suffix) {
    if (bytes <= 0) return;
    (stream == h2d_ ? out_.offload_bytes.h2d : out_.offload_bytes.d2h) += bytes;
    compute(stream, Category::OffloadCopy, bytes / s_.offload.pcie_Bps, pre, suffix);
  }
  // A read or write of `bytes` on the node's NVMe drives, at this rank's share of their rate.
  void nvme(int stream, bool read, double bytes, int pre, const char* suffix) {
    if (bytes <= 0) return;
    (read ? out_.offload_bytes.nvme_read : out_.offload_bytes.nvme_write) += bytes;
    compute(stream, Category::NvmeIo, bytes / s_.offload.nvme_Bps, pre, suffix);
  }
  // ZeRO-Offload's optimizer step on the rank's partition of `part` parameters, after the last
  // backward (the gradient partitions are on the host already, copied bucket by bucket): CPU Adam
  // (with NVMe: the FP32 master weights and Adam moments, 12 bytes per parameter, read from the
  // drives before and written back after), then the updated 16-bit partition to where the
  // parameters live: the GPU (2 bytes per parameter over PCIe), the host (offload_param cpu: Adam
  // wrote it in place) or the drives (offload_param nvme).
  void host_optimizer(double part) {
    const int pre = prefix(piece({"optimizer"}));
    const bool on_nvme = st_.offload_optimizer == OffloadDevice::Nvme;
    if (on_nvme) {
      after(kCompute, nvme_);
      nvme(nvme_, true, 12 * part, pre, ".states.nvme_read");
      after(nvme_, host_);
    } else {
      after(kCompute, host_);
    }
    compute(host_, Category::HostOptimizer, part / s_.offload.host_adam_pps, pre, ".cpu_adam");
    if (on_nvme || st_.offload_param == OffloadDevice::Nvme) after(host_, nvme_);
    if (on_nvme) nvme(nvme_, false, 12 * part, pre, ".states.nvme_write");
    if (st_.offload_param == OffloadDevice::None) {
      after(host_, h2d_);
      pcie(h2d_, 2 * part, pre, ".params.h2d");
      join(h2d_);
    } else if (st_.offload_param == OffloadDevice::Nvme) {
      nvme(nvme_, false, 2 * part, pre, ".params.nvme_write");
    }
    join(host_);
    if (nvme_ >= 0) join(nvme_);
  }
  // Gathers module m's weights on the gather stream: across all ranks, or (hpZ) inside the
  // secondary group. qwZ quantizes the own shard first (reassemble dequantizes).
  // `share`: the share of its elements gathered for runs of `phase` (the rest for the other gather
  // phase's: a prefetch call spanning the forward and the backward).
  void gather(const Module& m, bool secondary, CommPhase phase, double share, int tag) {
    const double n = static_cast<double>(m.gather_elems);
    const int group = secondary ? st_.hpz_size : S_;
    const double wire = gathered_bytes(m, group, S_, st_, &qwz_groups_);
    if (st_.offload_param != OffloadDevice::None) {
      // The rank's 16-bit shard lives on the host (or the drives): copied to the GPU first.
      const double shard = 2 * n / group;
      int from = kGather;
      if (st_.offload_param == OffloadDevice::Nvme) {
        after(kGather, nvme_);
        nvme(nvme_, true, shard, tag, ".nvme_read");
        from = nvme_;
      }
      after(from, h2d_);
      pcie(h2d_, shard, tag, ".h2d");
      after(h2d_, kGather);
    }
    if (st_.qwz) {
      const char* q = st_.weight_bits == 8 ? "quantize_int8" : "quantize_int4";
      kernel(kGather, Category::QuantKernel, q, 2 * n / group + wire / group, tag, ".quant");
    }
    // qwZ gathers the INT8 data, then the FP32 scales, with two all_gather_into_tensor calls
    // (partition_parameters.py all_gather_coalesced, quantized branch: the handle and the
    // quant_handle, in 0.10.0, 0.13.2 and 0.19.5): each pays its own latency.
    const double scales = gathered_scale_bytes(m, group, S_, st_, &qwz_groups_);
    const Algorithm algo =
        secondary ? (st_.hpz_size <= N_ ? Algorithm::IntraNode : Algorithm::Ring) : shard_algo_;
    const GroupList& groups = secondary ? hpz_groups_ : shard_;
    const std::size_t before = out_.collective_phase.size();
    collective(kGather, CollKind::AllGather, algo, groups, wire - scales, Category::AllGather,
               phase, tag, secondary ? ".ag.hpz" : ".ag");
    if (scales > 0)
      collective(kGather, CollKind::AllGather, algo, groups, scales, Category::AllGather, phase,
                 tag, secondary ? ".ag.hpz.scales" : ".ag.scales");
    if (share < 1)
      for (std::size_t k = before; k < out_.collective_phase.size(); ++k)
        out_.phase_splits.push_back({k, share});
  }

  // Tensors module m gathers: its own and, for a tied head, the word embedding.
  static int gathered_tensors(const Module& m) {
    return static_cast<int>(m.params.size()) + (regathers(m) ? 1 : 0);
  }
  // Eager ops the host dispatches to launch module m's gather over `slices` ranks
  // (partition_parameters.py all_gather_coalesced): per parameter a .to(device), then the flat
  // buffer's torch.empty, a narrow per rank (the partitions list, without qwZ), the cat of the
  // own shards into its slice and the all_gather_into_tensor; with qwZ the quantize, and the
  // scales' buffer and gather. The single-parameter path: the buffer, .to, the gather and the
  // view (4); with qwZ the quantize and the scales' buffer and gather too (8).
  double launch_ops(const Module& m, int slices) const {
    const int k = gathered_tensors(m);
    if (k == 1) return st_.qwz ? 8 : 4;
    return st_.qwz ? k + 6.0 : k + slices + 3.0;
  }

  // DeepSpeed's wait for module m's gathered weights (partitioned_param_coordinator.py
  // fetch_sub_module; partition_parameters.py AllGatherCoalescedHandle.wait, the same in v0.10.0,
  // v0.13.2 and v0.19.5), over a group of `slices` ranks. Per parameter the host thread, after
  // the gather is launched (not after it completes: the NCCL wait is a stream wait), narrows each
  // rank's slice, cats them, views the result and record_streams every slice: 2 x slices + 2
  // eager ops; under qwZ first one dequantize of the flat buffer and a narrow per rank. The GPU
  // runs them on __allgather_stream (kFetch) once the gather is done: the dequantize and the cat
  // (every gathered FP16 byte read and written once more). A module of one tensor takes the
  // single-parameter path of all_gather_coalesced: a view of the buffer, no cat. Before each
  // parameter's wait the host synchronizes the oldest of its fetch events when more than two are
  // outstanding (__max_ongoing_fetch_events = 2; one event per parameter, recorded on kFetch after
  // the re-assembly), so it runs at most three parameters ahead of the re-assembly. m is the
  // handle's parameters (one module's, or the union of the modules one hook prefetched with one
  // call, fetch_calls): the first wait re-assembles all of them; `waited` is the tensors of the
  // run whose hook waits now. Returns the event recorded on kFetch after the re-assembly; the
  // module's compute waits for it (current_stream().wait_stream(__allgather_stream)).
  int reassemble(const Module& m, int waited, int slices, int gathered, int tag) {
    const double n = static_cast<double>(m.gather_elems);
    const int tensors = gathered_tensors(m);
    const int done = event();
    for (int i = 0; i < std::max(1, waited); ++i) {
      if (ongoing_.size() > 2) {
        wait(host_stream(), ongoing_.front());
        ongoing_.erase(ongoing_.begin());
      }
      if (i == 0) {
        const double per_tensor = tensors > 1 ? 2.0 * slices + 2 : 1;
        host_dispatch(tensors * per_tensor + (st_.qwz ? slices + 2.0 : 0), Category::ParamFetch,
                      tag, ".fetch.host");
        after(host_stream(), kFetch);
        wait(kFetch, gathered);
        if (st_.qwz) {
          const char* d = st_.weight_bits == 8 ? "dequantize_int8" : "dequantize_int4";
          kernel(kFetch, Category::QuantKernel, d,
                 gathered_bytes(m, slices, S_, st_, &qwz_groups_) + 2 * n, tag, ".dequant");
        }
        if (tensors > 1) kernel(kFetch, Category::ParamFetch, "copy", 2 * 2 * n, tag, ".cat");
        record(kFetch, done);
      }
      ongoing_.push_back(done);
    }
    return done;
  }
  // The hook of a run whose parameters came with an earlier run's handle (a prefetch call of more
  // than one module): each parameter's wait finds the handle complete (its first wait re-assembled
  // them all), so the host only keeps its fetch events (synchronizing the oldest when more than
  // two are outstanding) and records one on kFetch per parameter. Returns that event.
  int wait_prefetched(int tensors) {
    const int ev = event();
    record(kFetch, ev);
    for (int i = 0; i < tensors; ++i) {
      if (ongoing_.size() > 2) {
        wait(host_stream(), ongoing_.front());
        ongoing_.erase(ongoing_.begin());
      }
      ongoing_.push_back(ev);
    }
    return ev;
  }

  // What a call's gather waits for besides the micro-step's boundary: kStart (nothing more: it
  // follows the previous gather), k >= 0 (prefetched by run k's hook, once run k computes:
  // started[k]) or kOwnRun (fetched in its own run's hook, when that run begins: finished[j - 1]).
  static constexpr std::ptrdiff_t kStart = -1, kOwnRun = -2;
  // Records the most runs and elements in flight ahead of the running one under DeepSpeed's
  // coordinator's prefetch (prefetch_plan, fetch_trace.hpp): out_.prefetch_runs (a run counts
  // from the first hook that starts one of its tensors), out_.prefetched_elems and
  // out_.live_elems (the memory model's prefetched and live weights).
  void record_prefetch(const PrefetchPlan& plan, const std::int64_t* held, std::size_t M) {
    std::vector<int> starts(M, 0);  // per run: the runs its hook starts the first gather of
    std::vector<std::ptrdiff_t> first_by(M, -1);
    for (std::size_t j = 0; j < M; ++j) {
      for (std::size_t u = plan.first[j]; u < plan.first[j + 1]; ++u)
        if (plan.by[u] >= 0 && (first_by[j] < 0 || plan.by[u] < first_by[j]))
          first_by[j] = plan.by[u];
      if (first_by[j] >= 0) ++starts[static_cast<std::size_t>(first_by[j])];
    }
    int in_flight = 0;
    for (std::size_t k = 0; k < M; ++k) {
      if (first_by[k] >= 0) --in_flight;
      in_flight += starts[k];
      out_.prefetch_runs = std::max(out_.prefetch_runs, in_flight);
      out_.prefetched_elems = std::max(out_.prefetched_elems, plan.in_flight[k]);
      out_.live_elems = std::max(out_.live_elems, held[k] + plan.in_flight[k]);
    }
  }

  // One micro-step's runs (its forward, then its backward): each all_gather_coalesced call
  // (fetch_calls) launched in its hook, gathered on the gather stream and re-assembled by the
  // first run that waits for it, then `run(r, tag)` on the compute stream. phase_piece[p]: the
  // label piece of FetchPass p ("mb0.fwd.").
  template <class Run>
  void pass(int mu, const FetchRun* runs, const std::int64_t* held, std::size_t M, int boundary,
            const std::array<int, 3>& phase_piece, Run run) {
    auto tag_of = [&](const FetchRun& r) {
      return module_prefix(phase_piece[static_cast<std::size_t>(r.pass)], r.module);
    };
    if (st_.stage < 3) {  // parameters replicated: nothing to gather or fetch
      for (std::size_t j = 0; j < M; ++j) run(runs[j], tag_of(runs[j]));
      return;
    }
    const PrefetchPlan plan =
        prefetch_plan(runs, held, M, *out_.modules, st_.prefetch_bucket_elems, st_.max_live_params);
    record_prefetch(plan, held, M);
    const FetchCalls calls = fetch_calls(runs, M, plan, mu);
    for (const FetchCall& call : calls.calls) {
      const Module& m = calls.module(call, *out_.modules, runs);
      if (m.gather_elems <= out_.largest_call_elems) continue;
      out_.largest_call_elems = m.gather_elems;
      out_.largest_call_scale_bytes = gathered_scale_bytes(m, S_, S_, st_, &qwz_groups_);
    }
    const std::size_t C = calls.calls.size();
    std::vector<int> started(M, -1), finished(M, -1), gathered(C, -1), launched(C, -1);
    call_events(calls, started, finished, gathered);
    // The gather stream runs ahead of compute; interleave emission so the compute stream never
    // waits on a gather emitted later on the same stream (streams are in order).
    // The host launches a call (all_gather_coalesced's dispatch, launched[c]) where
    // fetch_sub_module does: at the micro-step's start, in the prefetch of run `hook` (after that
    // run's waits), or at the start of its run's own hook. prefetched_by[k]: the first call
    // launched by run k's prefetch, next_prefetched: the following one (a list per k).
    std::vector<std::ptrdiff_t> prefetched_by(M, -1), next_prefetched(C, -1), last(M, -1);
    auto launch = [&](std::size_t c) {
      const FetchCall& call = calls.calls[c];
      launched[c] = event();
      host_dispatch(launch_ops(calls.module(call, *out_.modules, runs), call.slices),
                    Category::ParamFetch, tag_of(runs[call.leader]), ".gather.host");
      record(host_stream(), launched[c]);
    };
    for (std::size_t c = 0; c < C; ++c) {
      const FetchCall& call = calls.calls[c];
      if (call.hook == kStart) launch(c);
      if (call.hook < 0) continue;
      const auto k = static_cast<std::size_t>(call.hook);
      const auto I = static_cast<std::ptrdiff_t>(c);
      (last[k] < 0 ? prefetched_by[k] : next_prefetched[static_cast<std::size_t>(last[k])]) = I;
      last[k] = I;
    }
    bool past_boundary = false;
    for (std::size_t j = 0; j < M; ++j) {
      const FetchRun& r = runs[j];
      const int tag = tag_of(r);
      // The hook launches its own call first, then waits for each call in turn.
      for (std::size_t w = calls.first[j]; w < calls.first[j + 1]; ++w)
        if (calls.calls[calls.waits[w].call].hook == kOwnRun) launch(calls.waits[w].call);
      for (std::size_t w = calls.first[j]; w < calls.first[j + 1]; ++w) {
        const FetchWait& fw = calls.waits[w];
        const FetchCall& call = calls.calls[fw.call];
        if (call.leader != j) {
          wait(kCompute, wait_prefetched(fw.tensors));
          continue;
        }
        // The micro-step's first gather waits for its boundary (later ones follow it on the
        // stream).
        if (!past_boundary) wait(kGather, boundary);
        past_boundary = true;
        if (call.hook == kOwnRun) {
          wait(kGather, finished[j - 1]);
        } else if (call.hook >= 0) {
          wait(kGather, started[static_cast<std::size_t>(call.hook)]);
        }
        wait(kGather, launched[fw.call]);
        const Module& m = calls.module(call, *out_.modules, runs);
        gather(m, call.secondary, call.phase, call.phase_share, tag);
        record(kGather, gathered[fw.call]);
        wait(kCompute, reassemble(m, fw.tensors, call.slices, gathered[fw.call], tag));
      }
      for (std::ptrdiff_t i = prefetched_by[j]; i >= 0;
           i = next_prefetched[static_cast<std::size_t>(i)])
        launch(static_cast<std::size_t>(i));
      record(kCompute, started[j]);
      run(r, tag);
      record(kCompute, finished[j]);
    }
  }

  // The all_gather_coalesced calls of one micro-step (partitioned_param_coordinator.py
  // fetch_sub_module and __all_gather_params), from the coordinator's plan (prefetch_plan): a
  // run's tensors that no hook prefetched are one call of its own hook (at the micro-step's start
  // for its first run); the tensors one hook prefetches are one call (0.10.0:
  // all_gather_coalesced(params, forward), the hook's flag choosing hpZ's copy for the whole
  // call), or from 0.13.2 (and in 0.19.5) two, those whose secondary copy exists and those whose
  // does not (__all_gather_params_: partitioned_params_with_secondary_tensors, then _without_).
  // A call's first run (its leader) emits the gather and its first wait re-assembles the handle
  // (AllGatherCoalescedHandle.wait); a run whose tensors lie in several calls (a hook stopped
  // inside its parameter list) waits for each.
  struct FetchCall {
    std::ptrdiff_t hook = kOwnRun;  // kStart, kOwnRun or the run whose hook prefetches it
    std::size_t leader = 0;         // its first run
    bool secondary = false;         // reads hpZ's intra-node copy
    int slices = 1;                 // the ranks it gathers over
    std::ptrdiff_t merged = -1;     // index into FetchCalls::modules; -1: the leader's module
    CommPhase phase = CommPhase::ForwardGather;  // its first run's
    double phase_share = 1;  // the share of its elements gathered for runs of that phase
  };
  struct FetchWait {
    std::size_t call = 0;
    int tensors = 0;  // the waiting run's tensors in the call
  };
  struct FetchCalls {
    std::vector<FetchCall> calls;    // in order of their leaders
    std::vector<FetchWait> waits;    // per run, the calls holding its tensors, in that order
    std::vector<std::size_t> first;  // per run j: its first entry in waits (M + 1 entries)
    std::vector<Module> modules;     // the tensors of calls other than one run's whole module
    const Module& module(const FetchCall& c, const std::vector<Module>& all,
                         const FetchRun* runs) const {
      return c.merged >= 0 ? modules[static_cast<std::size_t>(c.merged)]
                           : all[static_cast<std::size_t>(runs[c.leader].module)];
    }
  };
  // The events the calls' gathers wait for and record: per call its gather's (gathered), per run
  // whose hook prefetches its compute's start (started), per run before an own call its end
  // (finished).
  void call_events(const FetchCalls& calls, std::vector<int>& started, std::vector<int>& finished,
                   std::vector<int>& gathered) {
    for (std::size_t c = 0; c < calls.calls.size(); ++c) {
      const FetchCall& call = calls.calls[c];
      gathered[c] = event();
      if (call.hook >= 0 && started[static_cast<std::size_t>(call.hook)] < 0)
        started[static_cast<std::size_t>(call.hook)] = event();
      if (call.hook == kOwnRun && finished[call.leader - 1] < 0)
        finished[call.leader - 1] = event();
    }
  }

  FetchCalls fetch_calls(const FetchRun* runs, std::size_t M, const PrefetchPlan& plan,
                         int mu) const {
    FetchCalls f;
    const std::size_t U = plan.elems.size();
    std::vector<std::ptrdiff_t> unit_call(U, -1);
    // Per hook k and hpZ state: the call that hook's prefetch opened (-1: none yet).
    std::vector<std::array<std::ptrdiff_t, 2>> open(M, {-1, -1});
    std::vector<char> whole;  // per call: one run's tensors, all of them
    std::vector<double> elems, phase_elems;
    f.first.reserve(M + 1);
    for (std::size_t j = 0; j < M; ++j) {
      f.first.push_back(f.waits.size());
      if (!runs[j].gather) continue;
      const CommPhase phase =
          runs[j].pass == FetchPass::Forward ? CommPhase::ForwardGather : CommPhase::BackwardGather;
      auto add_call = [&](std::ptrdiff_t hook, bool sec) {
        FetchCall c;
        c.hook = hook;
        c.leader = j;
        c.secondary = sec;
        c.slices = sec ? st_.hpz_size : S_;
        c.phase = phase;
        f.calls.push_back(c);
        whole.push_back(1);
        elems.push_back(0);
        phase_elems.push_back(0);
        return static_cast<std::ptrdiff_t>(f.calls.size() - 1);
      };
      std::ptrdiff_t own = -1;
      const std::size_t u0 = plan.first[j], u1 = plan.first[j + 1];
      for (std::size_t u = u0; u < u1; ++u) {
        std::ptrdiff_t c = -1;
        if (plan.by[u] < 0) {
          if (own < 0) own = add_call(j == 0 ? kStart : kOwnRun, reads_secondary(runs[j], mu));
          c = own;
        } else {
          const auto k = static_cast<std::size_t>(plan.by[u]);
          const bool sec = call_reads_secondary(runs[k], runs[j], mu);
          std::ptrdiff_t& o = open[k][sec ? 1 : 0];
          if (o < 0) o = add_call(plan.by[u], sec);
          c = o;
        }
        unit_call[u] = c;
        const auto C = static_cast<std::size_t>(c);
        if (f.calls[C].leader != j) whole[C] = 0;
        elems[C] += static_cast<double>(plan.elems[u]);
        if (phase == f.calls[C].phase) phase_elems[C] += static_cast<double>(plan.elems[u]);
        // This run's entry for the call (a run waits on a few calls at most): a new one unless it
        // has one.
        std::size_t w = f.first[j];
        while (w < f.waits.size() && f.waits[w].call != C) ++w;
        if (w < f.waits.size())
          ++f.waits[w].tensors;
        else
          f.waits.push_back({C, 1});
      }
      // A call of only part of this run's tensors is not its whole module.
      for (std::size_t w = f.first[j]; w < f.waits.size(); ++w)
        if (f.waits[w].tensors != static_cast<int>(u1 - u0)) whole[f.waits[w].call] = 0;
    }
    f.first.push_back(f.waits.size());
    for (std::size_t c = 0; c < f.calls.size(); ++c)
      if (elems[c] > 0) f.calls[c].phase_share = phase_elems[c] / elems[c];
    merge_tensors(f, runs, M, plan, unit_call, whole);
    return f;
  }
  // A call other than one run's whole module (whole[c] false) gathers the union of its tensors
  // (unit_call: per tensor of the plan, its call), a tied head's word embedding counted as its
  // module counts it (gather_elems beyond its own parameters).
  void merge_tensors(FetchCalls& f, const FetchRun* runs, std::size_t M, const PrefetchPlan& plan,
                     const std::vector<std::ptrdiff_t>& unit_call,
                     const std::vector<char>& whole) const {
    for (std::size_t j = 0; j < M; ++j) {
      const Module& m = (*out_.modules)[static_cast<std::size_t>(runs[j].module)];
      const std::size_t u0 = plan.first[j];
      // The plan's tensors of run j beyond the module's own: the borrowed word embedding, first.
      const std::size_t extra = plan.first[j + 1] - u0 - m.params.size();
      for (std::size_t u = u0; u < plan.first[j + 1]; ++u) {
        if (unit_call[u] < 0) continue;
        FetchCall& c = f.calls[static_cast<std::size_t>(unit_call[u])];
        if (whole[static_cast<std::size_t>(unit_call[u])]) continue;
        if (c.merged < 0) {
          c.merged = static_cast<std::ptrdiff_t>(f.modules.size());
          f.modules.emplace_back();
        }
        Module& g = f.modules[static_cast<std::size_t>(c.merged)];
        if (u - u0 >= extra) g.params.push_back(m.params[u - u0 - extra]);
        g.gather_elems += plan.elems[u];
      }
    }
  }
  // hpZ: whether run r of micro-step mu gathers from the intra-node secondary partition in its
  // own hook, by the DeepSpeed release's rule (deepspeed_version.hpp).
  bool reads_secondary(const FetchRun& r, int mu) const { return call_reads_secondary(r, r, mu); }
  // hpZ: whether the all_gather_coalesced call that `hook`'s run starts for run r (its own, or a
  // prefetch) reads the copy. Before 0.13.2 the hook's `forward` flag decides for the whole call
  // (all_gather_coalesced(params, forward) uses the copy when `not forward`); from 0.13.2 each
  // parameter's state (ds_secondary_tensor is not None). The copy exists from the first release
  // of the weights after the optimizer step (stage3.py invalidate_secondary_tensor, then
  // partition_parameters.py _partition_param_sec): in micro-step 0's forward only for a tied
  // head, whose word embedding the embedding module gathered and released before.
  bool call_reads_secondary(const FetchRun& hook, const FetchRun& r, int mu) const {
    if (!st_.hpz) return false;
    const Module& m = (*out_.modules)[static_cast<std::size_t>(r.module)];
    const bool copy_exists = mu > 0 || r.pass != FetchPass::Forward || regathers(m);
    switch (hpz_rule_) {
      case HpzRule::BackwardOnly:  // all_gather_coalesced(forward): `not forward` only
        return hook.pass == FetchPass::Backward;
      case HpzRule::GradEnabled: {  // forward = torch.is_grad_enabled()
        // A checkpointed layer's original forward runs under no_grad (forward = False).
        const Module& h = (*out_.modules)[static_cast<std::size_t>(hook.module)];
        const bool no_grad_forward =
            hook.pass == FetchPass::Forward && s_.checkpointing && h.recomputed;
        return hook.pass == FetchPass::Backward || (no_grad_forward && copy_exists);
      }
      case HpzRule::WhenPresent:  // ds_secondary_tensor is not None
        return copy_exists;
    }
    return false;
  }
  // Whether m gathers weights it does not own (a tied head's word embedding).
  static bool regathers(const Module& m) { return borrowed_elems(m) > 0; }

  // One micro-step: its forward runs and then its backward runs, as one pass. DeepSpeed's
  // coordinator records the trace of a whole forward and backward and replays it as one queue
  // (partitioned_param_coordinator.py reset_step: __param_queue from __param_order, rebuilt after
  // each backward in 0.10.0 and 0.13.2, stage3.py backward; at the start of each forward in
  // 0.19.5, parameter_offload.py _start_of_forward_hook), so the last forward hooks prefetch the
  // backward's first gathers (prefetch_plan over the whole micro-step).
  int micro_step(int mu, int boundary) {
    Digits mu_d(mu);
    const int fwd = piece({"mb", mu_d, ".fwd."});
    const int bwd = piece({"mb", mu_d, ".bwd."});
    const int rec = piece({"mb", mu_d, ".rec."});
    const int reduce_stream = st_.overlap_comm ? kReduce : kCompute;
    // Stage 1 keeps whole gradients and reduces them only in the boundary micro-step's backward.
    std::size_t next_bucket = st_.stage == 1 && mu + 1 < s_.grad_accum ? out_.buckets.size() : 0;
    int bucket_no = 0;
    pass(
        mu, out_.trace.data(), held_.data(), out_.trace.size(), boundary, {fwd, rec, bwd},
        [&](const FetchRun& r, int tag) {
          const int i = r.module;
          const Module& m = (*out_.modules)[static_cast<std::size_t>(i)];
          if (r.pass == FetchPass::Forward) {
            module_compute(Category::Compute, i, false, tag, "");
            if (st_.hpz && mu == 0 && prof_.kernels.count("copy")) {
              // Re-partition the gathered weights into the secondary copy (read and write
              // 2n/k bytes).
              kernel(kCompute, Category::Other, "copy",
                     2 * 2.0 * static_cast<double>(m.gather_elems) / st_.hpz_size, tag,
                     ".hpz_copy");
            }
            return;
          }
          if (r.pass == FetchPass::Recompute) {
            module_compute(Category::Recompute, i, false, tag, "");
            return;
          }
          module_compute(Category::Compute, i, true, tag, "");
          if (st_.stage >= 3) ipg_copies(reduce_stream, i, tag);
          bool any = false;
          while (next_bucket < out_.buckets.size() && out_.buckets[next_bucket].ready_module == i) {
            if (!any && reduce_stream != kCompute) {
              const int ready = event();
              record(kCompute, ready);
              wait(reduce_stream, ready);
            }
            any = true;
            const int piece_no = bucket_piece(mu, bucket_no);
            reduce_bucket(reduce_stream, out_.buckets[next_bucket], piece_no);
            if (st_.offload_optimizer != OffloadDevice::None) {
              // The rank's reduced 16-bit gradient partition of the bucket goes to the host,
              // where CPU Adam will read it (DeepSpeed copies per bucket, accumulating on the
              // host).
              after(reduce_stream, d2h_);
              pcie(d2h_, 2 * static_cast<double>(out_.buckets[next_bucket].elems()) / S_,
                   prefix(piece_no), ".grads.d2h");
            }
            ++bucket_no;
            ++next_bucket;
          }
        });
    // DeepSpeed synchronises the reduction stream(s) at the end of each backward; under stage 3
    // the host blocks on it (stage3.py independent_gradient_partition_epilogue:
    // reduce_and_partition_stream.synchronize(), 0.10.0 and 0.19.5), so its dispatch of the next
    // micro-step starts after it: when the compute stream, which waits for the same streams,
    // records the micro-step's end.
    for (const int stream : drained_) {
      const int ev = event();
      record(stream, ev);
      wait(kCompute, ev);
    }
    const int done = event();
    record(kCompute, done);
    if (st_.stage >= 3) wait(host_stream(), done);
    return done;
  }

  // stage3.py __add_grad_to_ipg_bucket (0.10.0, 0.13.2, 0.19.5), per gradient of module i as its
  // hook fires, the host dispatches the reduction stream's wait_stream on the default stream (one
  // eager op per gradient); with contiguous_gradients (DeepSpeed's default) and room in the bucket
  // (the gradient smaller than reduce_bucket_size, make_grad_buckets) the reduction stream then
  // copies the gradient into the bucket's flat buffer (read and write 2n bytes, the copy kernel)
  // after the host has dispatched the narrow, view_as, copy_ and record_stream (4 more ops).
  // Without contiguous_gradients, or for a gradient as large as the bucket, it stays in its own
  // buffer: no copy.
  void ipg_copies(int stream, int i, int tag) {
    const Module& m = (*out_.modules)[static_cast<std::size_t>(i)];
    double bytes = 0;
    int copies = 0;
    for (const ParamTensor& p : m.params)
      if (st_.contiguous_gradients && p.elems < st_.reduce_bucket_elems) {
        bytes += 4 * static_cast<double>(p.elems);
        ++copies;
      }
    if (m.params.empty() || !prof_.kernels.count("copy")) return;
    host_dispatch(static_cast<double>(m.params.size()) + 4.0 * copies, Category::Other, tag,
                  ".ipg.host");
    if (copies == 0) return;
    const int ready = event();
    record(kCompute, ready);
    if (stream != kCompute) wait(stream, ready);
    const int dispatched = event();
    record(host_stream(), dispatched);
    wait(stream, dispatched);
    kernel(stream, Category::Other, "copy", bytes, tag, ".ipg_copy");
  }
  // The host's dispatch of a bucket's reduction, as its eager ops (stage3.py
  // __avg_scatter_grads; coalesced_collectives.py, the same in 0.10.0, 0.13.2 and 0.19.5):
  // reduce_scatter_coalesced over R ranks takes per tensor a view and R slices (the partition
  // list), a torch.empty per padded rank slice, the cat, the div_, the chunk, the reduce-scatter
  // and a narrow per tensor; all_to_all_quant_reduce per tensor swizzle_quant, four empty_likes,
  // four all_to_all_singles, quantized_reduction, dequantize, the chunk, the sum over the nodes'
  // chunks (one add per node), the division and the view. The reduction stream waits for it.
  void bucket_host_ops(int stream, const GradBucket& b, int bucket_piece) {
    const double R = S_;
    double ops = 0;
    auto rs_ops = [&](const std::vector<std::int64_t>& sizes) {
      ops += 4;
      for (const std::int64_t n : sizes) ops += R + 2 + padded_slices(n);
    };
    if (!out_.qgz_active) {
      std::vector<std::int64_t> sizes;
      for (const BucketTensor& x : b.tensors) sizes.push_back(x.elems);
      rs_ops(sizes);
    } else {
      const std::int64_t node_count = W_ / N_;  // the world is whole nodes
      const auto nodes = static_cast<double>(node_count);
      for (const BucketTensor& x : b.tensors) {
        if (x.quantized)
          ops += 14 + nodes;
        else
          rs_ops({x.elems});
      }
    }
    host_dispatch(ops, Category::Other, prefix(bucket_piece), ".reduce.host");
    const int dispatched = event();
    record(host_stream(), dispatched);
    wait(stream, dispatched);
  }
  // Rank slices of a tensor of n elements that reduce_scatter_coalesced pads (shorter than
  // ceil(n / R): a torch.empty each).
  double padded_slices(std::int64_t n) const {
    const std::int64_t R = S_, chunk = (n + R - 1) / R;
    return chunk == 0 ? 0 : static_cast<double>(R - std::min<std::int64_t>(R, n / chunk));
  }
  // reduce_scatter_coalesced's GPU work before the NCCL call: unless it reduces one tensor that
  // divides by R, the cat that interleaves every tensor's rank slices with their padding into one
  // flat buffer (read 2n, write 2 x the padded size), then the pre-divide div_ (read and write the
  // flat buffer), both at the copy kernel's rate.
  void interleave(int stream, const std::vector<std::int64_t>& sizes, int pre) {
    if (!prof_.kernels.count("copy")) return;
    const std::int64_t R = S_;
    double read = 0, flat = 0;
    for (const std::int64_t n : sizes) {
      read += 2 * static_cast<double>(n);
      const std::int64_t padded = (n + R - 1) / R * R;
      flat += 2 * static_cast<double>(padded);
    }
    const bool cat = sizes.size() != 1 || sizes[0] % R != 0;
    if (cat) kernel(stream, Category::Other, "copy", read + flat, pre, ".interleave_cat");
    kernel(stream, Category::Other, "copy", 2 * flat, pre, ".predivide");
  }

  // The label piece of bucket `no` of micro-step mu: "mb<mu>.bucket<no>".
  int bucket_piece(int mu, int no) {
    Digits mu_d(mu), no_d(no);
    return piece({"mb", mu_d, ".bucket", no_d});
  }
  // A gradient bucket's reduction; its ops are labelled "<bucket_piece>[.t<i>][.chunk<c>]...".
  // Without qgZ one reduce-scatter of the bucket (coalesced_collectives.py
  // reduce_scatter_coalesced). With qgZ, all_to_all_quant_reduce (the same in 0.10.0, 0.13.2 and
  // 0.19.5) loops over the bucket's tensors: a tensor that falls back (1-D; from 0.13.2 also not
  // divisible by 2 x world, make_grad_buckets) gets a reduce-scatter of its own
  // (reduce_scatter_coalesced([tensor])), every other one qgZ's two hops (quantized_reduce).
  void reduce_bucket(int stream, const GradBucket& b, int bucket_piece) {
    if (st_.stage >= 3) bucket_host_ops(stream, b, bucket_piece);
    if (!out_.qgz_active) {
      std::vector<std::int64_t> sizes;
      for (const BucketTensor& x : b.tensors) sizes.push_back(x.elems);
      if (st_.stage >= 3) interleave(stream, sizes, prefix(bucket_piece));
      collective(stream, CollKind::ReduceScatter, shard_algo_, shard_,
                 st_.grad_comm_bytes * static_cast<double>(b.elems()), Category::ReduceScatter,
                 CommPhase::GradientReduction, prefix(bucket_piece), ".rs");
      return;
    }
    for (std::size_t t = 0; t < b.tensors.size(); ++t) {
      const BucketTensor& x = b.tensors[t];
      const int tp = prefix(bucket_piece, tensor_piece(t, -1));
      if (!x.quantized) {
        interleave(stream, {x.elems}, tp);
        collective(stream, CollKind::ReduceScatter, shard_algo_, shard_,
                   st_.grad_comm_bytes * static_cast<double>(x.elems), Category::ReduceScatter,
                   CommPhase::GradientReduction, tp, ".rs.fallback");
        continue;
      }
      quantized_reduce(stream, x, bucket_piece, t, tp);
    }
  }
  // qgZ's reduction of one gradient tensor of `total` elements (all_to_all_quant_reduce's loop
  // body): swizzle_quant to INT4 with FP32 scales; an all_to_all_single of the data and another of
  // the scales inside the node; quantized_reduction (dequantize, reduce the node's N partial sums,
  // requantize); the same two all-to-alls across the nodes of the rail; dequantize and reduce the
  // nodes' chunks. Scales: one FP32 per group, max(rows, cols, world) groups for swizzle_quant and
  // that // GPUs per node after quantized_reduction (quant_groups.hpp). With --qgz-chunks C the
  // tensor runs as C chunks (each a C-th of the data and scales) whose second hop (on
  // reduce.inter) overlaps the next chunk's first.
  void quantized_reduce(int stream, const BucketTensor& x, int bucket_piece, std::size_t t,
                        int tp) {
    const int chunks = std::max(1, st_.qgz_chunks);
    const bool pipelined = chunks > 1 && stream == kReduce;
    const int hop2 = pipelined ? kReduceInter : stream;
    const double N = N_;
    const double C = chunks;
    for (int c = 0; c < chunks; ++c) {
      const double n = static_cast<double>(x.elems) / C;
      const int ct = chunks > 1 ? prefix(bucket_piece, tensor_piece(t, c)) : tp;
      // This rank's scales, and its INT4 buffer with them; the same after the intra-node
      // reduction (a GPUs-per-node-th of the data).
      const double s = 4.0 * static_cast<double>(qgz_intra_groups(x.max_dim, W_)) / C;
      const double s2 = 4.0 * static_cast<double>(qgz_inter_groups(x.max_dim, W_, N_)) / C;
      const double q = n * st_.grad_bits / 8.0 + s, q2 = n / N * st_.grad_bits / 8.0 + s2;
      kernel(stream, Category::QuantKernel, "swizzle_quantize_int4", 2 * n + q, ct,
             ".swizzle_quant");
      collective(stream, CollKind::AllToAll, Algorithm::IntraNode, node_groups_, q - s,
                 Category::AllToAll, CommPhase::GradientReduction, ct, ".a2a.intra");
      collective(stream, CollKind::AllToAll, Algorithm::IntraNode, node_groups_, s,
                 Category::AllToAll, CommPhase::GradientReduction, ct, ".a2a.intra.scales");
      kernel(stream, Category::QuantKernel, "dequant_reduce_quant_int4", q + q2, ct,
             ".dequant_reduce_quant");
      if (pipelined) {
        const int ev = event();
        record(stream, ev);
        wait(hop2, ev);
      }
      collective(hop2, CollKind::AllToAll, Algorithm::Direct, rails_, q2 - s2, Category::AllToAll,
                 CommPhase::GradientReduction, ct, ".a2a.inter");
      collective(hop2, CollKind::AllToAll, Algorithm::Direct, rails_, s2, Category::AllToAll,
                 CommPhase::GradientReduction, ct, ".a2a.inter.scales");
      kernel(hop2, Category::QuantKernel, "dequant_reduce_int4", q2 + 2 * n / W_, ct,
             ".dequant_reduce");
    }
  }
  // ".t<t>" or ".t<t>.chunk<c>" (c >= 0): the label piece of a bucket's tensor (and chunk).
  int tensor_piece(std::size_t t, int c) {
    if (!s_.labels) return -1;
    Digits t_d(static_cast<int>(t));
    if (c < 0) return piece({".t", t_d});
    Digits c_d(c);
    return piece({".t", t_d, ".chunk", c_d});
  }

  GroupList world_, hpz_groups_, node_groups_, rails_, shard_, replicas_;
  Algorithm shard_algo_ = Algorithm::Ring;  // of gathers and reduce-scatters over shard_
  HpzRule hpz_rule_ = hpz_rule(st_.deepspeed_version);
  std::vector<std::int64_t> held_;                   // per run of out_.trace: held_elems
  int S_ = 1;                                        // ranks a parameter is sharded over
  int h2d_ = -1, d2h_ = -1, host_ = -1, nvme_ = -1;  // offload streams; -1: none
  std::vector<int> drained_ = {kReduce};             // streams the end of each backward waits for
  std::vector<int> ongoing_;    // reassemble: the host's outstanding fetch events, oldest first
  QwzGroupCounter qwz_groups_;  // qwZ's scale counts of the shard sizes gathered so far
};

}  // namespace

void lower_deepspeed(const StepSetup& setup, const Topology& topo, const CostProfile& profile,
                     ModuleCache* modules, GroupListCache* groups, LoweredStep& out) {
  DeepSpeedLowering(setup, topo, profile, modules, groups, out).build();
}

}  // namespace zerosim::lowering
