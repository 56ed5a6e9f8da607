"""The price model checked against the knob space: random valid settings of every tool, within the pages'
bounds (kept small here), and the estimate must be at least what the run takes (CPU seconds and peak memory,
measured in a process of its own by benchmarks.bench_limits.Measurer). The CPU seconds are told in the seconds of the
machine the estimates' constants were measured on (bench_limits.in_reference_seconds, from a reference
workload measured in the same process), so a slow or busy machine does not decide the verdict.

The default run draws a few examples per tool from a fixed seed (and always plays the hosting probe's shapes
at a small scale: many sub-regions P against many agents); ``DPBO_PRICE_EXAMPLES=<n>`` draws n per tool from
a random seed, wider, for a longer check.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, assume, example, given, settings
from hypothesis import strategies as st

from benchmarks.bench_limits import Measurer, estimate, in_reference_seconds
from engine.validation import ConfigError

EXAMPLES = int(os.environ.get("DPBO_PRICE_EXAMPLES", "0") or 0)
WIDE = EXAMPLES > 0
SETTINGS = settings(max_examples=EXAMPLES or 1, deadline=None, derandomize=not WIDE, database=None,
                    suppress_health_check=list(HealthCheck),
                    phases=(Phase.explicit, Phase.generate))   # no shrinking: every example is a process
AGENTS = 3000 if WIDE else 600
ALGORITHMS = ("ts", "fts", "fts-de", "dp-fts", "dp-fts-de")


def _check(tool: str, kw: dict, cache) -> None:
    try:
        cost = estimate(tool, kw)
    except ConfigError:
        assume(False)
    folder, measurer = cache
    run = measurer.measure(tool, kw, env={"DPBO_CACHE_DIR": folder})
    assert cost.seconds >= in_reference_seconds(run), (tool, kw, cost.seconds, in_reference_seconds(run), run)
    assert cost.memory_mb >= run["peak_mb"], (tool, kw, cost.memory_mb, run)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """The cases' cache folder and the measuring server they run in."""
    with Measurer() as measurer:
        yield str(tmp_path_factory.mktemp("price-cache")), measurer


@st.composite
def fbo_settings(draw):
    agents = draw(st.integers(2, AGENTS))
    algorithm = draw(st.sampled_from(ALGORITHMS))
    kw = dict(algorithm=algorithm, agents=agents, iterations=draw(st.integers(1, 12)),
              runs=draw(st.integers(1, 3)), features=draw(st.integers(1, 60)), n_init=draw(st.integers(1, 5)),
              own_sampler=draw(st.sampled_from(("authors", "pathwise", "shared"))))
    if algorithm in ("fts-de", "dp-fts-de"):
        kw["P"] = draw(st.integers(1, agents))
    return kw


@SETTINGS
@given(kw=fbo_settings())
@example(kw=dict(algorithm="dp-fts-de", agents=3000, P=3000, iterations=5, runs=1, features=1, n_init=1,
                 own_sampler="shared"))
def test_federated_bo_is_priced_at_least_what_it_takes(kw, cache):
    _check("fbo", kw, cache)


@SETTINGS
@given(base=fbo_settings(), Ps=st.lists(st.integers(1, AGENTS), min_size=2, max_size=3, unique=True))
@example(base=dict(algorithm="dp-fts-de", agents=2000, iterations=6, runs=1, features=1, n_init=1,
                   own_sampler="shared"), Ps=[500, 2000])
def test_compared_lines_over_P_are_priced_at_least_what_they_take(base, Ps, cache):
    base = dict(base, algorithm="dp-fts-de")
    lines = [dict(base, P=min(P, base["agents"])) for P in Ps]
    _check("fbo-lines", dict(lines=lines), cache)


@SETTINGS
@given(agents=st.integers(2, AGENTS), P=st.integers(1, AGENTS), t=st.integers(1, 12),
       q=st.floats(0.05, 1.0), seed=st.integers(0, 20))
@example(agents=2000, P=1000, t=10, q=0.5, seed=11)
def test_the_teaching_round_is_priced_at_least_what_it_takes(agents, P, t, q, seed, cache):
    _check("teaching", dict(agents=agents, P=min(P, agents), t=t, q=q, z=1.0, S=11.0, seed=seed), cache)


@SETTINGS
@given(agents=st.integers(2, AGENTS * 4), P=st.integers(1, AGENTS * 4), features=st.integers(2, 8),
       trials=st.integers(100, 3000), steps=st.integers(1, 4), accountant=st.sampled_from(("rdp", "pld")))
@example(agents=10000, P=10000, features=2, trials=100, steps=1, accountant="pld")
def test_a_server_audit_is_priced_at_least_what_it_takes(agents, P, features, trials, steps, accountant, cache):
    _check("audit", dict(agents=agents, P=min(P, agents), features=features, trials=trials, steps=steps,
                         accountant=accountant), cache)


@SETTINGS
@given(candidates=st.integers(2, 300), clients=st.integers(1, 300), trials=st.integers(100, 3000),
       aggregation=st.sampled_from(("exact", "secure-sum")))
def test_a_vote_audit_is_priced_at_least_what_it_takes(candidates, clients, trials, aggregation, cache):
    _check("audit", dict(mechanism="hype-votes", candidates=candidates, clients=clients, trials=trials,
                         aggregation=aggregation, k=min(5, candidates // 2 or 1)), cache)


@SETTINGS
@given(repetitions=st.integers(1, 400), candidates=st.integers(2, 300), clients=st.integers(1, 400))
def test_dp_hype_is_priced_at_least_what_it_takes(repetitions, candidates, clients, cache):
    _check("hype", dict(repetitions=repetitions, candidates=candidates, clients=clients,
                        k=min(5, candidates), good=min(5, candidates)), cache)


@SETTINGS
@given(runs=st.integers(1, 4), iterations=st.integers(1, 40), r=st.integers(1, 10))
def test_po_gp_ucb_is_priced_at_least_what_it_takes(runs, iterations, r, cache):
    _check("pogpucb", dict(runs=runs, iterations=iterations, r=r), cache)


@SETTINGS
@given(rows=st.integers(10, 20_000))
def test_an_upload_is_priced_at_least_what_it_takes(rows, cache):
    _check("upload", dict(rows=rows), cache)
