"""The Federated BO page's controls, figures and the panels around a run."""
