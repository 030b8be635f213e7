"""Pattern lookup: the layout cache gives what the hash and isomorphism give, and forgets misses on a store; label
sets found in no entry skip the layout."""

import numpy as np
import pytest

from wormhole_lab.wormhole import pattern_lookup
from wormhole_lab.wormhole.fcg import match
from wormhole_lab.wormhole.flow_paths import FlowPaths
from wormhole_lab.wormhole.memo import MemoDB
from wormhole_lab.wormhole.pattern_lookup import PatternLookup

LINE = 100_000_000_000
WIDTHS = (1, 1)  # CCA state values per flow of the entries below
# flows 0-2 and 3-5 are the same 3-flow incast on the same ports (two iterations of a collective); flows 6-8
# are an incast on other ports with a different ACK path for one flow (another pattern); flows 9-11 are the
# incast of 0-2 on other ports (another expert group's); flows 12-14 have the paths' lengths of 0-2 but two of
# them share a second port
DATA = [[1, 9], [2, 9], [3, 9]] * 2 + [[4, 8], [5, 8], [6, 8]] + [[21, 29], [22, 29], [23, 29]]
DATA += [[31, 39], [32, 39], [32, 39]]
ACK = [[7, 11], [7, 12], [7, 13]] * 2 + [[0, 14], [0, 15], [0, 15, 16]] + [[27, 41], [27, 42], [27, 43]]
ACK += [[37, 51], [37, 52], [37, 53]]


@pytest.fixture
def lookup(tmp_path):
    data_len, ack_len = [len(p) for p in DATA], [len(p) for p in ACK]
    table = np.concatenate([np.concatenate(DATA), np.concatenate(ACK)])
    data_begin = np.cumsum([0, *data_len[:-1]])
    ack_begin = sum(data_len) + np.cumsum([0, *ack_len[:-1]])
    paths = FlowPaths(table, data_begin, data_len, ack_begin, ack_len)
    hops = [f"{len(d)}+{len(a)}" for d, a in zip(DATA, ACK, strict=True)]
    names = sorted(set(hops))
    memo = MemoDB(tmp_path / "memo.sqlite", "test")
    yield PatternLookup(
        memo, "fp", paths, (np.array([names.index(h) for h in hops]), names), [LINE] * len(DATA), WIDTHS
    )
    memo.close()


def value(flows):
    return {"t_conv": 1, "flows": [{"bytes": f, "int": [f], "float": [0.5]} for f in sorted(flows)]}


def find(lookup, flows, rates):
    """``lookup.find`` for the partition of the flow ids ``flows`` (any order), ``rates`` by flow id."""
    return lookup.find(np.array(flows), np.array([rates[f] for f in flows]))


def store(lookup, flows, rates):
    lookup.store(np.array(flows), np.array([rates[f] for f in flows]), value(flows))


def counted(monkeypatch, lookup, method: str) -> list:
    """The calls of ``lookup``'s ``method`` from now on (it still runs)."""
    calls, real = [], getattr(lookup, method)
    monkeypatch.setattr(lookup, method, lambda *a: calls.append(a) or real(*a))
    return calls


def test_a_repeat_on_the_same_ports_is_found_without_hash_or_isomorphism(lookup, monkeypatch):
    rates = dict.fromkeys(range(len(DATA)), LINE)
    assert find(lookup, [0, 1, 2], rates) is None
    store(lookup, [0, 1, 2], rates)
    calls = []
    monkeypatch.setattr(pattern_lookup, "match", lambda *a: calls.append(a) or match(*a))
    found = find(lookup, [3, 4, 5], rates)
    stored, mapping = found.value, found.mapping
    assert stored == value({0, 1, 2}) and len(calls) == 1
    # stored vertex i was flow i; the same position on the same ports is flow i + 3
    assert mapping == {0: 3, 1: 4, 2: 5}
    assert find(lookup, [5, 3, 4], rates).mapping == mapping and len(calls) == 1  # from the layout cache
    # what each stored flow moved and ended with comes along in the mapping's order
    assert found.moved.tolist() == [0, 1, 2] and found.state_int.tolist() == [[0], [1], [2]]


def test_another_pattern_is_not_found_and_a_miss_is_forgotten_once_something_is_stored(lookup):
    rates = dict.fromkeys(range(len(DATA)), LINE)
    store(lookup, [0, 1, 2], rates)
    assert find(lookup, [6, 7, 8], rates) is None
    assert find(lookup, [3, 4, 5], {**rates, 4: LINE // 2}) is None  # a different rate level
    store(lookup, [6, 7, 8], rates)
    assert find(lookup, [6, 7, 8], rates) is not None


def test_a_pattern_stored_twice_is_kept_once(lookup):
    rates = dict.fromkeys(range(len(DATA)), LINE)
    store(lookup, [0, 1, 2], rates)
    store(lookup, [3, 4, 5], rates)
    assert lookup.memo.inserts == 1


def test_a_layout_known_to_find_an_entry_is_not_stored_again_and_builds_no_fcg(lookup, monkeypatch):
    rates = dict.fromkeys(range(len(DATA)), LINE)
    store(lookup, [0, 1, 2], rates)
    graphs = counted(monkeypatch, lookup, "graph")
    store(lookup, [3, 4, 5], rates)  # found stored through its FCG; its layout is kept as finding the entry
    assert len(graphs) == 1 and lookup.memo.inserts == 1
    store(lookup, [4, 5, 3], rates)
    assert find(lookup, [3, 4, 5], rates).value == value({0, 1, 2})
    assert len(graphs) == 1 and lookup.memo.inserts == 1
    store(lookup, [6, 7, 8], rates)  # another pattern is stored
    assert len(graphs) == 2 and lookup.memo.inserts == 2


def test_the_same_layout_on_other_ports_is_found_without_fcg_or_hash(lookup, monkeypatch):
    rates = dict.fromkeys(range(len(DATA)), LINE)
    store(lookup, [0, 1, 2], rates)
    find(lookup, [3, 4, 5], rates)  # the layout is now known as found
    built = []
    monkeypatch.setattr(lookup, "graph", lambda *a: built.append(a))
    found = find(lookup, [9, 10, 11], rates)
    stored, mapping = found.value, found.mapping
    assert stored == value({0, 1, 2}) and mapping == {0: 9, 1: 10, 2: 11} and not built


def test_paths_alike_in_length_but_sharing_differently_are_another_layout(lookup):
    rates = dict.fromkeys(range(len(DATA)), LINE)
    store(lookup, [0, 1, 2], rates)
    find(lookup, [3, 4, 5], rates)
    assert find(lookup, [12, 13, 14], rates) is None


def test_labels_found_in_no_entry_skip_the_layout_and_a_new_lookup_reads_those_stored(lookup, monkeypatch):
    rates = dict.fromkeys(range(len(DATA)), LINE)
    store(lookup, [0, 1, 2], rates)
    layouts = counted(monkeypatch, lookup, "_layouts")
    assert find(lookup, [3, 4, 5], {**rates, 4: LINE // 2}) is None and not layouts  # other labels: no layout made
    assert find(lookup, [12, 13, 14], rates) is None and layouts  # the same labels: the layout tells them apart
    # a lookup opened on the file later knows the stored labels from the start
    again = PatternLookup(lookup.memo, "fp", lookup.paths, lookup.shapes, lookup.line_bps, WIDTHS)
    assert find(again, [3, 4, 5], rates).value == value({0, 1, 2})
    other_config = PatternLookup(
        lookup.memo, "another fingerprint", lookup.paths, lookup.shapes, lookup.line_bps, WIDTHS
    )
    assert find(other_config, [3, 4, 5], rates) is None


def test_which_stored_flow_stands_for_which_does_not_depend_on_the_order_members_come_in(tmp_path, lookup):
    """Flows 3-5 are an incast of three alike flows: any one may stand for any stored one. The lookup picks the
    same one whatever the order of the members it is given (a set's order is an accident of how it was built)."""
    rates = dict.fromkeys(range(len(DATA)), LINE)
    store(lookup, [2, 0, 1], rates)
    mappings = set()
    for order in ([3, 4, 5], [5, 4, 3], [4, 5, 3], [5, 3, 4]):
        fresh = PatternLookup(
            lookup.memo, "fp", lookup.paths, lookup.shapes, lookup.line_bps, WIDTHS
        )  # no layout cache
        mappings.add(tuple(sorted(find(fresh, order, rates).mapping.items())))
    assert len(mappings) == 1


def test_partitions_looked_up_together_find_what_each_finds_alone(lookup):
    rates = dict.fromkeys(range(len(DATA)), LINE)
    store(lookup, [0, 1, 2], rates)
    parts = [[3, 4, 5], [6, 7, 8], [9, 10, 11], [12, 13, 14]]
    fresh = PatternLookup(lookup.memo, "fp", lookup.paths, lookup.shapes, lookup.line_bps, WIDTHS)
    alone = [find(fresh, p, rates) for p in parts]
    flows = np.array([f for p in parts for f in p])
    labels = lookup.labels_of(flows, np.full(len(flows), LINE))
    offsets = np.arange(0, len(flows) + 1, 3)
    sorted_labels = np.concatenate([np.sort(labels[a : a + 3]) for a in offsets[:-1]])
    entries, ordered = lookup.find_all(flows, offsets, np.full(len(flows), LINE), labels, sorted_labels,
                                       np.array([0, 2, 3]))  # fmt: skip
    together = [lookup.found(int(e), ordered[a : a + 3]) for e, a in zip(entries, offsets[:-1], strict=True)]
    assert [None if f is None else f.mapping for f in together] == [alone[0].mapping, None, alone[2].mapping, None]
    assert ordered[3:6].tolist() == [6, 7, 8]  # a partition not looked up keeps its flows, in order
    assert alone[1] is None and alone[3] is None  # another pattern, and the same labels on ports shared otherwise


def test_the_entries_found_as_arrays_are_those_found_one_by_one(lookup):
    rates = dict.fromkeys(range(len(DATA)), LINE)
    store(lookup, [0, 1, 2], rates)
    store(lookup, [6, 7, 8], rates)
    first, second = find(lookup, [5, 3, 4], rates), find(lookup, [8, 6, 7], rates)
    stored = lookup.stored
    assert stored.offsets.tolist() == [0, 3, 6] and stored.t_conv.tolist() == [1, 1] and stored.settled.all()
    for e, found in enumerate([first, second]):
        rows = slice(stored.offsets[e], stored.offsets[e + 1])
        assert stored.moved[rows].tolist() == found.moved.tolist()
        assert stored.state_int[rows].tolist() == found.state_int.tolist()
        assert sorted(stored.positions[rows].tolist()) == [0, 1, 2]  # each of the partition's flows once


def test_a_partition_whose_flows_come_in_another_order_than_its_layout_s_is_labelled_at_each_flow_s_rate(lookup):
    """The FCG of a new layout labels each flow with its own rate, whatever order the partition lists its flows in:
    an incast at three rate levels, stored in id order, is found when listed backwards."""
    rates = {0: LINE, 1: LINE // 2, 2: LINE // 4}
    store(lookup, [0, 1, 2], rates)
    fresh = PatternLookup(lookup.memo, "fp", lookup.paths, lookup.shapes, lookup.line_bps, WIDTHS)
    found = find(fresh, [2, 1, 0], rates)
    assert found is not None and found.mapping == {0: 0, 1: 1, 2: 2}
