"""Import page: upload a billing or job export, see how every row was accounted for, download the result."""

from pathlib import Path

import pandas as pd
import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from dashboard.core.safe_csv import to_safe_csv
from dashboard.format import count_sig, table_decimals
from dashboard.ingest.decode import decode
from dashboard.ingest.formats import FORMATS
from dashboard.ingest.formats.generic import MAPPABLE_FIELDS
from dashboard.ingest.schema import ReadOptions, UnreadableFile
from dashboard.safe_text import markdown_text
from dashboard.ui import upload_store
from dashboard.ui.sources import (
    IMPORT_SLOT,
    RETRO_SLOTS,
    SAMPLES,
    UPLOAD_TYPES,
    choose_local,
    commitment_note,
    file_summary,
    import_once,
    local_columns,
    local_path_help,
    sample_names,
    summary_text,
    upload_key,
    zone_line,
    zone_select,
)

AUTO = "Detect from the header"

st.title("Import usage")
st.caption("Billing exports and job or run exports, of the formats listed under Format: every row is used, "
           "excluded by a named rule, or rejected with its line number and reason.")

source = st.radio("Source", ["Bundled sample", "Upload a file", "Local path"], horizontal=True, key="import_source",
                  help="Uploads are limited to the size in .streamlit/config.toml; read bigger exports, or a folder "
                       "of Parquet parts, from a path on the machine running the dashboard.")
# The source is named by a key of its contents (sample name, an upload's name and digest hashed once, a path with
# its modification time and size), so a rerun that changes nothing neither rereads nor rehashes the file.
local = None
uploaded: UploadedFile | None = None
if source == "Local path":
    typed = st.text_input("File or folder of Parquet parts", key="import_path", help=local_path_help()).strip()
    local = choose_local(typed) if typed else None
    if typed and local is None:
        st.stop()
    source_key = local and local.key
elif source == "Upload a file":
    uploaded = st.file_uploader("Export file (.csv, .txt, .tsv, .log, .parquet, optionally .gz or .zip)",
                                type=UPLOAD_TYPES, key="import_file")
    source_key = uploaded and upload_key(uploaded, "import_file")
else:
    names = sample_names()
    sample = st.selectbox("Sample file", names, key="sample",
                          index=names.index("focus_sample.csv") if "focus_sample.csv" in names else 0)
    source_key = ("sample", sample)

options_col, zone_col, comma_col = st.columns(3)
format_choice = options_col.selectbox("Format", [AUTO, *FORMATS], key="import_format",
                                      format_func=lambda choice: FORMATS[choice].title if choice in FORMATS else AUTO)
zone = zone_select("import_zone", zone_col)  # UTC assumed, as on the Retrospective
decimal_comma = comma_col.checkbox("Decimal commas (1.234,5)", key="import_decimal_comma",
                                   help="Detected automatically for ';'-separated files; tick to force it.")

if not source_key:
    st.info("Choose a file to import.")
    st.stop()
if local is not None:
    filename = local.filename
elif uploaded is not None:  # the source is an upload
    filename = uploaded.name
else:
    filename = sample


def source_bytes() -> bytes:
    """The chosen upload's or sample's bytes."""
    return uploaded.getvalue() if uploaded is not None else (SAMPLES / sample).read_bytes()


def source_columns() -> list[str] | None:
    """The chosen file's header (None after a message)."""
    if local is not None:
        return local_columns(local)
    try:
        return list(decode(source_bytes(), filename).table.columns)
    except UnreadableFile as error:
        st.error(markdown_text(error))
        return None


mapping: dict[str, str] = {}
if format_choice == "generic" and not (local is not None and local.path.is_dir()):
    if st.session_state.get("import_columns_key") != source_key:
        columns = source_columns()
        if columns is None:
            st.stop()
        st.session_state.import_columns = columns
        st.session_state.import_columns_key = source_key
    st.subheader("Column mapping")
    st.caption("Say which column holds each field. Required: period_start, and gpu_hours or gpu_count with "
               "duration_h or period_end.")
    grid = st.columns(3)
    for i, (field, description) in enumerate(MAPPABLE_FIELDS.items()):
        choice = grid[i % 3].selectbox(field, ["(none)", *st.session_state.import_columns], key=f"map_{field}",
                                       help=description)
        if choice != "(none)":
            mapping[field] = choice

options = ReadOptions(timezone=zone, decimal_comma=decimal_comma, mapping=mapping or None)
key = (source_key, format_choice, options.timezone, decimal_comma, tuple(sorted(mapping.items())))
imported = import_once(IMPORT_SLOT, key, filename, local.path if local is not None else source_bytes,
                       format=None if format_choice == AUTO else format_choice, options=options)
if imported is None:
    st.stop()
summary = file_summary(imported)
usage = imported.usage
read_as = FORMATS[summary.format]
slot = "runs" if read_as.kind == "runs" else "billing"  # a generic import goes with the bill
st.success(f"{markdown_text(filename)}: read as **{read_as.title}**.")
if read_as.kind == "runs" and summary.format == "slurm":
    st.caption(zone_line(zone) + ".")
if st.button("Open in Retrospective", icon=":material/query_stats:", key="import_to_retro",
             help=f"Use this import on the Retrospective page, as its {RETRO_SLOTS[slot]}, without importing the "
             "file again."):
    # Only the import's key is handed over: the table stays in the bounded upload store.
    st.session_state.setdefault("retro.handoff", {})[slot] = {
        "key": imported.key, "filename": imported.filename,
        "source": {"Bundled sample": "sample", "Upload a file": "upload"}.get(source, "path")}
    st.switch_page("app_pages/retro.py")
for warning in summary.warnings:
    st.warning(markdown_text(warning))

tiles = st.columns(6)
tiles[0].metric("Rows read", f"{summary.rows_read:,}")
tiles[1].metric("Used", f"{summary.rows_used:,}")
tiles[2].metric("Excluded", f"{summary.rows_excluded:,}", help="Dropped by a named rule (see below).")
tiles[3].metric("Rejected", f"{summary.rows_rejected:,}", help="Unreadable rows, with line and reason below.")
tiles[4].metric("GPU-hours", count_sig(summary.gpu_hours_total))
currency = summary.currency or ""
tiles[5].metric("Cost", summary_text(summary, "cost_total"),
                help=markdown_text(f"{summary.cost_total:,.2f} {currency or '(no currency given)'}"))
note = commitment_note(summary.format, usage, summary.currency)
if note:
    st.caption(markdown_text(note))

left, right = st.columns(2)
with left:
    st.subheader("By team")
    by_team = pd.DataFrame([{"team": team, "gpu_hours": totals.gpu_hours, "cost": totals.cost}
                        for team, totals in summary.by_team.items()])
    hours_decimals, cost_decimals = (table_decimals(by_team.get(column, ())) for column in ("gpu_hours", "cost"))
    st.dataframe(by_team, hide_index=True, width="stretch", column_config={
        "gpu_hours": st.column_config.NumberColumn("GPU-hours", format=f"%,.{hours_decimals}f"),
        "cost": st.column_config.NumberColumn(f"Cost ({currency or 'no currency'})", format=f"%,.{cost_decimals}f"),
    })
with right:
    st.subheader("Rows set aside")
    if summary.rows_excluded:
        st.caption("Excluded by rule")
        rules = pd.DataFrame(list(summary.excluded_by_rule.items()), columns=["rule", "rows"])
        st.dataframe(rules, hide_index=True, width="stretch")
    if summary.rows_rejected:
        st.caption("Rejected (line numbers in the source file)")
        st.dataframe(imported.rejected, hide_index=True, width="stretch")
    if not summary.rows_excluded and not summary.rows_rejected:
        st.write("Every row was used.")

st.subheader("Canonical usage table")
st.caption(f"{len(usage):,} rows; the first 1,000 are shown. The download escapes cells that start with "
           "=, +, - or @ so spreadsheets do not run them as formulas.")
st.dataframe(usage.head(1000), hide_index=True, width="stretch")
st.download_button("Download canonical usage (CSV)", data=upload_store.csv_download(usage, to_safe_csv),
                   file_name=f"{Path(filename).stem}_usage.csv", mime="text/csv")
