"""Server-side rerun time of the Retrospective page over a 1,000,000-row FOCUS export, against the reference page.

The issue asks that the page stay responsive with a million usage rows. The export comes from
`bench.ingest_bench.write_focus_csv` (12 teams, 25 projects), written by a child process so that its memory is not
counted in this process's peak. Under `streamlit.testing.v1.AppTest` the run export is set to "(none)", the file's
path is typed into "Large export on this machine" (its folder is the data folder, `PLANNER_DATA_DIR`) and that
first run (the import) is timed on its own. Then `at.run()` is timed SAMPLES times for each of: a rerun with
nothing changed (every `st.cache_data` call hits); a new team selection on the Spend tab (never one seen before, so
the filter, the tiles and the spend chart are recomputed); and a switch of the open tab, cycling Attribution, Load
profile, Purchase mix and Spend with no filter (the first visit to each of the first three computes over all rows,
later visits hit the cache). Every rerun is followed by a move of `bench/reference_app.py`'s slider to a new value,
so that a noisy neighbour slows both alike; the ratios are of the medians. Run from the repository root (as `make
bench` does) so that `.streamlit/config.toml` applies, as it does for `make run`.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from bench.ingest_bench import ROWS
from bench.plan_bench import REFERENCE_APP, TIMEOUT_S, _distinct_values

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "dashboard" / "app.py"
SAMPLES = 15
TABS = ("Attribution", "Load profile", "Purchase mix", "Spend")
_WRITE = ("import sys; from pathlib import Path; from bench.ingest_bench import write_focus_csv; "
          "write_focus_csv(Path(sys.argv[1]))")


def _run(at: AppTest, name: str, doing: str) -> float:
    """Seconds `at.run()` took; exit if the page raised."""
    started = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - started
    if at.exception:
        raise SystemExit(f"the {name} page raised {doing}: {at.exception[0].value}")
    return elapsed


def _open_export(path: Path) -> tuple[AppTest, float]:
    """The Retrospective page reading `path` (and no run export), with the seconds its import run took."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
    _run(at, "Plan", "on opening")
    at.switch_page("app_pages/retro.py")
    _run(at, "Retrospective", "on the bundled samples")
    at.selectbox(key="retro.runs").set_value("(none)")
    at.text_input(key="retro.billing_path").set_value(str(path))
    import_s = _run(at, "Retrospective", f"reading {path}")
    rows = next((m.value for m in at.metric if m.label == "Rows"), None)
    if at.error or rows != f"{ROWS:,}":
        raise SystemExit(f"the Retrospective page did not read {path}: Rows {rows}, errors "
                         f"{[e.value for e in at.error]}")
    return at, import_s


def _team_selections(teams: list[str], count: int) -> list[list[str]]:
    """`count` distinct selections alternating one team and all teams but one (a small and a near-full slice)."""
    selections = [s for team in teams for s in ([team], [t for t in teams if t != team])][:count]
    if len(selections) < count:
        raise SystemExit(f"the Teams filter offers {len(teams)} teams, too few for {count} distinct selections")
    return selections


def _select_teams(teams: list[str], at: AppTest) -> None:
    at.multiselect(key="retro.teams").set_value(teams)


def _open_tab(label: str, at: AppTest) -> None:
    at.session_state["retro.view"] = label


def _interleaved(retro: AppTest, reference: AppTest, changes: list[Callable[[AppTest], None]],
                 moves: list[float | int], reference_samples: list[float]) -> list[float]:
    """Seconds of one Retrospective rerun per change, each followed by a timed reference slider move."""
    samples = []
    for change in changes:
        change(retro)
        samples.append(_run(retro, "Retrospective", "on a rerun"))
        reference.slider[0].set_value(moves.pop())
        reference_samples.append(_run(reference, "reference", "on a slider move"))
    return samples


def main() -> None:
    """Write the export, import it, time the three kinds of rerun against the reference, print the figures."""
    st.cache_data.clear()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "focus_1m.csv"
        subprocess.run([sys.executable, "-c", _WRITE, str(path)], check=True, cwd=ROOT)
        size = path.stat().st_size
        os.environ["PLANNER_DATA_DIR"] = tmp  # local paths are read only inside the data folder
        retro, import_s = _open_export(path)
        reference = AppTest.from_file(str(REFERENCE_APP), default_timeout=TIMEOUT_S)
        _run(reference, "reference", "on opening")
        moves = _distinct_values("reference", reference, 3 * SAMPLES)
        reference_samples: list[float] = []
        unchanged = _interleaved(retro, reference, [lambda _: None] * SAMPLES, moves, reference_samples)
        teams = _team_selections(retro.multiselect(key="retro.teams").options, SAMPLES)
        filtered = _interleaved(retro, reference, [partial(_select_teams, t) for t in teams], moves,
                                reference_samples)
        _select_teams([], retro)
        _run(retro, "Retrospective", "on clearing the Teams filter")
        tabs = [TABS[i % len(TABS)] for i in range(SAMPLES)]
        switched = _interleaved(retro, reference, [partial(_open_tab, t) for t in tabs], moves, reference_samples)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # ru_maxrss is in KiB on Linux
    reference_ms = statistics.median(reference_samples) * 1e3
    medians = {name: statistics.median(samples) * 1e3
               for name, samples in (("unchanged", unchanged), ("filter", filtered), ("tab", switched))}
    print(f"retro_1m_file_mb: {size / 1e6:.1f}")
    print(f"retro_1m_import_seconds: {import_s:.2f} (the run after typing the path: read, join, first Spend tab; "
          "not a rerun)")
    print(f"retro_rerun_unchanged_ms: {medians['unchanged']:.1f} (median of {SAMPLES} reruns with nothing changed, "
          "all cache hits)")
    print(f"retro_rerun_filter_ms: {medians['filter']:.1f} (median of {SAMPLES} Teams selections on the Spend tab, "
          "each new: one team or all but one, so filter, tiles and spend chart recompute)")
    print(f"retro_rerun_tab_ms: {medians['tab']:.1f} (median of {SAMPLES} tab switches over all rows, "
          f"{' -> '.join(TABS)} in turn; {len(TABS) - 1} first visits compute, the rest are cache hits)")
    first_visits = zip(TABS[:-1], switched[: len(TABS) - 1], strict=True)
    print("retro_tab_first_visit_ms: " + ", ".join(f"{tab} {s * 1e3:.1f}" for tab, s in first_visits))
    print(f"reference_rerun_ms: {reference_ms:.1f} (reference_app.py slider moved to a new value, "
          f"{len(reference_samples)} moves interleaved with the reruns above)")
    for name, ms in medians.items():
        print(f"retro_rerun_{name}_ratio: {ms / reference_ms:.2f}")
    print(f"retro_peak_rss_mb: {peak / 1e6:.1f} (this process, import and caches included)")


if __name__ == "__main__":
    main()
