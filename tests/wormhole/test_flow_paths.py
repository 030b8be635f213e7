"""FlowPaths: each flow's ports and path-shape label, read from the engine's path table on demand."""

import numpy as np

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, prepare
from wormhole_lab.topology.builders import rail_optimized
from wormhole_lab.topology.routing import Routes
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.wormhole.flow_paths import FlowPaths


def test_ports_sets_and_shapes_are_the_routes_of_each_flow():
    topo = rail_optimized(2, 4)
    hosts = topo.hosts
    flows = make_flows(hosts[[0, 1, 5, 7]], hosts[[4, 2, 1, 3]], [10_000] * 4, [0] * 4)
    state = prepare(Scenario(topo, flows, preset("hp"))).state
    routes = Routes(topo).paths(flows)
    paths = FlowPaths.of_state(state)
    delay = np.arange(state.pt.shape[0]) * 1000 + 7  # distinct per port, and not whole nanoseconds
    codes, labels = paths.shape_codes(delay)
    shapes = np.array(labels, dtype=object)[codes]
    for f in range(len(flows)):
        data, ack = paths.data(f), paths.ack(f)
        assert data.tolist() == routes.data(f).tolist() and ack.tolist() == routes.ack(f).tolist()
        assert paths[f] == frozenset(data.tolist()) | frozenset(ack.tolist())
        assert shapes[f] == f"{len(data)}+{len(ack)}@{delay[data].sum() // 1000}+{delay[ack].sum() // 1000}"
    assert len(paths) == len(flows) and len(set(shapes.tolist())) > 1


def test_a_completed_flows_set_is_dropped_and_made_again_if_asked():
    paths = FlowPaths(np.array([5, 6, 7, 6, 5]), [0, 1], [2, 1], [3, 4], [2, 1])
    assert paths[0] == {5, 6} and paths[1] == {5, 6} and paths.data(1).tolist() == [6]
    paths.forget(np.array([0]))
    assert 0 not in paths._sets and 1 in paths._sets and paths[0] == {5, 6}


def test_flat_gives_the_data_then_ack_ports_of_the_flows_asked_for_with_their_index():
    paths = FlowPaths(np.array([5, 6, 7, 6, 5, 8]), [0, 1, 5], [2, 1, 1], [3, 4, 2], [2, 1, 1])
    ports, owners = paths.flat(np.array([2, 0]))
    assert ports.tolist() == [8, 5, 6, 7, 6, 5] and owners.tolist() == [0, 1, 1, 0, 1, 1]
    assert [len(a) for a in paths.flat(np.array([], dtype=np.int64))] == [0, 0]


def test_shape_codes_number_the_shapes_in_order_whether_or_not_they_are_ranked_on_the_way(monkeypatch):
    from wormhole_lab.wormhole import flow_paths

    # five flows, three shapes: ACK paths of 1 or 2 hops, data paths of 1 or 2 hops, delays of their ports
    paths = FlowPaths(np.array([0, 1, 2, 3, 4]), [0, 0, 1, 0, 0], [2, 2, 1, 2, 1], [3, 3, 3, 3, 4], [1, 1, 1, 2, 1])
    delay = np.array([1000, 2000, 4000, 8000, 16000])
    codes, labels = paths.shape_codes(delay)
    assert labels == sorted(labels) and len(labels) == 4
    assert [labels[c] for c in codes] == ["2+1@3+8", "2+1@3+8", "1+1@2+8", "2+2@3+24", "1+1@1+16"]
    monkeypatch.setattr(flow_paths, "CODE_LIMIT", 3)  # ranks the codes before each column that would pass it
    assert [c.tolist() for c in paths.shape_codes(delay)[:1]] == [codes.tolist()]
    one = FlowPaths(np.array([0, 1]), [0, 0], [1, 1], [1, 1], [1, 1])
    assert one.shape_codes(delay)[0].tolist() == [0, 0] and one.shape_codes(delay)[1] == ["1+1@1+2"]
    none = np.zeros(0, dtype=np.int64)
    assert FlowPaths(none, none, none, none, none).shape_codes(delay)[1] == []
