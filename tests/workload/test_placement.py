"""Placement: Megatron rank order, groups on a rail-optimized cluster, impossible plans."""

import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.workload.models import TABLE1, placement_for
from wormhole_lab.workload.placement import Placement

PLANS = [placement_for(name) for name in TABLE1]


def _partition(groups, n):
    """Every rank appears in exactly one group."""
    flat = sorted(r for g in groups for r in g)
    return flat == list(range(n))


def test_megatron_order():
    pl = Placement(64, 8, tp=8, pp=2, dp=4)
    for r in range(64):
        assert pl.coords(r) == (r % 8, (r // 8) % 4, r // 32)
        assert pl.rank(*pl.coords(r)) == r


@pytest.mark.parametrize("pl", PLANS, ids=str)
def test_table1_groups(pl):
    n = pl.n_gpus
    for kind, size in (("tp", pl.tp), ("dp", pl.dp), ("pp", pl.pp), ("ep", pl.ep), ("edp", pl.dp // pl.ep)):
        groups = pl.groups(kind)
        assert _partition(groups, n), kind
        assert all(len(g) == size for g in groups), kind
    assert pl.tp * pl.dp * pl.pp == n
    # TP groups sit inside one server; DP, PP and EP peers on one rail (TP fills the server here)
    assert all(len({pl.server(r) for r in g}) == 1 for g in pl.tp_groups())
    for kind in ("dp", "pp", "ep", "edp"):
        assert all(len({pl.rail(r) for r in g}) == 1 for g in pl.groups(kind)), kind
    # PP groups are ordered by stage; DP peers of a stage are in different servers
    assert all([pl.coords(r)[2] for r in g] == list(range(pl.pp)) for g in pl.pp_groups())
    assert all(len({pl.server(r) for r in g}) == len(g) for g in pl.dp_groups())


def test_ep_groups_are_consecutive_dp_ranks():
    pl = Placement(64, 4, tp=2, pp=2, dp=16, ep=4)
    dp_sets = [set(g) for g in pl.dp_groups()]
    for g in pl.ep_groups():
        assert any(set(g) <= s for s in dp_sets)
        t, d0, p = pl.coords(g[0])
        assert d0 % 4 == 0
        assert [pl.coords(r) for r in g] == [(t, d0 + e, p) for e in range(4)]
    for g in pl.edp_groups():
        assert [pl.coords(r)[1] % 4 for r in g] == [pl.coords(g[0])[1]] * 4
        assert len(g) == 4


def test_dp_derived():
    assert Placement(128, 8, tp=8, pp=4).dp == 4


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        (dict(n_gpus=64, tp=8, pp=2, dp=8), r"TP\*DP\*PP = 128"),
        (dict(n_gpus=64, tp=16, pp=1, dp=4), "span servers"),
        (dict(n_gpus=64, tp=3, pp=1), "cannot be split"),
        (dict(n_gpus=64, tp=8, pp=2, dp=4, ep=8), "EP8 does not divide DP4"),
        (dict(n_gpus=12, tp=4, pp=1), "whole number"),
        (dict(n_gpus=0, tp=1), "at least 1"),
        (dict(n_gpus=8, tp=True), "not an integer"),
    ],
)
def test_impossible_plans(kwargs, field):
    with pytest.raises(InputError, match=field) as err:
        Placement(gpus_per_server=8, **kwargs)
    assert err.value.fix


def test_unknown_group_kind():
    with pytest.raises(InputError, match="unknown group kind"):
        Placement(8, 8, tp=8).groups("sp")
