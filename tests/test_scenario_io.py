"""YAML scenario files: the bundled examples, round trips, and errors that name the key and the fix."""

import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.errors import InputError
from wormhole_lab.scenario_io import BUILDERS, load_scenario, scenario_from_dict
from wormhole_lab.scenario_save import save_scenario
from wormhole_lab.scenarios import fat_tree_permutation
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import fat_tree, rail_optimized, star
from wormhole_lab.topology.hpcc_format import read_topology
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.workload.hpcc_flow_format import read_flows
from wormhole_lab.wormhole.settings import WormholeConfig

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "scenarios"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.yaml"))
VALIDATION = Path(__file__).resolve().parent / "data" / "validation"
FLOW_COLUMNS = ("src", "dst", "size", "start_ps", "pg", "dport", "sport", "dep_offset", "dep_ids", "gap_ps", "phase")
TOPO_ARRAYS = ("is_switch", "link_a", "link_b", "link_rate_bps", "link_delay_ps", "link_error_rate")

INCAST = """\
name: tiny
topology:
  builder: star
  n_hosts: 3
flows:
  incast: {senders: [1, 2], receiver: 0, size: 5000}
cca: dcqcn
"""


def assert_same(a: Scenario, b: Scenario):
    for name in TOPO_ARRAYS:
        assert np.array_equal(getattr(a.topology, name), getattr(b.topology, name)), name
    assert len(a.flows) == len(b.flows)
    for name in FLOW_COLUMNS:
        assert np.array_equal(getattr(a.flows, name), getattr(b.flows, name)), name
    assert a.flows.tail_ps == b.flows.tail_ps
    assert a.config == b.config


def write(tmp_path, text, name="s.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(tmp_path, text) -> InputError:
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_scenario(path)
    return err.value


# --- bundled examples ---------------------------------------------------------------------------------------


def test_the_examples_are_there():
    names = {p.name for p in EXAMPLE_FILES}
    expected = {f"incast_{cc}.yaml" for cc in ("hpcc", "timely", "dctcp", "dcqcn")}
    expected |= {"packet_fat_tree.yaml", "gpt13b_128gpu_hpcc.yaml", "simai_ep_test_hpcc.yaml"}
    assert expected <= names


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_every_example_loads_and_round_trips(path, tmp_path):
    if "simai" in path.read_text() and not (EXAMPLES / "../../../shared/workloads/simai").is_dir():
        pytest.skip("the SimAI workloads live in ../shared/workloads/simai, never in the repo")
    scenario = load_scenario(path)
    assert scenario.name and len(scenario.flows) > 0
    assert scenario.meta["description"]
    back = load_scenario(save_scenario(scenario, tmp_path / path.name))
    assert_same(back, scenario)
    assert back.telemetry == scenario.telemetry and back.name == scenario.name


@pytest.mark.parametrize(
    "name, cca",
    [("incast_hpcc", "hpcc"), ("incast_timely", "timely"), ("incast_dctcp", "dctcp"), ("incast_dcqcn", "dcqcn")],
)
def test_incast_examples_use_their_algorithm(name, cca):
    scenario = load_scenario(EXAMPLES / f"{name}.yaml")
    assert scenario.config.cca == cca
    assert scenario.flows.src.tolist() == list(range(1, 9)) and set(scenario.flows.dst.tolist()) == {0}
    # the same cluster as the reference's s2_incast8 validation case
    reference = read_topology(VALIDATION / "s2_incast8" / "topology.txt")
    for name_ in TOPO_ARRAYS:
        assert np.array_equal(getattr(scenario.topology, name_), getattr(reference, name_))


def test_hpcc_example_uses_the_papers_additive_increase():
    assert load_scenario(EXAMPLES / "incast_hpcc.yaml").config == preset("hp", 100, hpai_mbps=50)


def test_fat_tree_example_is_the_builtin_permutation():
    assert_same(load_scenario(EXAMPLES / "packet_fat_tree.yaml"), fat_tree_permutation(k=4))


def test_one_tiny_example_runs(tmp_path):
    scenario = load_scenario(write(tmp_path, INCAST + "telemetry: off\n"))
    ds = Simulation(scenario).run()
    assert ds.attrs["stop_reason"] == "all_done" and (ds["fct"] > 0).all()


# --- round trips --------------------------------------------------------------------------------------------


def test_round_trip_of_file_inputs_and_overrides(tmp_path):
    topo = read_topology(VALIDATION / "s2_incast8" / "topology.txt")
    flows = read_flows(VALIDATION / "s2_incast8" / "flow.txt")
    config = preset("dcqcn_paper", 100).with_(
        rate_ai_bps=7_000_000, rto_ps=123_000, kmin_bytes={100 * 10**9: 1, 400 * 10**9: 2}
    )
    scenario = Scenario(
        topo,
        flows,
        config,
        name="from files",
        telemetry=Telemetry.off(),
        wormhole=WormholeConfig(audit=4, audit_windows=5, tail_packets=3),
    )
    out = save_scenario(scenario, tmp_path / "case.yaml")
    assert (tmp_path / "case.topology.txt").is_file() and (tmp_path / "case.flows.txt").is_file()
    text = out.read_text()
    assert "cca: dcqcn_paper" in text and "rate_ai_bps: 7000000" in text and "telemetry: 'off'" in text
    back = load_scenario(out)
    assert_same(back, scenario)
    assert not back.telemetry.enabled
    assert (back.wormhole.audit, back.wormhole.audit_windows, back.wormhole.tail_packets) == (4, 5, 3)


def test_side_files_are_found_relative_to_the_yaml(tmp_path, monkeypatch):
    scenario = Scenario(star(3), make_flows([1, 2], [0, 0], [10, 20], [0, 1000]), preset("dctcp"))
    (tmp_path / "sub").mkdir()
    out = save_scenario(scenario, tmp_path / "sub" / "rel.yaml")
    monkeypatch.chdir(tmp_path)  # the cwd is not the YAML's folder
    assert_same(load_scenario(Path("sub") / out.name), scenario)


def test_round_trip_of_builders_with_their_arguments(tmp_path):
    topo = rail_optimized(2, gpus_per_server=4, nvlink=True, fabric_rate_bps=400 * 10**9)
    flows = make_flows([0, 5], [7, 1], [1000, 2000], 0)
    base = preset("dcqcn", 100)
    nvlink = 900 * 10**9  # the preset has ECN maps for 100G and 400G only
    config = base.with_(
        kmin_bytes={**base.kmin_bytes, nvlink: 10**6},
        kmax_bytes={**base.kmax_bytes, nvlink: 4 * 10**6},
        pmax={**base.pmax, nvlink: 0.2},
    )
    scenario = Scenario(topo, flows, config, telemetry=Telemetry(interval_ps=2_000_000, ports=[0, 3]))
    out = save_scenario(scenario, tmp_path / "rail.yaml")
    assert "builder: rail_optimized" in out.read_text() and not (tmp_path / "rail.topology.txt").exists()
    back = load_scenario(out)
    assert_same(back, scenario)
    assert back.telemetry == replace(scenario.telemetry, ports=[0, 3])


def test_a_changed_builder_topology_is_written_as_a_file(tmp_path):
    topo = fat_tree(4)
    rates = topo.link_rate_bps.copy()
    rates[-1] = 400 * 10**9
    changed = replace(topo, link_rate_bps=rates)  # meta still says fat_tree(4)
    flows = make_flows([0], [15], [100], 0)
    config = preset("dcqcn").with_(kmin_bytes={**preset("dcqcn").kmin_bytes}, kmax_bytes={**preset("dcqcn").kmax_bytes})
    out = save_scenario(Scenario(changed, flows, config), tmp_path / "ft.yaml")
    assert "file: ft.topology.txt" in out.read_text()
    assert_same(load_scenario(out), Scenario(changed, flows, config))


def test_round_trip_of_htsim_flows_with_triggers(tmp_path):
    cm = tmp_path / "ring.cm"
    cm.write_text(
        "Nodes 4\nConnections 3\nTriggers 1\n0->1 id 1 start 0 size 1000 send_done_trigger 1\n"
        "1->2 id 2 start 3 size 1000 send_done_trigger 1\n2->3 id 3 trigger 1 size 500\ntrigger id 1 barrier count 2\n"
    )
    scen = write(
        tmp_path,
        "topology: {builder: star, n_hosts: 4}\nflows: {htsim: ring.cm, start_unit: ns}\ncca: timely\n",
        name="ring.yaml",
    )
    scenario = load_scenario(scen)
    assert [scenario.flows.deps(i).tolist() for i in range(3)] == [[], [], [0, 1]]
    assert scenario.flows.start_ps.tolist() == [0, 3000, 0]
    (tmp_path / "out").mkdir()
    out = save_scenario(scenario, tmp_path / "out" / "copy.yaml")
    assert (tmp_path / "out" / "copy.cm").read_text() == cm.read_text()
    assert_same(load_scenario(out), scenario)


def test_flows_off_the_nanosecond_grid_are_kept_exactly(tmp_path):
    flows = make_flows([1, 2], [0, 0], [10, 20], [1_500, 7])  # ps, unsorted: an HPCC flow file cannot hold them
    scenario = Scenario(star(3), flows, preset("dcqcn"))
    out = save_scenario(scenario, tmp_path / "ps.yaml")
    assert "htsim: ps.cm" in out.read_text()
    assert_same(load_scenario(out), scenario)


def test_dependent_flows_from_elsewhere_are_refused(tmp_path):
    flows = make_flows([1, 2], [0, 0], [10, 20], 0, deps=[(), (0,)])
    with pytest.raises(InputError, match="dependencies"):
        save_scenario(Scenario(star(3), flows, preset("dcqcn")), tmp_path / "dep.yaml")


def test_units_in_text_and_overrides(tmp_path):
    text = INCAST.replace("n_hosts: 3", "n_hosts: 3\n  host_rate_bps: 25Gbps\n  host_delay_ps: 500ns")
    text += "host_bw_gbps: 25\nconfig:\n  rp_timer_ps: 900us\n  rate_ai_bps: 5Mb/s\n"
    text += "  kmin_bytes: {25Gbps: 1000, 100Gbps: 2000}\n"
    text += "  kmax_bytes: {25Gbps: 3000, 100Gbps: 4000}\n  pmax: {25Gbps: 0.5, 100Gbps: 1}\n  rto_ps: null\n"
    scenario = load_scenario(write(tmp_path, text))
    assert scenario.topology.link_rate_bps.tolist() == [25 * 10**9] * 3
    assert scenario.topology.link_delay_ps.tolist() == [500_000] * 3
    cfg = scenario.config
    assert cfg.rp_timer_ps == 900_000_000 and cfg.rate_ai_bps == 5_000_000 and cfg.rto_ps is None
    assert cfg.kmin_bytes == {25 * 10**9: 1000, 100 * 10**9: 2000} and cfg.pmax[100 * 10**9] == 1.0


@pytest.mark.parametrize(
    "value, enabled", [("off", False), ("false", False), ("on", True), ("{interval_ps: 5us}", True)]
)
def test_telemetry_switch(tmp_path, value, enabled):
    scenario = load_scenario(write(tmp_path, INCAST + f"telemetry: {value}\n"))
    assert scenario.telemetry.enabled is enabled


def test_scenario_from_dict():
    doc = {
        "topology": {"builder": "star", "n_hosts": 2},
        "flows": {"incast": {"senders": [1], "receiver": 0, "size": 1}},
    }
    assert len(scenario_from_dict({**doc, "cca": "dctcp"}).flows) == 1
    with pytest.raises(InputError, match="missing required key 'cca'"):
        scenario_from_dict(doc, source="notebook")


# --- errors -------------------------------------------------------------------------------------------------


def test_misspelled_key_is_named_with_the_right_one(tmp_path):
    err = error_of(tmp_path, INCAST.replace("topology:", "topolgy:"))
    assert err.where.endswith("s.yaml:2")
    assert "unknown key 'topolgy'" in err.problem
    assert "did you mean 'topology'?" in err.fix and "flows" in err.fix


def test_misspelled_config_field_suggests_the_right_one(tmp_path):
    err = error_of(tmp_path, INCAST + "config:\n  seed: 3\n  rate_ai_bsp: 10\n")
    assert err.where.endswith("s.yaml:10")
    assert "config.rate_ai_bsp" in err.problem and "did you mean 'rate_ai_bps'?" in err.fix


def test_misspelled_builder_argument(tmp_path):
    err = error_of(tmp_path, INCAST.replace("n_hosts", "n_host"))
    assert "topology.n_host" in err.problem and "did you mean 'n_hosts'?" in err.fix


@pytest.mark.parametrize(
    "old, new, key, words",
    [
        ("n_hosts: 3", "n_hosts: three", "topology.n_hosts", "must be an integer, got 'three' (text)"),
        ("size: 5000", "size: 5e3", "flows.incast.size", "must be an integer"),
        ("receiver: 0", "receiver: [0]", "flows.incast.receiver", "must be an integer, got a list"),
        ("cca: dcqcn", "cca: dcqcn\nconfig: {pfc: 5}", "config.pfc", "must be true or false, got 5"),
        ("cca: dcqcn", "cca: dcqcn\nconfig: {u_target: high}", "config.u_target", "must be a number"),
        ("cca: dcqcn", "cca: dcqcn\nhost_bw_gbps: 1.5", "host_bw_gbps", "must be an integer"),
        ("cca: dcqcn", "cca: dcqcn\ntelemetry: {interval_ps: soon}", "telemetry.interval_ps", "cannot read time"),
        ("name: tiny", "name: [tiny]", "name", "must be text"),
        ("  builder: star", "  builder: 7", "topology.builder", "must be text"),
    ],
)
def test_wrong_value_type_names_the_field(tmp_path, old, new, key, words):
    err = error_of(tmp_path, INCAST.replace(old, new))
    assert err.problem.startswith(f"{key}: ") and words in err.problem
    assert err.fix


def test_number_written_as_text_gets_a_yaml_hint(tmp_path):
    err = error_of(tmp_path, INCAST.replace("size: 5000", "size: 5e3"))
    assert "YAML reads '5e3' as text" in err.fix


def test_unknown_builder_lists_the_valid_ones(tmp_path):
    err = error_of(tmp_path, INCAST.replace("builder: star", "builder: fat_tre"))
    assert err.where.endswith("s.yaml:3") and "topology.builder: unknown value 'fat_tre'" in err.problem
    assert "did you mean 'fat_tree'?" in err.fix
    for name in BUILDERS:
        assert name in err.fix


def test_unknown_preset_and_algorithm_names(tmp_path):
    err = error_of(tmp_path, INCAST.replace("cca: dcqcn", "cca: dcqnc"))
    assert "did you mean 'dcqcn'?" in err.fix and "timely_vwin" in err.fix
    err = error_of(tmp_path, INCAST.replace("cca: dcqcn", "cca: hpcc"))
    assert "'hpcc' is an algorithm, not a preset" in err.problem and "hp" in err.fix


@pytest.mark.parametrize(
    "old, new, words",
    [
        ("builder: star", "bulder: star", "needs 'builder'"),
        ("  n_hosts: 3\n", "", "star needs 'n_hosts'"),
        ("n_hosts: 3", "n_hosts: 0", "n_hosts must be at least 1"),
        ("incast:", "incats:", "unknown flow source 'incats'"),
        ("receiver: 0", "receiver: 3", "node 3 is not a host"),
        ("senders: [1, 2]", "senders: [1, 1]", "host 1 is listed twice"),
        ("senders: [1, 2]", "senders: [0, 2]", "host 0 is also a sender"),
        ("senders: [1, 2]", "senders: []", "non-empty list"),
        ("cca: dcqcn", "cca: dcqcn\nhpai_mbps: 50", "applies to the hp preset only"),
        ("cca: dcqcn", "cca: dcqcn\nconfig: {cca: hpcc}", "comes from the preset"),
        ("cca: dcqcn", "cca: dcqcn\nconfig: {u_target: 2.0}", "must be in (0, 1]"),
        ("cca: dcqcn", "cca: dcqcn\ntelemetry: {ports: swtch}", "did you mean 'switch'"),
        ("cca: dcqcn", "cca: dcqcn\ntelemetry: {flows: [7]}", "id 7 does not exist"),
        ("cca: dcqcn", "cca: dcqcn\ntelemetry: {interval_ps: 1ns}", "shorter than one packet"),
        ("cca: dcqcn", "cca: dcqcn\ntelemetry: 5", "must be off, on, or a mapping"),
        (
            "n_hosts: 3",
            "n_hosts: 3\n  host_rate_bps: 25Gbps",
            "host_bw_gbps: no ECN threshold for the topology's 25000000000",
        ),
        ("n_hosts: 3", "n_hosts: 3\n  host_rate_bps: 10Gbps", "no ECN threshold"),
    ],
)
def test_bad_values_are_located(tmp_path, old, new, words):
    text = INCAST.replace(old, new)
    assert text != INCAST
    err = error_of(tmp_path, text)
    assert words in str(err)
    assert ".yaml:" in err.where and not err.where.endswith(":0")


def test_two_flow_sources_are_refused(tmp_path):
    text = INCAST.replace("flows:\n", "flows:\n  permutation: {size: 10}\n")
    err = error_of(tmp_path, text)
    assert "names 2 sources" in err.problem and "exactly one of file, htsim, simai, permutation, incast" in err.fix


def test_missing_side_file_is_named_at_its_line(tmp_path):
    err = error_of(tmp_path, INCAST.replace("incast: {senders: [1, 2], receiver: 0, size: 5000}", "file: gone.txt"))
    assert err.where.endswith("s.yaml:6") and "'gone.txt' not found" in err.problem
    assert "relative to the YAML file" in err.fix


def test_errors_inside_side_files_name_their_line(tmp_path):
    (tmp_path / "bad.cm").write_text("Nodes 3\nConnections 1\n0->1 start 0 size 10 sise 3\n")
    err = error_of(tmp_path, INCAST.replace("incast: {senders: [1, 2], receiver: 0, size: 5000}", "htsim: bad.cm"))
    assert err.where == f"{tmp_path / 'bad.cm'}:3"


def test_htsim_start_unit_is_checked(tmp_path):
    (tmp_path / "ok.cm").write_text("Nodes 3\nConnections 1\n1->0 start 2 size 10\n")
    base = INCAST.replace("incast: {senders: [1, 2], receiver: 0, size: 5000}", "htsim: ok.cm")
    assert load_scenario(write(tmp_path, base)).flows.start_ps.tolist() == [2_000_000]
    err = error_of(tmp_path, base.replace("htsim: ok.cm", "htsim: ok.cm\n  start_unit: s"))
    assert "flows.start_unit: unknown value 's'" in err.problem and "ps, ns, us" in err.fix


def test_yaml_problems(tmp_path):
    err = error_of(tmp_path, INCAST + "cca: dctcp\n")
    assert err.where.endswith("s.yaml:8") and "key given twice (first on line 7)" in err.problem
    err = error_of(tmp_path, "topology: [\n")
    assert "not valid YAML" in err.problem
    err = error_of(tmp_path, "")
    assert "empty" in err.problem
    err = error_of(tmp_path, "- 1\n- 2\n")
    assert "must be a mapping" in err.problem


def test_multishot_approximation_warning_reaches_the_user(tmp_path):
    (tmp_path / "m.cm").write_text(
        "Nodes 3\nConnections 3\nTriggers 1\n0->1 start 0 size 5 send_done_trigger 1\n"
        "1->2 trigger 1 size 5\n2->0 trigger 1 size 5\ntrigger id 1 multishot\n"
    )
    text = INCAST.replace("incast: {senders: [1, 2], receiver: 0, size: 5000}", "htsim: m.cm")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_scenario(write(tmp_path, text))
    assert any("approximated as oneshot" in str(w.message) for w in caught)


def test_a_training_job_scenario_loads_and_round_trips(tmp_path):
    scenario = load_scenario(Path(__file__).resolve().parents[1] / "data" / "scenarios" / "gpt13b_128gpu_hpcc.yaml")
    assert len(scenario.topology.hosts) == 128 and scenario.config.cca == "hpcc"
    assert {"pp", "dp"} <= set(scenario.flows.phase.tolist()) and scenario.flows.has_dependencies
    again = load_scenario(save_scenario(scenario, tmp_path / "copy.yaml"))
    np.testing.assert_array_equal(again.flows.dep_ids, scenario.flows.dep_ids)
    assert "training" in (tmp_path / "copy.yaml").read_text()


def test_a_training_job_on_the_wrong_cluster_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "topology: {builder: rail_optimized, n_servers: 2}\nflows: {training: {model: GPT-13B, n_gpus: 128}}\ncca: hp\n"
    )
    with pytest.raises(InputError, match="128 GPUs but the topology has 16 hosts"):
        load_scenario(path)


SIMAI_SCENARIO = """\
topology:
  builder: rail_optimized
  n_servers: 1
  gpus_per_server: GPUS
flows:
  simai: w.txt
cca: hp
"""
SIMAI_WORKLOAD = (
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 8\n1\n"
    "layer\t-1\t10\tALLREDUCE\t4096\t10\tNONE\t0\t10\tALLREDUCE\t8192\t100\n"
)


def test_simai_workload_as_flow_source_runs_and_round_trips(tmp_path):
    (tmp_path / "w.txt").write_text(SIMAI_WORKLOAD)
    scenario = load_scenario(write(tmp_path, SIMAI_SCENARIO.replace("GPUS", "8")))
    flows = scenario.flows
    assert (flows.phase == "dp").sum() == 8 * 2 * 3 and (flows.phase == "tp").sum() == 0
    text = SIMAI_SCENARIO.replace("GPUS", "8").replace("simai: w.txt", "{simai: w.txt, tp_traffic: true}")
    assert (load_scenario(write(tmp_path, text, "tp.yaml")).flows.phase == "tp").sum() > 0
    ds = Simulation(scenario).run()
    assert ds.attrs["stop_reason"] == "all_done" and (ds["fct"] > 0).all()
    (tmp_path / "out").mkdir()
    saved = save_scenario(scenario, tmp_path / "out" / "again.yaml")
    assert "simai: ../w.txt" in saved.read_text() and list((tmp_path / "out").iterdir()) == [saved]  # not copied
    again = load_scenario(saved)
    assert np.array_equal(again.flows.size, flows.size) and np.array_equal(again.flows.src, flows.src)


@pytest.mark.parametrize(
    "gpus, change, match",
    [
        (3, None, "w.txt:1 .*does not fit 3 GPUs"),
        (8, ("simai: w.txt", "{simai: w.txt, tp_traffic: maybe}"), "flows.tp_traffic: must be true or false"),
        (8, ("simai: w.txt", "{simai: w.txt, start_unit: us}"), "start_unit"),
        (8, ("simai: w.txt", "simai: missing.txt"), "missing.txt"),
    ],
)
def test_simai_source_errors_are_clear(tmp_path, gpus, change, match):
    (tmp_path / "w.txt").write_text(SIMAI_WORKLOAD)
    text = SIMAI_SCENARIO.replace("GPUS", str(gpus))
    if change:
        text = text.replace(*change)
    with pytest.raises(InputError, match=match):
        load_scenario(write(tmp_path, text))


# --- the poisson source (HPCC traffic_gen's workloads) ----------------------------------------------------------

CDF_TEN = Path(__file__).resolve().parent / "data" / "cdf" / "ten_point.txt"
POISSON = """\
name: poisson
topology:
  builder: fat_tree
  k: 4
  host_rate_bps: 25Gbps
flows:
  poisson:
    cdf: ten.txt
    load: 0.5
    duration: 1ms
    seed: 3
cca: hp
host_bw_gbps: 25
"""


def poisson_dir(tmp_path) -> Path:
    (tmp_path / "ten.txt").write_text(CDF_TEN.read_text())
    return tmp_path


def test_poisson_source_loads_on_the_topology_link_rate(tmp_path):
    from wormhole_lab.workload.traffic_gen import poisson_flows

    scenario = load_scenario(write(poisson_dir(tmp_path), POISSON))
    flows = scenario.flows
    expected = poisson_flows(tmp_path / "ten.txt", 0.5, 16, 25 * 10**9, 10**9, seed=3, base_time_ps=0)
    assert len(flows) > 100
    for name in FLOW_COLUMNS:
        assert np.array_equal(getattr(flows, name), getattr(expected, name)), name
    assert flows.start_ps.min() >= 0 and flows.start_ps.max() <= 10**9  # base_time defaults to 0 in a scenario
    later = POISSON.replace("seed: 3", "seed: 3\n    base_time: 2s\n    like_reference: true")
    shifted = load_scenario(write(tmp_path, later, "later.yaml")).flows
    assert shifted.start_ps.min() >= 2 * 10**12 and len(shifted) < len(flows)  # each host's last arrival dropped


def test_poisson_source_round_trips_as_the_recipe(tmp_path):
    scenario = load_scenario(write(poisson_dir(tmp_path), POISSON))
    (tmp_path / "out").mkdir()
    saved = save_scenario(scenario, tmp_path / "out" / "again.yaml")
    text = saved.read_text()
    assert "cdf: ../ten.txt" in text and "duration: 1ms" in text and "seed: 3" in text
    assert list((tmp_path / "out").iterdir()) == [saved]  # no flow file: the recipe is stored
    assert_same(load_scenario(saved), scenario)


@pytest.mark.parametrize(
    "change, line, match",
    [
        (("load: 0.5", "load: 1.5"), 9, r"flows\.poisson\.load: must be in \(0, 1\]"),
        (("load: 0.5", "load: '0.5'"), 9, r"flows\.poisson\.load: must be a number"),
        (("duration: 1ms", "duration: 5"), 10, r"flows\.poisson\.duration: must be a time with its unit"),
        (("duration: 1ms", "duration: 1 fortnight"), 10, r"flows\.poisson\.duration"),
        (("duration: 1ms", "duration: 0ms"), 10, r"flows\.poisson\.duration: must be positive"),
        (("seed: 3", "seed: -1"), 11, r"flows\.poisson\.seed: must be at least 0"),
        (("seed: 3", "seeds: 3"), 11, r"unknown key 'seeds'.*did you mean 'seed'"),
        (("cdf: ten.txt", "cdf: nope.txt"), 8, r"flows\.poisson\.cdf: file 'nope.txt' not found"),
        (("    cdf: ten.txt\n", ""), 7, r"missing required key 'cdf'"),
        (("seed: 3", "seed: 3\n    base_time: 1500ps"), 12, r"flows\.poisson\.base_time: is not a whole ns"),
        (("duration: 1ms", "duration: 1ps"), 7, r"flows\.poisson: generated no flows"),
    ],
)
def test_poisson_source_errors_name_the_yaml_line(tmp_path, change, line, match):
    path = write(poisson_dir(tmp_path), POISSON.replace(*change))
    with pytest.raises(InputError, match=match) as err:
        load_scenario(path)
    assert err.value.where == f"{path}:{line}"


def test_poisson_source_bad_cdf_is_located_in_the_cdf_file(tmp_path):
    (tmp_path / "ten.txt").write_text("0 0\n100 50\n90 100\n")
    with pytest.raises(InputError) as err:
        load_scenario(write(tmp_path, POISSON))
    assert err.value.where == f"{tmp_path / 'ten.txt'}:3" and "does not increase" in err.value.problem


def test_telemetry_window_and_idle_samples_are_scenario_keys(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "topology: {builder: star, n_hosts: 2}\nflows: {incast: {senders: [1], receiver: 0, size: 1000}}\ncca: hp\n"
        "telemetry: {start_ps: 1us, end_ps: 5us, idle_samples: true}\n"
    )
    t = load_scenario(path).telemetry
    assert (t.start_ps, t.end_ps, t.idle_samples) == (10**6, 5 * 10**6, True)


# --- several jobs (jobs:) ------------------------------------------------------------------------------------

JOBS = """\
name: jobs
topology: {builder: rail_optimized, n_servers: 4, gpus_per_server: 8}
cca: hp
telemetry: off
jobs:
  - {name: a, training: {model: GPT-7B, n_gpus: 16, scale: 0.001}, placement: interleaved, iterations: 2}
  - name: b
    training: {model: GPT-7B, n_gpus: 16, scale: 0.001}
    placement: interleaved
    start: 20us
"""


def test_jobs_load_placed_and_repeated_as_the_python_api_makes_them(tmp_path):
    from wormhole_lab.workload.jobs import Job, Training, jobs_flows

    scenario = load_scenario(write(tmp_path, JOBS + "alone: packet\n"))
    tiny = Training("GPT-7B", 16, scale=0.001)
    same = jobs_flows(scenario.topology, [Job("a", tiny, "interleaved", iterations=2),
                                          Job("b", tiny, "interleaved", start_ps=20_000_000)])  # fmt: skip
    for name in FLOW_COLUMNS:
        assert np.array_equal(getattr(scenario.flows, name), getattr(same, name)), name
    layout = scenario.flows.meta["jobs"]
    assert layout.names == ["a", "b"] and scenario.alone_mode == "packet"
    assert [sorted({int(h) // 8 for h in p.hosts}) for p in layout.jobs] == [[0, 2], [1, 3]]


def test_every_kind_of_job_round_trips(tmp_path):
    flow_file = tmp_path / "pair.txt"
    flow_file.write_text("2\n0 1 3 100 5000 0.000001\n1 0 3 100 7000 0.000002\n")
    more = """\
  - {name: c, file: pair.txt, placement: [16, 17], shares_gpus: true}
  - {name: bg, poisson: {cdf: WebSearch, load: 0.2, duration: 50us, seed: 3}, n_gpus: 8, shares_gpus: true}
alone: 'off'
"""
    scenario = load_scenario(write(tmp_path, JOBS + more))
    back = load_scenario(save_scenario(scenario, tmp_path / "saved.yaml"))
    assert_same(back, scenario)
    assert back.alone_mode == "off" and back.flows.meta["jobs"].names == ["a", "b", "c", "bg"]


def test_a_scenario_of_jobs_runs_and_reports_each_job(tmp_path):
    ds = Simulation(load_scenario(write(tmp_path, JOBS + "alone: packet\n"))).run()
    assert ds.job.values.tolist() == ["a", "b"] and (ds.job_slowdown.values == 1.0).all()
    assert np.isfinite(ds.job_iteration_time.values[0]).all() and np.isnan(ds.job_iteration_time.values[1, 1])


LISTED_A = "placement: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], iterations: 2"


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        (("placement: interleaved\n    start", "placement: spread\n    start"), "jobs[1].placement", "unknown value"),
        (("start: 20us", "start: -20us"), "jobs[1].start", "cannot start before"),
        (("start: 20us", "start: 20us\n    iterations: 0"), "jobs[1].iterations", "at least 1"),
        (("    training: {model: GPT-7B, n_gpus: 16", "    training: {model: GPT-7B, n_gpus: 32"),
         "jobs[1].placement", "only 16 of the cluster's 32"),
        (("n_gpus: 16, scale: 0.001}, placement: interleaved, it", "n_gpus: 48}, placement: packed, it"),
         "jobs[0]", "asks for 48 GPUs but the cluster has 32"),
        (("    placement: interleaved\n", "    placement: [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, "
          "23]\n"), "jobs[1].placement", "also used by job 'a'"),
        (("    start: 20us", "    speed: 2"), "jobs[1].speed", "unknown key"),
    ],
)  # fmt: skip
def test_bad_jobs_name_the_line_and_the_key(tmp_path, change, key, words):
    listed = "also used" in words  # job a on a list of hosts, which job b's list overlaps
    text = (JOBS.replace("placement: interleaved, iterations: 2", LISTED_A) if listed else JOBS).replace(*change)
    err = error_of(tmp_path, text)
    first_line = text.splitlines().index("  - name: b") + 1 if key.startswith("jobs[1]") else 1
    assert err.where.startswith(f"{tmp_path / 's.yaml'}:") and int(err.where.rsplit(":", 1)[1]) >= first_line
    assert key in err.problem and words in err.problem and err.fix


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ("  - {name: bg, poisson: {cdf: WebSearch, duration: 1ms}, shares_gpus: true}\n", "with no load"),
        ("  - {name: bg, poisson: {cdf: WebSurch, load: 0.3, duration: 1ms}}\n", "not found"),
        ("flows: {incast: {senders: [1], receiver: 0, size: 1000}}\n", "exactly one of 'flows'"),
    ],
)  # fmt: skip
def test_bad_job_files_say_what_is_missing(tmp_path, extra, words):
    err = error_of(tmp_path, JOBS + extra)
    assert words in err.problem and err.fix


def test_alone_without_jobs_is_refused(tmp_path):
    err = error_of(tmp_path, INCAST + "alone: packet\n")
    assert "alone" in err.problem and "jobs" in err.problem


def test_a_file_of_jobs_records_no_series_unless_it_asks(tmp_path):
    quiet = load_scenario(write(tmp_path, JOBS.replace("telemetry: off\n", "")))
    asked = load_scenario(write(tmp_path, JOBS.replace("telemetry: off\n", "telemetry: on\n"), "on.yaml"))
    assert not quiet.telemetry.enabled and asked.telemetry == Telemetry()
    assert load_scenario(save_scenario(asked, tmp_path / "saved.yaml")).telemetry == Telemetry()
