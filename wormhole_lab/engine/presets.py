"""Named engine configurations mirroring the reference's ``run.py`` (HPCC ns-3), scaled by host bandwidth.

Source of every value: alibaba-edu/High-Precision-Congestion-Control at commit 9f4be2a, files
``simulation/run.py`` (the per-``--cc`` table and its config template), ``simulation/scratch/third.cc``
(how config.txt keys are read and converted) and ``src/point-to-point/model/rdma-hw.cc`` (NIC attributes
that third.cc never sets). ``run.py`` is Python 2, so its ``/`` on integers floors: we use ``//``
to produce the same numbers at every bandwidth (they differ only when ``bw`` is not a multiple of 25).
"""

from wormhole_lab.engine.config import EngineConfig
from wormhole_lab.errors import InputError

PRESETS = ("dcqcn", "dcqcn_paper", "dcqcn_vwin", "dcqcn_paper_vwin", "dctcp")

_MB = 1024 * 1024  # third.cc: ConfigBufferSize(buffer_size * 1024 * 1024)
_KB = 1000  # switch-mmu.cc ConfigEcn: kmin/kmax given in KB are multiplied by 1000
_MBPS = 10**6  # ns-3 DataRate "Mb/s" is 10^6 bit/s
_US = 10**6  # picoseconds per microsecond; rdma-hw.cc uses MicroSeconds(...) for the DCQCN timers
_NOT_YET = {
    "hp": "HPCC (CC_MODE 3)",
    "hpccPint": "HPCC-PINT (CC_MODE 10)",
    "timely": "TIMELY (CC_MODE 7)",
    "timely_vwin": "TIMELY (CC_MODE 7)",
}


def preset(name: str, host_bw_gbps: int = 100) -> EngineConfig:
    """The EngineConfig ``run.py --cc <name> --bw <host_bw_gbps>`` would configure (default 100: the paper's)."""
    if name not in PRESETS:
        hint = f"{_NOT_YET[name]} is not supported yet; " if name in _NOT_YET else ""
        raise InputError("preset(name)", f"{hint}unknown preset {name!r}", f"choose one of {', '.join(PRESETS)}")
    if isinstance(host_bw_gbps, bool) or not isinstance(host_bw_gbps, int) or host_bw_gbps < 4:
        raise InputError(
            "preset(host_bw_gbps)",
            f"need an integer of at least 4 Gb/s, got {host_bw_gbps!r}",
            "run.py's buffer formula 16*bw/50 MB gives 0 MB below 4; the paper used 100",
        )
    bw = host_bw_gbps
    rate_lo, rate_hi = bw * 10**9, 4 * bw * 10**9  # run.py: ECN maps have two entries, bw and 4*bw (in bit/s)
    common = dict(
        payload_bytes=1000,  # run.py template: PACKET_PAYLOAD_SIZE 1000
        buffer_bytes=(16 * bw // 50) * _MB,  # run.py: bfsz = 16 * bw / 50 (MB); 32 MB at 100G
        enable_ecn=True,  # run.py template: ENABLE_QCN 1
        pfc=True,  # third.cc: PFC is always on in the reference (no key turns it off)
        pfc_dynamic_threshold=True,  # run.py template: USE_DYNAMIC_PFC_THRESHOLD 1
        global_t=True,  # run.py template: GLOBAL_T 1
        rate_bound=True,  # run.py template: RATE_BOUND 1
        nack_interval_ps=500 * _US,  # rdma-hw.cc: "NACK Generation Interval" attribute default 500 us
        fast_recovery_times=1,  # run.py template: FAST_RECOVERY_TIMES 1
        clamp_target_rate=False,  # run.py template: CLAMP_TARGET_RATE 0
        rate_on_first_cnp=1.0,  # rdma-hw.cc: RateOnFirstCnp attribute default 1.0 (third.cc never sets it)
        min_rate_bps=1000 * _MBPS,  # run.py template: MIN_RATE 1000Mb/s
        stop_time_ps=4 * 10**12,  # run.py template: SIMULATOR_STOP_TIME 4.00 (seconds)
        # rto_ps and seed keep EngineConfig's defaults: wormhole_lab's own knobs, absent from the reference.
    )
    dcqcn_ecn = dict(
        # run.py: kmin_map "2 bw 100*bw/25 4bw 100*bw*4/25" (KB), i.e. 400/1600 KB at 100G
        kmin_bytes={rate_lo: (100 * bw // 25) * _KB, rate_hi: (100 * bw * 4 // 25) * _KB},
        # run.py: kmax_map "2 bw 400*bw/25 4bw 400*bw*4/25" (KB), i.e. 1600/6400 KB at 100G
        kmax_bytes={rate_lo: (400 * bw // 25) * _KB, rate_hi: (400 * bw * 4 // 25) * _KB},
        pmax={rate_lo: 0.2, rate_hi: 0.2},  # run.py: pmax_map 0.2 for both speeds
    )
    dcqcn = dict(
        cca="dcqcn",  # run.py: mode=1 (CC_MODE 1, Mellanox DCQCN)
        ewma_gain=0.00390625,  # run.py: g=0.00390625 (1/256)
        rate_ai_bps=(5 * bw // 25) * _MBPS,  # run.py: ai = 5 * bw / 25 Mb/s (20 at 100G)
        rate_hai_bps=(50 * bw // 25) * _MBPS,  # run.py: hai = 50 * bw / 25 Mb/s (200 at 100G)
        dctcp_rate_ai_bps=1000 * _MBPS,  # run.py: dctcp_ai=1000 for every non-DCTCP preset (unused by DCQCN)
    )
    fast_timers = dict(
        alpha_resume_interval_ps=1 * _US,  # run.py: t_alpha=1 (ALPHA_RESUME_INTERVAL, us)
        rate_decrease_interval_ps=4 * _US,  # run.py: t_dec=4 (RATE_DECREASE_INTERVAL, us)
        rp_timer_ps=300 * _US,  # run.py: t_inc=300 (RP_TIMER, us)
    )
    paper_timers = dict(
        alpha_resume_interval_ps=50 * _US,  # run.py dcqcn_paper*: t_alpha=50
        rate_decrease_interval_ps=50 * _US,  # run.py dcqcn_paper*: t_dec=50
        rp_timer_ps=55 * _US,  # run.py dcqcn_paper*: t_inc=55
    )
    # run.py dcqcn, dcqcn_paper: has_win=0 vwin=0 ack_prio=1
    no_win = dict(has_win=False, var_win=False, ack_high_prio=True)
    # run.py dcqcn_vwin, dcqcn_paper_vwin, dctcp: has_win=1 vwin=1 ack_prio=0
    vwin = dict(has_win=True, var_win=True, ack_high_prio=False)
    rows = {
        "dcqcn": {**dcqcn, **dcqcn_ecn, **fast_timers, **no_win},
        "dcqcn_paper": {**dcqcn, **dcqcn_ecn, **paper_timers, **no_win},
        "dcqcn_vwin": {**dcqcn, **dcqcn_ecn, **fast_timers, **vwin},
        "dcqcn_paper_vwin": {**dcqcn, **dcqcn_ecn, **paper_timers, **vwin},
        "dctcp": dict(
            cca="dctcp",  # run.py: mode=8 (CC_MODE 8)
            ewma_gain=0.0625,  # run.py: g=0.0625 (1/16) for dctcp
            rate_ai_bps=10 * _MBPS,  # run.py: ai = 10 ("useless for dctcp"), not scaled by bw
            rate_hai_bps=10 * _MBPS,  # run.py: hai = ai ("also useless")
            dctcp_rate_ai_bps=615 * _MBPS,  # run.py: dctcp_ai=615 ("RTT=13us and MTU=1KB ... 1 MTU per RTT")
            # run.py dctcp: kmin_map = kmax_map = "2 bw 30*bw/10 4bw 30*bw*4/10" (KB), i.e. 300/1200 KB at 100G
            kmin_bytes={rate_lo: (30 * bw // 10) * _KB, rate_hi: (30 * bw * 4 // 10) * _KB},
            kmax_bytes={rate_lo: (30 * bw // 10) * _KB, rate_hi: (30 * bw * 4 // 10) * _KB},
            pmax={rate_lo: 1.0, rate_hi: 1.0},  # run.py dctcp: pmax_map 1.0
            **fast_timers,  # run.py dctcp: t_alpha=1 t_dec=4 t_inc=300 (written, unused by DCTCP)
            **vwin,
        ),
    }
    return EngineConfig(**common, **rows[name])
