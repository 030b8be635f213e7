"""Flow starts and completions, queued inside the kernel for the partitioning layer above.

Returning to Python at every flow event costs more than the events between them when flows are
short and many. So the kernel logs them and returns only when the layer above must act now: the log
is full; a flow marked ``FL_EAGER`` started or completed (memo lookups need a partition as it forms;
the kernel returns once the other events of that instant have run, so that flows starting together,
as in a collective, form their partition in one step), unless every member of the completing flow's
partition is down to its last ``CI_QUIET_TAIL`` bytes, so that no partition its completion leaves can
be looked up (and no start waits in the log: its partition is not known yet); or a starting flow
touches a partition that is being fast-forwarded (it must skip back to this moment). Otherwise the log
waits until a partition may be steady once the logged flows are placed.
"""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CI_QUIET_TAIL,
    FL_APATH_BEGIN,
    FL_APATH_LEN,
    FL_EAGER,
    FL_PART,
    FL_PATH_BEGIN,
    FL_PATH_LEN,
    FL_SIZE,
    FL_SLOT,
    FL_STATE,
    FLOG_FLOW,
    FLOG_STARTED,
    FLOG_TIME,
    FS_ACTIVE,
    FW_SND_NXT,
    G_FLOW_EVENT,
    G_FLOW_LOG_N,
    G_LOG_DUE,
    G_LOG_STARTS,
    G_NOW,
    G_WENT_BACK,
    PA_LEFT_AT,
    PA_SKIP_END,
    PA_SPENT,
    PM_NEXT,
    PMP_HEAD,
    PT_PART,
)


@kernel
def _touches_skip(pt, parts, path_ports, begin, length, now):
    for i in range(begin, begin + length):
        p = pt[path_ports[i], PT_PART]
        if p >= 0 and parts[p, PA_SKIP_END] > now:
            return True
    return False


@kernel
def _spent(fl, fw, ci, parts, pm_flow, pm_part, p):
    """No member of partition ``p`` has ``CI_QUIET_TAIL`` bytes or more left to send. Kept in ``PA_SPENT`` until the
    partition changes: sent bytes only grow until a QP goes back (``G_WENT_BACK``). A member whose NIC gave its slot
    back has finished: nothing left."""
    if parts[p, PA_SPENT]:
        return True
    tail = ci[CI_QUIET_TAIL]
    if tail == 0:
        return False
    m = pm_part[p, PMP_HEAD]
    while m >= 0:
        s = fl[m, FL_SLOT]
        if s >= 0 and fl[m, FL_SIZE] - fw[s, FW_SND_NXT] >= tail:
            return False
        m = pm_flow[m, PM_NEXT]
    parts[p, PA_SPENT] = 1
    return True


@kernel
def record(g, pt, fl, fw, parts, path_ports, flow_log, ci, pm_flow, pm_part):
    """Log the flow event in ``g[G_FLOW_EVENT]``; True when the layer above must take the log now."""
    f = g[G_FLOW_EVENT]
    now = g[G_NOW]
    g[G_FLOW_EVENT] = -1
    n = g[G_FLOW_LOG_N]
    flow_log[n, FLOG_FLOW] = f
    flow_log[n, FLOG_TIME] = now
    started = fl[f, FL_STATE] == FS_ACTIVE
    flow_log[n, FLOG_STARTED] = started
    g[G_FLOW_LOG_N] = n + 1
    quiet = False
    if started:
        g[G_LOG_STARTS] += 1
        fl[f, FL_PART] = parts.shape[0] - 1  # the bucket of flows not placed in a partition yet
        if _touches_skip(pt, parts, path_ports, fl[f, FL_PATH_BEGIN], fl[f, FL_PATH_LEN], now) or _touches_skip(
            pt, parts, path_ports, fl[f, FL_APATH_BEGIN], fl[f, FL_APATH_LEN], now
        ):
            return True
    else:
        p = fl[f, FL_PART]
        if 0 <= p < parts.shape[0] - 1:
            if parts[p, PA_LEFT_AT] == 0:
                parts[p, PA_LEFT_AT] = now  # the partition may have split: see rate_window.mark_candidates
            # only an eager flow's completion would make the kernel return: the others need no walk of the partition
            quiet = (
                fl[f, FL_EAGER] == 1
                and g[G_LOG_STARTS] == 0
                and g[G_WENT_BACK] == 0
                and _spent(fl, fw, ci, parts, pm_flow, pm_part, p)
            )
    if fl[f, FL_EAGER] == 1 and not quiet:
        g[G_LOG_DUE] = 1
    return n + 1 == flow_log.shape[0]
