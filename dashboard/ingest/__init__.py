"""Import layer: turn uploaded billing exports and run logs into one canonical usage table plus a report.

``import_bytes`` / ``import_path`` (``load``) decode the file, detect its format from the header (unless
given), read it with the format's description (``formats/``) through the one engine (``engine``) and return
``(usage, report)``. Everything here is pure: no Streamlit, no network, no eval or pickle.
"""

from dashboard.ingest.formats import FORMAT_IDS, FORMATS
from dashboard.ingest.load import DEFAULT_OPTIONS, import_bytes, import_path
from dashboard.ingest.schema import ImportReport, ReadOptions, UnreadableFile

__all__ = [
    "DEFAULT_OPTIONS",
    "FORMATS",
    "FORMAT_IDS",
    "ImportReport",
    "ReadOptions",
    "UnreadableFile",
    "import_bytes",
    "import_path",
]
