"""The Retrospective's query layer: Ibis expressions over the canonical usage table, run on DuckDB (default), Spark
or a warehouse, each returning only the small aggregate a chart or tile needs."""
