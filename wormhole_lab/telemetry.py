"""Telemetry: what to sample, and how each full chunk of engine samples becomes an ``xarray.Dataset``.

The engine records raw counters (cumulative tx bytes and ECN marks, queue bytes, CCA state) into a
preallocated chunk; here a chunk becomes a Dataset with dims ``time``, ``port``, ``flow`` and units on
every variable, and can be appended to a netCDF or zarr store so that memory stays bounded.
"""

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.errors import InputError

if TYPE_CHECKING:  # xarray is imported where a Dataset is made: a run that writes none never loads it
    import xarray as xr

DEFAULT_INTERVAL_PS = 1_000_000  # 1 us of simulated time
FORMATS = ("netcdf", "zarr")


FLOW_ID_ATTRS = {"long_name": "flow id (row of the flow table)"}


class TelemetryCapWarning(UserWarning):
    """The default selection was cut to the size cap; choose ports or flows explicitly to record others."""


@dataclass(frozen=True)
class Telemetry:
    """What to record, and how often.

    ``ports``: "switch" (every switch egress port, the default), "all", explicit port ids, or None.
    ``flows``: "all" (default), explicit flow ids, or None. Default selections stop at ``max_ports`` /
    ``max_flows`` with a ``TelemetryCapWarning``. ``interval_ps`` must be at least one full packet's
    serialisation time on the fastest link; ``Telemetry.off()`` records nothing (fastest). Samples start at
    ``start_ps`` and end with the first one at or after ``end_ps`` (None: after the last completion). While the
    network is idle (before the first flow, in compute gaps) nothing is sampled unless ``idle_samples``.
    """

    interval_ps: int = DEFAULT_INTERVAL_PS
    ports: str | Sequence[int] | None = "switch"
    flows: str | Sequence[int] | None = "all"
    chunk_samples: int = 1000
    max_ports: int = 4096
    max_flows: int = 4096
    enabled: bool = True
    start_ps: int = 0
    end_ps: int | None = None
    idle_samples: bool = False

    @classmethod
    def off(cls) -> "Telemetry":
        return cls(enabled=False)

    def select(self, topo, n_flows: int, min_interval_ps: int) -> tuple[np.ndarray, np.ndarray]:
        """Check the settings against the scenario and return (port ids, flow ids) to sample."""
        if self.interval_ps <= 0:
            raise InputError(
                "Telemetry.interval_ps",
                f"must be positive, got {self.interval_ps}",
                f"use e.g. {DEFAULT_INTERVAL_PS} (1 us), or Telemetry.off()",
            )
        if self.interval_ps < min_interval_ps:
            raise InputError(
                "Telemetry.interval_ps",
                f"{self.interval_ps} ps is shorter than one packet's serialisation "
                f"({min_interval_ps} ps on the fastest link), so rates would be meaningless",
                f"use at least {min_interval_ps} ps",
            )
        if self.start_ps < 0:
            raise InputError("Telemetry.start_ps", f"must not be negative, got {self.start_ps}", "use 0 or more")
        if self.end_ps is not None and self.end_ps < self.start_ps:
            raise InputError(
                "Telemetry.end_ps",
                f"{self.end_ps} ps is before start_ps ({self.start_ps} ps)",
                "give an end at or after the start, or None",
            )
        if self.chunk_samples < 1:
            raise InputError(
                "Telemetry.chunk_samples", f"must be at least 1, got {self.chunk_samples}", "use e.g. 1000"
            )
        switch_ports = np.flatnonzero(topo.is_switch[topo.port_node()])
        ports = self._choose(
            "ports", self.ports, {"switch": switch_ports, "all": np.arange(topo.n_ports)}, topo.n_ports, self.max_ports
        )
        flows = self._choose("flows", self.flows, {"all": np.arange(n_flows)}, n_flows, self.max_flows)
        return ports, flows

    @staticmethod
    def _choose(field, value, named, n_total, cap) -> np.ndarray:
        if value is None:
            return np.zeros(0, dtype=np.int64)
        if isinstance(value, str):
            if value not in named:
                raise InputError(
                    f"Telemetry.{field}",
                    f"unknown selection {value!r}",
                    f"use one of {', '.join(repr(k) for k in named)}, a list of ids, or None",
                )
            ids = named[value]
            if len(ids) > cap:
                warnings.warn(
                    f"telemetry records the first {cap} of {len(ids)} {field} ({value!r}); pass "
                    f"Telemetry({field}=[...]) to choose which, or raise max_{field}",
                    TelemetryCapWarning,
                    stacklevel=4,
                )
                ids = ids[:cap]
            return np.asarray(ids, dtype=np.int64)
        ids = np.asarray(list(value), dtype=np.int64)
        bad = ids[(ids < 0) | (ids >= n_total)]
        if len(bad):
            raise InputError(
                f"Telemetry.{field}",
                f"id {int(bad[0])} does not exist (there are {n_total} {field})",
                f"use ids from 0 to {n_total - 1}",
            )
        if len(np.unique(ids)) != len(ids):
            raise InputError(f"Telemetry.{field}", "an id is listed twice", "list each id once")
        return ids


# name: (units, long name), for every series variable
SERIES_VARIABLES = {
    "port_tx_rate": ("bit/s", "bytes sent by the port during the interval ending at this sample, as a rate"),
    "port_queue": ("byte", "bytes queued in the port's data class at the sample"),
    "port_paused": ("1", "1 if the port's data class was paused by PFC at the sample"),
    "port_ecn_marks": ("1", "packets ECN-marked by the port during the interval"),
    "flow_rate": ("bit/s", "sending rate set by the congestion control (NaN while the flow is not active)"),
    "flow_window": ("byte", "bytes the flow may have in flight (NaN: no window)"),
    "flow_acked": ("byte", "bytes acknowledged so far"),
    "flow_inflight": ("byte", "bytes sent and not yet acknowledged"),
    "flow_skipping": ("1", "1 while the flow's partition is fast-forwarded or replayed from the memo DB"),
    "dcqcn_alpha": ("1", "DCQCN alpha (congestion estimate)"),
    "dcqcn_target_rate": ("bit/s", "DCQCN target rate"),
    "dctcp_alpha": ("1", "DCTCP alpha (fraction of marked packets, smoothed)"),
    "hpcc_u": ("1", "HPCC normalised utilisation of the most loaded hop (EWMA over the base RTT)"),
    "timely_rtt": ("s", "TIMELY's last RTT sample"),
}
CCA_VARIABLES = {
    "dcqcn": {"dcqcn_alpha": L.TF_ALPHA, "dcqcn_target_rate": L.TF_TARGET},
    "dctcp": {"dctcp_alpha": L.TF_ALPHA},
    "hpcc": {"hpcc_u": L.TF_U},
    "timely": {"timely_rtt": L.TF_RTT},
}


class ChunkBuilder:
    """Turns raw chunks into Datasets; remembers the last cumulative counters so rates span chunk edges."""

    def __init__(self, topo, flows, ports: np.ndarray, flow_ids: np.ndarray, cca: str, interval_ps: int):
        self.interval_ps = interval_ps
        self.ports = ports
        self.flow_ids = flow_ids
        self.cca = cca
        self._last_tx = np.zeros(len(ports), dtype=np.int64)
        self._last_marks = np.zeros(len(ports), dtype=np.int64)
        self._last_time = 0
        node, peer = topo.port_node(), topo.port_peer_node()
        rate = np.repeat(topo.link_rate_bps, 2)
        self.coords = {
            "port": ("port", ports, {"long_name": "port id (2 x link + side)"}),
            "port_node": ("port", node[ports], {"long_name": "node that owns the port"}),
            "port_peer": ("port", peer[ports], {"long_name": "node at the far end of the link"}),
            "port_rate": ("port", rate[ports], {"units": "bit/s", "long_name": "link speed"}),
            "flow": ("flow", flow_ids, FLOW_ID_ATTRS),
            "flow_src": ("flow", flows.src[flow_ids], {"long_name": "source host"}),
            "flow_dst": ("flow", flows.dst[flow_ids], {"long_name": "destination host"}),
            "flow_size": ("flow", flows.size[flow_ids], {"units": "byte", "long_name": "flow size"}),
        }

    def build(self, times: np.ndarray, port_rows: np.ndarray, flow_rows: np.ndarray) -> "xr.Dataset":
        import xarray as xr

        tx = port_rows[:, :, L.TP_TX_BYTES]
        marks = port_rows[:, :, L.TP_ECN_MARKS]
        prev_tx = np.vstack([self._last_tx[None, :], tx[:-1]])
        prev_marks = np.vstack([self._last_marks[None, :], marks[:-1]])
        dt = np.diff(np.concatenate([[self._last_time], times]))
        # after an idle gap that the sampler jumped over, every byte was sent within the last interval
        span = np.clip(dt, 1, self.interval_ps)[:, None]
        rate = np.where(dt[:, None] > 0, (tx - prev_tx) * 8e12 / span, 0.0)
        if len(times):
            self._last_tx, self._last_marks, self._last_time = tx[-1].copy(), marks[-1].copy(), int(times[-1])
        active = flow_rows[:, :, L.TF_ACTIVE] == 1
        window = flow_rows[:, :, L.TF_WINDOW]
        values = {
            "port_tx_rate": rate,
            "port_queue": port_rows[:, :, L.TP_QUEUE],
            "port_paused": port_rows[:, :, L.TP_PAUSED].astype(np.int8),
            "port_ecn_marks": marks - prev_marks,
            "flow_rate": np.where(active, flow_rows[:, :, L.TF_RATE], np.nan),
            "flow_window": np.where(active & (window > 0), window, np.nan),
            "flow_acked": flow_rows[:, :, L.TF_ACKED].astype(np.int64),
            "flow_inflight": flow_rows[:, :, L.TF_INFLIGHT].astype(np.int64),
            "flow_skipping": flow_rows[:, :, L.TF_SKIPPING].astype(np.int8),
        }
        for name, column in CCA_VARIABLES[self.cca].items():
            series = np.where(active, flow_rows[:, :, column], np.nan)
            values[name] = series / 1e12 if name == "timely_rtt" else series
        data_vars = {}
        for name, array in values.items():
            dims = ("time", "port") if name.startswith("port_") else ("time", "flow")
            unit, text = SERIES_VARIABLES[name]
            data_vars[name] = (dims, array, {"units": unit, "long_name": text})
        coords = dict(self.coords, time=("time", times, {"units": "ps", "long_name": "simulated time of the sample"}))
        return xr.Dataset(data_vars, coords=coords)


def check_store_path(path, fmt: str | None) -> str:
    """The store format from ``fmt`` or the suffix; fails before the run if the path cannot be written."""
    path = Path(path)
    fmt = fmt or ("zarr" if path.suffix == ".zarr" else "netcdf")
    if fmt not in FORMATS:
        raise InputError("out format", f"unknown format {fmt!r}", f"use one of {', '.join(FORMATS)}")
    if not path.parent.is_dir():
        raise InputError("out", f"folder {path.parent} does not exist", "create it or choose another path")
    probe = path.parent / f".{path.name}.probe"
    try:
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise InputError("out", f"cannot write in {path.parent}: {exc.strerror}", "choose a writable folder") from None
    return fmt


class StoreWriter:
    """Appends chunks along ``time`` to a netCDF (h5netcdf, unlimited dimension) or zarr store.

    The store is readable after every chunk. ``close(flows)`` stores the flow table in group ``flows``
    and marks the store complete; ``close(None, reason)`` leaves it marked incomplete with the reason.
    """

    def __init__(self, path, fmt: str, attrs: dict):
        self.path = Path(path)
        self.fmt = fmt
        self.attrs = dict(attrs, complete=0)
        self._file = None
        self._rows = 0

    def append(self, chunk: "xr.Dataset") -> None:
        if self.fmt == "zarr":
            if self._rows == 0:
                chunk.assign_attrs(self.attrs).to_zarr(self.path, mode="w", consolidated=False)
            else:
                chunk.drop_vars([c for c in chunk.coords if c != "time"]).to_zarr(
                    self.path, append_dim="time", consolidated=False
                )
        else:
            self._append_netcdf(chunk)
        self._rows += chunk.sizes["time"]

    def _append_netcdf(self, chunk: "xr.Dataset") -> None:
        import h5netcdf

        if self._file is None:
            self._file = h5netcdf.File(self.path, "w")
            f = self._file
            f.dimensions = {"time": None, "port": chunk.sizes["port"], "flow": chunk.sizes["flow"]}
            for name, var in chunk.variables.items():
                chunked = "time" in var.dims and all(var.shape[1:])  # HDF5 cannot chunk a zero-length dimension
                created = f.create_variable(
                    name, var.dims, var.dtype, chunks=(1024,) + var.shape[1:] if chunked else None
                )
                created.attrs.update(var.attrs)
                if "time" not in var.dims:
                    created[...] = var.values
            f.attrs.update(self.attrs)
        f = self._file
        n = chunk.sizes["time"]
        f.resize_dimension("time", self._rows + n)
        for name, var in chunk.variables.items():
            if "time" in var.dims:
                f.variables[name][self._rows : self._rows + n, ...] = var.values
        f.flush()

    def close(self, flows: "xr.Dataset | None", reason: str = "") -> None:
        complete = flows is not None
        if self.fmt == "netcdf" and self._file is not None:
            self._file.attrs["complete"] = int(complete)
            self._file.attrs["incomplete_reason"] = reason
            self._file.close()
        elif self.fmt == "zarr" and self._rows:
            import zarr

            group = zarr.open_group(self.path, mode="r+")
            group.attrs.update({"complete": int(complete), "incomplete_reason": reason})
        if complete:
            mode = "a" if self.path.exists() else "w"
            if self.fmt == "zarr":
                # zarr v3 specifies variable-length strings only; fixed-width ones warn as unstable
                strings = {
                    name: flows[name].astype(object) for name in flows.data_vars if flows[name].dtype.kind == "U"
                }
                flows.assign(strings).to_zarr(self.path, group="flows", mode=mode, consolidated=False)
            else:
                flows.to_netcdf(self.path, group="flows", mode=mode, engine="h5netcdf")


def open_store(path) -> "xr.Dataset":
    """The series and the flow table of a stored run, as one Dataset (series are read lazily)."""
    import xarray as xr

    path = Path(path)
    engine = "zarr" if path.suffix == ".zarr" or path.is_dir() else "h5netcdf"
    kwargs = {"consolidated": False} if engine == "zarr" else {}
    series = xr.open_dataset(path, engine=engine, **kwargs)
    flows = xr.open_dataset(path, group="flows", engine=engine, **kwargs)
    merged = xr.merge([flows, series], join="outer", combine_attrs="override")
    return merged.assign_attrs({**flows.attrs, **series.attrs})
