// plan(): the planner's search (sim/plan/planner.hpp) as `zerosim plan` runs it, its ranked
// candidates as Python objects, its document, table and DeepSpeed config.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "python/bindings.hpp"
#include "python/py_keywords.hpp"
#include "python/py_types.hpp"
#include "sim/plan/planner.hpp"
#include "sim/step/scenario_schema.hpp"
#include "sim/topology/cluster_shape.hpp"
#include "sim/topology/topology.hpp"
#include "sim/workload/model.hpp"

namespace zerosim::python {

namespace {

// A sequence keyword: a list or tuple (a single value is a list of one), not empty.
py::list items_of(py::handle v, const char* kw) {
  py::list items;
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    for (const auto& x : v) items.append(x);
  } else {
    items.append(v);
  }
  if (items.empty()) throw py::value_error(fmt::format("{} is an empty list", kw));
  return items;
}

std::vector<int> bits_of(py::handle v, const char* kw) {
  std::vector<int> out;
  for (const auto& x : items_of(v, kw)) {
    if (!is_int(x) || (x.cast<long long>() != 4 && x.cast<long long>() != 8))
      throw py::value_error(
          fmt::format("{} must hold 4 or 8 (the kernels' bits), got {}", kw, repr_of(x)));
    out.push_back(x.cast<int>());
  }
  return out;
}

std::vector<bool> checkpointing_of(py::handle v) {
  std::vector<bool> out;
  for (const auto& x : items_of(v, "activation_checkpointing")) {
    if (!py::isinstance<py::bool_>(x))
      throw py::value_error(
          fmt::format("activation_checkpointing must hold True or False, got {}", repr_of(x)));
    if (std::find(out.begin(), out.end(), x.cast<bool>()) == out.end())
      out.push_back(x.cast<bool>());
  }
  return out;
}

// The request of plan()'s keywords: the cluster and model ones by the scenario schema's rules.
plan::PlanRequest request_of(const py::dict& kw) {
  py::dict scenario;
  for (const char* k : {"cluster", "nodes", "nics_per_node", "nic_gbps", "fabric",
                        "oversubscription", "model", "profile", "seq_len", "attention", "sm_share"})
    if (kw.contains(k)) scenario[k] = kw[k];
  const Scenario s = scenario_of(scenario, "plan");
  plan::PlanRequest q;
  q.base.cluster = s.cluster;
  q.base.nodes = s.nodes;
  q.base.nics_per_node = s.nics_per_node;
  q.base.nic_gbps = s.nic_gbps;
  q.base.fabric = s.fabric;
  q.base.oversubscription = s.oversubscription;
  q.base.model = s.model;
  q.base.profile = s.profile;
  q.base.attention = s.attention;
  q.base.sm_share = s.sm_share;
  q.base.seq_len = s.seq_len;  // 0: the model's (ClusterShape::seq_len below)
  if (!kw["global_batch"].is_none())
    q.global_batch = int_in(kw["global_batch"], "global_batch", 1, 1LL << 40);
  q.micro_batches.clear();
  for (const auto& x : items_of(kw["micro_batches"], "micro_batches"))
    q.micro_batches.push_back(static_cast<int>(int_in(x, "micro_batches", 1, 1'000'000'000)));
  q.qwz_bits = bits_of(kw["qwz_bits"], "qwz_bits");
  q.qgz_bits = bits_of(kw["qgz_bits"], "qgz_bits");
  q.checkpointing = checkpointing_of(kw["activation_checkpointing"]);
  q.confirm_top = static_cast<int>(int_in(kw["confirm"], "confirm", 0, 10000));
  q.threads = static_cast<int>(int_in(kw["threads"], "threads", 0, 4096));
  return q;
}

Plan run(const py::dict& kw) {
  plan::PlanRequest q = request_of(kw);
  Plan p;
  py::gil_scoped_release release;
  // A builder preset's shape without its graph; an explicit graph's once it is read. Past a
  // plan's limit the cluster is refused unbuilt, as by `zerosim plan`.
  const ClusterOverrides overrides{q.base.nodes,  q.base.nics_per_node,    q.base.nic_gbps,
                                   q.base.fabric, q.base.oversubscription, plan_max_gpus(),
                                   "a plan"};
  std::optional<ClusterShape> shape = builder_shape(q.base.cluster, overrides);
  if (!shape) shape = shape_of(load_cluster(q.base.cluster, overrides));
  p.shape = {shape->nodes, shape->gpus_per_node,
             q.base.seq_len > 0 ? q.base.seq_len : load_model(q.base.model).seq};
  q.base.seq_len = 0;  // as `zerosim plan`: the search sets each candidate's from the shape
  p.result = plan::run_plan(q, p.shape, sweep::simulate_runner());
  return p;
}

const plan::Candidate& candidate_at(const Plan& p, std::size_t i) {
  if (i >= p.result.ranked.size())
    throw py::index_error(
        fmt::format("the plan ranks {} configurations, not {}", p.result.ranked.size(), i + 1));
  return p.result.ranked[i];
}

std::string candidate_repr(const plan::Candidate& c) {
  return fmt::format(
      "Candidate({}, micro_batch={}, step_time_s={:.4f}, tokens_per_s={:.6g}, "
      "peak={:.2f} GiB{})",
      plan::describe(c), c.micro_batch, c.step_time_s(), c.tokens_per_s(),
      c.peak_bytes() / (1ull << 30), c.confirmed ? ", flow tier" : "");
}

std::string plan_repr(const Plan& p) {
  const auto& r = p.result;
  if (r.ranked.empty()) return fmt::format("Plan(nothing fits of {} configurations)", r.enumerated);
  return fmt::format("Plan({} of {} configurations fit; winner: {})", r.ranked.size(), r.enumerated,
                     candidate_repr(r.ranked.at(r.recommended.value_or(0))));
}

void bind_candidate(py::module_& m) {
  using C = plan::Candidate;
  py::class_<C>(m, "Candidate", "One configuration of a plan and its simulated step")
      .def_property_readonly("description", &plan::describe,
                             "e.g. 'ZeRO++ (hpZ 8, qwZ INT8, qgZ INT4)'")
      .def_readonly("micro_batch", &C::micro_batch, "sequences per GPU per micro-step")
      .def_readonly("confirmed", &C::confirmed, "the result is from the flow tier")
      .def_readonly("result", &C::result, "its StepResult")
      .def_readonly("techniques", &C::techniques, "ZeRO++ components on")
      .def_property_readonly("step_time_s", &C::step_time_s, "its step time (s)")
      .def_property_readonly("tokens_per_s", &C::tokens_per_s, "its throughput")
      .def_property_readonly("peak_bytes", &C::peak_bytes, "its peak GPU memory per GPU")
      .def("__repr__", &candidate_repr);
}

}  // namespace

void bind_plan(py::module_& m) {
  bind_candidate(m);
  py::class_<Plan>(m, "Plan", "The planner's ranking: what fits, best first")
      .def_property_readonly(
          "ranked", [](const Plan& p) { return p.result.ranked; },
          "the Candidates that fit, confirmed on the flow tier first, best first")
      .def_property_readonly(
          "winner",
          [](const Plan& p) -> std::optional<plan::Candidate> {
            if (!p.result.recommended) return std::nullopt;
            return p.result.ranked.at(*p.result.recommended);
          },
          "the recommended Candidate, the decision `zerosim plan` and report() make: the fastest, "
          "or the fastest of those with fewer ZeRO++ techniques within 2% of it (None when "
          "nothing fits)")
      .def_property_readonly(
          "pareto",
          [](const Plan& p) {
            std::vector<plan::Candidate> front;
            for (std::size_t i : p.result.pareto) front.push_back(p.result.ranked.at(i));
            return front;
          },
          "the memory/throughput Pareto front, memory ascending")
      .def_property_readonly(
          "closest", [](const Plan& p) { return p.result.closest; },
          "of the configurations that do not fit, the one needing least memory")
      .def_property_readonly(
          "notes", [](const Plan& p) { return p.result.notes; }, "search-space decisions")
      .def_property_readonly(
          "enumerated", [](const Plan& p) { return p.result.enumerated; },
          "configurations searched")
      .def_property_readonly(
          "infeasible", [](const Plan& p) { return p.result.infeasible; },
          "configurations that do not fit")
      .def(
          "deepspeed_config",
          [](const Plan& p, std::optional<std::size_t> rank) {
            if (!rank && !p.result.recommended_deepspeed)
              throw py::value_error("no DeepSpeed configuration fits: it has no DeepSpeed config");
            const std::size_t i = rank ? *rank : *p.result.recommended_deepspeed;
            return to_python(plan::deepspeed_config(candidate_at(p, i), p.shape));
          },
          py::arg("rank") = py::none(),
          "The DeepSpeed config (a dict) that runs ranked[rank] (default: the recommended "
          "DeepSpeed configuration), as `zerosim plan --emit-deepspeed` writes it")
      .def(
          "to_dict", [](const Plan& p) { return to_python(plan::plan_document(p.result)); },
          "The plan document (`zerosim plan --json`), which report() reads")
      .def(
          "render", [](const Plan& p, std::size_t top) { return plan::render_plan(p.result, top); },
          py::arg("top") = 10, "The CLI's table of the top configurations")
      .def("__str__", [](const Plan& p) { return plan::render_plan(p.result, 10); })
      .def("__repr__", &plan_repr);
  m.def("_plan", &run, py::arg("kwargs"), "plan()'s implementation: use plan()");
}

}  // namespace zerosim::python
