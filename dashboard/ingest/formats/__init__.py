"""Every export format the importer reads, one module each with a ``FORMAT`` description.

Adding a format is adding a module here (and its test): the registry below finds it, detection reads its
fingerprint and refusals, the engine reads its columns, rules and cost rule, and the Import page, the
Retrospective's upload slots and the CLI's ``--format`` offer it by its title and kind.
"""

from __future__ import annotations

import importlib
import pkgutil

from dashboard.ingest.spec import Format


def _discover() -> dict[str, Format]:
    """The ``FORMAT`` of every module in this package, in their declared order."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        fmt = importlib.import_module(f"{__name__}.{module.name}").FORMAT
        if fmt.id != module.name:
            raise ImportError(f"ingest/formats/{module.name}.py describes format {fmt.id!r}; name them alike")
        found.append(fmt)
    return {fmt.id: fmt for fmt in sorted(found, key=lambda f: (f.order, f.id))}


FORMATS: dict[str, Format] = _discover()
FORMAT_IDS: tuple[str, ...] = tuple(FORMATS)
