"""Max-min fair rates by progressive filling (water-filling) on one set of flows and the ports they cross.

Flows and ports form a bipartite graph: flow ``f`` crosses ``flow_ports[flow_off[f]:flow_off[f + 1]]``; the
``port_cnt[p]`` flows on port ``p`` are ``port_flows[port_off[p]:port_off[p] + port_cnt[p]]``. The set given
must be closed (every flow on a listed port is listed), as a connected component or a union of them is.
"""

import numpy as np

from wormhole_lab.flowlevel.jit import flow_kernel


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
