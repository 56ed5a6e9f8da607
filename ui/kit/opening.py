"""Every page's opening: its route, its controls seeded from a ``?preset=`` link and the URL, and one note.

A page starts with ``opening = open_page(ROUTE, controls.init)`` and, under
its title, ``opening.note()``: one sentence per link value it ignored, each
saying what the value may be ("Ignored agents=99999999 from the link: agents
is a whole number from 2 to 100,000."). A value is ignored when it does not
parse or lies outside its control's limits (:meth:`ui.kit.state.Param.allowed`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import streamlit as st

from ui.kit.routes import Route
from ui.kit.state import Ignored
from ui.kit.text import plain


def ignored_note(ignored: Sequence[Ignored]) -> str:
    """The note about ignored link values: one sentence each, in the order of the page's controls."""
    return " ".join(item.sentence() for item in ignored)


@dataclass(frozen=True)
class Opening:
    """What the opening found: the link values it ignored."""

    ignored: tuple[Ignored, ...]

    def note(self) -> None:
        """The ignored link values as one warning (nothing when the link was fine)."""
        if self.ignored:
            st.warning(plain(ignored_note(self.ignored)))


def open_page(route: Route, seed: Callable[[], Sequence[Ignored]], *, sidebar: str = "auto") -> Opening:
    """Configure the page (:meth:`Route.configure`) and seed its controls with ``seed()`` (a controls ``init``).

    ``sidebar="collapsed"`` folds the sidebar away (presenter mode).
    """
    route.configure(sidebar=sidebar)
    return Opening(tuple(seed()))
