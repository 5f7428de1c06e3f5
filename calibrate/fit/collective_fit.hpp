// Fitting the NCCL collective model (sim/collectives/nccl_model.hpp) to measured collectives:
// every record (nccl-tests row or harness measurement) is simulated on the named cluster with the
// record's nodes and ranks per node, and the profile parameters that price collectives are moved by
// Levenberg-Marquardt to minimize a loss of the relative time errors (Cauchy by default: rows of a
// regime the model lacks weigh little; or plain squares). Each parameter has a physical meaning and
// a plausible range (the fit cannot leave it; a value at a bound is reported); one the records do
// not inform stays at the base profile's value (a weak prior towards it).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "calibrate/fit/measurements.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/profile/cost_profile.hpp"

namespace zerosim::calib {

struct CollectiveParam {
  std::string key;        // profile JSON path, e.g. "link_classes/network/efficiency"
  std::string meaning;    // what it stands for physically
  double lo = 0, hi = 0;  // plausible range (profile units: us, fraction)
  double base = 0, value = 0;
  bool informed = false;   // some record's prediction moves with it
  bool at_bound = false;   // the fit ended within 1% of the range's width from a bound
  double sensitivity = 0;  // mean |relative change| of the predictions, -10% or +10%
};

// The parameters `calibrate fit` may move, with their ranges, and their values in p; the LL and
// LL128 hop latencies only with small_records (some record of at most 4 MiB).
std::vector<CollectiveParam> collective_params(const CostProfile& p, bool small_records = true);
// p with the parameters' values set.
void set_collective_params(CostProfile& p, const std::vector<CollectiveParam>& params);

// The op a record measured: nccl-tests' ranks (the first ppn GPUs of every one of its nodes; a
// send_recv ring of pairs), its op and bytes, on topo (a cluster of the record's node count).
CollectiveOp record_op(const CollectiveRecord& r, const Topology& topo);
// The cluster a record ran on: `cluster` (preset or file) with the record's node count.
Topology record_cluster(const CollectiveRecord& r, const std::string& cluster);
// Simulated time of a record under profile (analytic tier: one collective on an idle network).
double predict_record(const CollectiveRecord& r, const std::string& cluster,
                      const CostProfile& profile);

// How each record's relative time error e enters the fit's cost. Squared: e^2, least squares (the
// fit to describe the records themselves). Cauchy: s^2 ln(1 + (e/s)^2) with s = kCauchyScale,
// like e^2 for small errors, growing only logarithmically beyond s, so a few records of a regime
// the model does not have (an algorithm switch, a log artefact) cannot pull the parameters that
// every other record determines (the fit to predict other configurations).
enum class CollectiveLoss { Cauchy, Squared };
inline constexpr double kCauchyScale = 0.1;  // relative error beyond which a record weighs less
// "cauchy" | "squared"; InputError naming --loss otherwise.
CollectiveLoss parse_collective_loss(const std::string& s);
const char* collective_loss_name(CollectiveLoss l);

// Two fitted parameters the records determine only together: the correlation of their estimates
// (from the records' log-time Jacobian at the fitted point) is at least kConfounded in magnitude,
// so the records fix a combination of them (say, a per-call cost plus a multiple of a per-step
// one) and not each; predictions for other shapes (node counts, sizes) can then be far off
// although the records are met.
struct ConfoundedPair {
  std::string a, b;  // parameter keys, in collective_params order
  double correlation = 0;
};
inline constexpr double kConfounded = 0.98;

struct CollectiveFit {
  CostProfile profile;
  std::vector<CollectiveParam> params;
  std::vector<ConfoundedPair> confounded;  // informed parameters only
  std::vector<double> predicted_s;         // per record, in input order
  double mean_abs_rel_err = 0, worst_abs_rel_err = 0;
  int iterations = 0;
};

// Told one line per iteration of the search (where it stands); may be empty.
using FitProgress = std::function<void(const std::string&)>;

// Fits base's collective parameters to records on `cluster`. InputError when a record cannot run
// on the cluster (more ranks per node than it has, nodes beyond the builder's limits).
CollectiveFit fit_collectives(const std::vector<CollectiveRecord>& records, const CostProfile& base,
                              const std::string& cluster,
                              CollectiveLoss loss = CollectiveLoss::Cauchy,
                              const FitProgress& progress = {});

}  // namespace zerosim::calib
