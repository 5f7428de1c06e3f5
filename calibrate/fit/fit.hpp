// Fitting calibration measurements into a CostProfile. Every fit minimizes RELATIVE error, because
// collective and kernel times span six orders of magnitude (bytes to GiB) and an absolute
// least-squares fit would ignore the latency-bound sizes:  minimize sum_i ((a + b*x_i - t_i) /
// t_i)^2,  a >= 0, b >= 0. Collectives: the NCCL model's parameters (link efficiencies,
// per-protocol hop latencies, launch, per-peer and NVLS costs; collective_fit.hpp), every record
// simulated on the cluster it ran on. Kernels: time = launch + bytes/throughput. GEMMs:
// achieved/peak efficiency by FLOP count, averaged per half decade of FLOPs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/fit/collective_fit.hpp"
#include "calibrate/fit/measurements.hpp"
#include "sim/profile/cost_profile.hpp"

namespace zerosim::calib {

struct LinearFit {
  double a = 0;            // intercept (s)
  double b = 0;            // slope (s per byte)
  double sse = 0;          // sum of squared relative errors over the points fitted
  double max_rel_err = 0;  // worst |predicted - measured| / measured
};

// Weighted least squares on relative error with a >= 0 and b >= 0 (a constrained refit when the
// free solution leaves the feasible region). One point: a = 0, b = t/x. Throws
// std::invalid_argument when empty or when any t <= 0.
LinearFit fit_relative(const std::vector<double>& x, const std::vector<double>& t);

struct FitOptions {
  std::string cluster;  // preset or topology file the collective records ran on
  std::string name;     // output profile name ("" = base name + "-measured")
  std::string command;  // recorded in provenance
  CollectiveLoss loss = CollectiveLoss::Cauchy;  // of the collective records' fit
  FitProgress progress;  // one line per iteration of the collective fit (empty: silent)
};

struct PointReport {
  std::string what;   // "all_gather/intra_node ranks=8 nodes=1" or "kernel quantize_int8" or "gemm"
  std::string where;  // file:line of the record
  double x = 0;       // bytes or FLOPs
  double measured_s = 0;
  double predicted_s = 0;
  double rel_err() const { return (predicted_s - measured_s) / measured_s; }
};

struct FitResult {
  CostProfile profile;
  std::vector<PointReport> points;   // every record with its fit error, in input order per group
  std::vector<std::string> summary;  // one line per fitted parameter / kernel / GEMM curve
  std::vector<CollectiveParam> collective_params;  // the collective model's, fitted
};

// Fits everything in `m` over `base` (parameters without measurements keep the base's values and
// sources). Throws InputError("<measurements>", ...) when nothing can be fitted or a GEMM
// efficiency exceeds 1.
FitResult fit_profile(const Measurements& m, const CostProfile& base, const FitOptions& opt);

}  // namespace zerosim::calib
