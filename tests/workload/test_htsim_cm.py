"""htsim connection matrices: triggers become dependencies, start units, round trip, one test per bad input."""

import warnings

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.workload.htsim_cm import HtsimApproximationWarning, read_cm, write_cm

# a two-host ring "allreduce" in the style of csg-htsim's gen_allreduce.py, plus a barrier and a late flow
RING = """\
# comment lines are skipped
Nodes 4
Connections 6
Triggers 3

0->1 id 1 start 0 size 1000 send_done_trigger 1
1->0 id 2 trigger 1 size 1000 send_done_trigger 2
2->3 id 3 start 0 size 2000 recv_done_trigger 2
3 -> 2 id 4 trigger 2 size 3000 send_done_trigger 3
0->3 id 5 trigger 3 size 10 prio 1
1->2 start 2.5 size 400000
trigger id 1 oneshot
trigger id 2 barrier count 2
trigger id 3 multishot
"""


def _write(tmp_path, text, name="m.cm"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _deps(flows):
    return [flows.deps(i).tolist() for i in range(len(flows))]


def test_triggers_become_dependencies(tmp_path):
    flows = read_cm(_write(tmp_path, RING))
    assert flows.src.tolist() == [0, 1, 2, 3, 0, 1]
    assert flows.dst.tolist() == [1, 0, 3, 2, 3, 2]
    assert flows.size.tolist() == [1000, 1000, 2000, 3000, 10, 400000]
    # oneshot 1 <- flow 0; barrier 2 <- flows 1 and 2 (send_done and recv_done both mean "completed"); 3 <- flow 3
    assert _deps(flows) == [[], [0], [], [1, 2], [3], []]
    assert flows.start_ps.tolist() == [0, 0, 0, 0, 0, 2_500_000]  # default unit: microseconds
    assert flows.pg.tolist() == [3] * 6 and flows.dport.tolist() == [100] * 6
    assert flows.sport.tolist() == [10000] * 6
    assert flows.meta["flow_ids"] == [1, 2, 3, 4, 5, 0]
    assert flows.meta["prio"][4] == 1
    assert flows.meta["triggers"][2] == {"type": "barrier", "count": 2, "line": 13}
    assert flows.meta["start_unit"] == "us" and flows.meta["nodes"] == 4


@pytest.mark.parametrize("unit, scale", [("ps", 1), ("ns", 1000), ("us", 1_000_000)])
def test_start_unit_is_explicit(tmp_path, unit, scale):
    path = _write(tmp_path, "Nodes 2\nConnections 3\n0->1 start 0 size 1\n0->1 start 7 size 1\n1->0 start 1.5 size 1\n")
    flows = read_cm(path, start_unit=unit)
    assert flows.start_ps.tolist() == [0, 7 * scale, round(1.5 * scale)]
    assert flows.meta["start_unit"] == unit


def test_unknown_start_unit_lists_the_allowed_ones(tmp_path):
    with pytest.raises(InputError, match="unknown start unit 'ms'") as err:
        read_cm(_write(tmp_path, RING), start_unit="ms")
    assert "ps, ns, us" in err.value.fix


def test_multishot_with_several_targets_is_approximated_and_says_so(tmp_path):
    text = "Nodes 3\nConnections 3\nTriggers 1\n0->1 id 1 start 0 size 5 send_done_trigger 7\n"
    text += "1->2 id 2 trigger 7 size 5\n2->0 id 3 trigger 7 size 5\ntrigger id 7 multishot\n"
    path = _write(tmp_path, text)
    with pytest.warns(HtsimApproximationWarning, match=r"m\.cm:7: multishot trigger 7 approximated as oneshot"):
        flows = read_cm(path)
    assert _deps(flows) == [[], [0], [0]]
    assert flows.meta["approximations"]


def test_exact_multishot_and_oneshot_give_no_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_cm(_write(tmp_path, RING))


def test_write_then_read_gives_the_same_table(tmp_path):
    flows = make_flows([0, 3, 2, 1], [1, 0, 3, 2], [1, 20, 300, 4_000_000], [0, 1_500_000, 7, 2_000_000_000_001])
    for unit in ("ps", "ns", "us"):
        path = tmp_path / f"out_{unit}.cm"
        write_cm(flows, path, start_unit=unit)
        back = read_cm(path, start_unit=unit)
        for name in ("src", "dst", "size", "start_ps", "pg", "dport", "sport", "dep_offset", "dep_ids", "gap_ps"):
            assert np.array_equal(getattr(back, name), getattr(flows, name)), (unit, name)
    assert (tmp_path / "out_us.cm").read_text().splitlines()[:4] == [
        "Nodes 4",
        "Connections 4",
        "0->1 start 0 size 1",
        "3->0 start 1.5 size 20",
    ]


def test_write_refuses_what_the_file_cannot_hold(tmp_path):
    chained = make_flows([0, 1], [1, 0], [1, 1], 0, deps=[(), (0,)])
    with pytest.raises(InputError, match="dependencies"):
        write_cm(chained, tmp_path / "x.cm")
    other_pg = make_flows([0], [1], [1], 0, pg=2)
    with pytest.raises(InputError, match=r"FlowTable.pg\[0\]"):
        write_cm(other_pg, tmp_path / "x.cm")
    with pytest.raises(InputError, match="does not cover host id 1"):
        write_cm(make_flows([0], [1], [1], 0), tmp_path / "x.cm", nodes=1)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(InputError) as err:
        read_cm(tmp_path / "nope.cm")
    assert err.value.where == f"{tmp_path / 'nope.cm'}:0"


HEAD = "Nodes 4\nConnections 2\n"

BAD = [
    # (file text, line of the error, words in the message)
    (HEAD + "0->1 start 0 sise 10\n1->0 start 0 size 1\n", 3, "unknown flow keyword 'sise'.*did you mean 'size'"),
    (HEAD + "0->1 start 0 size 10 colour red\n1->0 start 0 size 1\n", 3, "unknown flow keyword 'colour'"),
    (
        HEAD + "0->4 start 0 size 10\n1->0 start 0 size 1\n",
        3,
        r"dst host 4 is out of range: 'Nodes 4' allows ids 0\.\.3",
    ),
    (HEAD + "0->1 start 0 size 10\n9->0 start 0 size 1\n", 4, "src host 9 is out of range"),
    (HEAD + "0->1 start 0 size 10\n-1->0 start 0 size 1\n", 4, "src host -1 must be at least 0"),
    (HEAD + "x->1 start 0 size 10\n1->0 start 0 size 1\n", 3, "src host 'x' is not an integer"),
    (HEAD + "0->0 start 0 size 10\n1->0 start 0 size 1\n", 3, "to itself"),
    (HEAD + "0->1 start 0\n1->0 start 0 size 1\n", 3, "no size"),
    (HEAD + "0->1 start 0 size 0\n1->0 start 0 size 1\n", 3, "size 0 must be at least 1"),
    (HEAD + "0->1 start 0 size 1.5\n1->0 start 0 size 1\n", 3, "size '1.5' is not an integer"),
    (HEAD + "0->1 start -3 size 1\n1->0 start 0 size 1\n", 3, "negative"),
    (HEAD + "0->1 start soon size 1\n1->0 start 0 size 1\n", 3, "start 'soon' is not a number"),
    (HEAD + "0->1 start 0 size 1 size 2\n1->0 start 0 size 1\n", 3, "'size' given twice"),
    (HEAD + "0->1 start 0 size\n1->0 start 0 size 1\n", 3, "'size' has no value"),
    (HEAD + "0->1 size 1\n1->0 start 0 size 1\n", 3, "neither a start time nor a trigger"),
    (HEAD + "0->1 start 0 size 1 id 0\n1->0 start 0 size 1\n", 3, "flow id 0 must be at least 1"),
    (HEAD + "0->1 start 0 size 1 id 5\n1->0 start 0 size 1 id 5\n", 4, "flow id 5 already used on line 3"),
    (HEAD + "0->1 start 0 size 1\n", 2, "'Connections 2' but the file has 1 flow lines"),
    ("Connections 1\n0->1 start 0 size 1\n", 2, "flow line before the 'Nodes' header"),
    ("Nodes 4\n0->1 start 0 size 1\n", 1, "missing header 'Connections'"),
    ("Node 4\nConnections 0\n", 1, "unknown line start 'Node'.*did you mean 'Nodes'"),
    ("Nodes 4\nNodes 5\n", 2, "'Nodes' given twice"),
    ("Nodes four\n", 1, "Nodes 'four' is not an integer"),
    ("Nodes 4 5\n", 1, "needs exactly one number"),
    ("Nodes 2\nConnections 1\n0->1 start 0 size 1\nTriggers 0\n", 4, "header 'Triggers' after the first flow"),
    ("Nodes 2\nConnections 0\nFailures 1\n", 3, "failures are not modelled"),
    ("Nodes 2\nConnections 0\nfailure switch_type TOR switch_id 0\n", 3, "failures are not modelled"),
]

TRIG = "Nodes 4\nConnections 3\nTriggers 1\n"
BAD_TRIGGERS = [
    (
        TRIG + "0->1 start 0 size 1\n1->2 start 0 size 1\n2->3 trigger 1 start 0 size 1\ntrigger id 1 oneshot\n",
        6,
        "both a start time and a trigger",
    ),
    (
        TRIG + "0->1 start 0 size 1\n1->2 start 0 size 1\n2->3 trigger 2 size 1\ntrigger id 1 oneshot\n",
        6,
        "trigger 2 is used here but never defined",
    ),
    (
        TRIG + "0->1 start 0 size 1 send_done_trigger 1\n1->2 start 0 size 1\n2->3 trigger 1 size 1\ntrigger id 1\n",
        7,
        "trigger 1 has no type",
    ),
    (
        TRIG + "0->1 start 0 size 1 send_done_trigger 1\n1->2 start 0 size 1\n2->3 trigger 1 size 1\n"
        "trigger id 1 oneshot barrier\n",
        7,
        "two types",
    ),
    (
        TRIG + "0->1 start 0 size 1 send_done_trigger 1\n1->2 start 0 size 1\n2->3 trigger 1 size 1\n"
        "trigger id 1 oneshot colour 3\n",
        7,
        "unknown trigger keyword 'colour'",
    ),
    (
        TRIG + "0->1 start 0 size 1 send_done_trigger 1\n1->2 start 0 size 1\n2->3 trigger 1 size 1\n"
        "trigger id 1 barier count 1\n",
        7,
        "did you mean 'barrier'",
    ),
    (
        TRIG + "0->1 start 0 size 1 send_done_trigger 1\n1->2 start 0 size 1\n2->3 trigger 1 size 1\ntrigger oneshot\n",
        7,
        "trigger has no id",
    ),
    (
        TRIG + "0->1 start 0 size 1 send_done_trigger 1\n1->2 start 0 size 1\n2->3 trigger 1 size 1\n"
        "trigger id 1 barrier\n",
        7,
        "needs 'count c'",
    ),
    (
        TRIG + "0->1 start 0 size 1\n1->2 start 0 size 1\n2->3 trigger 1 size 1\ntrigger id 1 oneshot\n",
        7,
        "no flow activates it, so they would never start",
    ),
    (
        TRIG + "0->1 start 0 size 1 send_done_trigger 1\n1->2 start 0 size 1 send_done_trigger 1\n"
        "2->3 trigger 1 size 1\ntrigger id 1 oneshot\n",
        7,
        "oneshot trigger 1 is activated 2 times",
    ),
    (
        TRIG + "0->1 start 0 size 1 send_done_trigger 1\n1->2 start 0 size 1 recv_done_trigger 1\n"
        "2->3 trigger 1 size 1\ntrigger id 1 barrier count 3\n",
        7,
        "count 3 but 2 activations.*never fire",
    ),
    (
        TRIG + "0->1 start 0 size 1 send_done_trigger 1\n1->2 start 0 size 1\n2->3 trigger 1 size 1\n"
        "trigger id 1 oneshot\ntrigger id 1 oneshot\n",
        8,
        "trigger 1 defined twice",
    ),
    (
        "Nodes 4\nConnections 1\n0->1 start 0 size 1\ntrigger id 1 oneshot\n",
        1,
        r"0 triggers declared \('Triggers' header\) but the file has 1",
    ),
    (
        "Nodes 4\nConnections 2\nTriggers 2\n0->1 id 1 trigger 1 size 1 send_done_trigger 2\n"
        "1->0 id 2 trigger 2 size 1 send_done_trigger 1\ntrigger id 1 oneshot\ntrigger id 2 oneshot\n",
        4,
        "trigger cycle: the flows on lines 4 -> 5 -> 4",
    ),
]


@pytest.mark.parametrize("text, line, words", BAD + BAD_TRIGGERS)
def test_bad_input_names_file_and_line(tmp_path, text, line, words):
    path = _write(tmp_path, text)
    with pytest.raises(InputError, match=words) as err:
        read_cm(path)
    assert err.value.where == f"{path}:{line}"
    assert err.value.fix, "every error says how to fix it"
