// nccl_kernel_channels: NCCL's ring/tree channel tuning (enqueue.cc getAlgoInfo, 2.18.3) on the
// profile's channel count: every channel for a buffer of at least 32 KiB per channel, fewer below.
#include <doctest/doctest.h>

#include "sim/collectives/nccl_model.hpp"

using namespace zerosim;

TEST_CASE("nccl_kernel_channels: nc drops while nBytes < nc x 512 threads x 64 B") {
  CostProfile prof;
  prof.nccl.channels = 16;
  CollectiveOp op;
  op.bytes = 16 * 32768.0;  // exactly 16 channels' worth
  CHECK(nccl_kernel_channels(op, prof) == 16);
  op.bytes = 1 << 30;
  CHECK(nccl_kernel_channels(op, prof) == 16);
  op.bytes = 102400;  // 3 x 32768 = 98304 <= 102400 < 4 x 32768
  CHECK(nccl_kernel_channels(op, prof) == 3);
  op.bytes = 0;
  CHECK(nccl_kernel_channels(op, prof) == 1);
  prof.nccl.channels = 8;
  op.bytes = 1 << 30;
  CHECK(nccl_kernel_channels(op, prof) == 8);
}
