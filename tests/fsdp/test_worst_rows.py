"""scripts/fsdp_hbm_traffic.py and scripts/fsdp_worst_rows.py against closed forms, on synthetic
results shaped as `zerosim simulate --json` writes them (stdlib only)."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import fsdp_hbm_traffic as hbm  # noqa: E402
import fsdp_worst_rows as worst  # noqa: E402


def result(world=8, step=2.0, tokens_per_s=8000.0, ag=(4e9, 1e9, 0.5), rs=(2e9, 0.0, 0.25),
           kernels=None):
    """A result whose all-gathers move ag = (intra, inter, busy) and reduce-scatters rs."""
    k = kernels or {"gemm": 1.0, "attention": 0.3, "launch": 0.0, "norm": 0.1, "activation": 0.2,
                    "loss": 0.05}
    return {"scenario": {"world_size": world}, "step_time_s": step, "tokens_per_s": tokens_per_s,
            "breakdown": {"compute_kernels_s": k},
            "comm": {"by_collective": {
                "all_gather": {"intra_node_bytes": ag[0], "inter_node_bytes": ag[1],
                               "busy_s": ag[2]},
                "reduce_scatter": {"intra_node_bytes": rs[0], "inter_node_bytes": rs[1],
                                   "busy_s": rs[2]}}}}


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-12)


class HbmTraffic(unittest.TestCase):
    def test_bytes_and_busy(self):
        x = result()
        self.assertTrue(close(hbm.received_bytes(x), (4e9 + 1e9 + 2e9) / 8))
        self.assertTrue(close(hbm.busy_s(x), 0.75))
        self.assertTrue(close(hbm.memory_bound_s(x), 0.1 + 0.2 + 0.05))

    def test_share(self):
        x = result()
        # u = 3 x bytes received / busy / HBM
        self.assertTrue(close(hbm.hbm_share(x, 1000.0), 3 * 7e9 / 8 / 0.75 / 1e12))

    def test_no_cost_while_the_bandwidth_fits(self):
        x = result()
        u = hbm.hbm_share(x, 1.0)  # 3.5
        self.assertTrue(u > 1)
        self.assertEqual(hbm.contention_s(x, 1.0, 0.5), float("inf"))
        u = hbm.hbm_share(x, 10.0)  # 0.35
        self.assertTrue(0.5 + u <= 1)
        self.assertEqual(hbm.contention_s(x, 10.0, 0.5), 0.0)

    def test_closed_form_where_they_compete(self):
        x = result()
        u = hbm.hbm_share(x, 5.0)  # 0.7
        f = 0.6
        want = 0.35 * (0.75 / 2.0) * (f / (1 - u) - 1)
        self.assertTrue(close(hbm.contention_s(x, 5.0, f), want))

    def test_overlap_share_capped_at_the_step(self):
        x = result(step=0.5)  # busy 0.75 > step
        u = hbm.hbm_share(x, 5.0)
        self.assertTrue(close(hbm.contention_s(x, 5.0, 0.6), 0.35 * (0.6 / (1 - u) - 1)))


class WorstRows(unittest.TestCase):
    def row(self, model, seq, gpus, mb, ga, tps):
        return {"model": model, "seq": seq, "gpus": gpus, "mb": mb, "ga": ga, "tps": tps}

    def test_error_of_a_step(self):
        r = self.row("1b", 2048, 8, 2, 4, 1000.0)
        # tokens per GPU per step / step / published - 1
        self.assertTrue(close(worst.err(r, 8.0, None), 2 * 2048 * 4 / 8.0 / 1000.0 - 1))

    def test_reference_is_the_nearest_same_model_row_within_near(self):
        bad = self.row("1b", 2048, 32, 10, 1, 1000.0)
        rows = [bad, self.row("1b", 2048, 16, 8, 1, 1000.0),
                self.row("1b", 2048, 64, 10, 1, 1000.0), self.row("1b", 1024, 32, 10, 1, 1000.0), self.row("3b", 2048, 32, 10, 1, 1000.0),
                self.row("1b", 2048, 32, 12, 1, 1000.0)]
        good = result(world=8, tokens_per_s=8 * 1000.0 * (1 + worst.NEAR / 2))
        off = result(world=8, tokens_per_s=8 * 1000.0 * (1 + 2 * worst.NEAR))
        results = [off, good, good, good, good, off]
        ref = worst.reference(rows, results, bad)
        self.assertIs(ref[0], rows[1])  # same seq, 16 GPUs is 16 away, 64 is 32 away
        self.assertIsNone(worst.reference(rows[:1] + rows[4:], [off, good, off], bad))


class FreeBlocks(unittest.TestCase):
    def test_block_and_free_blocks(self):
        x = result()
        x["scenario"]["model"] = {"hidden": 1024, "ffn": 4096}
        x["scenario"]["strategy"] = {"fsdp": {"param_bytes": 2}}
        block = (4 * 1024 * 1024 + 2 * 1024 * 4096) * 2
        self.assertEqual(worst.block_bytes(x), block)
        x["memory"] = {"capacity_bytes": 40 * 2**30, "peak_bytes_per_gpu": 40 * 2**30 - 3 * block}
        self.assertTrue(close(worst.free_blocks(x), 3.0))

    def test_spearman(self):
        a = [1.0, 2.0, 5.0, 9.0]
        self.assertTrue(close(worst.spearman(a, [x * x for x in a]), 1.0))
        self.assertTrue(close(worst.spearman(a, [-x for x in a]), -1.0))
        # ranks 0..3 against 1, 0, 3, 2: 1 - 6 sum d^2 / (n (n^2 - 1)) = 1 - 6 * 4 / 60
        self.assertTrue(close(worst.spearman(a, [2.0, 1.0, 4.0, 3.0]), 0.6))


if __name__ == "__main__":
    unittest.main()
