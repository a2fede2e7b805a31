"""Browser check shared by the page tests: the text of tiles whose content is wider than their box."""

# A value cut off with "…" or hidden overflow has a scrollWidth above its clientWidth.
CUT_OFF_TILES = """() => [...document.querySelectorAll(
    '[data-testid="stMetricValue"], [data-testid="stMetricValue"] *, [data-testid="stMetricLabel"] *')]
    .filter(el => el.scrollWidth > el.clientWidth).map(el => el.textContent)"""
