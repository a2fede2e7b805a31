"""Sessions share one DuckDB connection: a join materialised in one session's thread (and its table dropped when
collected) must not cut across another's query ("Attempting to execute an unsuccessful or closed pending query
result", which a Plan vs actual tab showed while another browser session opened the Retrospective)."""

import gc
import threading

import pandas as pd

from dashboard.query import engine, tables


def test_materialising_and_querying_from_two_threads_at_once_never_fails():
    backend = engine.connect("duckdb")
    frame = pd.DataFrame({"run_id": [f"r{i % 50}" for i in range(20_000)], "gpu_hours": 1.0})
    left, right = tables.usage_table(backend, frame), tables.usage_table(backend, frame.head(500))
    joined = left.join(right.select(run_id="run_id", other="gpu_hours"), "run_id")
    failures: list[BaseException] = []

    def materialise() -> None:
        for _ in range(40):
            try:
                stored = tables.materialised(joined)
                engine.execute(stored.count())
                del stored
                gc.collect()  # drops the table from this thread, as a session's collector does
            except BaseException as error:
                failures.append(error)

    def query() -> None:
        for _ in range(200):
            try:
                engine.execute(left.group_by("run_id").aggregate(total=left.gpu_hours.sum()))
            except BaseException as error:
                failures.append(error)

    threads = [threading.Thread(target=materialise), threading.Thread(target=query)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert failures == []
