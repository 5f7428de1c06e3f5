// The `zerosim` Python module: simulate() and sweep() over the typed C++ API. A result is a
// StepResult with read-only typed fields (r.step_time_s, r.breakdown.compute_s,
// r.scenario.model.name, r.comm.by_collective["all_gather"].inter_node_bytes); r.to_json() is the
// CLI's --json text; a sweep returns flat rows (dicts) that pandas.DataFrame takes. Keyword
// arguments are simulate's flags with '_' for '-', validated by the same code as the CLI's; bad
// input raises ValueError with the CLI's message (file, flag or JSON path, rule).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/result/step_result.hpp"
#include "sim/step/simulate.hpp"
#include "sim/sweep/run_sweep.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace py = pybind11;
using namespace zerosim;

namespace {

// "nics_per_node" -> "--nics-per-node".
std::string flag_of(const std::string& key) {
  std::string flag = "--" + key;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

// A Python value as the text the CLI would read: True -> "true", else str() (100.0 -> "100.0",
// which an integer flag refuses as the CLI does).
std::string text_of(const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
  return py::str(v).cast<std::string>();
}

bool is_list(const py::handle& v) {
  return py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v);
}

// The keyword arguments as sweep axes (a scalar is a one-value axis), validated as a sweep's.
std::vector<Scenario> scenarios_of(const py::kwargs& kwargs, bool allow_lists) {
  std::vector<sweep::Axis> axes;
  for (const auto& [k, v] : kwargs) {
    const std::string key = k.cast<std::string>();
    sweep::Axis axis{flag_of(key), {}};
    if (is_list(v)) {
      if (!allow_lists)
        throw flag_error(axis.flag, "takes one value in simulate(); use sweep() for lists");
      for (const auto& item : v) axis.values.push_back(text_of(item));
    } else {
      axis.values.push_back(text_of(v));
    }
    axes.push_back(std::move(axis));
  }
  if (allow_lists) return sweep::expand(Scenario{}, axes);
  // One scenario with every value applied, as `zerosim simulate` reads its flags (a value its
  // strategy cannot use is an error there, not ignored as in a sweep).
  const sweep::ScenarioSpace checked(Scenario{}, axes);
  Scenario scenario;
  for (const sweep::Axis& axis : checked.axes())
    sweep::apply_flag(scenario, axis.flag, axis.values.front());
  return {scenario};
}

// One flat row of a result: the scenario's axes and the metrics, for a DataFrame.
py::dict row_of(const StepResult& r) {
  const ScenarioEcho& s = r.scenario;
  const StepTimeBreakdown& b = r.breakdown;
  py::dict d;
  d["cluster"] = s.cluster;
  d["nodes"] = s.nodes;
  d["gpus"] = s.world_size;
  d["nics_per_node"] = s.nics_per_node;
  d["nic_gbps"] = s.nic_gbps;
  d["fabric"] = s.fabric;
  d["oversubscription"] = s.oversubscription;
  d["model"] = s.model.name;
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

// The scenario a result echoes: its model and strategy.
void bind_scenario_types(py::module_& m) {
  py::class_<ModelShape>(m, "ModelShape")
      .def_readonly("name", &ModelShape::name)
      .def_readonly("family", &ModelShape::family)
      .def_readonly("layers", &ModelShape::layers)
      .def_readonly("hidden", &ModelShape::hidden)
      .def_readonly("heads", &ModelShape::heads)
      .def_readonly("kv_heads", &ModelShape::kv_heads)
      .def_readonly("ffn", &ModelShape::ffn)
      .def_readonly("vocab", &ModelShape::vocab)
      .def_readonly("seq", &ModelShape::seq)
      .def_readonly("flash_attention", &ModelShape::flash_attention);
  py::class_<Strategy>(m, "Strategy")
      .def_property_readonly("name", &Strategy::name)
      .def_readonly("qwz", &Strategy::qwz)
      .def_readonly("hpz", &Strategy::hpz)
      .def_readonly("qgz", &Strategy::qgz)
      .def_readonly("hpz_size", &Strategy::hpz_size)
      .def_readonly("weight_bits", &Strategy::weight_bits)
      .def_readonly("grad_bits", &Strategy::grad_bits)
      .def_readonly("overlap_comm", &Strategy::overlap_comm)
      .def_readonly("reduce_bucket_elems", &Strategy::reduce_bucket_elems)
      .def_readonly("prefetch_bucket_elems", &Strategy::prefetch_bucket_elems)
      .def_readonly("max_live_params", &Strategy::max_live_params)
      .def_readonly("dtype", &Strategy::dtype)
      .def_readonly("source", &Strategy::source);
  py::class_<ScenarioEcho>(m, "Scenario")
      .def_readonly("cluster", &ScenarioEcho::cluster)
      .def_readonly("node_type", &ScenarioEcho::node_type)
      .def_readonly("gpu_model", &ScenarioEcho::gpu_model)
      .def_readonly("nodes", &ScenarioEcho::nodes)
      .def_readonly("gpus_per_node", &ScenarioEcho::gpus_per_node)
      .def_readonly("world_size", &ScenarioEcho::world_size)
      .def_readonly("nics_per_node", &ScenarioEcho::nics_per_node)
      .def_readonly("nic_gbps", &ScenarioEcho::nic_gbps)
      .def_readonly("fabric", &ScenarioEcho::fabric)
      .def_readonly("oversubscription", &ScenarioEcho::oversubscription)
      .def_readonly("model", &ScenarioEcho::model)
      .def_readonly("params", &ScenarioEcho::params)
      .def_readonly("strategy", &ScenarioEcho::strategy)
      .def_readonly("tokens_per_gpu", &ScenarioEcho::tokens_per_gpu)
      .def_readonly("seq_len", &ScenarioEcho::seq_len)
      .def_readonly("micro_batch_sequences", &ScenarioEcho::micro_batch_sequences)
      .def_readonly("grad_accum", &ScenarioEcho::grad_accum)
      .def_readonly("activation_checkpointing", &ScenarioEcho::activation_checkpointing)
      .def_readonly("attention", &ScenarioEcho::attention)
      .def_readonly("prefetch_depth", &ScenarioEcho::prefetch_depth)
      .def_readonly("profile_name", &ScenarioEcho::profile_name)
      .def_readonly("profile_status", &ScenarioEcho::profile_status)
      .def_readonly("tier", &ScenarioEcho::tier);
}

// Where the step's time goes: compute, exposed communication and offloading.
void bind_time_types(py::module_& m) {
  py::class_<ExposedComm>(m, "ExposedComm")
      .def_readonly("all_gather_s", &ExposedComm::all_gather_s)
      .def_readonly("reduce_scatter_s", &ExposedComm::reduce_scatter_s)
      .def_readonly("all_to_all_s", &ExposedComm::all_to_all_s)
      .def_readonly("all_reduce_s", &ExposedComm::all_reduce_s)
      .def_readonly("total_s", &ExposedComm::total_s);
  py::class_<StepTimeBreakdown>(m, "StepTimeBreakdown")
      .def_readonly("compute_s", &StepTimeBreakdown::compute_s)
      .def_readonly("recompute_s", &StepTimeBreakdown::recompute_s)
      .def_readonly("optimizer_s", &StepTimeBreakdown::optimizer_s)
      .def_readonly("param_fetch_s", &StepTimeBreakdown::param_fetch_s)
      .def_readonly("quant_kernels_s", &StepTimeBreakdown::quant_kernels_s)
      .def_readonly("other_kernels_s", &StepTimeBreakdown::other_kernels_s)
      .def_readonly("exposed_comm", &StepTimeBreakdown::exposed_comm)
      .def_readonly("exposed_kernels_s", &StepTimeBreakdown::exposed_kernels_s)
      .def_readonly("idle_s", &StepTimeBreakdown::idle_s)
      // compute + recompute by kernel class, as the JSON's compute_kernels_s: a dict of seconds.
      .def_property_readonly("compute_kernels_s",
                             [](const StepTimeBreakdown& b) {
                               const ComputeTerms& k = b.compute_kernels;
                               py::dict d;
                               d["gemm"] = k.gemm_s;
                               d["attention"] = k.attention_s;
                               for (int c = 0; c < kMemoryKernelCount; ++c)
                                 d[to_string(static_cast<MemoryKernel>(c))] =
                                     k.memory_s[static_cast<std::size_t>(c)];
                               d["launch"] = k.launch_s;
                               return d;
                             })
      .def_readonly("offload_copy_s", &StepTimeBreakdown::offload_copy_s)
      .def_readonly("nvme_io_s", &StepTimeBreakdown::nvme_io_s)
      .def_readonly("host_optimizer_s", &StepTimeBreakdown::host_optimizer_s)
      .def_readonly("exposed_offload_s", &StepTimeBreakdown::exposed_offload_s);
  py::class_<OffloadResult>(m, "OffloadResult")
      .def_readonly("h2d_bytes_per_gpu", &OffloadResult::h2d_bytes_per_gpu)
      .def_readonly("d2h_bytes_per_gpu", &OffloadResult::d2h_bytes_per_gpu)
      .def_readonly("nvme_read_bytes_per_gpu", &OffloadResult::nvme_read_bytes_per_gpu)
      .def_readonly("nvme_write_bytes_per_gpu", &OffloadResult::nvme_write_bytes_per_gpu)
      .def_readonly("pcie_Bps", &OffloadResult::pcie_Bps)
      .def_readonly("host_adam_params_per_s", &OffloadResult::host_adam_params_per_s)
      .def_readonly("nvme_Bps_per_node", &OffloadResult::nvme_Bps_per_node)
      .def_readonly("host_bytes_per_node", &OffloadResult::host_bytes_per_node)
      .def_readonly("host_capacity_bytes_per_node", &OffloadResult::host_capacity_bytes_per_node)
      .def_readonly("nvme_bytes_per_node", &OffloadResult::nvme_bytes_per_node);
}

// The step's communication and memory.
void bind_comm_memory_types(py::module_& m) {
  py::class_<CommTotals>(m, "CommTotals")
      .def_readonly("inter_node_bytes", &CommTotals::inter_node_bytes)
      .def_readonly("intra_node_bytes", &CommTotals::intra_node_bytes)
      .def_readonly("count", &CommTotals::count)
      .def_readonly("busy_s", &CommTotals::busy_s);
  py::class_<CommResult>(m, "CommResult")
      .def_readonly("inter_node_bytes", &CommResult::inter_node_bytes)
      .def_readonly("intra_node_bytes", &CommResult::intra_node_bytes)
      .def_readonly("by_collective", &CommResult::by_collective)
      .def_readonly("by_phase", &CommResult::by_phase)
      .def_readonly("collectives", &CommResult::collectives)
      .def_readonly("flows", &CommResult::flows);
  py::class_<MemoryEstimate>(m, "MemoryEstimate")
      .def_readonly("peak_bytes_per_gpu", &MemoryEstimate::peak_bytes)
      .def_readonly("capacity_bytes", &MemoryEstimate::capacity_bytes)
      .def_readonly("fits", &MemoryEstimate::fits)
      .def_readonly("components", &MemoryEstimate::components);
}

// The types of a result's fields, registered before StepResult so that its signatures name them.
void bind_result_types(py::module_& m) {
  bind_scenario_types(m);
  bind_time_types(m);
  bind_comm_memory_types(m);
  py::class_<StepResult>(m, "StepResult")
      .def_readonly("schema_version", &StepResult::schema_version)
      .def_readonly("scenario", &StepResult::scenario)
      .def_readonly("step_time_s", &StepResult::step_time_s)
      .def_readonly("tflops_per_gpu", &StepResult::tflops_per_gpu)
      .def_readonly("tokens_per_s", &StepResult::tokens_per_s)
      .def_readonly("model_flops_per_step", &StepResult::model_flops_per_step)
      .def_readonly("counted_flops_per_step", &StepResult::counted_flops_per_step)
      .def_readonly("counted_tflops_per_gpu", &StepResult::counted_tflops_per_gpu)
      .def_readonly("mfu_flops_per_step", &StepResult::mfu_flops_per_step)
      .def_readonly("peak_tflops_per_gpu", &StepResult::peak_tflops_per_gpu)
      .def_readonly("mfu", &StepResult::mfu)
      .def_readonly("hfu", &StepResult::hfu)
      .def_readonly("breakdown", &StepResult::breakdown)
      .def_readonly("comm", &StepResult::comm)
      .def_readonly("memory", &StepResult::memory)
      .def_readonly("warnings", &StepResult::warnings)
      .def_readonly("engine_events", &StepResult::engine_events)
      .def_property_readonly(
          "offload",
          [](const StepResult& r) -> std::optional<OffloadResult> {
            if (!r.has_offload) return std::nullopt;
            return r.offload;
          },
          "ZeRO-Offload's bytes, rates and host memory (None when nothing is offloaded)")
      .def(
          "to_json", [](const StepResult& r, int indent) { return to_json(r).dump(indent); },
          py::arg("indent") = 2, "the result document of docs/result-schema.json (--json's text)")
      .def("row", &row_of, "one flat row of the result (a dict)")
      .def("__eq__", [](const StepResult& a, const StepResult& b) { return a == b; });
}

}  // namespace

PYBIND11_MODULE(zerosim, m) {
  m.doc() = "zerosim: ZeRO-3 / ZeRO++ training-step simulator (the C++ library's typed API)";
  // pybind11's translator type takes the exception_ptr by value.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  bind_result_types(m);
  m.attr("RESULT_SCHEMA_VERSION") = kResultSchemaVersion;
  m.attr("__version__") = ZEROSIM_VERSION;
  m.def(
      "simulate",
      [](const py::kwargs& kwargs) {
        const std::vector<Scenario> one = scenarios_of(kwargs, false);
        py::gil_scoped_release release;
        return simulate(one.at(0));
      },
      "simulate(cluster=..., nodes=..., model=..., strategy=..., ...): one step's StepResult; "
      "keywords are `zerosim simulate` flags with '_' for '-'");
  m.def(
      "sweep",
      [](const py::kwargs& kwargs) {
        int threads = 0;
        py::kwargs axes;
        for (const auto& [k, v] : kwargs) {
          if (k.cast<std::string>() == "threads")
            threads = v.cast<int>();
          else
            axes[k] = v;
        }
        const std::vector<Scenario> scenarios = scenarios_of(axes, true);
        std::vector<std::size_t> all(scenarios.size());
        for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
        std::vector<std::optional<StepResult>> results;
        {
          py::gil_scoped_release release;
          sweep::RunOptions options;
          options.threads = threads;
          results = sweep::run_scenarios(scenarios, all, sweep::simulate_runner(), options);
        }
        py::list rows;
        for (const auto& r : results) rows.append(row_of(*r));
        return rows;
      },
      "sweep(threads=0, **lists): the cartesian product of keyword lists, one flat row per "
      "scenario in `zerosim sweep`'s order (pandas.DataFrame(rows) takes it)");
}
