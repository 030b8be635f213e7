"""Telemetry series: physically right, equal to the engine's own counters, streamable and storable."""

import tracemalloc
from dataclasses import replace

import numpy as np
import pytest
import xarray as xr

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.runner import advance
from wormhole_lab.errors import InputError
from wormhole_lab.simulation import Scenario, Simulation, prepare
from wormhole_lab.telemetry import Telemetry, TelemetryCapWarning
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows

LINE = 100e9


def lone_flow(size=2_000_000, **telemetry):
    flows = make_flows([0], [1], [size], 0)
    return Scenario(star(2), flows, preset("dcqcn"), telemetry=Telemetry(**telemetry))


def test_lone_flow_port_rate_is_line_rate_and_integrates_to_the_bytes_sent():
    ds = Simulation(lone_flow()).run()
    to_receiver = ds.sel(port=int(ds.port[ds.port_peer == 1][0]))
    rate = to_receiver["port_tx_rate"].values
    busy = rate[5:-5]  # whole intervals inside the transfer
    one_packet = 1048 * 8 / 1e-6  # a 1 us interval holds 12 or 13 frames: the series' resolution
    assert np.all(np.abs(busy - 1048 * 8 / 83e-9) <= one_packet)  # the frame rate the 83 ns clock allows
    assert busy.mean() == pytest.approx(1048 * 8 / 83e-9, rel=0.002)  # 83 ns per 1048 B frame (83.84 truncated)
    assert ds["port_tx_rate"].attrs["units"] == "bit/s"
    dt_s = np.diff(np.concatenate([[0], ds.time.values])) * 1e-12
    sent = (rate * dt_s).sum() / 8
    packets = -(-2_000_000 // 1000)
    assert sent == pytest.approx(2_000_000 + packets * 48, abs=1)  # payload + 48 B of headers per packet
    goodput = np.diff(ds["flow_acked"].sel(flow=0).values) * 8 / 1e-6
    assert np.median(goodput[5:-5]) == pytest.approx(1000 * 8 / 83e-9, rel=0.01)


def test_incast_queue_series_equals_the_engine_counter_at_every_sample(incast):
    interval = 999_999  # off the 1 ns grid, so no packet event shares a sample's instant
    scenario = replace(incast(8, 300_000), telemetry=Telemetry(interval_ps=interval))
    ds = Simulation(scenario).run()
    bottleneck = int(ds.port[ds.port_peer == 0][0])
    prepared = prepare(scenario)  # the same run again, stopped at each sample time
    for t, queued in zip(ds.time.values, ds["port_queue"].sel(port=bottleneck).values, strict=True):
        advance(prepared.state, int(t))
        assert prepared.state.pt[bottleneck, L.PT_DATA_BYTES] == queued, t
    assert ds["port_queue"].sel(port=bottleneck).max() > 100_000  # the incast does build a queue


def test_incast_flow_goodputs_add_up_to_the_bottleneck_rate(incast):
    ds = Simulation(incast(8, 300_000)).run()
    bottleneck = int(ds.port[ds.port_peer == 0][0])
    window = 20  # samples (20 us); ACK clocking shifts goodput by about one RTT (~4 us)
    port_bytes = (ds["port_tx_rate"].sel(port=bottleneck).values * 1e-6 / 8).reshape(-1)
    acked = ds["flow_acked"].sum("flow").values * (1036 / 1000)  # payload to wire bytes
    for start in range(0, len(port_bytes) - window, window):
        on_wire = port_bytes[start + 1 : start + window + 1].sum()
        delivered = acked[start + window] - acked[start]
        assert abs(on_wire - delivered) < 6e-6 * LINE / 8


def test_stream_chunks_concatenate_to_the_run_series(incast):
    scenario = replace(incast(4, 200_000), telemetry=Telemetry(chunk_samples=7))
    chunks = list(Simulation(scenario).stream())
    assert len(chunks) > 3
    whole = Simulation(scenario).run()
    streamed = xr.concat(chunks, dim="time")
    for name in streamed.data_vars:
        expected = whole[name].sel(flow=streamed.flow) if "flow" in streamed[name].dims else whole[name]
        xr.testing.assert_identical(streamed[name], expected)


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_store_round_trip_keeps_data_and_units(tmp_path, incast, suffix):
    scenario = replace(incast(4, 200_000), telemetry=Telemetry(chunk_samples=16))
    in_memory = Simulation(scenario).run()
    on_disk = Simulation(scenario).run(out=tmp_path / f"run{suffix}").load()
    assert on_disk.attrs["complete"] == 1
    for name in ["port_tx_rate", "port_queue", "flow_rate", "dcqcn_alpha", "fct", "slowdown"]:
        np.testing.assert_array_equal(on_disk[name].values, in_memory[name].values)
        assert on_disk[name].attrs["units"] == in_memory[name].attrs["units"]


def test_netcdf_round_trip_of_a_result(tmp_path, incast):
    ds = Simulation(incast(2, 50_000)).run()
    ds.to_netcdf(tmp_path / "r.nc", engine="h5netcdf")
    xr.testing.assert_identical(xr.load_dataset(tmp_path / "r.nc", engine="h5netcdf"), ds)


def test_a_run_stopped_early_leaves_a_readable_store_marked_incomplete(tmp_path, incast):
    scenario = replace(incast(4, 400_000), telemetry=Telemetry(chunk_samples=10))
    stream = Simulation(scenario).stream(out=tmp_path / "partial.nc")
    first_two = [next(stream), next(stream)]
    stream.close()  # what Ctrl-C in the consuming loop does to the generator
    partial = xr.open_dataset(tmp_path / "partial.nc", engine="h5netcdf")
    assert partial.attrs["complete"] == 0 and partial.attrs["incomplete_reason"]
    assert partial.sizes["time"] == sum(c.sizes["time"] for c in first_two)
    np.testing.assert_array_equal(partial["port_queue"].values[:10], first_two[0]["port_queue"].values)


def _peak_bytes(scenario, out) -> int:
    tracemalloc.start()
    Simulation(scenario).run(out=out)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_memory_stays_flat_when_series_go_to_disk(tmp_path, incast):
    short = replace(incast(4, 250_000), telemetry=Telemetry(chunk_samples=50))
    long = replace(incast(4, 2_000_000), telemetry=Telemetry(chunk_samples=50))
    _peak_bytes(short, tmp_path / "warm.nc")  # first-use allocations (imports, caches) out of the way
    peak_short = _peak_bytes(short, tmp_path / "short.nc")
    peak_long = _peak_bytes(long, tmp_path / "long.nc")
    samples = xr.open_dataset(tmp_path / "long.nc", engine="h5netcdf").sizes["time"]
    assert samples > 6 * xr.open_dataset(tmp_path / "short.nc", engine="h5netcdf").sizes["time"]
    assert peak_long < 1.5 * peak_short + 1_000_000


def test_default_selection_is_capped_with_a_warning(incast):
    scenario = replace(incast(4, 10_000), telemetry=Telemetry(max_flows=2))
    with pytest.warns(TelemetryCapWarning, match="first 2 of 4 flows"):
        ds = Simulation(scenario).run()
    assert int(ds["flow_rate"].notnull().any("time").sum()) == 2


def test_off_records_no_series(incast):
    ds = Simulation(replace(incast(2, 10_000), telemetry=Telemetry.off())).run()
    assert "port_queue" not in ds and "time" not in ds.dims


@pytest.mark.parametrize(
    "telemetry, match",
    [
        (Telemetry(interval_ps=0), "interval_ps.*positive"),
        (Telemetry(interval_ps=50_000), "shorter than one packet"),
        (Telemetry(ports=[999]), "id 999 does not exist"),
        (Telemetry(flows=[0, 0]), "listed twice"),
        (Telemetry(ports="spine"), "unknown selection"),
    ],
)
def test_bad_telemetry_settings_are_clear_errors(incast, telemetry, match):
    with pytest.raises(InputError, match=match):
        Simulation(replace(incast(2, 10_000), telemetry=telemetry)).run()


def test_unwritable_store_path_is_an_error_before_the_run(tmp_path, incast):
    with pytest.raises(InputError, match="does not exist"):
        Simulation(incast(2, 10_000)).run(out=tmp_path / "missing" / "x.nc")


def test_a_store_with_no_flow_series_is_written(tmp_path, incast):
    scenario = replace(incast(2, 50_000), telemetry=Telemetry(flows=None))
    ds = Simulation(scenario).run(out=tmp_path / "ports_only.nc")
    assert ds.attrs["complete"] == 1 and ds["port_queue"].sizes["time"] > 0
