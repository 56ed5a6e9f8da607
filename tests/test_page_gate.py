"""On the pages, heavy engine work starts only through the gate: a walk of the pages' code (pages/ and ui/) finds
every call into the engine's heavy functions, and of the page functions that call them, that is not inside work
handed to the gate (``compute`` / ``pooled`` with a price or a wall, ``LiveLine`` lines of ``run_live``, whose
``Priced`` only the price check hands out, ``in_background`` inside such a line). A callback the script itself
calls (``run_live``'s ``draw=``) is not behind the gate.

A new button that calls ``run_fbo(config)`` in the script, or a cached function that builds an objective called
from the page's top level, fails here; an exception is listed in ALLOWED with the reason it is not heavy.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The engine's heavy functions: work whose size a visitor's settings or file decide.
HEAVY = {
    "engine.fbo.teaching": ("server_round",),
    "engine.hype.run": ("iter_hype", "run_hype"), "engine.hype.scores": ("score_table",),
    "engine.hype.sweeps": ("evaluate_grid", "success_grid"),
    "engine.pogpucb.runner": ("iter_pogpucb", "run_pogpucb"), "engine.pogpucb.tasks": ("build_task",),
    "engine.audit.run": ("run_audit",), "engine.flower.audit": ("audit_strategy", "run_strategy_audit"),
    "engine.flower.participant_targets": ("participant_audit",),
    "engine.sweep.runner": ("iter_sweep", "run_sweep"), "engine.sweep.upload": ("read_upload",),
    "engine.sweep.store": ("read_table",), "engine.flower.export": ("app_zip", "export_app"),
    "engine.objectives.registry": ("build_objective",),
    "engine.reproduce.papers": ("run_paper",),
    "engine.objectives.builds": ("build_table", "start_table_build"),
    "engine.fbo.plan": ("make_plan",), "engine.fbo.simulation": ("run_fbo", "Simulation"),
    "engine.privacy": ("epsilon", "epsilon_curve", "calibrate_z", "calibrate_q", "calibrate_steps"),
    "engine.sweep.analysis": ("summarise", "pair_differences"),
    "engine.advise.advisor": ("iter_search", "advise_now"), "engine.advise.hype": ("hype_advice",),
}
HEAVY_NAMES = {name for names in HEAVY.values() for name in names}
# Calls that hand work to the gate: the callables and lambdas given to them run behind it.
GATES = {"compute", "pooled", "LiveLine", "in_background", "call_walled", "run_walled"}
# Functions that start heavy work only with a Priced cost (they raise TypeError for anything else, tested below):
# a call that hands them ``price=`` is behind the gate, and so is the heavy work inside them.
PRICED = {"run_live", "build_under_way"}
# (file, called name): direct calls that are not heavy, and why.
ALLOWED = {
    ("pages/1_Federated_BO.py", "cached_objective"):
        "local only (never when runs compute in walled workers): the synthetic objective prebuilt so Run starts "
        "at once; the run itself builds it behind the gate",
    ("pages/5_PO_GP_UCB.py", "cached_task"):
        "the data set's own task (a fixed ML fit of its kernel), whatever the visitor's settings",
    ("ui/fbo/results.py", "cached_plan"):
        "after a run: the plan of a line that ran, accounted through compute before the run (a cache hit)",
    ("pages/1_Federated_BO.py", "audited"):
        "after a run: the audit panel reads the run's own plan (cached) and audits only on a priced click",
}


def _files() -> list[Path]:
    return sorted((ROOT / "pages").glob("*.py")) + sorted((ROOT / "ui").rglob("*.py"))


def _name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


class Scope(ast.NodeVisitor):
    """Every call with the innermost function or lambda around it, and what each call hands to the gate."""

    def __init__(self):
        self.stack: list[ast.AST] = []
        self.calls: list[tuple[ast.Call, ast.AST | None]] = []
        self.defined: set[str] = set()
        self.gated: set = set()          # lambdas and function names handed to a gate
        self.aliases: set[str] = set()   # run = compute if light else pooled

    def _scoped(self, node):
        if not isinstance(node, ast.Lambda):
            self.defined.add(node.name)
        self.stack.append(node)
        self.generic_visit(node)
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _scoped

    def visit_Assign(self, node):
        names = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
        if names and names <= GATES and isinstance(node.value, (ast.Name, ast.IfExp)):
            self.aliases |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        self.generic_visit(node)

    def visit_Call(self, node):
        self.calls.append((node, self.stack[-1] if self.stack else None))
        if _name(node) in GATES or _name(node) in self.aliases:
            for arg in node.args:          # the work itself: positional (a draw= callback is the script's)
                if isinstance(arg, ast.Lambda):
                    self.gated.add(arg)
                elif isinstance(arg, (ast.Name, ast.Attribute)):
                    self.gated.add(arg.id if isinstance(arg, ast.Name) else arg.attr)
        self.generic_visit(node)


def _scopes() -> dict[str, Scope]:
    out = {}
    for path in _files():
        scope = Scope()
        scope.visit(ast.parse(path.read_text(encoding="utf-8")))
        out[str(path.relative_to(ROOT))] = scope
    return out


def _owner_name(owner) -> str | None:
    return getattr(owner, "name", None)


def bypasses() -> list[str]:
    """Every call of a heavy function (the engine's, or a page function that calls one) outside the gate."""
    scopes = _scopes()
    heavy = set(HEAVY_NAMES)
    while True:           # a page function that calls heavy work is heavy work itself
        more = {_owner_name(owner) for scope in scopes.values() for call, owner in scope.calls
                if _name(call) in heavy and isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if more <= heavy:
            break
        heavy |= more
    defined = {name for scope in scopes.values() for name in scope.defined} | heavy
    gated_names = {name for scope in scopes.values() for name in scope.gated if isinstance(name, str)} & defined
    found = []
    for path, scope in scopes.items():
        for call, owner in scope.calls:
            name = _name(call)
            if name not in heavy or (path, name) in ALLOWED:
                continue
            if owner is not None and (owner in scope.gated or _owner_name(owner) in heavy | gated_names):
                continue      # behind the gate, or inside heavy work whose own callers are checked
            if name in PRICED and any(keyword.arg == "price" for keyword in call.keywords):
                continue      # handed a Priced: the function refuses anything else
            if owner is not None and _owner_name(owner) in PRICED:
                continue      # inside a function that starts nothing without a Priced
            found.append(f"{path}:{call.lineno} calls {name} outside the gate")
    return found


def test_the_heavy_functions_are_the_engines():
    for module, names in HEAVY.items():
        for name in names:
            assert callable(getattr(importlib.import_module(module), name, None)), f"{module}.{name}"


def test_no_page_calls_heavy_engine_work_outside_the_gate():
    assert bypasses() == []


def test_every_allowed_exception_is_still_there():
    scopes = _scopes()
    for (path, name), why in ALLOWED.items():
        assert why and any(_name(call) == name for call, _ in scopes[path].calls), (path, name)


@pytest.mark.parametrize("code, found", [
    ("from engine.fbo.simulation import run_fbo\nresult = run_fbo(config)\n", True),
    ("def on_click(config):\n    return build_objective('synthetic', n_agents=10)\nvalue = on_click(c)\n", True),
    ("from ui.kit.compute import compute\nvalue = compute(run_fbo, config, walled='agents')\n", False),
    ("lines = [LiveLine('a', lambda: iter_hype(config), 10)]\n", False),
    ("def votes(c):\n    yield from iter_hype(c)\nlines = [LiveLine('a', lambda: votes(c), 10)]\n", False),
    ("run = compute if light else pooled\nrnd = run(server_round, config)\n", False),
    ("def votes(c):\n    yield from iter_hype(c)\nfor v in votes(c):\n    pass\n", True),
    ("from engine.objectives.builds import start_table_build\nbuild = start_table_build(task)\n", True),
    ("def build_under_way(c, *, start, price):\n    return start_table_build(c)\nb = build_under_way(c, start=True)\n",
     True),
    ("def build_under_way(c, *, start, price):\n    return start_table_build(c)\n"
     "b = build_under_way(c, start=True, price=price)\n", False),
], ids=["direct", "via-a-function", "compute", "live-line", "line-function", "alias", "function-iterated",
        "table-build", "build-without-a-price", "build-with-a-price"])
def test_the_walk_finds_a_forgotten_door(code, found, tmp_path, monkeypatch):
    page = tmp_path / "pages" / "9_New.py"
    page.parent.mkdir()
    page.write_text(code)
    (tmp_path / "ui").mkdir()
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert bool(bypasses()) is found, bypasses()


def test_the_flower_export_is_built_through_the_gate(monkeypatch):
    """The probe's "Export as a Flower app": 13.5 s and about 800 MB in the server's own process after the walled
    run had ended. Now the zip is built by compute (a walled worker when hosted), once per configuration."""
    import ui.kit.compute as gate
    from engine.fbo import FboConfig
    from engine.flower.export import app_zip

    calls = []

    def recorded(fn, *args, walled=None, **kwargs):
        calls.append((fn, args, walled))
        return fn(*args, **kwargs)

    monkeypatch.setattr(gate, "compute", recorded)
    cache: dict = {}
    config = FboConfig(agents=50_000, features=1, n_init=1, P=1, iterations=1, runs=1)
    first = gate.flower_app("fbo", config, cache)
    assert first[:2] == b"PK" and gate.flower_app("fbo", config, cache) is first
    assert calls == [(app_zip, ("fbo", config), "agents")]


@pytest.mark.parametrize("raised, says", [
    ("failure", "Could not open t.csv: an internal error (the server's log has the details)."),
    ("time", "more computing time than this server allows per run"),
    ("stop", None),
], ids=["worker-failure", "time-limit", "stopped"])
def test_an_upload_opened_in_one_call_ends_in_a_sentence(raised, says, monkeypatch):
    """Reading and analysing an upload is one call with one deadline: what ends it early (a failure in the
    worker, the time limit) is the visitor's sentence where the page shows a refusal; Stop ends the script."""
    import ui.kit.compute as gate
    import ui.sweep.analysis as analysis
    from engine.cancel import STOPPED, TIME_LIMIT, Cancelled
    from engine.validation import ConfigError

    def ended(*args, **kwargs):
        if raised == "failure":
            raise RuntimeError("an internal error (the server's log has the details)")
        raise Cancelled(TIME_LIMIT if raised == "time" else STOPPED)

    monkeypatch.setattr(gate, "compute", ended)
    if says is None:
        with pytest.raises(Cancelled):
            analysis.open_upload(b"setting,utility,privacy_loss\n", "t.csv", None)
        return
    with pytest.raises(ConfigError) as err:
        analysis.open_upload(b"setting,utility,privacy_loss\n", "t.csv", None)
    assert says in str(err.value) and err.value.field == "upload"


def test_a_table_build_starts_only_with_a_price(monkeypatch):
    """The table-build entry is a door like a run: build_under_way refuses anything but a Priced, before it starts
    (or even looks for) a build; a Priced that counts the build starts it."""
    import ui.kit.table_build as table_build
    from engine.fbo import FboConfig
    from engine.limits import Cost
    from ui.kit.run_loop import Priced

    started = []
    monkeypatch.setattr(table_build, "table_task", lambda config: started.append(config) or object())
    monkeypatch.setattr(table_build, "table_state", lambda task: {"complete": False})
    monkeypatch.setattr(table_build, "start_table_build", lambda task, **how: "build")
    config = FboConfig(dataset="landmine", agents=None)
    for price in (None, Cost(seconds=1.0, memory_mb=1.0, field="agents")):
        with pytest.raises(TypeError, match="Priced"):
            table_build.build_under_way(config, start=True, price=price)
    assert not started
    assert table_build.build_under_way(config, start=True, price=Priced(Cost.free("a test"))) == "build"


def test_the_federated_bo_page_builds_no_objective_in_the_server_when_hosted(monkeypatch, tmp_path):
    """Locally the page prebuilds the synthetic objective (priced with the run) so Run starts at once; when runs
    compute in walled workers the server builds none: the worker builds its own."""
    import ui.kit.cached
    from tests.server_watch import hosted, page

    hosted(monkeypatch, 2048)
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path))
    built = []
    monkeypatch.setattr(ui.kit.cached, "build_objective", lambda *args, **kwargs: built.append(args))
    ui.kit.cached.cached_objective.clear()        # an earlier test's objective would hide the local prebuild
    at = page("Federated_BO")
    at.run()
    assert not at.exception and not built
    monkeypatch.setenv("DPBO_RUN_WORKERS", "0")
    page("Federated_BO").run()
    assert built and built[0][0] == "synthetic"      # the local prebuild, as the ALLOWED entry says
    ui.kit.cached.cached_objective.clear()           # not the stand-in's None for later tests
