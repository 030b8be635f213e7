"""Max-min fair rates by progressive filling (water-filling): ``waterfill`` on a closed set of flows (every
flow on a listed port is listed, as a connected component or a union of them is), and ``refill``, the incremental
recomputation the loop uses, which fills only the flows whose rate can change and gives the same rates to the bit.

Flows and ports form a bipartite graph: flow ``f`` crosses ``flow_ports[flow_off[f]:flow_off[f + 1]]``; the
``port_cnt[p]`` flows on port ``p`` are ``port_flows[port_off[p]:port_off[p] + port_cnt[p]]``.
"""

import numpy as np

from wormhole_lab.flowlevel.jit import flow_kernel

# stats[int64]: counters the loop keeps between calls
S_EPOCH = 0  # the stamp counter: each instant and each fill round takes the next value (marks in the scratch arrays)
S_RECOMPUTES = 1  # instants whose rates were recomputed
S_RERATED = 2  # flows whose rate was recomputed, summed over recomputations
S_LARGEST = 3  # most flows in one recomputed set
S_LEVELS = 4  # filling levels, summed over runs (waterfill only)
S_ROUNDS = 5  # fills of a region (refill: one per recomputation, plus one per time the set grew)
S_VISITED = 6  # flows a fill went through (the set and the flows on its ports held at their rates), summed
S_NEXT_START = 7  # the loop's position in its start list
S_DRAINS = 8  # entries in the loop's drain heap
S_N = 9

LOOSE_MARGIN = 1e-9  # a port loaded within this share of its capacity counts as full (float sums drift)


@flow_kernel
def waterfill(ft, n_flows, n_ports, epoch):
    """Write the max-min fair rate of the ``n_flows`` flows on the first ``n_ports`` ports of ``ft.comp_ports``
    (``ft``: the loop's ``FlowTables``) into ``ft.share`` (capacity units); return the number of filling levels.

    Each level raises every unfrozen flow to the smallest fair share left on any port (residual capacity over
    unfrozen flows) and freezes the flows on the ports at exactly that share. Only the ports of those flows
    change, and every flow of a level subtracts the same value, so a component's rates do not depend on other
    components in the set, nor on the order they are listed in: recomputing one component gives bit-identical rates
    to recomputing everything. ``frozen[f] == epoch`` marks flows done in this call; ``res``, ``cnt`` (per
    port) and ``fresh`` (per flow) are scratch."""
    ports, flow_off, flow_ports = ft.comp_ports, ft.flow_off, ft.flow_ports
    port_off, port_flows = ft.port_off, ft.port_flows
    port_cnt, cap, res, cnt, frozen, fresh, share = ft.port_cnt, ft.cap, ft.res, ft.cnt, ft.frozen, ft.fresh, ft.share
    for i in range(n_ports):
        p = ports[i]
        res[p] = cap[p]
        cnt[p] = port_cnt[p]
    left, levels = n_flows, 0
    while left > 0:
        level = np.inf
        for i in range(n_ports):
            p = ports[i]
            if cnt[p] > 0 and res[p] / cnt[p] < level:
                level = res[p] / cnt[p]
        k = 0
        for i in range(n_ports):
            p = ports[i]
            if cnt[p] > 0 and res[p] / cnt[p] == level:
                for j in range(port_off[p], port_off[p] + port_cnt[p]):
                    f = port_flows[j]
                    if frozen[f] != epoch:
                        frozen[f] = epoch
                        share[f] = level
                        fresh[k] = f
                        k += 1
        for i in range(k):
            f = fresh[i]
            for j in range(flow_off[f], flow_off[f + 1]):
                q = flow_ports[j]
                res[q] = max(res[q] - level, 0.0)  # rounding must not leave a negative share
                cnt[q] -= 1
        left -= k
        levels += 1
    return levels


@flow_kernel
def mark_port(p, epoch, port_mark, ports, n_ports):
    """Add port ``p`` to ``ports[:n_ports]`` unless it is in already (``port_mark[p] == epoch``); returns the new
    size."""
    if port_mark[p] != epoch:
        port_mark[p] = epoch
        ports[n_ports] = p
        n_ports += 1
    return n_ports


@flow_kernel
def _push(hkey, hitem, hver, size, key, item, ver):
    """Push (key, item, ver) on the binary min-heap of ``size`` entries; returns the new size."""
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        if hkey[parent] <= key:
            break
        hkey[i], hitem[i], hver[i] = hkey[parent], hitem[parent], hver[parent]
        i = parent
    hkey[i], hitem[i], hver[i] = key, item, ver
    return size + 1


@flow_kernel
def _pop(hkey, hitem, hver, size):
    """Drop the heap's smallest entry (read it at index 0 first); returns the new size."""
    size -= 1
    key, item, ver = hkey[size], hitem[size], hver[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and hkey[c + 1] < hkey[c]:
            c += 1
        if hkey[c] >= key:
            break
        hkey[i], hitem[i], hver[i] = hkey[c], hitem[c], hver[c]
        i = c
    if size > 0:
        hkey[i], hitem[i], hver[i] = key, item, ver
    return size


@flow_kernel
def _add_flow(
    f, epoch, n_flows, n_ports, n_loose, flow_off, flow_ports, port_cnt, cap, load, neck, neck_cnt, prev_neck,
    flow_mark, comp_flows, port_mark, comp_ports, loose_mark, loose,
):  # fmt: skip
    """Put flow ``f`` in the recomputed set, its tight ports in the region and its loose ports on the loose list;
    returns the new sizes. A port is tight when it is an active flow's bottleneck (``neck_cnt``) or was made
    tight during this instant. A flow with no tight port gets its port of least spare capacity per flow tight,
    so that the fill freezes it somewhere (where it will likely be held). (The arrays of ``FlowTables`` it uses
    are passed one by one: a kernel taking the whole tuple costs seconds of compilation.)"""
    flow_mark[f] = epoch
    comp_flows[n_flows] = f
    prev_neck[f] = neck[f]
    tight, best, best_share = False, -1, np.inf
    for e in range(flow_off[f], flow_off[f + 1]):
        q = flow_ports[e]
        if port_mark[q] == epoch:
            tight = True
        elif neck_cnt[q] > 0:
            n_ports = mark_port(q, epoch, port_mark, comp_ports, n_ports)
            tight = True
        else:
            if loose_mark[q] != epoch:
                loose_mark[q] = epoch
                loose[n_loose] = q
                n_loose += 1
            spare = (cap[q] - load[q]) / port_cnt[q]
            if spare < best_share:
                best, best_share = q, spare
    if not tight:
        n_ports = mark_port(best, epoch, port_mark, comp_ports, n_ports)
    return n_flows + 1, n_ports, n_loose


@flow_kernel
def _fill_region(
    n_ports, epoch, stamp, ports, flow_off, flow_ports, port_off, port_flows, port_cnt, cap, res, cnt, frozen, fresh,
    share, flow_mark, port_mark, port_level, port_ver, neck, hkey, hitem, hver, dirty, dirty_mark, outside, seen,
    rate,
):  # fmt: skip
    """One water-filling of the region (``ports[:n_ports]``; the ``FlowTables`` arrays of these names are passed one
    by one, as to ``_add_flow``) with the flows outside the recomputed set (``flow_mark != epoch``) held at their
    rates; returns the number of those outside flows, listed in ``outside``.

    The same levels in the same order as ``waterfill`` on the whole graph: a port's share is its residual capacity
    over its unfrozen flows, the smallest share left is the next level, and every port at exactly that share
    freezes its unfrozen flows, each of which then subtracts the level from its ports. Only the region's ports are
    kept, so a flow outside the set, whose bottleneck may lie outside the region, freezes at its own rate instead:
    it is a heap entry of that key beside the ports' shares. The heap pops the levels in the order ``waterfill``'s
    scans find them (a port's entry is stale once its version moved on), so where the outside flows' rates are
    what the whole graph gives, so are every other rate and port level, to the bit. ``share[f]`` receives each
    flow's level, ``port_level[p]`` the level at which port p froze (-1: never, it was not a bottleneck), and a
    flow of the set records the port that froze it in ``neck``."""
    n_all = port_cnt.shape[0]
    size = 0
    for i in range(n_ports):
        p = ports[i]
        res[p] = cap[p]
        cnt[p] = port_cnt[p]
        port_level[p] = -1.0
        port_ver[p] += 1
        if cnt[p] > 0:
            size = _push(hkey, hitem, hver, size, res[p] / cnt[p], p, port_ver[p])
    n_out = 0
    for i in range(n_ports):
        p = ports[i]
        for j in range(port_off[p], port_off[p] + port_cnt[p]):
            g = port_flows[j]
            if flow_mark[g] != epoch and seen[g] != stamp:
                seen[g] = stamp
                outside[n_out] = g
                n_out += 1
                size = _push(hkey, hitem, hver, size, rate[g], n_all + g, 0)
    while size > 0:
        level = hkey[0]
        k = 0
        while size > 0 and hkey[0] == level:
            item, ver = hitem[0], hver[0]
            size = _pop(hkey, hitem, hver, size)
            if item >= n_all:  # an outside flow at its own rate
                g = item - n_all
                if frozen[g] != stamp:
                    frozen[g] = stamp
                    share[g] = level
                    fresh[k] = g
                    k += 1
            elif ver == port_ver[item]:
                port_level[item] = level
                for j in range(port_off[item], port_off[item] + port_cnt[item]):
                    f = port_flows[j]
                    if frozen[f] != stamp:
                        frozen[f] = stamp
                        share[f] = level
                        fresh[k] = f
                        k += 1
                        if flow_mark[f] == epoch:
                            neck[f] = item
        n_dirty = 0
        for i in range(k):
            f = fresh[i]
            for j in range(flow_off[f], flow_off[f + 1]):
                q = flow_ports[j]
                if port_mark[q] == epoch:
                    res[q] = max(res[q] - level, 0.0)  # as waterfill: rounding must not leave a negative share
                    cnt[q] -= 1
                    if dirty_mark[q] != stamp:
                        dirty_mark[q] = stamp
                        dirty[n_dirty] = q
                        n_dirty += 1
        for i in range(n_dirty):
            q = dirty[i]
            dirty_mark[q] = 0
            port_ver[q] += 1
            if cnt[q] > 0:
                size = _push(hkey, hitem, hver, size, res[q] / cnt[q], q, port_ver[q])
    return n_out


@flow_kernel
def refill(ft, n_changed, epoch):
    """Max-min rates after the flows on the ports ``ft.changed[:n_changed]`` changed (flows started or drained
    there), recomputing only the flows whose rate can change. Returns the size of that set, ``ft.comp_flows[:n]``
    (marked ``flow_mark == epoch``), whose new rates are in ``ft.share``; every other active flow keeps its rate.

    Every active flow remembers the port that froze it (``neck``, counted per port in ``neck_cnt``): there it had
    the largest rate and the port was full. Ports are tight (some flow's bottleneck) or loose. The set starts
    with the new flows and the flows whose bottleneck is a changed port; the region is the tight ports of the
    set's flows and of the changed ports, and every flow whose bottleneck is in the region joins the set too (its
    rate is the likeliest to change: taking it at once saves a fill). ``_fill_region`` fills the region with the
    other flows on it held at their rates; loose ports are left out of the fill. Then:

    - a flow held at its rate keeps it if the fill froze it at that rate and its bottleneck, if in the region,
      froze at that same level (so it still has a full port where it has the largest rate); otherwise it joins
      the set and its ports the region;
    - a loose port stays out if its load (``load``: the sum of its flows' rates, kept as rates change) with the
      set's new rates stays below its capacity by a margin: a port that is not full is no flow's bottleneck, and
      removing it changes neither the max-min allocation nor any filling level; otherwise it becomes tight.

    When neither grew the set or region, every flow has a full port where it has the largest rate, which is the
    max-min allocation (it is unique), and the fill met the levels in the order a whole water-filling meets them;
    otherwise the region is filled again. At worst the set becomes the whole connected component, which is the
    whole recomputation."""
    flow_mark, port_off, port_flows, port_cnt, neck = ft.flow_mark, ft.port_off, ft.port_flows, ft.port_cnt, ft.neck
    share, rate, port_mark, port_level, outside = ft.share, ft.rate, ft.port_mark, ft.port_level, ft.outside
    flow_off, flow_ports, comp_flows, loose, delta, load, cap = (
        ft.flow_off,
        ft.flow_ports,
        ft.comp_flows,
        ft.loose,
        ft.delta,
        ft.load,
        ft.cap,
    )
    stats, neck_cnt, loose_mark = ft.stats, ft.neck_cnt, ft.loose_mark
    # the arrays _add_flow and _fill_region take
    arrays = (
        flow_off, flow_ports, port_cnt, cap, load, neck, neck_cnt, ft.prev_neck, flow_mark, comp_flows, port_mark,
        ft.comp_ports, loose_mark, loose,
    )  # fmt: skip
    fill_arrays = (
        ft.comp_ports, flow_off, flow_ports, port_off, port_flows, port_cnt, cap, ft.res, ft.cnt, ft.frozen, ft.fresh,
        share, flow_mark, port_mark, port_level, ft.port_ver, neck, ft.hkey, ft.hitem, ft.hver, ft.dirty,
        ft.dirty_mark, outside, ft.seen, rate,
    )  # fmt: skip
    n_flows, n_ports, n_loose = 0, 0, 0
    for i in range(n_changed):
        p = ft.changed[i]
        if neck_cnt[p] > 0:
            n_ports = mark_port(p, epoch, port_mark, ft.comp_ports, n_ports)
        elif loose_mark[p] != epoch:
            loose_mark[p] = epoch
            loose[n_loose] = p
            n_loose += 1
    for i in range(n_changed):
        p = ft.changed[i]
        for j in range(port_off[p], port_off[p] + port_cnt[p]):
            f = port_flows[j]
            if flow_mark[f] != epoch and (neck[f] == p or neck[f] < 0):
                n_flows, n_ports, n_loose = _add_flow(f, epoch, n_flows, n_ports, n_loose, *arrays)
    k = 0
    while True:
        while k < n_ports:
            p = ft.comp_ports[k]
            k += 1
            for j in range(port_off[p], port_off[p] + port_cnt[p]):
                f = port_flows[j]
                if flow_mark[f] != epoch and neck[f] == p:
                    n_flows, n_ports, n_loose = _add_flow(f, epoch, n_flows, n_ports, n_loose, *arrays)
        stats[S_EPOCH] += 1  # later than any stamp or epoch in the scratch arrays
        stats[S_ROUNDS] += 1
        n_out = _fill_region(n_ports, epoch, stats[S_EPOCH], *fill_arrays)
        stats[S_VISITED] += n_flows + n_out
        grown = False
        for i in range(n_out):
            g = outside[i]
            b = neck[g]
            if share[g] != rate[g] or b < 0 or (port_mark[b] == epoch and port_level[b] != rate[g]):
                n_flows, n_ports, n_loose = _add_flow(g, epoch, n_flows, n_ports, n_loose, *arrays)
                grown = True
        for i in range(n_loose):
            delta[loose[i]] = 0.0
        for i in range(n_flows):
            f = comp_flows[i]
            d = share[f] - rate[f]
            for e in range(flow_off[f], flow_off[f + 1]):
                delta[flow_ports[e]] += d  # read for loose ports only
        for i in range(n_loose):
            q = loose[i]
            if port_mark[q] != epoch and load[q] + delta[q] > cap[q] * (1.0 - LOOSE_MARGIN):
                n_ports = mark_port(q, epoch, port_mark, ft.comp_ports, n_ports)
                grown = True
        if not grown:
            break
    for i in range(n_flows):
        f = comp_flows[i]
        if ft.prev_neck[f] >= 0:
            neck_cnt[ft.prev_neck[f]] -= 1
        neck_cnt[neck[f]] += 1
    return n_flows
