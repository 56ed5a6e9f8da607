"""Error sentences placed under the control they are about.

A :class:`~engine.validation.ConfigError` carries the configuration field it
is about (``"agents"``, ``"P"``, ``"q"``). A page marks, right after drawing a
control, the fields that control sets; :meth:`ErrorSlots.show` then puts the
sentence there, without reading the sentence.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from engine.validation import ConfigError


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
        (slot if slot is not None else st).error(str(err), icon=":material/error:")

    def has(self, field: str | None) -> bool:
        return field in self._slots
