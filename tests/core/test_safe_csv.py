"""Formula-injection-safe CSV export."""

import pandas as pd

from dashboard.core.safe_csv import to_safe_csv


def test_formula_cells_are_prefixed():
    frame = pd.DataFrame({"team": ["=1+2", "+x", "-y", "@SUM(A1)", "ok"], "cost": [-1.5, 2.0, 3.0, 4.0, 5.0]})
    lines = to_safe_csv(frame).decode().splitlines()
    assert lines == ["team,cost", "'=1+2,-1.5", "'+x,2.0", "'-y,3.0", "'@SUM(A1),4.0", "ok,5.0"]
