// qgZ end to end on W = Y x N virtual ranks (CPU): swizzle + INT4 quantize, intra-node all-to-all
// (buffer copies), dequantize-reduce-requantize, inter-node all-to-all among same-local-index GPUs,
// final dequantize-reduce. Every rank must end with ITS OWN partition of the true reduce-scatter
// (sum, or mean = sum / W) within the error bound its quantization steps imply; without the
// reordering step the ranks end with other partitions and the check must fail.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel_test_util.hpp"
#include "kernels/quantize.hpp"

using namespace zerosim::kernels;
using zerosim::kernels::testing::make_tensor;
using zerosim::kernels::testing::QBuf;
using zerosim::kernels::testing::random_normal;
using zerosim::kernels::testing::roundtrip_bound;
using zerosim::kernels::testing::Tensor;

namespace {

struct Result {
  std::vector<std::vector<float>> out;     // per rank: n / W values
  std::vector<std::vector<double>> bound;  // per rank: allowed |out - truth| per element
};

// Copies `units` consecutive units starting at unit `first` of src into dst at unit `at`.
void copy_units(const QBuf& src, std::size_t first, std::size_t units, QBuf& dst, std::size_t at,
                std::size_t unit_bytes, std::size_t unit_blocks) {
  std::copy_n(src.data.begin() + std::ptrdiff_t(first * unit_bytes), units * unit_bytes,
              dst.data.begin() + std::ptrdiff_t(at * unit_bytes));
  std::copy_n(src.scales.begin() + std::ptrdiff_t(first * unit_blocks), units * unit_blocks,
              dst.scales.begin() + std::ptrdiff_t(at * unit_blocks));
}

Result run_qgz(const std::vector<Tensor>& grads, std::size_t n, const QgzShape& s,
               const QuantParams& p, float post_scale, bool reorder) {
  const std::size_t Y = s.nodes, N = s.gpus_per_node, S = s.pipeline_slices, W = Y * N;
  const std::size_t U = qgz_unit_elements(n, s);
  QuantParams pu = p;
  pu.segment = U;
  const std::size_t ub = quantized_bytes(U, pu), bpu = num_blocks(U, pu);
  const double qmax = p.bits == 8 ? 127.0 : 7.0;

  // Step 1 on every rank: reorder + quantize (or, as the negative control, quantize in place).
  std::vector<QBuf> send;
  for (std::size_t r = 0; r < W; ++r) {
    send.emplace_back(n, pu);
    if (reorder) {
      qgz_swizzle_quantize(grads[r].bytes.data(), grads[r].type, n, s, p, send[r].ref());
    } else {
      quantize(grads[r].bytes.data(), grads[r].type, n, pu, send[r].ref());
    }
  }

  Result res;
  res.out.assign(W, std::vector<float>(n / W));
  res.bound.assign(W, std::vector<double>(n / W, 0.0));
  std::vector<double> abs_terms(W * (n / W), 0.0);
  for (std::size_t st = 0; st < S; ++st) {
    // Hop 1: rank (y, j) receives units (st, j, 0..Y-1) from each local GPU i of node y.
    std::vector<QBuf> mid;
    for (std::size_t r = 0; r < W; ++r) {
      const std::size_t y = r / N, j = r % N;
      std::vector<QBuf> recv;
      std::vector<QuantizedCRef> refs;
      for (std::size_t i = 0; i < N; ++i) {
        recv.emplace_back(Y * U, pu);
        copy_units(send[y * N + i], (st * N + j) * Y, Y, recv.back(), 0, ub, bpu);
      }
      for (const auto& b : recv) refs.push_back(b.cref());
      mid.emplace_back(Y * U, pu);
      dequant_reduce_quantize(refs.data(), N, Y * U, pu, mid.back().ref());
    }
    // Hop 2: rank (y, j) receives unit y from rank (y2, j) of every node y2.
    for (std::size_t r = 0; r < W; ++r) {
      const std::size_t y = r / N, j = r % N;
      std::vector<QBuf> recv;
      std::vector<QuantizedCRef> refs;
      for (std::size_t y2 = 0; y2 < Y; ++y2) {
        recv.emplace_back(U, pu);
        copy_units(mid[y2 * N + j], y, 1, recv.back(), 0, ub, bpu);
      }
      for (const auto& b : recv) refs.push_back(b.cref());
      dequant_reduce(refs.data(), Y, U, pu, post_scale, res.out[r].data() + st * U, DType::kF32);

      // Bound for element e of this sub-slice: each of the W source quantizations and the Y
      // requantizations contributes its round-trip bound (amax = scale * qmax), and the FP32 sums
      // of W + Y terms add at most (W + Y + 2) * 2^-24 of the sum of the terms' magnitudes.
      for (std::size_t e = 0; e < U; ++e) {
        const std::size_t blk = e / p.block_size;
        double b = 0.0, mags = 0.0;
        for (std::size_t y2 = 0; y2 < Y; ++y2) {
          for (std::size_t i = 0; i < N; ++i) {
            const double sc = send[y2 * N + i].scales[((st * N + j) * Y + y) * bpu + blk];
            b += roundtrip_bound(sc, sc * qmax);
            mags += sc * qmax;
          }
          const double sc = mid[y2 * N + j].scales[y * bpu + blk];
          b += roundtrip_bound(sc, sc * qmax);
          mags += sc * qmax;
        }
        b += double(W + Y + 2) * std::ldexp(1.0, -24) * mags;
        res.bound[r][st * U + e] = b * post_scale;
      }
    }
  }
  return res;
}

// Elements of rank r's result outside the bound around partition `part` of the true result.
std::size_t violations(const std::vector<Tensor>& grads, std::size_t n, std::size_t W,
                       float post_scale, const Result& res, std::size_t r, std::size_t part) {
  std::size_t bad = 0;
  const std::size_t len = n / W;
  for (std::size_t e = 0; e < len; ++e) {
    double truth = 0.0;
    for (const auto& g : grads) truth += double(g.values[part * len + e]);
    truth *= double(post_scale);
    if (std::fabs(double(res.out[r][e]) - truth) > res.bound[r][e]) ++bad;
  }
  return bad;
}

}  // namespace

TEST_CASE("qgZ two-hop reduce-scatter leaves each rank its own partition (sum and mean)") {
  struct Case {
    QgzShape shape;
    std::size_t unit;        // elements per unit
    std::size_t block_size;  // quantization block
  };
  const std::vector<Case> cases = {
      {{2, 2, 1}, 300, 128},
      {{2, 4, 1}, 300, 128},
      {{4, 2, 1}, 300, 128},
      {{3, 4, 2}, 260, 64},
      {{2, 8, 1}, 200, 64},
      {{4, 4, 3}, 130, 32},
      {{2, 4, 1}, 5000, kDefaultBlockSize},  // default block size, partial last block
      {{1, 4, 1}, 100, 64},
      {{3, 1, 1}, 100, 64},  // one node / one GPU per node
  };
  for (const auto& c : cases) {
    const std::size_t W = c.shape.nodes * c.shape.gpus_per_node;
    const std::size_t n = W * c.shape.pipeline_slices * c.unit;
    std::vector<Tensor> grads;
    for (std::size_t r = 0; r < W; ++r) {
      grads.push_back(make_tensor(DType::kF16, random_normal(n, 0.01f * float(r + 1), 100 + r)));
    }
    QuantParams p;
    p.bits = 4;
    p.block_size = c.block_size;
    for (float post : {1.0f, 1.0f / float(W)}) {  // sum, then mean
      INFO("Y " << c.shape.nodes << " N " << c.shape.gpus_per_node << " S "
                << c.shape.pipeline_slices << " post_scale " << post);
      const Result good = run_qgz(grads, n, c.shape, p, post, /*reorder=*/true);
      for (std::size_t r = 0; r < W; ++r) CHECK(violations(grads, n, W, post, good, r, r) == 0);
      // Without the reordering, stage st of rank (y, j) receives natural unit
      // (st * N + j) * Y + y instead of its own r * S + st. With S = 1 that is all of partition
      // j * Y + y (within the same bound), another rank's partition whenever Y > 1 and N > 1.
      const Result bad = run_qgz(grads, n, c.shape, p, post, /*reorder=*/false);
      const std::size_t S = c.shape.pipeline_slices, N = c.shape.gpus_per_node;
      std::size_t misplaced = 0;
      for (std::size_t r = 0; r < W; ++r) {
        const std::size_t y = r / N, j = r % N;
        bool own = true;
        for (std::size_t st = 0; st < S; ++st)
          own = own && (st * N + j) * c.shape.nodes + y == r * S + st;
        if (S == 1) CHECK(violations(grads, n, W, post, bad, r, j * c.shape.nodes + y) == 0);
        if (!own) {
          ++misplaced;
          CHECK(violations(grads, n, W, post, bad, r, r) > 0);
        }
      }
      if (c.shape.nodes > 1 && c.shape.gpus_per_node > 1) CHECK(misplaced >= W / 2);
    }
  }
}

TEST_CASE("qgZ with INT8 and a BF16 gradient also lands within its bound") {
  const QgzShape shape{2, 4, 2};
  const std::size_t W = 8, n = W * 2 * 256;
  std::vector<Tensor> grads;
  for (std::size_t r = 0; r < W; ++r) {
    grads.push_back(make_tensor(DType::kBF16, random_normal(n, 1.0f, 300 + r)));
  }
  QuantParams p;
  p.bits = 8;
  p.block_size = 100;
  const Result res = run_qgz(grads, n, shape, p, 1.0f, true);
  for (std::size_t r = 0; r < W; ++r) CHECK(violations(grads, n, W, 1.0f, res, r, r) == 0);
}
