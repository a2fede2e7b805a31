"""The Retrospective's spinners: none over a small frame (its views take milliseconds, a spinner starts a timer
thread), one with the elapsed time over a large frame or a queried dataset."""

from contextlib import nullcontext

import ibis
import pandas as pd
import pytest

from dashboard.query import tables
from dashboard.ui import retro_cache

SMALL = pd.DataFrame({"gpu_hours": [1.0] * tables.SMALL_FRAME_ROWS})
LARGE = pd.DataFrame({"gpu_hours": [1.0] * (tables.SMALL_FRAME_ROWS + 1)})
QUERIED = ibis.table({"gpu_hours": "float64"}, name="usage")


@pytest.mark.parametrize(("usage", "spins"), [(None, False), (SMALL, False), (LARGE, True), (QUERIED, True)])
def test_a_spinner_only_where_work_can_take_a_moment(usage, spins):
    busy = retro_cache.busy("Computing…", usage)
    assert isinstance(busy, nullcontext) is not spins
