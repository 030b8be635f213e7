"""Flow starts and completions, queued inside the kernel for the partitioning layer above.

Returning to Python at every flow event costs more than the events between them when flows are
short and many. So the kernel logs them and returns only when the layer above must act now: the log
is full; a flow marked ``FL_EAGER`` started or completed (memo lookups need a partition as it forms;
the kernel returns once the other events of that instant have run, so that flows starting together,
as in a collective, form their partition in one step), unless the layer above said that completions in
its partition form none it would look up (``PA_QUIET_FOR``); or a starting flow touches a partition that is
being fast-forwarded (it must skip back to this moment). Otherwise the log waits until a partition may
be steady once the logged flows are placed.
"""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    FL_APATH_BEGIN,
    FL_APATH_LEN,
    FL_EAGER,
    FL_PART,
    FL_PATH_BEGIN,
    FL_PATH_LEN,
    FL_STATE,
    FLOG_FLOW,
    FLOG_STARTED,
    FLOG_TIME,
    FS_ACTIVE,
    G_FLOW_EVENT,
    G_FLOW_LOG_N,
    G_LOG_DUE,
    G_LOG_STARTS,
    G_NOW,
    G_WENT_BACK,
    PA_LEFT_AT,
    PA_QUIET_FOR,
    PA_SKIP_END,
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
def record(g, pt, fl, parts, path_ports, flow_log):
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
            for_whom = parts[p, PA_QUIET_FOR]
            quiet = g[G_LOG_STARTS] == 0 and g[G_WENT_BACK] == 0 and (for_whom == -1 or for_whom == f)
    if fl[f, FL_EAGER] == 1 and not quiet:
        g[G_LOG_DUE] = 1
    return n + 1 == flow_log.shape[0]
