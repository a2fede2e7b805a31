"""Run every benchmark and print its figures (`make bench`); not part of `make test`."""

import importlib

BENCHMARKS = (
    "bench.engine_bench", "bench.feasibility_bench", "bench.uncertainty_bench", "bench.ingest_bench",
    "bench.plan_bench", "bench.server_bench", "bench.browser_bench", "bench.retro_bench", "bench.small_data_bench",
    "bench.sessions_bench",
)

for name in BENCHMARKS:
    print(f"# {name}")
    importlib.import_module(name).main()
