"""Write the inputs of the DCQCN byte-identity cases, and (with --reference) record the reference's outputs.

    python tests/data/validation_dcqcn/make_cases.py [--reference /path/to/run-third]

Each case folder gets topology.txt, flow.txt, trace.txt and config.txt (the reference's DCQCN config of
s2_incast8 with the case's buffer and ECN maps). With --reference the built reference runs in a scratch copy
and its fct.txt and pfc.txt are kept as fct_reference.txt and pfc_reference.txt (only its outputs are kept).
Cases are small (well under a second of engine time each) so tests/test_dcqcn_exact.py stays fast.
Also kept, made by hand from these inputs: incast8_staggered_buf1/fct_reference_rngseed2.txt (the reference
with NS_GLOBAL_VALUE=RngSeed=2) and ../validation_pfc/ (fattree4_incast_pfc under HPCC, TIMELY, DCTCP;
see its README). fat_perm64/ holds only the reference's outputs; its inputs are ../shared/reference/bench.
"""

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from wormhole_lab.topology.builders import fat_tree, leaf_spine, star
from wormhole_lab.topology.hpcc_format import write_topology

HERE = Path(__file__).resolve().parent
G = 10**9

CONFIG = """ENABLE_QCN 1
USE_DYNAMIC_PFC_THRESHOLD 1
PACKET_PAYLOAD_SIZE 1000
TOPOLOGY_FILE topology.txt
FLOW_FILE flow.txt
TRACE_FILE trace.txt
TRACE_OUTPUT_FILE mix.tr
FCT_OUTPUT_FILE fct.txt
PFC_OUTPUT_FILE pfc.txt
SIMULATOR_STOP_TIME 4.00
CC_MODE 1
ALPHA_RESUME_INTERVAL 1
RATE_DECREASE_INTERVAL 4
CLAMP_TARGET_RATE 0
RP_TIMER 300
EWMA_GAIN 0.00390625
FAST_RECOVERY_TIMES 1
RATE_AI 20Mb/s
RATE_HAI 200Mb/s
MIN_RATE 1000Mb/s
DCTCP_RATE_AI 1000Mb/s
ERROR_RATE_PER_LINK 0.0000
L2_CHUNK_SIZE 4000
L2_ACK_INTERVAL 1
L2_BACK_TO_ZERO 0
HAS_WIN 0
GLOBAL_T 1
VAR_WIN 0
FAST_REACT 0
U_TARGET 0.95
MI_THRESH 0
INT_MULTI 1
MULTI_RATE 0
SAMPLE_FEEDBACK 0
PINT_LOG_BASE 1.01
PINT_PROB 1.0
RATE_BOUND 1
ACK_HIGH_PRIO 1
LINK_DOWN 0 0 0
ENABLE_TRACE 0
KMAX_MAP 2 100000000000 {kmax} 400000000000 {kmax4}
KMIN_MAP 2 100000000000 {kmin} 400000000000 {kmin4}
PMAX_MAP 2 100000000000 {pmax} 400000000000 {pmax}
BUFFER_SIZE {buffer_mb}
QLEN_MON_FILE qlen.txt
QLEN_MON_START 9000000000
QLEN_MON_END 9000000001
"""


def _flows(rows):
    """rows: (src, dst, size_bytes, start_ns); sorted by start as third.cc reads them."""
    rows = sorted(rows, key=lambda r: r[3])
    lines = [str(len(rows))] + [f"{s} {d} 3 100 {size} {start / 1e9:.9f}" for s, d, size, start in rows]
    return "\n".join(lines) + "\n"


def cases():
    rng = np.random.default_rng(17)
    out = {}
    # 16-to-1 on one switch, 1 MB buffer: PFC pauses every sender while the egress sits in the ECN band
    out["incast16_buf1"] = (
        star(17),
        [(h, 16, 300_000, 0) for h in range(16)],
        dict(kmin=20, kmax=100, pmax=0.2, buffer_mb=1),
    )
    # 8-to-1, staggered starts and mixed sizes, 1 MB buffer
    sizes = [100_000, 800_000, 250_000, 600_000, 150_000, 400_000, 700_000, 200_000]
    out["incast8_staggered_buf1"] = (
        star(9),
        [(h, 8, sizes[h], 3_000 * h + (h % 3) * 500) for h in range(8)],
        dict(kmin=40, kmax=200, pmax=0.5, buffer_mb=1),
    )
    # k=4 fat-tree permutation: ECMP collisions put the fabric queues in the band
    perm = rng.permutation(16)
    while np.any(perm == np.arange(16)):
        perm = rng.permutation(16)
    out["fattree4_perm"] = (
        fat_tree(4),
        [(h, int(perm[h]), 500_000, 0) for h in range(16)],
        dict(kmin=50, kmax=200, pmax=0.2, buffer_mb=32),
    )
    # leaf-spine, cross-leaf flows starting over 40 us
    rows = []
    for i in range(12):
        src = int(rng.integers(0, 4))
        dst = int(rng.integers(4, 8))
        if i % 2:
            src, dst = src + 4, dst - 4
        rows.append((src, dst, int(rng.integers(50, 400)) * 1000, int(rng.integers(0, 40_000))))
    out["leafspine_staggered"] = (
        leaf_spine(2, 2, 4),
        rows,
        dict(kmin=30, kmax=150, pmax=0.3, buffer_mb=2),
    )
    # k=4 fat tree, 15-to-1 incast, 1 MB buffers: pauses spread from the receiver's edge to aggregation and core
    out["fattree4_incast_pfc"] = (
        fat_tree(4),
        [(h, 0, 200_000, 0) for h in range(1, 16)],
        dict(kmin=100, kmax=400, pmax=0.2, buffer_mb=1),
    )
    # leaf-spine with 400G fabric: 12-to-1 incast plus two background flows, 1 MB buffers
    rows = [(h, 0, 150_000, (h % 4) * 1_000) for h in range(4, 16)]
    rows += [(1, 5, 1_000_000, 0), (2, 9, 1_000_000, 2_000)]
    out["leafspine400_incast"] = (
        leaf_spine(4, 2, 4, fabric_rate_bps=400 * G),
        rows,
        dict(kmin=50, kmax=200, pmax=0.2, buffer_mb=1),
    )
    return out


def write_case(name, topo, rows, knobs, reference=None):
    folder = HERE / name
    folder.mkdir(exist_ok=True)
    write_topology(topo, folder / "topology.txt")
    (folder / "flow.txt").write_text(_flows(rows))
    (folder / "trace.txt").write_text("0\n")
    k = dict(knobs, kmin4=knobs["kmin"] * 4, kmax4=knobs["kmax"] * 4)
    (folder / "config.txt").write_text(CONFIG.format(**k))
    if reference:
        with tempfile.TemporaryDirectory() as tmp:
            for f in ("topology.txt", "flow.txt", "trace.txt", "config.txt"):
                shutil.copy(folder / f, tmp)
            subprocess.run([reference, "config.txt"], cwd=tmp, check=True, capture_output=True)
            shutil.copy(Path(tmp) / "fct.txt", folder / "fct_reference.txt")
            shutil.copy(Path(tmp) / "pfc.txt", folder / "pfc_reference.txt")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", help="the built reference's run-third")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    for name, (topo, rows, knobs) in cases().items():
        if not args.cases or name in args.cases:
            write_case(name, topo, rows, knobs, args.reference)
            print(name)


if __name__ == "__main__":
    main()
