"""A dataset queried where it lies: its type test and its first rows."""

import ibis
import pandas as pd
import pytest

from dashboard.query import opened


def test_first_rows_come_in_batches_and_stop_at_the_cap():
    backend = ibis.duckdb.connect()
    table = backend.create_table("rows", pd.DataFrame({"n": range(10)}))
    batches = list(opened.first_rows(table.order_by("n"), 5, 2))
    assert all(len(batch) <= 2 for batch in batches)
    assert pd.concat(batches)["n"].tolist() == [0, 1, 2, 3, 4]
    assert opened.is_table(table) and not opened.is_table(pd.DataFrame())


@pytest.mark.parametrize("rows", [0, 3])
def test_first_rows_of_an_empty_view(rows):
    table = ibis.duckdb.connect().create_table("rows", pd.DataFrame({"n": [1, 2]}))
    assert sum(len(batch) for batch in opened.first_rows(table.filter(table.n > 5), rows, 2)) == 0
