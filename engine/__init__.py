"""Simulation engine for private federated Bayesian optimisation and private
hyperparameter search. Never imports streamlit: the dashboard and the CLI are
thin layers over this package."""

__version__ = "0.1.0"
