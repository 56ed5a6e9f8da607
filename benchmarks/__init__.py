"""Speed and memory measurements: run each from the project root as ``python -m benchmarks.bench_x``."""

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def save_results(name: str, payload, indent: int = 2) -> Path:
    """Write ``payload`` as JSON to ``benchmarks/results/<name>`` (the folder made if missing); returns the path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    path.write_text(json.dumps(payload, indent=indent) + "\n")
    return path
