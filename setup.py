"""The wheel's packages: the engine, its public API ``dpbo`` (both typed: ``py.typed``), and the stored
reproductions as package data.

Everything else (name, version, dependencies, extras, the ``dpbo`` command) is in pyproject.toml. The
dashboard (``app.py``, ``pages/``, ``ui/``) stays out of the wheel: it runs from a checkout. The stored
reproductions stay in ``data/reproduction/`` in the checkout (the reproduction commands write them there) and
travel in the wheel as ``engine/reproduce/stored_data/``; :mod:`engine.paths` finds them in either place.
"""

from setuptools import find_packages, setup

STORED = "engine.reproduce.stored_data"

setup(
    packages=find_packages(include=["engine", "engine.*", "dpbo"]) + [STORED],
    package_dir={STORED: "data/reproduction"},
    package_data={STORED: ["*.json", "README.md"], "engine": ["py.typed"], "dpbo": ["py.typed"]},
)
