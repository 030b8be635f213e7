import numpy as np

from wormhole_lab.wormhole.grown import Grown


def test_appended_values_and_rows_are_kept_in_order_across_growth():
    values, rows = Grown(np.int64), Grown(np.float64, 3)
    starts = [values.extend(np.arange(k, k + 50)) for k in range(0, 500, 50)]
    assert starts == list(range(0, 500, 50)) and values.values.tolist() == list(range(500))
    assert rows.extend(np.ones((100, 3))) == 0 and rows.extend(np.full((2, 3), 2.0)) == 100
    assert rows.values.shape == (102, 3) and rows.values[100:].tolist() == [[2.0] * 3] * 2
    assert values.extend(np.zeros(0, dtype=np.int64)) == 500 and values.n == 500
