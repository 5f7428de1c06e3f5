// GPU kernels vs the CPU reference, bit for bit: quantized bytes, scales, offsets and dequantized
// values must be identical for every dtype, bit width, mode, odd size, segment and misaligned
// pointer (element-aligned but not 16-byte aligned, and at an odd byte address). Without a CUDA
// device the binary prints "SKIPPED: no CUDA device" and exits 77 (CTest SKIP_RETURN_CODE).
#define DOCTEST_CONFIG_IMPLEMENT
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/quant_math.hpp"
#include "kernels/quantize.hpp"
#include "kernels/quantize_cuda.hpp"

using namespace zerosim::kernels;

namespace {

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// A device buffer with a byte offset (to test misaligned starts) mirrored from/to the host.
struct DevBuf {
  void* base = nullptr;
  std::size_t offset = 0;
  DevBuf(std::size_t bytes, std::size_t off) : offset(off) {
    ck(cudaMalloc(&base, bytes + off + 16), "cudaMalloc");
    ck(cudaMemset(base, 0xCD, bytes + off + 16), "cudaMemset");
  }
  ~DevBuf() { cudaFree(base); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  template <class T = std::uint8_t>
  T* ptr() const {
    return reinterpret_cast<T*>(static_cast<std::uint8_t*>(base) + offset);
  }
  void upload(const void* src, std::size_t bytes) {
    ck(cudaMemcpy(ptr(), src, bytes, cudaMemcpyHostToDevice), "upload");
  }
  template <class T>
  std::vector<T> download(std::size_t count) const {
    std::vector<T> v(count);
    ck(cudaMemcpy(v.data(), ptr(), count * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return v;
  }
};

// A quantized tensor on the device.
struct DevQ {
  std::size_t n;
  QuantParams p;
  DevBuf data, scales, offsets;
  DevQ(std::size_t n_, const QuantParams& p_, std::size_t data_off)
      : n(n_),
        p(p_),
        data(quantized_bytes(n_, p_), data_off),
        scales(num_blocks(n_, p_) * 4, 0),
        offsets(num_blocks(n_, p_) * 4, 0) {}
  QuantizedRef ref() { return {data.ptr(), scales.ptr<float>(), offsets.ptr<float>()}; }
  QuantizedCRef cref() const { return {data.ptr(), scales.ptr<float>(), offsets.ptr<float>()}; }
};

struct HostQ {
  std::vector<std::uint8_t> data;
  std::vector<float> scales, offsets;
  HostQ(std::size_t n, const QuantParams& p)
      : data(quantized_bytes(n, p)), scales(num_blocks(n, p)), offsets(num_blocks(n, p)) {}
  QuantizedRef ref() { return {data.data(), scales.data(), offsets.data()}; }
  QuantizedCRef cref() const { return {data.data(), scales.data(), offsets.data()}; }
};

std::vector<std::uint8_t> bits_of(const std::vector<float>& v) {
  std::vector<std::uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

void check_same(const DevQ& d, const HostQ& h) {
  CHECK(d.data.download<std::uint8_t>(h.data.size()) == h.data);
  CHECK(bits_of(d.scales.download<float>(h.scales.size())) == bits_of(h.scales));
  if (d.p.asymmetric)
    CHECK(bits_of(d.offsets.download<float>(h.offsets.size())) == bits_of(h.offsets));
}

// Element-wise comparison of two outputs of type t: on a difference it reports how many elements
// differ and the first one's index and values (as floats and as raw bits), so a failure on the
// device says where the kernel and the reference part.
void check_same_output(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want,
                       DType t) {
  REQUIRE(got.size() == want.size());
  const std::size_t w = dtype_bytes(t), n = want.size() / w;
  std::size_t differing = 0, first = n;
  for (std::size_t i = 0; i < n; ++i)
    if (std::memcmp(&got[i * w], &want[i * w], w) != 0) {
      if (first == n) first = i;
      ++differing;
    }
  if (differing == 0) return;
  auto value = [&](const std::vector<std::uint8_t>& b) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &b[first * w], w);
    float f = 0;
    if (t == DType::kF32)
      std::memcpy(&f, &bits, 4);
    else if (t == DType::kF16)
      f = detail::f16_bits_to_f32(static_cast<std::uint16_t>(bits));
    else
      f = detail::bf16_bits_to_f32(static_cast<std::uint16_t>(bits));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g (0x%0*x)", static_cast<double>(f), int(2 * w), bits);
    return std::string(buf);
  };
  FAIL_CHECK(std::string(dtype_name(t))
             << " output: " << differing << " of " << n << " elements differ; first at " << first
             << ": device " << value(got) << ", reference " << value(want));
}

// Where a test buffer starts: 16-byte aligned, one element in, or one byte in (odd address).
enum class Start { Aligned, Element, Byte };
const char* start_name(Start s) {
  return s == Start::Aligned ? "aligned" : s == Start::Element ? "one element in" : "one byte in";
}
std::size_t offset_of(Start s, DType t) {
  return s == Start::Aligned ? 0 : s == Start::Element ? dtype_bytes(t) : 1;
}

// Raw input bytes of type t: normal values plus zeros, ties, huge and tiny magnitudes.
std::vector<std::uint8_t> make_input(DType t, std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<std::uint8_t> b(n * dtype_bytes(t));
  for (std::size_t i = 0; i < n; ++i) {
    float v = d(rng);
    if (i % 97 == 5) v = 0.0f;
    if (i % 89 == 7) v = -0.0f;
    if (i % 4099 == 11) v *= t == DType::kF16 ? 1e3f : 1e20f;
    if (i % 5003 == 13) v = t == DType::kF16 ? 3e-7f : 1e-39f;  // subnormal
    if (t == DType::kF32) {
      std::memcpy(&b[4 * i], &v, 4);
    } else {
      const std::uint16_t h =
          t == DType::kF16 ? detail::f32_to_f16_bits(v) : detail::f32_to_bf16_bits(v);
      std::memcpy(&b[2 * i], &h, 2);
    }
  }
  return b;
}

struct Config {
  DType t;
  int bits;
  bool asym;
  std::size_t block, segment, n;
};

std::vector<Config> configs() {
  std::vector<Config> cs;
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32})
    for (int bits : {8, 4})
      for (bool asym : {false, true}) {
        cs.push_back({t, bits, asym, kDefaultBlockSize, 0, 1 << 20});
        cs.push_back({t, bits, asym, 8192, 0, 100003});
        cs.push_back({t, bits, asym, 16384, 0, 40000});  // beyond the shared-memory cache
        cs.push_back({t, bits, asym, 6, 0, 1001});
        cs.push_back({t, bits, asym, 512, 1250, 10000});  // segments with a partial block
        cs.push_back({t, bits, asym, 4096, 0, 7});
      }
  return cs;
}

}  // namespace

TEST_CASE("GPU quantize and dequantize equal the CPU reference bit for bit") {
  for (const Config& c : configs()) {
    // Start offsets of every buffer: aligned, one element in, one byte in.
    for (const Start start : {Start::Aligned, Start::Element, Start::Byte}) {
      INFO(std::string(dtype_name(c.t))
           << " bits " << c.bits << " asym " << c.asym << " block " << c.block << " segment "
           << c.segment << " n " << c.n << " start " << start_name(start));
      QuantParams p;
      p.bits = c.bits;
      p.asymmetric = c.asym;
      p.block_size = c.block;
      p.segment = c.segment;
      const auto in = make_input(c.t, c.n, std::uint32_t(c.n + c.block));
      HostQ hq(c.n, p);
      quantize(in.data(), c.t, c.n, p, hq.ref());

      DevBuf din(in.size(), offset_of(start, c.t));
      din.upload(in.data(), in.size());
      DevQ dq(c.n, p, start == Start::Aligned ? 0 : 1);  // codes are bytes
      cuda::quantize(din.ptr(), c.t, c.n, p, dq.ref(), nullptr);
      ck(cudaDeviceSynchronize(), "quantize");
      check_same(dq, hq);

      for (DType out_t : {DType::kF32, DType::kF16, DType::kBF16}) {
        std::vector<std::uint8_t> want(c.n * dtype_bytes(out_t));
        dequantize(hq.cref(), c.n, p, want.data(), out_t);
        DevBuf dout(want.size(), offset_of(start, out_t));
        cuda::dequantize(dq.cref(), c.n, p, dout.ptr(), out_t, nullptr);
        ck(cudaDeviceSynchronize(), "dequantize");
        check_same_output(dout.download<std::uint8_t>(want.size()), want, out_t);
      }
    }
  }
}

TEST_CASE("GPU qgZ kernels equal the CPU reference bit for bit") {
  for (int bits : {4, 8}) {
    for (bool asym : {false, true}) {
      for (const QgzShape& s : {QgzShape{2, 8, 1}, QgzShape{3, 4, 2}, QgzShape{4, 2, 3}}) {
        const std::size_t W = s.nodes * s.gpus_per_node;
        const std::size_t n = 2 * W * s.pipeline_slices * 3001;  // units of 6002: partial blocks
        INFO("bits " << bits << " asym " << asym << " Y " << s.nodes << " N " << s.gpus_per_node
                     << " S " << s.pipeline_slices);
        QuantParams p;
        p.bits = bits;
        p.asymmetric = asym;
        const auto in = make_input(DType::kF16, n, 77);
        QuantParams pu = p;
        pu.segment = qgz_unit_elements(n, s);
        HostQ hq(n, pu);
        qgz_swizzle_quantize(in.data(), DType::kF16, n, s, p, hq.ref());
        DevBuf din(in.size(), 0);
        din.upload(in.data(), in.size());
        DevQ dq(n, pu, 0);
        cuda::qgz_swizzle_quantize(din.ptr(), DType::kF16, n, s, p, dq.ref(), nullptr);
        ck(cudaDeviceSynchronize(), "swizzle");
        check_same(dq, hq);

        // Reduce over the N pieces of Y units (treat the swizzled buffer as N inputs).
        const std::size_t piece = n / s.gpus_per_node;
        const std::size_t pb = quantized_bytes(piece, pu), ps = num_blocks(piece, pu);
        std::vector<QuantizedCRef> h_in, d_in;
        for (std::size_t k = 0; k < s.gpus_per_node; ++k) {
          h_in.push_back(
              {hq.data.data() + k * pb, hq.scales.data() + k * ps, hq.offsets.data() + k * ps});
          d_in.push_back({dq.data.ptr() + k * pb, dq.scales.ptr<float>() + k * ps,
                          dq.offsets.ptr<float>() + k * ps});
        }
        HostQ hr(piece, pu);
        dequant_reduce_quantize(h_in.data(), h_in.size(), piece, pu, hr.ref());
        DevQ dr(piece, pu, 0);
        cuda::dequant_reduce_quantize(d_in.data(), d_in.size(), piece, pu, dr.ref(), nullptr);
        ck(cudaDeviceSynchronize(), "dequant_reduce_quantize");
        check_same(dr, hr);

        for (DType out_t : {DType::kF32, DType::kF16, DType::kBF16}) {
          std::vector<std::uint8_t> want(piece * dtype_bytes(out_t));
          dequant_reduce(h_in.data(), h_in.size(), piece, pu, 1.0f / float(W), want.data(), out_t);
          DevBuf dout(want.size(), 0);
          cuda::dequant_reduce(d_in.data(), d_in.size(), piece, pu, 1.0f / float(W), dout.ptr(),
                               out_t, nullptr);
          ck(cudaDeviceSynchronize(), "dequant_reduce");
          check_same_output(dout.download<std::uint8_t>(want.size()), want, out_t);
        }
      }
    }
  }
}

TEST_CASE("GPU host API rejects bad arguments like the reference") {
  QuantParams p;
  p.block_size = 0;
  float x = 0;
  std::uint8_t q = 0;
  float s = 0;
  CHECK_THROWS_WITH_AS(cuda::quantize(&x, DType::kF32, 1, p, {&q, &s, nullptr}, nullptr),
                       "zerosim::kernels::cuda::quantize: block_size must be > 0 (got 0)",
                       std::invalid_argument);
  p.block_size = 8;
  CHECK_THROWS_WITH_AS(cuda::quantize(nullptr, DType::kF32, 1, p, {&q, &s, nullptr}, nullptr),
                       "zerosim::kernels::cuda::quantize: input buffer is null",
                       std::invalid_argument);
  std::vector<QuantizedCRef> many(cuda::kMaxReduceInputs + 1, QuantizedCRef{&q, &s, nullptr});
  CHECK_THROWS_WITH_AS(
      cuda::dequant_reduce(many.data(), many.size(), 1, p, 1.0f, &x, DType::kF32, nullptr),
      "zerosim::kernels::cuda::dequant_reduce: n_inputs must be <= 128 (got 129)",
      std::invalid_argument);
}

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
    return 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
