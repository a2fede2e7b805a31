"""The Retrospective's tab queries for `make bench-scale`: what each tab asks the query layer when it is first drawn
(``dashboard.retro.tabs.TAB_QUERIES``, on a workspace dataset opened as an Ibis table), and a
hand-written DuckDB SQL query of the same aggregates over the dataset's Parquet files (``SQL``).

The SQL is what one would write by hand for each figure: the same groupings, the same spreading of a row over the
days (Spend) or hours (Load profile) it covers, the same filters; it returns the aggregates and stops there.
"""

from __future__ import annotations

import math
import os
import re

from dashboard.ingest.run_states import FAILED_STATES

# One UTC-second view of the rows: start, end (not before start) and the labels the figures group by.
_TIMED = """
SELECT *, epoch(period_start)::BIGINT AS s,
       greatest(coalesce(epoch(period_end)::BIGINT, epoch(period_start)::BIGINT), epoch(period_start)::BIGINT) AS e
FROM {usage}
"""
_LOAD = """
WITH t AS ({timed}), x AS (
  SELECT s, e, s // 3600 AS f, e // 3600 AS l, coalesce(gpu_hours, 0) AS h FROM t WHERE {where}),
r AS (SELECT *, CASE WHEN f = l THEN 0 ELSE h / ((e - s) / 3600.0) END AS rate FROM x)
SELECT hour, sum(step) AS step, sum(direct) AS direct FROM (
  SELECT f + 1 AS hour, rate AS step, 0.0 AS direct FROM r
  UNION ALL SELECT l, -rate, rate * (e - l * 3600) / 3600.0 FROM r
  UNION ALL SELECT f, 0.0, CASE WHEN f = l THEN h ELSE rate * ((f + 1) * 3600 - s) / 3600.0 END FROM r)
GROUP BY hour
"""
FAILED = "(" + ", ".join(f"'{state}'" for state in FAILED_STATES) + ")"  # the run states the figures count as failed
# Commitment lines as the import marks what the bill says (charge_kind), with a cost: paid on their own lines, or
# the provider's lines of commitment nobody used. Covered usage is usage.
_COMMITMENT = "coalesce(charge_kind IN ('commitment', 'unused_commitment') AND cost <> 0, false)"
_UNUSED = "coalesce(charge_kind = 'unused_commitment' AND cost <> 0, false)"
_WASTE_CHECKS = f"""WITH r AS (
  SELECT period_start, gpu_hours, cost, run_id, run_state,
         coalesce(gpu_hours > 0, false) AS g,
         coalesce(gpu_hours > 0, false) AND run_state IS NOT NULL AS k,
         coalesce(gpu_hours > 0 AND pricing = 'reserved', false) AND run_id IS NULL AS ur,
         {_UNUSED} AS c,
         coalesce(gpu_hours > 0, false) AND run_state IS NOT NULL AND run_id IS NOT NULL
           AND coalesce(period_end > period_start, false) AS j,
         team IS NULL AND project IS NULL AND run_id IS NULL AND coalesce(cost <> 0, false) AS u
  FROM {{usage}})
SELECT sum(gpu_hours) FILTER (WHERE k), sum(gpu_hours) FILTER (WHERE k AND run_state IN {FAILED}),
       sum(gpu_hours) FILTER (WHERE g), sum(cost) FILTER (WHERE k AND run_state IN {FAILED}),
       sum(cost) FILTER (WHERE k AND run_state = 'COMPLETED'), sum(cost) FILTER (WHERE k),
       sum(gpu_hours) FILTER (WHERE k AND run_state = 'COMPLETED'), sum(cost),
       count(*) FILTER (WHERE c), sum(cost) FILTER (WHERE c), min(period_start) FILTER (WHERE c),
       max(period_start) FILTER (WHERE c), sum(gpu_hours) FILTER (WHERE ur), sum(cost) FILTER (WHERE ur),
       count(*) FILTER (WHERE j), count(DISTINCT run_id) FILTER (WHERE j),
       sum(cost) FILTER (WHERE u), count(*) FILTER (WHERE u)
FROM r"""
_WASTE_FLAGS = f"""SELECT EXISTS (SELECT 1 FROM {{usage}} WHERE gpu_hours > 0 AND run_state IS NOT NULL),
                          EXISTS (SELECT 1 FROM {{usage}} WHERE cost <> 0),
                          EXISTS (SELECT 1 FROM {{usage}} WHERE {_UNUSED}),
                          EXISTS (SELECT 1 FROM {{usage}} WHERE gpu_hours > 0 AND pricing = 'reserved'),
                          EXISTS (SELECT 1 FROM {{usage}} WHERE gpu_hours > 0 AND pricing = 'reserved' AND cost <> 0),
                          EXISTS (SELECT 1 FROM {{usage}} WHERE gpu_hours > 0 AND pricing = 'reserved'
                                  AND run_id IS NULL)"""
_WASTE_STORAGE = f"""SELECT coalesce(resource_id, team || ' / ' || project) AS name, year(period_start) AS y,
                            month(period_start) AS m, sum(cost)
                     FROM {{usage}}
                     WHERE NOT coalesce(gpu_hours > 0, false) AND run_id IS NULL AND cost > 0 AND NOT ({_COMMITMENT})
                       AND (resource_id IS NOT NULL OR (team IS NOT NULL AND project IS NOT NULL))
                     GROUP BY ALL"""
_FILTERS = """SELECT min(period_start), max(period_start), list(DISTINCT coalesce(team, '(untagged)')),
               list(DISTINCT coalesce(project, '(untagged)')), list(DISTINCT coalesce(pricing, '(unknown)'))
               FROM {usage}"""
_UNITS = """WITH r AS (SELECT gpu_hours, cost, tokens, coalesce(gpu_hours <> 0, false) AS g,
                              coalesce(gpu_hours <> 0 AND tokens > 0, false) AS t FROM {usage})
            SELECT sum(gpu_hours) FILTER (WHERE g), sum(gpu_hours) FILTER (WHERE g AND cost IS NOT NULL),
                   sum(cost) FILTER (WHERE g), sum(tokens) FILTER (WHERE t), sum(gpu_hours) FILTER (WHERE t),
                   sum(tokens) FILTER (WHERE t AND cost IS NOT NULL), sum(cost) FILTER (WHERE t),
                   sum(cost) FILTER (WHERE NOT g), count(*) FILTER (WHERE NOT g AND cost IS NULL) FROM r"""
_PRICED = "SELECT EXISTS (SELECT 1 FROM {usage} WHERE currency IS NOT NULL)"
SQL: dict[str, tuple[str, ...]] = {  # keyed by the tab names of dashboard.retro.tabs.TAB_QUERIES
    "Filters and tiles": (_FILTERS, _UNITS, _PRICED),
    "Spend": ("""WITH t AS ({timed}), p AS (
                 SELECT coalesce(team, '(untagged)') AS g, gpu_hours, cost, s, e,
                        unnest(range(s // 86400, CASE WHEN e > s THEN (e - 1) // 86400 + 1 ELSE s // 86400 + 1 END))
                        AS day FROM t),
                 f AS (SELECT *, CASE WHEN e > s THEN (least(e, (day + 1) * 86400) - greatest(s, day * 86400))
                                      / (e - s)::DOUBLE ELSE 1.0 END AS w FROM p)
                 SELECT day, g, sum(gpu_hours * w), sum(cost * w) FROM f GROUP BY day, g""",
              """WITH t AS ({timed}), p AS (
                 SELECT cost, s, e,
                        unnest(range(s // 86400, CASE WHEN e > s THEN (e - 1) // 86400 + 1 ELSE s // 86400 + 1 END))
                        AS day FROM t)
                 SELECT day, sum(cost * CASE WHEN e > s THEN (least(e, (day + 1) * 86400) - greatest(s, day * 86400))
                                      / (e - s)::DOUBLE ELSE 1.0 END) FROM p GROUP BY day""",
              "SELECT max(period_start), max(period_end) FROM {usage}"),
    "Attribution": ("""SELECT coalesce(team, '(untagged)'), coalesce(project, '(untagged)'),
                       coalesce(run_id, '(untagged)'), sum(gpu_hours), sum(cost) FROM {usage}
                       GROUP BY ALL""",),
    "Plan vs actual": ("""SELECT run_id, sum(gpu_hours) FROM {usage} WHERE gpu_hours > 0 AND run_id IS NOT NULL
                          GROUP BY 1""",
                       f"""WITH r AS (SELECT *, coalesce(gpu_hours > 0, false) AS g,
                                             coalesce(run_state IN {FAILED}, false) AND run_id IS NOT NULL AS f,
                                             coalesce(run_id = (SELECT run_id FROM {{usage}} WHERE gpu_hours > 0
                                                                GROUP BY run_id ORDER BY sum(gpu_hours) DESC
                                                                LIMIT 1), false) AS m FROM {{usage}})
                           SELECT sum(gpu_hours) FILTER (WHERE g), sum(gpu_hours) FILTER (WHERE g AND m AND NOT f),
                                  sum(gpu_hours) FILTER (WHERE g AND m), sum(gpu_hours) FILTER (WHERE g AND f),
                                  sum(gpu_hours) FILTER (WHERE g AND run_id IS NOT NULL AND NOT m AND NOT f),
                                  sum(gpu_hours) FILTER (WHERE g AND run_id IS NULL),
                                  sum(gpu_hours) FILTER (WHERE g AND m AND NOT f AND tokens IS NOT NULL),
                                  sum(tokens) FILTER (WHERE g AND m AND NOT f AND tokens IS NOT NULL),
                                  sum(gpu_hours) FILTER (WHERE g AND cost IS NULL), sum(cost) FILTER (WHERE g),
                                  sum(cost) FILTER (WHERE {_COMMITMENT}), sum(cost) FILTER (WHERE {_UNUSED})
                           FROM r""",
                       """WITH r AS (SELECT count(*) FILTER (WHERE gpu_hours > 0) AS n,
                                            count(*) FILTER (WHERE gpu_hours > 0 AND run_state IS NOT NULL) AS ns,
                                            sum(cost) FILTER (WHERE NOT coalesce(gpu_hours > 0, false)) AS other
                                     FROM {usage} WHERE run_id IS NOT NULL GROUP BY run_id)
                          SELECT sum(other) FILTER (WHERE n > 0), bool_or(ns > 0) FROM r""",
                       """SELECT EXISTS (SELECT 1 FROM {usage} WHERE cost <> 0),
                                 EXISTS (SELECT 1 FROM {usage} WHERE gpu_hours > 0 AND pricing = 'reserved'),
                                 EXISTS (SELECT 1 FROM {usage} WHERE gpu_hours > 0 AND pricing = 'reserved'
                                         AND cost <> 0)"""),
    "Waste": (_WASTE_CHECKS, _WASTE_FLAGS, _WASTE_STORAGE),
    "Load profile": ("SELECT min(s // 3600), max(e // 3600) FROM ({timed})",
                     _LOAD.replace("{where}", "TRUE"),
                     """SELECT min(period_start), max(period_end) FROM {usage}
                        WHERE (pricing = 'reserved' AND coalesce(gpu_hours, 0) <> 0) OR charge_kind = 'commitment'"""),
    "Purchase mix": ("""SELECT coalesce(pricing, '(unknown)'), sum(gpu_hours), sum(cost) FROM {usage}
                        WHERE coalesce(gpu_hours, 0) <> 0 GROUP BY 1""",
                     "SELECT sum(cost) FILTER (WHERE coalesce(gpu_hours, 0) = 0), count(cost) FROM {usage}"),
    "Unit costs": (_UNITS, _PRICED, """SELECT gpu_type, sum(tokens), sum(gpu_hours) FROM {usage}
                                       WHERE gpu_hours <> 0 AND tokens > 0 GROUP BY gpu_type"""),
}
TABS: tuple[str, ...] = tuple(SQL)


def slug(tab: str) -> str:
    """A tab's name in a figure's name: "Plan vs actual" → plan_vs_actual."""
    return re.sub(r"[^a-z0-9]+", "_", tab.lower()).strip("_")
_STATE: dict[str, object] = {}


def _layer(tab: str, usage):
    """What the tab's first view asks the query layer (``dashboard.retro.tabs``)."""
    from dashboard.retro.tabs import TAB_QUERIES

    return TAB_QUERIES[tab](usage)


def prepare(engine: str, workspace: str, name: str) -> None:
    """Open dataset ``name`` of ``workspace`` on ``engine`` (the layer) and a DuckDB connection set as the layer's
    (the hand SQL)."""
    os.environ["PLANNER_WORKSPACE_DIR"] = workspace
    import duckdb

    from dashboard.query.engine import configure_duckdb, connect
    from dashboard.workspace import datasets

    glob = str(datasets.usage_folder(name) / "**" / "*.parquet")
    _STATE["sql"] = duckdb.connect()
    configure_duckdb(_STATE["sql"])  # the layer's memory limit, spill folder and insertion order
    _STATE["usage_sql"] = f"read_parquet('{glob}', hive_partitioning = true)"
    _STATE["engine"] = engine
    _STATE["table"] = datasets.open_table(connect(engine), name)


def run(engine: str, name: str, tab: str, how: str):
    """One tab's queries: through the layer (``how`` = "layer") or the hand-written SQL ("sql")."""
    if how == "layer":
        return _layer(tab, _STATE["table"])
    usage = _STATE["usage_sql"]
    timed = _TIMED.format(usage=usage)
    return [_STATE["sql"].sql(query.format(usage=usage, timed=timed)).df() for query in SQL[tab]]


def fingerprint(result) -> str:
    """A short description of a result (its parts' sizes), printed to show the query returned what it should."""
    if isinstance(result, (tuple, list)) and not hasattr(result, "shape"):
        return "[" + ", ".join(fingerprint(part) for part in result) + "]"
    if hasattr(result, "shape"):
        return "x".join(map(str, result.shape))
    if isinstance(result, dict):
        return f"{len(result)} keys"
    if isinstance(result, float) and math.isnan(result):
        return "nan"
    return type(result).__name__
