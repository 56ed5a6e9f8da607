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

PRESENTER_FONT = 19   # px: readable from the back of a classroom


_SENTENCE_END = re.compile(r"[.!?] +[A-Z]")   # a full stop before a capital starts a new sentence ("Fig. 2a" does not)


def one_sentence(about: str) -> str:
    """``about`` checked to be one sentence ending with a full stop (raises ValueError otherwise)."""
    text = " ".join(str(about).split())
    if not text.endswith(".") or len(text) < 2 or _SENTENCE_END.search(text[:-1]):
        raise ValueError(f"A chart caption must be one sentence ending with a full stop, got {about!r}.")
    return text


def enlarge(fig: go.Figure) -> go.Figure:
    """The figure with classroom-sized fonts and room for them."""
    height = fig.layout.height or 400
    fig.update_layout(font=dict(size=PRESENTER_FONT), title_font_size=PRESENTER_FONT + 5,
                      height=int(height * 1.3), legend_font_size=PRESENTER_FONT - 1)
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
