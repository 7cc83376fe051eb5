"""bench.speed: the figures computed from given latencies (nothing is timed here)."""
from __future__ import annotations

import pytest

from bench.passes import BenchRow
from bench.speed import latency_speed, median_speed, path_speed, percentile


def test_percentile_nearest_rank():
    xs = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
    assert percentile(xs, 0.5) == 50.0
    assert percentile(xs, 0.95) == 100.0
    assert percentile([7.0], 0.95) == 7.0
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_latency_speed_rates_and_stage_shares():
    sp = latency_speed([100.0, 300.0], [1, 3], [{"parse": 50.0, "extract": 50.0}, {"parse": 100.0, "extract": 200.0}])
    assert sp.documents == 2 and sp.pages == 4
    assert sp.docs_per_s == pytest.approx(5.0) and sp.pages_per_s == pytest.approx(10.0)
    assert sp.stage_median_ms == {"extract": 125.0, "parse": 75.0}
    assert sp.stage_share == {"extract": pytest.approx(0.625), "parse": pytest.approx(0.375)}


def test_path_speed_selects_rows_of_one_path():
    rows = [BenchRow("a", "passed", "new", {}, 1, {"total": 400.0, "generate": 300.0}),
            BenchRow("b", "passed", "known", {}, 2, {"total": 100.0, "extract": 20.0}),
            BenchRow("c", "error", None, {}, 1, {"total": 1.0})]
    assert path_speed(rows, "known").docs_per_s == pytest.approx(10.0)
    assert path_speed(rows, "new").p50_ms == 400.0
    assert path_speed(rows, None).documents == 2


def test_median_over_runs():
    runs = [latency_speed([100.0], [1]), latency_speed([200.0], [1]), latency_speed([1000.0], [1])]
    m = median_speed(runs)
    assert m.repeats == 3 and m.p50_ms == 200.0 and m.docs_per_s == pytest.approx(5.0)
    assert median_speed([]).repeats == 0
