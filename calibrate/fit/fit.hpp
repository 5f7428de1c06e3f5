// Fitting calibration measurements into a CostProfile. Every fit minimizes RELATIVE error, because
// collective and kernel times span six orders of magnitude (bytes to GiB) and an absolute least-squares
// fit would ignore the latency-bound sizes:  minimize sum_i ((a + b*x_i - t_i) / t_i)^2,  a >= 0, b >= 0.
// Collectives: time = alpha + bus_factor*bytes/busbw, piecewise in bytes where NCCL switches protocol
// (LL -> LL128 -> Simple); the number of segments is the smallest (up to max_segments) whose worst point
// is within `tolerance`, and the breakpoints minimize the total squared relative error (exact dynamic
// programming over all splits between measured sizes). Kernels: time = launch + bytes/throughput.
// GEMMs: achieved/peak efficiency by FLOP count, averaged per half decade of FLOPs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/fit/measurements.hpp"
#include "sim/profile/cost_profile.hpp"

namespace zerosim::calib {

struct LinearFit {
  double a = 0;  // intercept (s)
  double b = 0;  // slope (s per byte)
  double sse = 0;           // sum of squared relative errors over the points fitted
  double max_rel_err = 0;   // worst |predicted - measured| / measured
};

// Weighted least squares on relative error with a >= 0 and b >= 0 (a constrained refit when the free
// solution leaves the feasible region). One point: a = 0, b = t/x. Throws std::invalid_argument when
// empty or when any t <= 0.
LinearFit fit_relative(const std::vector<double>& x, const std::vector<double>& t);

struct PiecewiseFit {
  std::vector<std::uint64_t> min_bytes;  // segment i applies from min_bytes[i]; min_bytes[0] == 0
  std::vector<LinearFit> segments;
  double predict(double x) const;
};

struct PiecewiseOptions {
  int max_segments = 3;
  int min_points = 3;        // per segment (segments never split points of equal x)
  double tolerance = 0.05;   // accept the fewest segments whose worst relative error is within this
};

// x need not be sorted; points are sorted by x (stable) inside.
PiecewiseFit fit_piecewise(const std::vector<double>& x, const std::vector<double>& t,
                           const PiecewiseOptions& opt = {});

// Busbw above this is treated as "latency only" (a segment whose time does not grow with bytes).
constexpr double kMaxBusbwBps = 1e15;

struct FitOptions {
  PiecewiseOptions piecewise;
  std::string name;        // output profile name ("" = base name + "-measured")
  std::string command;     // recorded in provenance
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
  std::vector<PointReport> points;       // every record with its fit error, in input order per group
  std::vector<std::string> summary;      // one line per fitted curve / kernel / GEMM curve
};

// Fits everything in `m` over `base` (parameters without measurements keep the base's values and sources).
// Throws InputError("<measurements>", ...) when nothing can be fitted or a GEMM efficiency exceeds 1.
FitResult fit_profile(const Measurements& m, const CostProfile& base, const FitOptions& opt);

}  // namespace zerosim::calib
