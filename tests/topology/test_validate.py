"""check_topology: every structural problem is an InputError naming where it is."""

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.topology import Topology, check_topology, fat_tree, star

G = 1_000_000_000


def make(n_nodes, switches, links, rate=100 * G, delay=1_000_000, error=0.0):
    is_switch = np.zeros(n_nodes, dtype=bool)
    is_switch[list(switches)] = True
    links = np.array(links, dtype=np.int64).reshape(-1, 2)
    n = links.shape[0]
    return Topology(
        is_switch=is_switch,
        link_a=links[:, 0].copy(),
        link_b=links[:, 1].copy(),
        link_rate_bps=np.full(n, rate, dtype=np.int64),
        link_delay_ps=np.full(n, delay, dtype=np.int64),
        link_error_rate=np.full(n, error, dtype=np.float64),
    )


def with_field(t, **changes):
    fields = {f: getattr(t, f) for f in Topology.__dataclass_fields__}
    fields.update(changes)
    return Topology(**fields)


def raises(topo, fragment, expect_where=None, **kw):
    """check_topology(topo, **kw) must fail with ``fragment`` in the problem (and at ``expect_where``)."""
    with pytest.raises(InputError) as info:
        check_topology(topo, **kw)
    assert fragment in info.value.problem, info.value
    assert info.value.fix
    if expect_where is not None:
        assert info.value.where == expect_where
    return info.value


def test_valid_topologies_pass():
    check_topology(star(4))
    check_topology(fat_tree(4))
    check_topology(make(2, [], [(0, 1)]))  # two NICs cabled back to back


def test_inconsistent_lengths():
    t = star(3)
    raises(with_field(t, link_rate_bps=t.link_rate_bps[:2]), "inconsistent shapes")
    raises(with_field(t, link_a=t.link_a.reshape(3, 1)), "inconsistent shapes")


def test_non_integer_arrays():
    t = star(3)
    raises(with_field(t, link_rate_bps=t.link_rate_bps.astype(float)), "must hold integers")


def test_ids_out_of_range():
    raises(make(3, [2], [(0, 2), (1, 3)]), "outside 0..2", expect_where="topology.links[1]")
    raises(make(3, [2], [(0, 2), (-1, 2)]), "outside 0..2")


def test_rates_delays_error_rates():
    t = star(3)
    raises(with_field(t, link_rate_bps=np.array([1, 0, 1])), "rate 0", expect_where="topology.links[1]")
    raises(with_field(t, link_rate_bps=np.array([1, 1, -5])), "rate -5")
    raises(with_field(t, link_delay_ps=np.array([0, -1, 0])), "negative delay")
    raises(with_field(t, link_error_rate=np.array([0.0, 1.5, 0.0])), "error rate 1.5")
    raises(with_field(t, link_error_rate=np.array([0.0, np.nan, 0.0])), "error rate nan")


def test_self_loop():
    raises(make(3, [2], [(0, 2), (1, 2), (2, 2)]), "self loop on node 2", expect_where="topology.links[2]")


@pytest.mark.parametrize("dup", [(0, 2), (2, 0)])
def test_duplicate_link(dup):
    e = raises(make(3, [2], [(0, 2), (1, 2), dup]), "duplicates link 0", expect_where="topology.links[2]")
    assert "parallel" in e.fix


def test_link_where_is_used():
    topo = make(3, [2], [(0, 2), (1, 2), (1, 2)])
    raises(topo, "duplicates link 1", expect_where="f.txt:5", link_where=["f.txt:3", "f.txt:4", "f.txt:5"])


def test_disconnected_host():
    raises(make(4, [3], [(0, 3), (1, 3)]), "host 2 has no link", expect_where="here", where="here")


def test_unreachable_hosts():
    # two separate stars
    raises(make(6, [2, 5], [(0, 2), (1, 2), (3, 5), (4, 5)]), "cannot reach each other")


def test_hosts_never_transit():
    # 1 - 0 - 2 through host 0: 1 and 2 have no switch path
    raises(make(3, [], [(0, 1), (0, 2)]), "hosts 1 and 2 cannot reach each other")
    # a switch island reachable only through a dual-homed host
    raises(make(5, [3, 4], [(0, 3), (0, 4), (1, 3), (2, 4)]), "cannot reach each other")


def test_no_host():
    raises(make(2, [0, 1], [(0, 1)]), "no host")
