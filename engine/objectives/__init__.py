"""Objectives the federated BO engine optimises: synthetic GP functions and
hyperparameter-tuning tasks, each either a table on a discrete candidate set or
a function on the continuous box [0, 1]^D."""

from engine.objectives.base import DatasetUnavailable, FunctionObjective, Objective, TableObjective
from engine.objectives.registry import DATASETS, build_objective, dataset_label

__all__ = ["DATASETS", "DatasetUnavailable", "FunctionObjective", "Objective", "TableObjective",
           "build_objective", "dataset_label"]
