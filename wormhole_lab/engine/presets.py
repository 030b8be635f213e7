"""Named engine configurations mirroring the reference's ``run.py`` (HPCC ns-3), scaled by host bandwidth.

Source of every value: alibaba-edu/High-Precision-Congestion-Control at commit 9f4be2a, files
``simulation/run.py`` (the per-``--cc`` table and its config template), ``simulation/scratch/third.cc``
(how config.txt keys are read and converted) and ``src/point-to-point/model/rdma-hw.cc`` (NIC attributes
that third.cc never sets). ``run.py`` is Python 2, so its ``/`` on integers floors: we use ``//``
to produce the same numbers at every bandwidth (they differ only when ``bw`` is not a multiple of 25).
Every preset carries every knob run.py writes, including those its algorithm ignores (e.g. the DCQCN timers
of ``hp``), so that a preset equals the engine read from the config.txt run.py would write.
"""

from wormhole_lab.engine.config import INT_LINE_RATES, EngineConfig
from wormhole_lab.errors import InputError

PRESETS = ("dcqcn", "dcqcn_paper", "dcqcn_vwin", "dcqcn_paper_vwin", "hp", "timely", "timely_vwin", "dctcp")

_MB = 1024 * 1024  # third.cc: ConfigBufferSize(buffer_size * 1024 * 1024)
_KB = 1000  # switch-mmu.cc ConfigEcn: kmin/kmax given in KB are multiplied by 1000
_MBPS = 10**6  # ns-3 DataRate "Mb/s" is 10^6 bit/s
_US = 10**6  # picoseconds per microsecond; rdma-hw.cc uses MicroSeconds(...) for the DCQCN timers
_NS = 1000  # picoseconds per nanosecond; rdma-hw.cc gives the TIMELY thresholds in ns
_NOT_YET = {"hpccPint": "HPCC-PINT (CC_MODE 10)"}


def preset(name: str, host_bw_gbps: int = 100, hpai_mbps: int | None = None) -> EngineConfig:
    """The EngineConfig ``run.py --cc <name> --bw <host_bw_gbps> [--hpai <hpai_mbps>]`` would configure.

    ``host_bw_gbps`` defaults to the paper's 100. ``hpai_mbps`` (``hp`` only) overrides HPCC's additive
    increase, as ``--hpai`` does; the HPCC paper and the shipped validation configs use 50.
    """
    if name not in PRESETS:
        hint = f"{_NOT_YET[name]} is not supported yet; " if name in _NOT_YET else ""
        raise InputError("preset(name)", f"{hint}unknown preset {name!r}", f"choose one of {', '.join(PRESETS)}")
    if isinstance(host_bw_gbps, bool) or not isinstance(host_bw_gbps, int) or host_bw_gbps < 4:
        raise InputError(
            "preset(host_bw_gbps)",
            f"need an integer of at least 4 Gb/s, got {host_bw_gbps!r}",
            "run.py's buffer formula 16*bw/50 MB gives 0 MB below 4; the paper used 100",
        )
    if hpai_mbps is not None:
        if name != "hp":
            raise InputError(
                "preset(hpai_mbps)",
                f"hpai_mbps applies to the hp preset only, not to {name!r}",
                "leave hpai_mbps out (run.py's --hpai only changes --cc hp and hpccPint)",
            )
        if isinstance(hpai_mbps, bool) or not isinstance(hpai_mbps, int) or hpai_mbps <= 0:
            raise InputError(
                "preset(hpai_mbps)",
                f"need a positive integer number of Mb/s, got {hpai_mbps!r}",
                "use None for run.py's default 10*bw/25, or e.g. 50 as in the HPCC paper",
            )
    bw = host_bw_gbps
    if name == "hp" and bw * 10**9 not in INT_LINE_RATES:
        raise InputError(
            "preset(host_bw_gbps)",
            f"HPCC's INT cannot encode a {bw} Gb/s host link (and run.py's INT_MULTI = bw/25 needs bw >= 25)",
            f"use one of {', '.join(str(r // 10**9) for r in INT_LINE_RATES)} Gb/s (int-header.h lineRateValues)",
        )
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
        u_target=0.95,  # run.py: u_tgt = utgt / 100. with --utgt default 95 (U_TARGET, written for every --cc)
        mi_thresh=0,  # run.py: mi = --mi, default 0 (MI_THRESH, written for every --cc)
        multi_rate=False,  # run.py template: MULTI_RATE 0
        sample_feedback=False,  # run.py template: SAMPLE_FEEDBACK 0
        timely_alpha=0.875,  # rdma-hw.cc: TimelyAlpha attribute default (third.cc never sets it)
        timely_beta=0.8,  # rdma-hw.cc: TimelyBeta attribute default
        timely_t_low_ps=50_000 * _NS,  # rdma-hw.cc: TimelyTLow attribute default 50000 ns
        timely_t_high_ps=500_000 * _NS,  # rdma-hw.cc: TimelyTHigh attribute default 500000 ns
        timely_min_rtt_ps=20_000 * _NS,  # rdma-hw.cc: TimelyMinRtt attribute default 20000 ns
        # rto_ps and seed keep EngineConfig's defaults: wormhole_lab's own knobs, absent from the reference.
        # So does stop_time_ps (None: until every flow completes); run.py's SIMULATOR_STOP_TIME 4.00 s comes
        # with a reference config (ns3_config), where it is the reference's own semantics.
    )
    dcqcn_ecn = dict(
        # run.py: kmin_map "2 bw 100*bw/25 4bw 100*bw*4/25" (KB), i.e. 400/1600 KB at 100G; every --cc but dctcp
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
        int_multi=1,  # run.py: int_multi=1 (unused by DCQCN)
        fast_react=False,  # run.py: us=0 (FAST_REACT 0; unused by DCQCN)
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
    # hp, timely*: run.py writes DCQCN's g and dctcp_ai (and the fast timers) although they do not use them
    unused_dcqcn = dict(
        ewma_gain=0.00390625,  # run.py hp/timely/timely_vwin: g=0.00390625 (unused)
        dctcp_rate_ai_bps=1000 * _MBPS,  # run.py hp/timely/timely_vwin: dctcp_ai=1000 (unused)
        **fast_timers,  # run.py hp/timely/timely_vwin: t_alpha=1 t_dec=4 t_inc=300 (unused)
    )
    hp_ai = (10 * bw // 25) * _MBPS if hpai_mbps is None else hpai_mbps * _MBPS
    hp = dict(
        cca="hpcc",  # run.py hp: mode=3 (CC_MODE 3, HPCC)
        rate_ai_bps=hp_ai,  # run.py hp: ai = 10 * bw / 25 Mb/s (40 at 100G), or --hpai when > 0
        rate_hai_bps=hp_ai,  # run.py hp: hai = ai ("useless")
        int_multi=bw // 25,  # run.py hp: int_multi = bw / 25 (4 at 100G)
        fast_react=True,  # run.py hp: us=1 (FAST_REACT 1)
    )
    timely = dict(
        cca="timely",  # run.py timely*: mode=7 (CC_MODE 7, TIMELY)
        rate_ai_bps=(10 * bw // 10) * _MBPS,  # run.py timely*: ai = 10 * bw / 10 Mb/s (100 at 100G)
        rate_hai_bps=(50 * bw // 10) * _MBPS,  # run.py timely*: hai = 50 * bw / 10 Mb/s (500 at 100G)
        int_multi=1,  # run.py timely*: int_multi=1 (unused by TIMELY)
        fast_react=False,  # run.py timely*: us=0 (FAST_REACT 0)
    )
    # run.py dcqcn, dcqcn_paper, timely: has_win=0 vwin=0 ack_prio=1
    no_win = dict(has_win=False, var_win=False, ack_high_prio=True)
    # run.py dcqcn_vwin, dcqcn_paper_vwin, hp, dctcp: has_win=1 vwin=1 ack_prio=0
    vwin = dict(has_win=True, var_win=True, ack_high_prio=False)
    # run.py timely_vwin: has_win=1 vwin=1 but ack_prio=1, unlike every other windowed preset
    vwin_ack_prio = dict(has_win=True, var_win=True, ack_high_prio=True)
    rows = {
        "dcqcn": {**dcqcn, **dcqcn_ecn, **fast_timers, **no_win},
        "dcqcn_paper": {**dcqcn, **dcqcn_ecn, **paper_timers, **no_win},
        "dcqcn_vwin": {**dcqcn, **dcqcn_ecn, **fast_timers, **vwin},
        "dcqcn_paper_vwin": {**dcqcn, **dcqcn_ecn, **paper_timers, **vwin},
        "hp": {**hp, **unused_dcqcn, **dcqcn_ecn, **vwin},
        "timely": {**timely, **unused_dcqcn, **dcqcn_ecn, **no_win},
        "timely_vwin": {**timely, **unused_dcqcn, **dcqcn_ecn, **vwin_ack_prio},
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
            int_multi=1,  # run.py dctcp: int_multi=1 (unused by DCTCP)
            fast_react=False,  # run.py dctcp: us=0 (FAST_REACT 0)
            **fast_timers,  # run.py dctcp: t_alpha=1 t_dec=4 t_inc=300 (written, unused by DCTCP)
            **vwin,
        ),
    }
    return EngineConfig(**common, **rows[name])
