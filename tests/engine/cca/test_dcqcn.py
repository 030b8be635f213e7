"""DCQCN's rate decrease and increase against sequences computed by hand for a scripted CNP pattern."""

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine import wheel
from wormhole_lab.engine.cca import dcqcn
from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.state import _float_config, _int_config

US = 1_000_000  # ps
NS = 1_000
LINE = 100 * 10**9
G = 1 / 256
AI = 20 * 10**6  # preset dcqcn at 100G: RATE_AI 20 Mb/s, RATE_HAI 200 Mb/s
HAI = 200 * 10**6


def drive(cnp_times, until, clamp=False):
    """Feed CNPs at the given times into one QP and run its timers; log (time, rate, target) at each change."""
    cfg = preset("dcqcn").with_(clamp_target_rate=clamp)
    ci = _int_config(cfg)
    cf = _float_config(cfg)
    fl = np.zeros((1, L.FL_N), dtype=np.int64)  # flow 0 holds slot 0 of fw and ff
    fw = np.zeros((1, L.FW_N), dtype=np.int64)
    ff = np.zeros((1, L.FF_N))
    fw[0, L.FW_RATE] = fw[0, L.FW_MAX_RATE] = LINE
    dcqcn.init(fl, ff, fw, 0)
    g = np.zeros(L.G_N, dtype=np.int64)
    events = wheel.new_events(g, 4096)  # stale increase timers pile up: room for them
    ack = np.zeros((1, L.PK_N), dtype=np.int64)
    ack[0, L.PK_ECN] = 1  # an ACK carrying the CNP flag
    cnps = list(cnp_times)
    log = []
    while True:
        r = wheel.first(g, events)
        t_timer = events[r, L.E_TIME] if r >= 0 else None
        if cnps and (t_timer is None or cnps[0] < t_timer):
            now = cnps.pop(0)
            dcqcn.on_ack(g, events, ack, None, fl, ff, fw, ci, cf, 0, 0, now)
        else:
            if t_timer is None or t_timer > until:
                return log
            now, kind, b = events[r, L.E_TIME], events[r, L.E_KIND], events[r, L.E_B]
            wheel.take(g, events, r)
            generation = fw[0, L.FW_RP_GEN] if kind == L.EV_DCQCN_INCREASE else fw[0, L.FW_TIMER_GEN]
            if b == generation:
                dcqcn.on_timer(g, events, fl, ff, fw, ci, cf, 0, kind, now)
        entry = (int(now), int(fw[0, L.FW_RATE]), int(fw[0, L.FW_TARGET]))
        if not log or entry[1:] != log[-1][1:]:
            log.append(entry)


def test_two_cnps_then_recovery_without_clamp():
    log = drive([0, 10 * US + 500 * NS], until=1000 * US)
    # t=0: first CNP keeps the rate (RateOnFirstCnp 1.0), alpha = 1
    # alpha decays every 1 us; the decrease check runs at 4 us + 1 ns and every 4 us after
    a4 = (1 - G) ** 4
    r1 = int(LINE * (1 - a4 / 2))
    # second CNP at 10.5 us: alpha gets +g at 11 us, decays at 12 us; decrease at 12 us + 1 ns
    a12 = ((1 - G) ** 11 + G) * (1 - G)
    r2 = int(r1 * (1 - a12 / 2))
    # stage 0 at both decreases, so the target stays at line rate; the increase timer restarts at 12.001 us
    r3 = r2 // 2 + LINE // 2  # 312.001 us: fast recovery
    r4 = r3 // 2 + LINE // 2  # 612.001 us: additive increase, target capped at line rate
    r5 = r4 // 2 + LINE // 2  # 912.001 us: hyper increase, capped
    expected = [
        (0, LINE, LINE),
        (4 * US + NS, r1, LINE),
        (12 * US + NS, r2, LINE),
        (312 * US + NS, r3, LINE),
        (612 * US + NS, r4, LINE),
        (912 * US + NS, r5, LINE),
    ]
    assert log == expected


def test_clamp_sets_target_to_rate_and_increase_adds_ai_then_hai():
    log = drive([0], until=1300 * US, clamp=True)
    a4 = (1 - G) ** 4
    r1 = int(LINE * (1 - a4 / 2))
    t1 = LINE  # clamp: target = rate before the decrease
    r2 = r1 // 2 + t1 // 2  # 304.001 us: fast recovery (stage 0)
    t3 = min(t1 + AI, LINE)
    r3 = r2 // 2 + t3 // 2  # 604.001 us: additive increase
    t4 = min(t3 + HAI, LINE)
    r4 = r3 // 2 + t4 // 2  # 904.001 us: hyper increase
    r5 = r4 // 2 + t4 // 2  # 1204.001 us
    assert log == [
        (0, LINE, LINE),
        (4 * US + NS, r1, t1),
        (304 * US + NS, r2, t1),
        (604 * US + NS, r3, t3),
        (904 * US + NS, r4, t4),
        (1204 * US + NS, r5, t4),
    ]


def test_min_rate_bounds_the_decrease():
    log = drive([k * 2 * US for k in range(2000)], until=4000 * US)
    assert min(rate for _, rate, _ in log) == preset("dcqcn").min_rate_bps
