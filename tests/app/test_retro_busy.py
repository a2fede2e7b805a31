"""The Retrospective's spinners: none over a small import (its views take milliseconds, a spinner starts a timer
thread), one with the elapsed time over a large one."""

from contextlib import nullcontext

import pytest

from dashboard.ui import retro_cache


@pytest.mark.parametrize(("rows", "spins"), [(None, False), (0, False), (retro_cache.SPINNER_ROWS, False),
                                             (retro_cache.SPINNER_ROWS + 1, True), (100_000_000, True)])
def test_a_spinner_only_where_work_can_take_a_moment(rows, spins):
    busy = retro_cache.busy("Computing…", rows)
    assert isinstance(busy, nullcontext) is not spins
