"""How every chart reaches the page: the figure, and one sentence saying what it shows.

A student should be able to read the caption aloud and know what the axes,
the colours and the marks mean, so every ``st.plotly_chart`` of the dashboard
goes through :func:`show` (``tests/test_charts.py`` holds every page and ui
module to it). In presenter mode (:mod:`ui.kit.presenter`) a lesson page passes
``large=True`` and the same call draws the figure with larger fonts.
"""

from __future__ import annotations

import re

import plotly.graph_objects as go
import streamlit as st

from ui.kit.figure_style import LEGEND_ROW_PX

PRESENTER_FONT = 18     # px: chart text readable from the back of a classroom
# px: a chart's whole height (plot, title and legend) in presenter mode, so that a step's title, its sentences,
# the chart and the step buttons fit one 1280x720 screen.
PRESENTER_HEIGHT = 330


_SENTENCE_END = re.compile(r"[.!?] +[A-Z]")   # a full stop before a capital starts a new sentence ("Fig. 2a" does not)


def one_sentence(about: str) -> str:
    """``about`` checked to be one sentence ending with a full stop (raises ValueError otherwise)."""
    text = " ".join(str(about).split())
    if not text.endswith(".") or len(text) < 2 or _SENTENCE_END.search(text[:-1]):
        raise ValueError(f"A chart caption must be one sentence ending with a full stop, got {about!r}.")
    return text


def enlarge(fig: go.Figure, height: int = PRESENTER_HEIGHT) -> go.Figure:
    """The figure with classroom-sized text, fitted into ``height`` px (the legend included).

    Every text is given its size explicitly (axis ticks and titles, legend, annotations): a size set only on
    the layout's font is replaced by the chart theme's smaller defaults in the browser.
    """
    size = PRESENTER_FONT
    margin = fig.layout.margin
    # ui.kit.figure_style leaves LEGEND_ROW_PX per legend row below the axis; rows of larger text need more.
    rows = round(max((margin.b or 0) - 50, 0) / LEGEND_ROW_PX) if fig.layout.showlegend is not False else 0
    fig.update_layout(font=dict(size=size), title_font_size=size + 2, legend_font_size=size - 1, height=height,
                      margin=dict(l=max(margin.l or 0, 70), r=margin.r, t=max(margin.t or 0, 52),
                                  b=62 + int(1.6 * size) * rows))
    fig.update_xaxes(tickfont_size=size - 1, title_font_size=size)
    fig.update_yaxes(tickfont_size=size - 1, title_font_size=size)
    for annotation in fig.layout.annotations:
        annotation.font.size = max(annotation.font.size or 0, size - 2)
    return fig


def show(fig: go.Figure, *, key: str, about: str, where=None, large: bool = False, **kwargs):
    """Draw ``fig`` and, under it, the caption "What you see: ``about``"; returns the chart's event.

    ``where`` is a container or an ``st.empty()`` slot (a slot is replaced as
    a whole, so a live chart keeps one caption); ``large`` enlarges the fonts
    (presenter mode); ``kwargs`` go to ``st.plotly_chart`` (e.g. ``on_select``).
    """
    caption = one_sentence(about)
    if large:
        fig = enlarge(fig)
    with (where if where is not None else st).container():
        event = st.plotly_chart(fig, key=key, **kwargs)
        st.caption(f"**What you see:** {caption}")
    return event


def empty_state(text: str, where=None) -> None:
    """What will appear here and how to get it, in place of charts with nothing to show yet."""
    with (where if where is not None else st).container(border=True):
        st.markdown(f":material/insights: {text}")
