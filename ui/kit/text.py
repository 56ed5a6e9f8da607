"""Visitor text is text: what a link, an upload or a sweep setting says reaches Markdown only escaped.

Streamlit renders the text of ``st.markdown``, ``st.caption``, ``st.error``,
``st.warning``, ``st.info``, ``st.success`` and ``st.write`` as GitHub
Markdown: links, images a browser fetches, bare ``https://`` and ``www.``
addresses made clickable, HTML, Streamlit's ``:color[...]`` directives and
LaTeX. :func:`plain` escapes every character that could start any of them
(and emphasis, code, tables, headings and lists), so a sentence that quotes a
visitor's value shows it as written. Ordinary punctuation (full stops,
parentheses, colons) stays as it is, so sentences read the same in tests.
"""

from __future__ import annotations

import re

# Links, images, HTML, code, emphasis, LaTeX, tables; an underscore inside a word (cache_dir) emphasises nothing.
_INLINE = re.compile(r"([\\`*\[\]<>$|~{}]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z]))")
_LINE_START = re.compile(r"^(\s*)([-+#=>]|\d+[.)])", re.MULTILINE)   # headings, lists, quotes, setext lines
_AUTOLINK = re.compile(r"(?i)(://|\bwww\.|@)")            # bare addresses GitHub Markdown would make links of


def plain(text) -> str:
    """``text`` escaped for any of Streamlit's Markdown elements: it shows exactly as written, links and all."""
    escaped = _INLINE.sub(r"\\\1", str(text))
    escaped = _AUTOLINK.sub(lambda m: "\\" + m.group(1) if m.group(1) in ("://", "@") else m.group(1)[:-1] + "\\.",
                            escaped)
    escaped = _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), escaped)
    return escaped.replace("\n", "  \n")       # a line break stays a line break
