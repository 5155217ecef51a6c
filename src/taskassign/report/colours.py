"""The report's colours, shared by every chart and page (kept apart from the plotting code so a page that draws
its own SVG imports no plotting library)."""

from __future__ import annotations

__all__ = ("ACTIVE_COLOUR", "ASSIGNOR_COLOURS", "REASON_COLOURS", "STANDBY_COLOUR", "STATE_COLOUR")

ACTIVE_COLOUR = "#1f77b4"
STANDBY_COLOUR = "#ff7f0e"
STATE_COLOUR = "#2ca02c"
#: One colour per assignor on the overlay charts, in the order the assignors were named.
ASSIGNOR_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f")
#: Colour of a rebalance on the timeline and in the page's legend, by its first reason (each its own).
REASON_COLOURS = {
    "initial": "#7f7f7f", "join": "#2ca02c", "rejoin": "#98df8a", "leave": "#ff9896", "crash": "#d62728",
    "probing": "#9467bd", "followup": "#8c564b", "revocation": "#bcbd22", "forced": "#17becf",
}
