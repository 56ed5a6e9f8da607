"""Speed and memory measurements: run each from the project root as ``python -m benchmarks.bench_x``."""
