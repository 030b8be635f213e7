"""Run wormhole_lab's drop-in and the reference simulator on the same inputs, alternating, and compare.

Each program runs in a folder of its own (a copy of the inputs), as a whole process: wall time and peak
memory are measured by the operating system (``os.wait4``), so imports, compilation-cache loading and file
output count, as they do for a user. The reference is HPCC's ns-3 built by
``../shared/tools/build-reference-ns3.sh``; it prints ``ORACLE_EVENTS_SCHEDULED N`` after its run.
"""

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

OURS = [sys.executable, "-m", "wormhole_lab.cli", "ns3"]
SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"


@dataclass
class Measured:
    """Every run of one program on one case."""

    walls: list = field(default_factory=list)
    peaks: list = field(default_factory=list)
    stdout: str = ""

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def peak_mb(self) -> float:
        return max(self.peaks) / 2**20


def run_process(command: list[str], cwd: Path, timeout: float | None = None) -> tuple[float, int, str]:
    """(wall seconds, peak RSS bytes, stdout) of one process; a failure raises with its stderr, a process still
    running after ``timeout`` seconds is killed and raises TimeoutError."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=err, text=True)
        while True:  # the child's own rusage from wait4: its peak memory, not ours
            pid, status, usage = os.wait4(proc.pid, 0 if timeout is None else os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                os.wait4(proc.pid, 0)
                raise TimeoutError(f"{' '.join(command)} did not finish in {timeout:.0f} s")
            time.sleep(0.2)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            raise RuntimeError(f"{' '.join(command)} in {cwd} failed ({proc.returncode}):\n{err.read()[-2000:]}")
        return wall, usage.ru_maxrss * 1024, out.read()


def side_by_side(case_dir: Path, config: str, reference: str | None, repeat: int, work: Path, extra=()) -> dict:
    """Alternate ours and the reference ``repeat`` times each on copies of ``case_dir``; returns
    {"ours": Measured, "reference": Measured or None} and leaves each program's outputs in its folder."""
    results = {"ours": Measured(), "reference": Measured() if reference else None}
    folders = {}
    for name in results:
        if results[name] is None:
            continue
        folders[name] = work / name
        if folders[name].exists():
            shutil.rmtree(folders[name])
        shutil.copytree(case_dir, folders[name])
    commands = {"ours": [*OURS, config, *extra], "reference": [reference, config] if reference else None}
    for _ in range(repeat):
        for name, measured in results.items():
            if measured is None:
                continue
            wall, peak, out = run_process(commands[name], folders[name])
            measured.walls.append(wall)
            measured.peaks.append(peak)
            measured.stdout = out
    results["folders"] = folders
    return results


def reference_events(stdout: str) -> int:
    m = re.search(r"ORACLE_EVENTS_SCHEDULED (\d+)", stdout)
    if not m:
        raise RuntimeError("the reference did not print ORACLE_EVENTS_SCHEDULED: build it with build-reference-ns3.sh")
    return int(m.group(1))


def our_figures(stdout: str) -> tuple[int, float]:
    """(events executed, simulation seconds) from our summary."""
    events = int(re.search(r"events\s+([\d,]+) executed", stdout).group(1).replace(",", ""))
    wall = float(re.search(r"wall time\s+([\d.]+) s", stdout).group(1))
    return events, wall


def fct_rows(path: Path) -> dict:
    """{(sip, dip, sport, dport): fct_ns} of an fct.txt."""
    rows = {}
    for line in path.read_text().splitlines():
        f = line.split()
        rows[tuple(f[:4])] = int(f[6])
    return rows


def fct_agreement(ours: Path, reference: Path) -> str:
    """Per-flow agreement of two fct.txt files, as one line."""
    a, b = fct_rows(ours), fct_rows(reference)
    common = a.keys() & b.keys()
    if not common:
        return f"no common flows ({len(a)} ours, {len(b)} the reference's)"
    errors = [abs(a[k] - b[k]) / b[k] for k in common]
    exact = sum(a[k] == b[k] for k in common)
    identical = ours.read_bytes() == reference.read_bytes()
    return (
        f"{exact}/{len(b)} flows exact{' (file byte-identical)' if identical else ''}, "
        f"mean error {statistics.fmean(errors):.3%}, max {max(errors):.3%}"
        + (f", {len(b) - len(common)} flows missing" if len(common) < len(b) else "")
    )


def config_variant(text: str, changes: dict) -> str:
    """A config text with some keys' values replaced (keys absent from the text are appended)."""
    lines, seen = [], set()
    for line in text.splitlines():
        key = line.split(" ", 1)[0]
        if key in changes:
            line = f"{key} {changes[key]}"
            seen.add(key)
        lines.append(line)
    lines += [f"{k} {v}" for k, v in changes.items() if k not in seen]
    return "\n".join(lines) + "\n"


def hpcc_changes(shared: Path = SHARED) -> dict:
    """The keys in which the reference's own HPCC validation config differs from its DCQCN one (run.py --cc hp
    --hpai 50 against --cc dcqcn): applied to a DCQCN config, they make the HPCC run of the same inputs."""

    def keyed(path):
        return dict(line.split(" ", 1) for line in path.read_text().splitlines() if " " in line)

    case = shared / "reference" / "validation" / "s1_single_flow"
    dcqcn, hpcc = keyed(case / "config_dcqcn.txt"), keyed(case / "config_hpcc.txt")
    paths = ("TOPOLOGY_FILE", "FLOW_FILE", "TRACE_FILE", "TRACE_OUTPUT_FILE", "FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE")
    return {k: v for k, v in hpcc.items() if dcqcn.get(k) != v and k not in paths}


def versions() -> str:
    from importlib.metadata import version

    return ", ".join(f"{p} {version(p)}" for p in ("numba", "llvmlite", "numpy", "wormhole-lab"))
