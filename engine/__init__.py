"""Simulation engine for private federated Bayesian optimisation and private
hyperparameter search. Never imports streamlit: the dashboard and the CLI are
thin layers over this package. Its public Python API is :mod:`engine.api`
(``import dpbo`` when installed); every other module is private by convention."""

__version__ = "0.1.0"
# Marks this package as the DP-BO engine, so that ``import dpbo`` can tell it from another module called engine.
DPBO_ENGINE = True
