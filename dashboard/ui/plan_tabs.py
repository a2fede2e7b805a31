"""The Plan page's chart tabs (a switcher per column: only the chosen chart is drawn) and the link's `charts`
parameter, which names the open tab of each column."""

from __future__ import annotations

import streamlit as st

PROGRAMME_TAB = "Programme"  # two charts and a table (`plan_charts_view`)
CHART_TABS = (
    ("Budget", "Storage growth", "Scaling law", "Cost range", "Where the step goes"),
    ("TST vs baseline", "Checkpoint interval", "Spot share", "Tornado", PROGRAMME_TAB),
)
TAB_KEYS = ("plan.tabs.left", "plan.tabs.right")
TAB_LABELS = ("Left chart", "Right chart")  # the switchers' labels, for screen readers (hidden on screen)
# The link's `charts` parameter names the open tab of each column, left then right: `?charts=storage,tst`.
TABS_PARAM = "charts"
TAB_SLUGS = {
    "Budget": "budget", "Storage growth": "storage", "Scaling law": "scaling", "Cost range": "cost-range",
    "Where the step goes": "step",
    "TST vs baseline": "tst", "Checkpoint interval": "checkpoint", "Spot share": "spot", "Tornado": "tornado",
    PROGRAMME_TAB: "programme",
}

def tabs_from_link(value: str | None) -> list[str]:
    """Open the tabs a link's `charts` value names; a value that is not two known tabs is dropped with a warning.

    The value itself is never quoted back (it is text from a link).
    """
    if value is None:
        return []
    parts = value.split(",")
    by_slug = [{TAB_SLUGS[name]: name for name in names} for names in CHART_TABS]
    if len(parts) != len(CHART_TABS) or any(part not in slugs for part, slugs in zip(parts, by_slug, strict=False)):
        allowed = " and ".join(f"one of {', '.join(slugs)}" for slugs in by_slug)
        return [f"Link: ignored parameter {TABS_PARAM!r}: it names the open chart of each column ({allowed}), "
                "e.g. charts=storage,tst"]
    for key, part, slugs in zip(TAB_KEYS, parts, by_slug, strict=True):
        st.session_state[key] = slugs[part]
    return []


def tabs_to_link() -> dict[str, str]:
    """The `charts` parameter for the open tabs, or nothing when both columns show their first tab."""
    open_tabs = [st.session_state.get(key) or names[0] for key, names in zip(TAB_KEYS, CHART_TABS, strict=True)]
    if open_tabs == [names[0] for names in CHART_TABS]:
        return {}
    return {TABS_PARAM: ",".join(TAB_SLUGS[name] for name in open_tabs)}
