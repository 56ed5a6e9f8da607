"""Visitor text is text: what a link, an upload or a sweep setting says reaches Markdown only escaped.

Streamlit renders the text of ``st.markdown``, ``st.caption``, ``st.error``,
``st.warning``, ``st.info``, ``st.success`` and ``st.write`` as Markdown (links,
images a browser fetches, Streamlit's ``:color[...]`` and ``:material/...:``
directives, LaTeX). :func:`plain` escapes every character that could start
any of them, so a sentence that quotes a visitor's value shows it literally.
"""

from __future__ import annotations

import re

# Every ASCII punctuation character may be backslash-escaped in CommonMark; these are the ones that start
# Markdown, HTML, Streamlit's directives or LaTeX.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$&=\"'])")


def plain(text) -> str:
    """``text`` escaped for any of Streamlit's Markdown elements: it shows exactly as written."""
    escaped = _SPECIAL.sub(r"\\\1", str(text))
    return escaped.replace("\n", "  \n")       # a line break stays a line break, never a heading or a list
