"""The live views' data: built chunk by chunk it equals what the finished run gives at once, and stays bounded."""

import numpy as np
import pytest

from wormhole_lab.scenarios.teaching import incast, repeated_incast
from wormhole_lab.viz.analysis import convergence_time_ps, fairness_series, steady_band, steady_flags, steady_params
from wormhole_lab.viz.feed import ThinnedTable
from wormhole_lab.viz.live import LiveRun
from wormhole_lab.viz.live_data import MemoFeed, SeriesFeed, SkipFeed, flag_steady, shown_flows


@pytest.fixture(scope="module")
def hpcc_run():
    return LiveRun(incast(n=3, cca="hp", size=2_000_000)).run()


@pytest.fixture(scope="module")
def timely_run():
    return LiveRun(incast(n=3, cca="timely", size=300_000)).run()


def test_thinned_table_keeps_every_stride_th_row_and_equals_one_fed_at_once():
    rows = np.arange(10_000, dtype=float)[:, None] * [1, 2]
    whole, pieces = ThinnedTable(["a", "b"], 100), ThinnedTable(["a", "b"], 100)
    whole.append(rows)
    rng = np.random.default_rng(1)
    cuts = np.sort(rng.choice(np.arange(1, 10_000), 60, replace=False))
    for block in np.split(rows, cuts):
        pieces.append(block)
        assert len(pieces) <= 100
    assert whole.stride == pieces.stride == 128
    np.testing.assert_array_equal(whole.column("a"), np.arange(0, 10_000, 128))
    np.testing.assert_array_equal(pieces.column("b"), whole.column("b"))


def test_take_hands_over_only_new_rows_or_all_after_a_thinning():
    table = ThinnedTable(["x"], 8)
    table.append(np.arange(5.0))
    first = table.take()
    assert not first.reset and first.rows["x"].tolist() == [0, 1, 2, 3, 4]
    assert len(table.take()) == 0  # nothing new
    table.append(np.arange(5.0, 7.0))
    assert table.take().rows["x"].tolist() == [5, 6]
    table.append(np.arange(7.0, 12.0))  # 12 rows > 8: every other one is kept
    update = table.take()
    assert update.reset and update.rows["x"].tolist() == [0, 2, 4, 6, 8, 10]


def test_the_vectorised_steady_test_is_the_analysis_one():
    rng = np.random.default_rng(2)
    rate = 1e10 * (1 + 0.02 * rng.standard_normal((300, 5)))
    rate[:40, 1] = np.nan
    rate[100:120, 3] *= 2
    expected = steady_flags(rate, 3, 10, 0.05)
    np.testing.assert_array_equal(flag_steady(rate, 3, 10, 0.05), expected)
    np.testing.assert_array_equal(flag_steady(rate, 3, 10, 0.05, first=200), expected[200:])


def feed_of(run, chunks_at_once: bool, theta=0.05):
    feed = SeriesFeed(run.scenario, theta=theta)
    if chunks_at_once:
        feed.add([run.series])
    else:
        for chunk in run.chunks:
            feed.add([chunk])
    return feed


@pytest.mark.parametrize("name", ["hpcc_run", "timely_run"])
def test_a_feed_given_chunk_by_chunk_ends_with_the_tables_of_the_finished_series(name, request):
    run = request.getfixturevalue(name)
    assert len(run.chunks) > 3
    by_chunk, at_once = feed_of(run, False), feed_of(run, True)
    assert set(by_chunk.tables) == set(at_once.tables) >= {"rate", "window", "queue", "fairness"}
    for key, table in by_chunk.tables.items():
        other = at_once.tables[key].rows()
        for column, values in table.rows().items():
            np.testing.assert_array_equal(values, other[column], err_msg=f"{key}.{column}")
    assert by_chunk.converged_ps == at_once.converged_ps
    assert by_chunk.detector_first_us == at_once.detector_first_us


def test_the_feed_agrees_with_the_analysis_of_the_whole_series(hpcc_run):
    series, feed = hpcc_run.series, feed_of(hpcc_run, False)
    fairness = feed.tables["fairness"].rows()
    np.testing.assert_allclose(fairness["fairness"], fairness_series(series).values, equal_nan=True)
    stride, window, theta = steady_params(hpcc_run.scenario.config, 0.05)
    flags = steady_flags(series["flow_rate"].values, stride, window, theta)
    lo, _ = steady_band(series["flow_rate"].values[:, 0] * 1e-9, stride, window, theta)
    np.testing.assert_allclose(feed.tables["rate"].column("band_lo"), lo, equal_nan=True)
    assert feed.converged_ps == convergence_time_ps(series, flags, hpcc_run.scenario.flows.start_ps)
    assert feed.converged_ps is not None and feed.detector_first_us is not None


def test_a_long_run_keeps_a_bounded_number_of_points(hpcc_run):
    feed = SeriesFeed(hpcc_run.scenario, max_points=50)
    for chunk in hpcc_run.chunks:
        feed.add([chunk])
    assert feed.samples == len(hpcc_run.series.time) > 200
    assert all(len(t) <= 50 for t in feed.tables.values())


def test_skips_come_once_when_final_and_memo_counters_stream():
    run = LiveRun(repeated_incast(n=2, rounds=3), mode="wormhole")
    skips, memo = SkipFeed(), MemoFeed()
    strips = {"memo": 0, "fastforward": 0}
    while run.step(max_chunks=5):
        new, provisional = skips.take(run.controller.ff.skips)
        memo.add(run.memo_log)
        for kind in strips:
            strips[kind] += len(new[kind]["x0"])
    new, provisional = skips.take(run.controller.ff.skips)
    memo.add(run.memo_log)
    for kind in strips:
        strips[kind] += len(new[kind]["x0"])
        assert len(provisional[kind]["x0"]) == 0
    windows = run.skip_windows()
    assert strips["memo"] == sum(w.memo for w in windows) > 0
    assert strips["fastforward"] == sum(not w.memo for w in windows)
    hits = memo.table.column("hits")
    assert memo.table.column("time")[0] == 0 and hits[0] == 0 and hits[-1] == run.flows.attrs["memo_hits"]


def test_shown_flows_take_the_largest_of_each_job_in_turn():
    ids = np.arange(10)
    sizes = np.array([5, 5, 5, 5, 5, 1, 2, 3, 9, 9])  # two equal jobs would tie: the lowest ids are all job 0's
    jobs = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    np.testing.assert_array_equal(shown_flows(ids, sizes, 4), [0, 1, 8, 9])
    np.testing.assert_array_equal(shown_flows(ids, sizes, 4, jobs), [0, 1, 8, 9])
    np.testing.assert_array_equal(shown_flows(ids, np.full(10, 5), 4), [0, 1, 2, 3])
    np.testing.assert_array_equal(shown_flows(ids, np.full(10, 5), 4, jobs), [0, 1, 5, 6])
    three = np.array([0, 0, 0, 0, 0, 0, 0, 0, 2, 1])
    np.testing.assert_array_equal(shown_flows(ids, np.full(10, 5), 3, three), [0, 8, 9])
    np.testing.assert_array_equal(shown_flows(ids[:3], sizes[:3], 4, jobs[:3]), [0, 1, 2])  # all fit
