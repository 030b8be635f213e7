"""The training scenarios: model presets shrunk by a size scale, and the SimAI files of a workload folder."""

import numpy as np

from wormhole_lab.scenarios.training import model_scenario, simai_files

SIMAI_HEADER = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8\n"


def test_model_presets_scale_bytes_and_compute():
    full = model_scenario("GPT-7B", 64, "hp", 1.0)
    small = model_scenario("GPT-7B", 64, "hp", 0.01)
    assert len(small.flows) == len(full.flows) == 512
    np.testing.assert_array_equal(small.flows.size, np.maximum(1000, (full.flows.size * 0.01).astype(np.int64)))
    gaps = full.flows.gap_ps > 0
    assert gaps.any()
    np.testing.assert_allclose(small.flows.gap_ps[gaps], full.flows.gap_ps[gaps] * 0.01, rtol=1e-6, atol=1)
    assert len(model_scenario("MoE-8x7B", 128).topology.hosts) == 128


def test_a_workload_folder_lists_its_simai_files_by_name(tmp_path):
    (tmp_path / "b_job.txt").write_text(SIMAI_HEADER + "0\n")
    (tmp_path / "a_job.txt").write_text(SIMAI_HEADER + "0\n")
    (tmp_path / "LICENSE.txt").write_text("Apache License\n")
    assert list(simai_files(tmp_path)) == ["a_job.txt", "b_job.txt"] and simai_files(tmp_path / "missing") == {}
