// StepResult and the types of its fields: read-only properties with docstrings, __repr__, and
// to_dict() / to_json() / row() / to_dataframe().
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <optional>

#include "python/bindings.hpp"
#include "sim/workload/transformer.hpp"

namespace zerosim::python {

py::object to_python(const json& value) {
  return py::module_::import("json").attr("loads")(value.dump());
}

py::object to_python(const ordered_json& value) {
  return py::module_::import("json").attr("loads")(value.dump());
}

py::object data_frame(const py::list& rows) {
  py::object pandas;
  try {
    pandas = py::module_::import("pandas");
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_ImportError)) throw;
    throw py::import_error(
        "to_dataframe() needs pandas (Debian: apt-get install python3-pandas; pip: pip install "
        "pandas); to_dict() and rows need nothing");
  }
  return pandas.attr("DataFrame")(rows);
}

py::dict row_of(const StepResult& r) {
  const ScenarioEcho& s = r.scenario;
  const StepTimeBreakdown& b = r.breakdown;
  py::dict d;
  d["cluster"] = s.cluster;
  d["gpu_model"] = s.gpu_model;
  d["nodes"] = s.nodes;
  d["gpus"] = s.world_size;
  d["nics_per_node"] = s.nics_per_node;
  d["nic_gbps"] = s.nic_gbps;
  d["fabric"] = s.fabric;
  d["oversubscription"] = s.oversubscription;
  d["model"] = s.model.name;
  d["params"] = s.params;
  d["active_params"] = s.active_params;
  d["strategy"] = s.strategy.name();
  d["tokens_per_gpu"] = s.tokens_per_gpu;
  d["seq_len"] = s.seq_len;
  d["grad_accum"] = s.grad_accum;
  d["tier"] = s.tier;
  d["step_time_s"] = r.step_time_s;
  d["tflops_per_gpu"] = r.tflops_per_gpu;
  d["mfu"] = r.mfu;
  d["hfu"] = r.hfu;
  d["tokens_per_s"] = r.tokens_per_s;
  d["compute_s"] = b.compute_s;
  d["recompute_s"] = b.recompute_s;
  d["optimizer_s"] = b.optimizer_s;
  d["param_fetch_s"] = b.param_fetch_s;
  d["quant_kernels_s"] = b.quant_kernels_s;
  d["exposed_comm_s"] = b.exposed_comm.total_s;
  d["exposed_kernels_s"] = b.exposed_kernels_s;
  d["idle_s"] = b.idle_s;
  d["inter_node_bytes"] = r.comm.inter_node_bytes;
  d["intra_node_bytes"] = r.comm.intra_node_bytes;
  d["peak_bytes_per_gpu"] = r.memory.peak_bytes;
  d["fits"] = r.memory.fits;
  return d;
}

namespace {

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1ull << 30)); }

void bind_model(py::module_& m) {
  py::class_<ModelShape>(m, "ModelShape", "A transformer's shape, as the workload gives it")
      .def_readonly("name", &ModelShape::name, "preset name or file")
      .def_readonly("family", &ModelShape::family, "gpt, llama or a Hugging Face model_type")
      .def_readonly("layers", &ModelShape::layers, "transformer layers")
      .def_readonly("hidden", &ModelShape::hidden, "hidden size")
      .def_readonly("heads", &ModelShape::heads, "attention heads")
      .def_readonly("kv_heads", &ModelShape::kv_heads, "key/value heads (grouped-query attention)")
      .def_readonly("ffn", &ModelShape::ffn, "MLP intermediate size")
      .def_readonly("vocab", &ModelShape::vocab, "vocabulary size")
      .def_readonly("seq", &ModelShape::seq, "default sequence length")
      .def_readonly("seq_source", &ModelShape::seq_source, "the rule that chose seq")
      .def_readonly("flash_attention", &ModelShape::flash_attention,
                    "True when the model's training stack runs FlashAttention on Ampere and later")
      .def_property_readonly("moe", &ModelShape::moe, "True for a mixture of experts")
      .def_property_readonly("total_params", &total_param_count,
                             "every parameter (embedding, layers, final norm, untied head)")
      .def_property_readonly("active_params", &active_param_count,
                             "parameters one token uses (total_params when dense; a MoE's "
                             "routed experts count top_k of them)")
      .def("__repr__", [](const ModelShape& s) {
        return fmt::format(
            "ModelShape('{}', layers={}, hidden={}, total_params={}, "
            "active_params={})",
            s.name, s.layers, s.hidden, total_param_count(s), active_param_count(s));
      });
}

void bind_strategy(py::module_& m) {
  py::class_<Strategy>(m, "Strategy", "The parallelism strategy as resolved for the scenario")
      .def_property_readonly("name", &Strategy::name, "zero3, zeropp, zero3+qwz, fsdp, ...")
      .def_property_readonly(
          "display_name", [](const Strategy& s) { return s.id().display(); },
          "the name reports print (ZeRO++, ZeRO-3 + qwZ, FSDP FULL_SHARD, ...)")
      .def_property_readonly(
          "family", [](const Strategy& s) { return to_string(s.family()); }, "deepspeed or fsdp")
      .def_readonly("qwz", &Strategy::qwz, "qwZ: quantized weights in the all-gather")
      .def_readonly("hpz", &Strategy::hpz, "hpZ: a secondary weight partition within a group")
      .def_readonly("qgz", &Strategy::qgz, "qgZ: quantized gradients in the reduce-scatter")
      .def_readonly("hpz_size", &Strategy::hpz_size, "hpZ group size (GPUs)")
      .def_readonly("weight_bits", &Strategy::weight_bits, "qwZ weight bits")
      .def_readonly("grad_bits", &Strategy::grad_bits, "qgZ gradient bits")
      .def_readonly("overlap_comm", &Strategy::overlap_comm,
                    "gradient reduction overlapped with the backward pass")
      .def_readonly("reduce_bucket_elems", &Strategy::reduce_bucket_elems,
                    "DeepSpeed reduce_bucket_size (elements)")
      .def_readonly("prefetch_bucket_elems", &Strategy::prefetch_bucket_elems,
                    "DeepSpeed stage3_prefetch_bucket_size (elements)")
      .def_readonly("max_live_params", &Strategy::max_live_params,
                    "DeepSpeed stage3_max_live_parameters")
      .def_readonly("dtype", &Strategy::dtype, "training data type (bf16, fp16)")
      .def_readonly("source", &Strategy::source, "the flag or DeepSpeed config it comes from")
      .def("__repr__",
           [](const Strategy& s) { return fmt::format("Strategy('{}', {})", s.name(), s.dtype); });
}

void bind_scenario(py::module_& m) {
  using E = ScenarioEcho;
  py::class_<E>(m, "Scenario", "The scenario as simulated: every default resolved")
      .def_readonly("cluster", &E::cluster, "cluster preset or topology file, as given")
      .def_readonly("node_type", &E::node_type, "node type of the cluster")
      .def_readonly("gpu_model", &E::gpu_model, "GPU model (e.g. H100-SXM)")
      .def_readonly("nodes", &E::nodes, "server nodes")
      .def_readonly("gpus_per_node", &E::gpus_per_node, "GPUs per node")
      .def_readonly("world_size", &E::world_size, "GPUs in all")
      .def_readonly("nics_per_node", &E::nics_per_node, "network adapters per node")
      .def_readonly("nic_gbps", &E::nic_gbps, "line rate per adapter, Gbit/s")
      .def_readonly("fabric", &E::fabric, "rail, fat-tree or explicit")
      .def_readonly("oversubscription", &E::oversubscription, "leaf downlink:uplink ratio")
      .def_readonly("model", &E::model, "the model's shape (ModelShape)")
      .def_readonly("params", &E::params, "the model's parameters (ModelShape.total_params)")
      .def_readonly("active_params", &E::active_params,
                    "parameters one token uses (params when dense)")
      .def_readonly("strategy", &E::strategy, "the strategy as resolved (Strategy)")
      .def_readonly("tokens_per_gpu", &E::tokens_per_gpu, "tokens per GPU per micro-step")
      .def_readonly("seq_len", &E::seq_len, "sequence length")
      .def_readonly("seq_len_source", &E::seq_len_source,
                    "where the sequence length came from: --seq-len or the model's default rule")
      .def_readonly("micro_batch_sequences", &E::micro_batch_sequences,
                    "sequences per GPU per micro-step")
      .def_readonly("grad_accum", &E::grad_accum, "micro-steps per optimizer step")
      .def_readonly("activation_checkpointing", &E::activation_checkpointing,
                    "activations recomputed in the backward pass")
      .def_readonly("attention", &E::attention, "flash or eager, as resolved")
      .def_readonly("sm_share", &E::sm_share,
                    "whether compute ran on the SMs NCCL's collective kernels left")
      .def_readonly("prefetch_depth", &E::prefetch_depth,
                    "modules gathered ahead of the running one")
      .def_readonly("profile_name", &E::profile_name, "cost profile")
      .def_readonly("profile_status", &E::profile_status, "how the profile was calibrated")
      .def_readonly("tier", &E::tier, "network model: flow or analytic")
      .def("__repr__", [](const E& s) {
        return fmt::format(
            "Scenario(cluster='{}', nodes={}, gpus={}, model='{}', strategy='{}', "
            "tokens_per_gpu={}, tier='{}')",
            s.cluster, s.nodes, s.world_size, s.model.name, s.strategy.name(), s.tokens_per_gpu,
            s.tier);
      });
}

void bind_exposed(py::module_& m) {
  py::class_<ExposedComm>(m, "ExposedComm",
                          "Time the compute stream waits on collectives, by kind (s)")
      .def_readonly("all_gather_s", &ExposedComm::all_gather_s, "waiting on all-gathers")
      .def_readonly("reduce_scatter_s", &ExposedComm::reduce_scatter_s,
                    "waiting on reduce-scatters")
      .def_readonly("all_to_all_s", &ExposedComm::all_to_all_s, "waiting on all-to-alls (qgZ)")
      .def_readonly("all_reduce_s", &ExposedComm::all_reduce_s, "waiting on all-reduces")
      .def_readonly("total_s", &ExposedComm::total_s, "their sum")
      .def("__repr__", [](const ExposedComm& e) {
        return fmt::format("ExposedComm(total_s={:.6g})", e.total_s);
      });
}

void bind_breakdown(py::module_& m) {
  using B = StepTimeBreakdown;
  py::class_<B>(m, "StepTimeBreakdown",
                "Where the step's time goes (s); compute_s + recompute_s + optimizer_s + "
                "param_fetch_s + exposed_comm.total_s + exposed_kernels_s + exposed_offload_s + "
                "idle_s is the step time")
      .def_readonly("compute_s", &B::compute_s, "forward and backward GEMMs and attention")
      .def_readonly("recompute_s", &B::recompute_s, "activation checkpointing's recompute")
      .def_readonly("optimizer_s", &B::optimizer_s, "the optimizer step on the GPU")
      .def_readonly("param_fetch_s", &B::param_fetch_s, "waiting on the first parameter fetch")
      .def_readonly("quant_kernels_s", &B::quant_kernels_s, "ZeRO++ quantization kernels (busy)")
      .def_readonly("other_kernels_s", &B::other_kernels_s, "other communication kernels (busy)")
      .def_readonly("exposed_comm", &B::exposed_comm, "exposed communication (ExposedComm)")
      .def_readonly("exposed_kernels_s", &B::exposed_kernels_s, "exposed quantization kernels")
      .def_readonly("idle_s", &B::idle_s, "the rest of the step")
      .def_readonly("offload_copy_s", &B::offload_copy_s, "ZeRO-Offload PCIe copies (busy)")
      .def_readonly("nvme_io_s", &B::nvme_io_s, "ZeRO-Infinity NVMe reads and writes (busy)")
      .def_readonly("host_optimizer_s", &B::host_optimizer_s, "CPU Adam (busy)")
      .def_readonly("exposed_offload_s", &B::exposed_offload_s, "exposed offloading")
      .def("__repr__", [](const B& b) {
        return fmt::format(
            "StepTimeBreakdown(compute_s={:.6g}, recompute_s={:.6g}, "
            "exposed_comm_s={:.6g}, idle_s={:.6g})",
            b.compute_s, b.recompute_s, b.exposed_comm.total_s, b.idle_s);
      });
}

void bind_offload(py::module_& m) {
  using O = OffloadResult;
  py::class_<O>(m, "OffloadResult", "ZeRO-Offload's bytes, rates and host memory")
      .def_readonly("h2d_bytes_per_gpu", &O::h2d_bytes_per_gpu, "host to device per step")
      .def_readonly("d2h_bytes_per_gpu", &O::d2h_bytes_per_gpu, "device to host per step")
      .def_readonly("nvme_read_bytes_per_gpu", &O::nvme_read_bytes_per_gpu, "NVMe reads per step")
      .def_readonly("nvme_write_bytes_per_gpu", &O::nvme_write_bytes_per_gpu,
                    "NVMe writes per step")
      .def_readonly("pcie_Bps", &O::pcie_Bps, "PCIe bandwidth per GPU (B/s)")
      .def_readonly("host_adam_params_per_s", &O::host_adam_params_per_s,
                    "CPU Adam rate per node (parameters/s)")
      .def_readonly("nvme_Bps_per_node", &O::nvme_Bps_per_node, "NVMe bandwidth per node (B/s)")
      .def_readonly("host_bytes_per_node", &O::host_bytes_per_node, "host memory used per node")
      .def_readonly("host_capacity_bytes_per_node", &O::host_capacity_bytes_per_node,
                    "host memory per node")
      .def_readonly("nvme_bytes_per_node", &O::nvme_bytes_per_node, "NVMe bytes used per node")
      .def("__repr__", [](const O& o) {
        return fmt::format("OffloadResult(h2d_bytes_per_gpu={:.6g}, d2h_bytes_per_gpu={:.6g})",
                           o.h2d_bytes_per_gpu, o.d2h_bytes_per_gpu);
      });
}

void bind_comm_memory(py::module_& m) {
  py::class_<CommTotals>(m, "CommTotals", "Bytes, count and busy time of some collectives")
      .def_readonly("inter_node_bytes", &CommTotals::inter_node_bytes, "bytes between nodes")
      .def_readonly("intra_node_bytes", &CommTotals::intra_node_bytes, "bytes within nodes")
      .def_readonly("count", &CommTotals::count, "collectives")
      .def_readonly("busy_s", &CommTotals::busy_s, "time they run (s)")
      .def("__repr__", [](const CommTotals& c) {
        return fmt::format("CommTotals(count={}, inter_node_bytes={:.6g})", c.count,
                           c.inter_node_bytes);
      });
  py::class_<CommResult>(m, "CommResult", "The step's communication")
      .def_readonly("inter_node_bytes", &CommResult::inter_node_bytes, "bytes between nodes")
      .def_readonly("intra_node_bytes", &CommResult::intra_node_bytes, "bytes within nodes")
      .def_readonly("by_collective", &CommResult::by_collective,
                    "CommTotals by kind: all_gather, reduce_scatter, all_to_all, all_reduce")
      .def_readonly("by_phase", &CommResult::by_phase, "CommTotals by phase of the step")
      .def_readonly("collectives", &CommResult::collectives, "collectives in the step program")
      .def_readonly("flows", &CommResult::flows, "network flows simulated")
      .def("__repr__", [](const CommResult& c) {
        return fmt::format("CommResult(collectives={}, inter_node_bytes={:.6g})", c.collectives,
                           c.inter_node_bytes);
      });
  py::class_<MemoryEstimate>(m, "MemoryEstimate", "Peak GPU memory, per GPU")
      .def_readonly("peak_bytes_per_gpu", &MemoryEstimate::peak_bytes, "peak bytes")
      .def_readonly("capacity_bytes", &MemoryEstimate::capacity_bytes, "the GPU's memory")
      .def_readonly("fits", &MemoryEstimate::fits, "peak <= capacity")
      .def_readonly("components", &MemoryEstimate::components, "(name, bytes) of each part")
      .def("__repr__", [](const MemoryEstimate& e) {
        return fmt::format("MemoryEstimate(peak={}, capacity={}, fits={})", gib(e.peak_bytes),
                           gib(e.capacity_bytes), e.fits ? "True" : "False");
      });
}

std::string result_repr(const StepResult& r) {
  const ScenarioEcho& s = r.scenario;
  return fmt::format(
      "StepResult({} x{} ({} GPUs), {}, {}: step_time_s={:.4f}, tokens_per_s={:.6g}, "
      "tflops_per_gpu={:.1f}, mfu={:.3f}, peak_memory={} of {}{})",
      s.cluster, s.nodes, s.world_size, s.model.name, s.strategy.name(), r.step_time_s,
      r.tokens_per_s, r.tflops_per_gpu, r.mfu, gib(r.memory.peak_bytes),
      gib(r.memory.capacity_bytes), r.memory.fits ? "" : ", DOES NOT FIT");
}

void bind_step_result(py::module_& m) {
  py::class_<StepResult>(m, "StepResult", "One simulated training step (docs/result-schema.json)")
      .def_readonly("schema_version", &StepResult::schema_version, "result schema version")
      .def_readonly("scenario", &StepResult::scenario, "the scenario as simulated (Scenario)")
      .def_readonly("step_time_s", &StepResult::step_time_s, "one optimizer step (s)")
      .def_readonly("tflops_per_gpu", &StepResult::tflops_per_gpu,
                    "Megatron-LM's formula per GPU (the ZeRO++ paper's figure)")
      .def_readonly("tokens_per_s", &StepResult::tokens_per_s, "tokens trained per second")
      .def_readonly("model_flops_per_step", &StepResult::model_flops_per_step,
                    "Megatron-LM's FLOPs per step")
      .def_readonly("counted_flops_per_step", &StepResult::counted_flops_per_step,
                    "FLOPs executed (recompute included)")
      .def_readonly("counted_tflops_per_gpu", &StepResult::counted_tflops_per_gpu,
                    "FLOPs executed per GPU per second / 1e12")
      .def_readonly("mfu_flops_per_step", &StepResult::mfu_flops_per_step,
                    "model FLOPs (no recompute), MFU's numerator")
      .def_readonly("peak_tflops_per_gpu", &StepResult::peak_tflops_per_gpu,
                    "the GPU's dense 16-bit peak")
      .def_readonly("mfu", &StepResult::mfu, "model FLOPs utilization")
      .def_readonly("hfu", &StepResult::hfu, "hardware FLOPs utilization (recompute included)")
      .def_readonly("breakdown", &StepResult::breakdown, "where the time goes (StepTimeBreakdown)")
      .def_readonly("comm", &StepResult::comm, "communication (CommResult)")
      .def_readonly("memory", &StepResult::memory, "peak GPU memory (MemoryEstimate)")
      .def_readonly("warnings", &StepResult::warnings, "what the simulation warns about")
      .def_readonly("engine_events", &StepResult::engine_events, "events the engine ran")
      .def_property_readonly(
          "offload",
          [](const StepResult& r) -> std::optional<OffloadResult> {
            if (!r.has_offload) return std::nullopt;
            return r.offload;
          },
          "ZeRO-Offload's bytes, rates and host memory (None when nothing is offloaded)")
      .def(
          "to_json", [](const StepResult& r, int indent) { return to_json(r).dump(indent); },
          py::arg("indent") = 2, "The result document of docs/result-schema.json (--json's text)")
      .def(
          "to_dict", [](const StepResult& r) { return to_python(to_json(r)); },
          "The result document as a dict (json.loads(to_json()))")
      .def("row", &row_of, "One flat row of the result (a dict), as a sweep's rows")
      .def(
          "to_dataframe",
          [](const StepResult& r) {
            py::list rows;
            rows.append(row_of(r));
            return data_frame(rows);
          },
          "row() as a one-row pandas.DataFrame")
      .def("__repr__", &result_repr)
      .def("__eq__", [](const StepResult& a, const StepResult& b) { return a == b; });
}

}  // namespace

void bind_result_types(py::module_& m) {
  bind_model(m);
  bind_strategy(m);
  bind_scenario(m);
  bind_exposed(m);
  bind_breakdown(m);
  bind_offload(m);
  bind_comm_memory(m);
  bind_step_result(m);
}

}  // namespace zerosim::python
