"""Tick labels of value axes, in the suffixes `dashboard.format` writes numbers with: k, M and B ($500k, $1.5M,
$2B, 20k), plain decimals under a thousand ($0.06, 0.6). Plotly's own "B" exponent format does this; d3's SI
format ("~s") would write five cents as $50m (milli) and a billion as 1G."""

from __future__ import annotations

USD_AXIS: dict[str, str] = {"tickprefix": "$", "exponentformat": "B"}
COUNT_AXIS: dict[str, str] = {"exponentformat": "B"}
