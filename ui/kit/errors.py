"""Error sentences placed under the control they are about.

A :class:`~engine.validation.ConfigError` carries the configuration field it
is about (``"agents"``, ``"P"``, ``"q"``). A page marks, right after drawing a
control, the fields that control sets; :meth:`ErrorSlots.show` then puts the
sentence there, without reading the sentence.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from engine.limits import KNOB_NAMES
from engine.validation import ConfigError
from ui.kit.text import plain


class ErrorSlots:
    """Empty places under controls where a ConfigError sentence can appear."""

    def __init__(self):
        self._slots: dict[str, Any] = {}
        self._fallback = None

    def under(self, *fields: str) -> None:
        """A slot at the current position for errors about any of ``fields`` (config field names)."""
        slot = st.empty()
        for name in fields:
            self._slots.setdefault(name, slot)

    def fallback(self) -> None:
        """Mark the current position as the place for errors of fields without a slot."""
        self._fallback = st.empty()

    def show(self, err: ConfigError) -> None:
        slot = self._slots.get(getattr(err, "field", None)) or self._fallback
        (slot if slot is not None else st).error(plain(err), icon=":material/error:")   # may quote a link's value

    def has(self, field: str | None) -> bool:
        return field in self._slots

    def mark(self, err: ConfigError) -> None:
        """Point from the control ``err`` names to its sentence, which the page shows in the main area.

        For a host's limit: the sentence names several knobs and may be long, so
        it stays in the main area and the knob to lower first is marked here.
        """
        slot = self._slots.get(getattr(err, "field", None))
        if slot is not None:
            slot.warning("Lower this first: the run is above this server's limits (the sentence on the right "
                         "says by how much).", icon=":material/arrow_upward:")

    def run_is_off(self, err: ConfigError) -> None:
        """The caption beside a Run that ``err`` turned off, naming the marked setting (when it has a control)."""
        field = getattr(err, "field", None)
        if self.has(field):
            st.caption(f":material/arrow_back: Run is off until the setting marked on the left "
                       f"({KNOB_NAMES.get(field, field)}) is fixed.")
