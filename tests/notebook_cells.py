"""The cells of the worked notebook (docs/notebook.md): its ```python blocks, in order, as one script."""

from __future__ import annotations

import re
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "notebook.md"


def cells(path: Path = NOTEBOOK) -> list[str]:
    """The source of every ```python block of ``path``."""
    return re.findall(r"^```python\n(.*?)^```$", path.read_text(), re.M | re.S)


def script(path: Path = NOTEBOOK) -> str:
    """The cells joined into one script, as a notebook runs them top to bottom."""
    return "\n\n".join(cells(path))
