"""DP-BO Explorer's engine as a library: ``import dpbo``.

The public API of the engine (:mod:`engine.api`, documented in docs/api.md) under a name of its own, so that
a researcher's code reads ``dpbo.run_fbo(...)``. The implementation stays in the top-level package ``engine``
(the product's fixed layout; the dashboard, the command line and the exported Flower apps import it as
``engine``). If another module called ``engine`` is found first (an ``engine.py`` or ``engine/`` folder in the
working directory, or another distribution's package), importing ``dpbo`` says so in one sentence.
"""

import engine as _engine

if not hasattr(_engine, "DPBO_ENGINE"):
    raise ImportError(f"Another module named 'engine' ({getattr(_engine, '__file__', None) or 'a namespace'}) "
                      "hides the DP-BO engine: rename it, or run from a folder without it.")

from engine.api import *  # noqa: E402,F403  (the public API, named in engine.api.__all__)
from engine.api import __all__  # noqa: E402,F401

__version__ = _engine.__version__
