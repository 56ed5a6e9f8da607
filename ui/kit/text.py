"""Visitor text is text: what a link, an upload or a sweep setting says reaches Markdown only escaped.

Streamlit renders the text of ``st.markdown``, ``st.caption``, ``st.error``,
``st.warning``, ``st.info``, ``st.success`` and ``st.write`` as GitHub
Markdown: links and images (``[text](url)``, ``![alt](url)``, a browser fetches
the image), bare ``https://``, ``www.`` and e-mail addresses made clickable,
HTML and ``<url>`` autolinks, Streamlit's ``:color[...]`` directives, LaTeX,
emphasis, and at a line's start headings, lists, quotes and link definitions.
:func:`plain` escapes exactly what would start any of them, so a sentence
that quotes a visitor's value shows it as written, while the ranges and
comparisons of ordinary sentences ("must be in [0, 1), got 1.", "k must be
>= 1") stay as they are.
"""

from __future__ import annotations

import re

_RULES = (
    (re.compile(r"\\"), r"\\\\"),                                # an escape of the visitor's own
    (re.compile(r"\]\(|\]\["), lambda m: "\\" + m.group(0)),     # inline and reference links and images
    (re.compile(r"<(?=[A-Za-z/!?])"), r"\\<"),                   # HTML tags, comments, <url> autolinks
    (re.compile(r"://|@"), lambda m: "\\" + m.group(0)),        # bare addresses GitHub Markdown links
    (re.compile(r"(?i)\b(www)\."), r"\1\\."),
    (re.compile(r":(?=[A-Za-z-]+\[)"), r"\\:"),                  # Streamlit's :color[...] directives
    (re.compile(r"[`*$~|]"), lambda m: "\\" + m.group(0)),       # code, emphasis, LaTeX, strikethrough, tables
    (re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])"), r"\\_"),  # emphasis (cache_dir emphasises nothing)
    (re.compile(r"^(\s*)([-+#=>\[])", re.MULTILINE), r"\1\\\2"),       # headings, lists, quotes, definitions
    (re.compile(r"^(\s*\d+)([.)])", re.MULTILINE), r"\1\\\2"),           # numbered lists
)


def plain(text) -> str:
    """``text`` escaped for any of Streamlit's Markdown elements: it shows exactly as written, links and all."""
    escaped = str(text)
    for pattern, replacement in _RULES:
        escaped = pattern.sub(replacement, escaped)
    return escaped.replace("\n", "  \n")       # a line break stays a line break
