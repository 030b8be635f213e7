"""Flow-size distributions by name, so a scenario can say ``cdf: WebSearch`` on a machine without the CDF files.

Each is ``(size_bytes, cdf_percent)`` points, the same points as the file of that name in HPCC's
``traffic_gen/`` (alibaba-edu/High-Precision-Congestion-Control), which the reference's generator reads:
- ``WebSearch``: the web-search workload of DCTCP (Alizadeh et al., SIGCOMM 2010), ``WebSearch_distribution.txt``;
- ``FbHdp``: Facebook's Hadoop cluster (Roy et al., SIGCOMM 2015), ``FbHdp_distribution.txt``;
- ``AliStorage2019``: Alibaba's storage cluster (HPCC, SIGCOMM 2019), ``AliStorage2019.txt``.
GoogleRPC2008 (843 points) is left to its file.
"""

from pathlib import Path

from wormhole_lab.workload.traffic_gen import SizeCdf, cdf_from_points, read_cdf

__all__ = ["NAMED_CDFS", "size_cdf"]

NAMED_CDFS = {
    "WebSearch": (
        (0, 0), (10000, 15), (20000, 20), (30000, 30), (50000, 40), (80000, 53), (200000, 60), (1000000, 70),
        (2000000, 80), (5000000, 90), (10000000, 97), (30000000, 100),
    ),
    "FbHdp": (
        (0, 0), (100, 1), (200, 2), (300, 5), (350, 15), (400, 20), (500, 30), (600, 40), (700, 50), (1000, 60),
        (2000, 67), (7000, 70), (30000, 72), (50000, 82), (80000, 87), (120000, 90), (300000, 95), (1000000, 97.5),
        (2000000, 99), (10000000, 100),
    ),
    "AliStorage2019": (
        (0, 0), (4000, 22.93), (8000, 69.21), (16000, 80.61), (32000, 90.47), (64000, 93.53), (128000, 96.77),
        (256000, 97.53), (2000000, 100),
    ),
}  # fmt: skip


def size_cdf(name_or_path) -> SizeCdf:
    """The named distribution (``NAMED_CDFS``), or the CDF file at the path (``traffic_gen.read_cdf``)."""
    if isinstance(name_or_path, str) and name_or_path in NAMED_CDFS and not Path(name_or_path).is_file():
        return cdf_from_points(NAMED_CDFS[name_or_path], source=name_or_path)
    return read_cdf(name_or_path)
