"""``python -m engine export flower --tool fbo|hype [settings] --out DIR``: write a ready Flower app."""

from __future__ import annotations

import sys

from engine.flower.deploy import INSECURE_WARNING
from engine.flower.export import export_app
from engine.flower.settings import CONFIGS, SETTINGS, TOOLS, delta_note, run_config
from engine.limits import Cost
from engine.validation import ConfigError, check_choice

HELP = "Write a ready Flower app (server, clients, run config, README) with the explorer's settings."
TARGETS = ("flower",)
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _bool(text: str) -> bool:
    if text.strip().lower() in TRUE:
        return True
    if text.strip().lower() in FALSE:
        return False
    raise ValueError(text)


def _option_types() -> dict:
    types = {}
    for settings in SETTINGS.values():
        types.update(settings)
    return types


def add_arguments(parser) -> None:
    parser.add_argument("target", metavar="{flower}", help="what to export to (flower)")
    parser.add_argument("--tool", dest="app_tool", required=True, metavar="{" + ",".join(TOOLS) + "}",
                        help="fbo (DP-FTS-DE agents and server) or hype (DP-HYPE vote with SecAgg+)")
    parser.add_argument("--out", required=True, help="folder to write the app into")
    parser.add_argument("--insecure", action="store_true", help="commands without TLS and SuperNode authentication "
                        "(one trusted machine only; prints a warning)")
    group = parser.add_argument_group("settings (the explorer's; defaults as in the explorer)")
    for name, kind in _option_types().items():
        group.add_argument("--" + name.replace("_", "-"), dest=name, type=_bool if kind is bool else kind,
                           default=None, help=f"{name} ({kind.__name__}; tools: "
                           f"{', '.join(t for t in TOOLS if name in SETTINGS[t])})")


def config_from_args(args):
    check_choice("target", args.target, TARGETS)
    tool = check_choice("tool", args.app_tool, TOOLS)
    stray = [name for name in _option_types() if getattr(args, name) is not None and name not in SETTINGS[tool]]
    if stray:
        raise ConfigError(f"--{stray[0].replace('_', '-')} does not apply to the {tool} tool.", stray[0])
    given = {name: getattr(args, name) for name in SETTINGS[tool] if getattr(args, name) is not None}
    if tool == "hype" and "sigma" in given and "epsilon" not in given:
        given["epsilon"] = None
    return tool, CONFIGS[tool](**given)


def cost(args) -> Cost:
    """Exporting writes a few small files; the run config describes the objective and the accounting (the
    exported app computes them where it runs), so the export never builds or accounts anything itself."""
    return Cost.free("writes a few small files; the run config describes the objective, never builds it")


def run(args) -> dict:
    tool, config = config_from_args(args)
    settings = run_config(tool, config)                 # refuses a delta above 1/N before anything is written
    if args.insecure:
        print(INSECURE_WARNING, file=sys.stderr)
    files = export_app(tool, config, args.out, insecure=args.insecure)
    return {"tool": tool, "out": args.out, "delta": settings.get("delta"),
            "privacy": delta_note(tool, config, settings), "files": files}
