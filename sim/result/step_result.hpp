// StepResult: the typed result of simulating one training step, the library's output. Everything
// that shows a result (the JSON document, CSV, Markdown, HTML, the console, the Python module) is
// a reporter of this type, as Google Benchmark's reporters are of its Run. The JSON form is
// specified by docs/result-schema.json (version kResultSchemaVersion): to_json writes it and
// step_result_from_json reads it back strictly, so to_json(step_result_from_json(j)) == j.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/json_io.hpp"
#include "sim/core/json_text.hpp"
#include "sim/memory/memory.hpp"
#include "sim/strategy/strategy.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/transformer.hpp"

namespace zerosim {

// 2: mfu, hfu, mfu_flops_per_step, peak_tflops_per_gpu; the model's optional "arch".
// 3: the scenario's attention implementation ("attention": flash | eager).
// 4: the model's flash_attention, seq_source, position_rows and arch norm_bias and qk_norm; the
//    scenario's active_params and seq_len_source; the model's seq is the run's for a learned
//    position table. 5: the breakdown's compute_kernels_s (compute and recompute by kernel class).
// 7: the scenario's sm_share (compute shares the SMs with NCCL's collective kernels).
constexpr int kResultSchemaVersion = 7;

// The scenario as simulated: every default resolved (cluster shape, model, strategy, batch).
struct ScenarioEcho {
  std::string cluster;  // as given: preset name or file
  std::string node_type, gpu_model;
  int nodes = 0, gpus_per_node = 0, world_size = 0, nics_per_node = 0;
  double nic_gbps = 0;
  std::string fabric;  // rail | fat-tree | explicit
  double oversubscription = 1;
  ModelShape model;
  std::int64_t params = 0;          // every parameter (at the run's sequence length)
  std::int64_t active_params = 0;   // those one token uses (== params for a dense model)
  Strategy strategy;                // as resolved ("auto" filled, hpz_size set); echoed fields only
  std::int64_t tokens_per_gpu = 0;  // per micro-step
  int seq_len = 0;
  std::string seq_len_source;  // "--seq-len", or the model's rule for its default
  std::int64_t micro_batch_sequences = 0;
  int grad_accum = 1;
  bool activation_checkpointing = true;
  std::string attention;  // flash | eager, as resolved (--attention auto decided)
  bool sm_share = true;   // --sm-share: compute ran on the SMs NCCL's kernels left
  int prefetch_depth =
      0;  // modules gathered ahead of the running one (DeepSpeed: the most at once)
  std::string profile_name, profile_status;
  std::string tier;  // flow | analytic

  bool operator==(const ScenarioEcho&) const = default;
};

// Exposed communication: time the compute stream waits on collectives, by kind (sums to total).
struct ExposedComm {
  double all_gather_s = 0, reduce_scatter_s = 0, all_to_all_s = 0, all_reduce_s = 0;
  double total_s = 0;
  bool operator==(const ExposedComm&) const = default;
};

// Compute time by kernel class (sim/step/compute_model.hpp): GEMMs, the attention core, each
// memory-bound class (MemoryKernel: norm, activation, residual, bias, rotary, dropout, loss,
// embedding) and the kernels' launch overhead. A module pass's, or a step's compute + recompute.
struct ComputeTerms {
  double gemm_s = 0, attention_s = 0, launch_s = 0;
  std::array<double, kMemoryKernelCount> memory_s{};  // by MemoryKernel
  double total() const;
  ComputeTerms& operator+=(const ComputeTerms& o);
  ComputeTerms scaled(double f) const;
  bool operator==(const ComputeTerms&) const = default;
};

// Where the step's time goes (sim/step/breakdown.hpp defines each part).
struct StepTimeBreakdown {
  double compute_s = 0, recompute_s = 0, optimizer_s = 0, param_fetch_s = 0;
  double quant_kernels_s = 0, other_kernels_s = 0;
  ExposedComm exposed_comm;
  double exposed_kernels_s = 0;
  double idle_s = 0;
  ComputeTerms compute_kernels;  // compute_s + recompute_s by kernel class
  // ZeRO-Offload (all 0 without it, and then not written): busy time of the PCIe copies, the NVMe
  // reads and writes and CPU Adam, and the time compute waits on them with no collective in
  // flight (a part of the step like exposed_kernels_s).
  double offload_copy_s = 0, nvme_io_s = 0, host_optimizer_s = 0, exposed_offload_s = 0;
  bool offloads() const {
    return offload_copy_s > 0 || nvme_io_s > 0 || host_optimizer_s > 0 || exposed_offload_s > 0;
  }
  bool operator==(const StepTimeBreakdown&) const = default;
};

// ZeRO-Offload's traffic and footprint (present when the strategy offloads): bytes one GPU moves
// per step, the rates they were priced at, and what the node holds off its GPUs.
struct OffloadResult {
  double h2d_bytes_per_gpu = 0, d2h_bytes_per_gpu = 0;  // over PCIe
  double nvme_read_bytes_per_gpu = 0, nvme_write_bytes_per_gpu = 0;
  double pcie_Bps = 0;                // per GPU per direction (x16 rate x copy efficiency)
  double host_adam_params_per_s = 0;  // per node
  double nvme_Bps_per_node = 0;       // per direction
  double host_bytes_per_node = 0, host_capacity_bytes_per_node = 0, nvme_bytes_per_node = 0;
  bool operator==(const OffloadResult&) const = default;
};

// Payload bytes, op count and busy time of one collective kind or one phase.
struct CommTotals {
  double inter_node_bytes = 0, intra_node_bytes = 0;
  std::uint64_t count = 0;
  double busy_s = 0;
  bool operator==(const CommTotals&) const = default;
};

struct CommResult {
  double inter_node_bytes = 0, intra_node_bytes = 0;
  std::map<std::string, CommTotals> by_collective;  // "all_gather", "reduce_scatter", ...
  std::map<std::string, CommTotals> by_phase;  // forward/backward_all_gather, gradient_reduction
  std::uint64_t collectives = 0;               // collectives in the step program
  std::uint64_t flows = 0;                     // network flows simulated
  bool operator==(const CommResult&) const = default;
};

struct StepResult {
  int schema_version = kResultSchemaVersion;
  ScenarioEcho scenario;
  // Three throughput figures, each named for what it counts:
  //  - tflops_per_gpu: Megatron-LM's formula (GPT shapes; 4 passes with checkpointing, else 3), the
  //    figure the ZeRO++ paper reports;
  //  - mfu: model FLOPs from the architecture (3 passes, top_k experts, no recompute) over the
  //    GPUs' peak;
  //  - hfu: the FLOPs executed (counted_flops_per_step, recompute included) over the peak.
  double step_time_s = 0, tflops_per_gpu = 0, tokens_per_s = 0;
  double model_flops_per_step = 0;    // Megatron's formula
  double counted_flops_per_step = 0;  // per GEMM and attention matmul, recompute included
  double counted_tflops_per_gpu = 0;
  double mfu_flops_per_step = 0;   // per GEMM and attention matmul, without recompute
  double peak_tflops_per_gpu = 0;  // the cost profile's dense FP16/BF16 peak
  double mfu = 0;                  // mfu_flops_per_step / (GPUs x step x peak)
  double hfu = 0;                  // counted_flops_per_step / (GPUs x step x peak)
  StepTimeBreakdown breakdown;
  CommResult comm;
  MemoryEstimate memory;  // components in name order after a JSON round trip
  std::vector<std::string> warnings;
  std::uint64_t engine_events = 0;
  bool has_offload = false;  // the strategy offloads: `offload` is written
  OffloadResult offload;

  bool operator==(const StepResult&) const;
};

// The JSON document of docs/result-schema.json (keys sorted, as the JSON writer orders them).
json to_json(const StepResult& r);

// to_json(r).dump() written without building the tree, for writers of many results (a sweep): the
// descriptions results repeat (model, strategy, memory estimate) are dumped once per distinct value
// among the last few and their text reused. One per thread.
class StepResultText {
 public:
  StepResultText();
  ~StepResultText();
  StepResultText(const StepResultText&) = delete;
  StepResultText& operator=(const StepResultText&) = delete;
  // Writes r's object as the next value of `out`; false when out's text holds a number that is
  // not finite (written null).
  bool write(JsonTextWriter& out, const StepResult& r);

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};
// Reads a result document strictly: unknown or missing keys and wrong types are InputErrors
// naming the file and JSON path; a schema_version other than kResultSchemaVersion is refused.
StepResult step_result_from_json(const JsonReader& r);

}  // namespace zerosim
