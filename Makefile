# Two commands for users: `make run` and `make test`. `make bench` runs the benchmark catalogue (bench/catalogue.py),
# prints one table, writes bench/results.json and docs/benchmarks.md, and fails when a gated target is missed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-runtime
DEV_STAMP := $(VENV)/.installed-dev
PORT ?= 8501
CHROMIUM := /usr/bin/chromium

.PHONY: run test bench bench-scale bench-scale-tabs clean

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV) || { \
	  echo "python3 -m venv failed: installing Debian's python3-venv"; \
	  apt-get update && apt-get install -y python3-venv && $(PYTHON) -m venv $(VENV); \
	} || { echo "Could not create $(VENV): install python3-venv (apt-get install python3-venv) and retry."; exit 1; }

# The runtime only: no PySpark (the optional Spark engine, PLANNER_ENGINE_URL=local[N] or spark://…); add it with
# .venv/bin/pip install -r requirements-spark.txt (needs Java 17).
# --no-compile: Python writes the bytecode of the modules the app imports when it first imports them, instead of pip
# compiling every module of every package (166 MB of the virtualenv's 749 MB, most of it never imported).
$(RUN_STAMP): requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -r requirements.txt
	touch $@

# `make test` adds PySpark (requirements-spark.txt, the optional Spark engine) and the tools to the runtime.
# The packages' bytecode (not their own test suites') is compiled once here, so the many processes the tests start
# do not each compile it again where PYTHONDONTWRITEBYTECODE is set.
$(DEV_STAMP): requirements.txt requirements-spark.txt requirements-dev.txt $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	$(BIN)/python -m compileall -q -x '/tests?/' "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >/dev/null || true
	touch $@

# Freed tables go back to the system when sessions end: Arrow's system allocator and two glibc arenas (measured
# by bench/sessions_bench.py; with the defaults the server keeps about 600 MB after the sessions close).
SERVER_MEMORY := MALLOC_ARENA_MAX=2 ARROW_DEFAULT_MEMORY_POOL=system

run: $(RUN_STAMP)
	$(SERVER_MEMORY) $(BIN)/python -m streamlit run dashboard/app.py --server.address 127.0.0.1 --server.port $(PORT)

# The browser tests (tests/browser) drive Debian's Chromium; they skip, saying so, when it cannot be installed.
$(CHROMIUM):
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update && apt-get install -y chromium; \
	fi; \
	[ -x $@ ] || { \
	  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
	  echo "!!! $@ is missing and could not be installed (that needs root, apt-get and the Debian mirror)."; \
	  echo "!!! The browser tests will be SKIPPED. Install it with: sudo apt-get install chromium"; \
	  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
	}

# The scenario-store tests (tests/store) start a throwaway PostgreSQL server with initdb/pg_ctl; they skip,
# saying so, when the server binaries are missing and cannot be installed.
.PHONY: postgres-binaries
postgres-binaries:
	@if ! command -v initdb >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update && apt-get install -y postgresql; \
	  fi; \
	  command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	    echo "!!! PostgreSQL's initdb/pg_ctl are missing and could not be installed: the PostgreSQL store tests"; \
	    echo "!!! will be SKIPPED. Install them with: sudo apt-get install postgresql"; \
	  }; \
	fi

# The query layer's tests (tests/query) run on PySpark in local mode, which needs a JVM: Debian's OpenJDK 17 is
# installed when java is missing; without it the Spark cases are skipped, saying so.
.PHONY: openjdk
openjdk:
	@if ! command -v java >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update && apt-get install -y openjdk-17-jre-headless; \
	  fi; \
	  command -v java >/dev/null || { \
	    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
	    echo "!!! java is missing and could not be installed (that needs root, apt-get and the Debian mirror)."; \
	    echo "!!! The query layer's Spark tests will be SKIPPED. Install it with: sudo apt-get install openjdk-17-jre-headless"; \
	    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
	  }; \
	fi

# The proxy example's test (tests/security/test_proxy_rate_limit.py) runs Debian's nginx in front of a served app;
# it skips, saying so, without it.
.PHONY: nginx
nginx:
	@if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update && apt-get install -y nginx; \
	  fi; \
	  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || \
	    echo "!!! nginx is missing: the proxy example's test will be SKIPPED. Install it with: sudo apt-get install nginx"; \
	fi

test: $(DEV_STAMP) postgres-binaries openjdk nginx | $(CHROMIUM)
	$(BIN)/python -m ruff check .
	$(BIN)/python -m mypy dashboard tests/support
	$(BIN)/python -m pytest

bench: $(DEV_STAMP)
	$(BIN)/python -m bench

# Not part of `make bench`: the ten canonical bill questions (bench/scale_questions.py) on a generated ROWS-row
# FOCUS dataset (default 1,000,000), each on the rollup path beside bare DuckDB over the raw Parquet, the import
# with its rollups timed, and the Retrospective's views as the page runs them, cold and warm, beside the bare scan
# (bench/scale_views.py), results kept in bench/scale_results/<commit>.json, failing when a question's (or a view's
# warm) ratio to bare DuckDB grew more than 1.2x since the previous result of the same ROWS. ROWS=10000000 needs
# about 0.7 GB of scratch under BENCH_SCALE_DIR (default /tmp/planner-bench-scale), ROWS=100000000 about 6.5 GB
# (docs/benchmarks.md).
bench-scale: $(DEV_STAMP)
	ROWS=$(ROWS) BENCH_SCALE_DIR=$(BENCH_SCALE_DIR) $(BIN)/python -m bench.scale_questions

# The earlier scale bench: generates a 100,000,000-row FOCUS dataset and a 10,000,000-row CSV under BENCH_SCALE_DIR
# (about 11 GB free needed at full size) and times the streamed import and every Retrospective tab's queries.
# A quick run: make bench-scale-tabs ROWS=200000 CSV_ROWS=100000
bench-scale-tabs: $(DEV_STAMP)
	ROWS=$(ROWS) CSV_ROWS=$(CSV_ROWS) SPARK_ROWS=$(SPARK_ROWS) BENCH_SCALE_DIR=$(BENCH_SCALE_DIR) \
	  $(BIN)/python -m bench.scale_bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
