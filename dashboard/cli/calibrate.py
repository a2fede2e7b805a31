"""`python -m dashboard calibrate BILL [RUN_EXPORT]`: the plan's inputs measured from last quarter's imports
(``dashboard.retro.calibrate``), printed, and optionally written into a scenario file (docs/calibration.md)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from dashboard.cli.format_arg import add_format_argument, checked_timezone
from dashboard.cli.output import fail, print_json
from dashboard.ingest.formats import FORMATS

MAX_PARAMS = 1e15  # ten thousand times the largest dense model trained


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``calibrate`` subcommand."""
    parser = sub.add_parser(
        "calibrate",
        help="measure the plan's inputs (MFU, failure rates, overheads, prices) from a bill and a run export",
        description="Measure MFU, node-failure and spot-interruption rates, experiment overheads, prices paid and "
        "purchase shares from a billing export and a run export (Slurm sacct or W&B), each with its spread and "
        "where it came from (docs/calibration.md).",
    )
    parser.add_argument("bill", help="billing export (FOCUS, AWS CUR, GCP, Azure); a run export alone gives no prices")
    parser.add_argument("run_export", nargs="?", help="run export (Slurm sacct --parsable2 or W&B runs CSV)")
    parser.add_argument("--plan", help="scenario JSON the measured values are set into (default: the default "
                                       "scenario); its active parameters give the model size")
    parser.add_argument("--params", type=float, metavar="N", help="model parameters (active), for MFU; default: "
                                                                  "each run's as the export logs it (model.n_params "
                                                                  "…), else the --plan's")
    parser.add_argument("--main-run", action="append", default=[], metavar="RUN_ID",
                        help="a main run id (repeatable); default: the run with the most GPU-hours")
    parser.add_argument("--gpus-per-node", type=int, metavar="N", help="GPUs per node for node-days (default: the "
                                                                       "plan's)")
    add_format_argument(parser)
    parser.add_argument("--run-format", choices=FORMATS, metavar="ID", help="skip detection and read RUN_EXPORT as "
                                                                              "this format (ids as --format)")
    parser.add_argument("--timezone", help="IANA time zone of naive local times (required for Slurm)")
    parser.add_argument("--use-thin", action="append", default=[], metavar="KEY",
                        help="apply this thin measurement (few observations) too (repeatable; by default a thin "
                             "one is shown with its interval but not applied)")
    parser.add_argument("--carry", action="store_true",
                        help="carry the overrun against --plan into the next plan (docs/calibration.md): each part "
                             "of Plan vs actual an input change or an explicit line; --write writes that plan")
    parser.add_argument("--write", metavar="OUT.json", help="write the plan with the measured values as a scenario "
                                                            "file")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _import(path_text: str, format: str | None, timezone: str | None):
    """(canonical frame, format kind) of one file; ValueError / UnreadableFile / OSError on a bad one."""
    from dashboard.ingest import import_path
    from dashboard.ingest.schema import ReadOptions

    path = Path(path_text)
    if not path.exists():
        raise ValueError(f"{path_text}: no such file or folder")
    usage, report = import_path(path, format=format, options=ReadOptions(timezone=timezone))
    return usage, FORMATS[report.format].kind if report.format in FORMATS else "either", report


def _tables(args: argparse.Namespace):
    """(bill, runs, the run export's import report or None): each frame or None, sorted by what the files are."""
    timezone = checked_timezone(args.timezone)
    first, first_kind, first_params = _import(args.bill, args.format, timezone)
    if args.run_export is None:
        return (None, first, first_params) if first_kind == "runs" else (first, None, None)
    second, second_kind, second_params = _import(args.run_export, args.run_format, timezone)
    if first_kind == "runs" and second_kind == "runs":
        raise ValueError(f"{args.bill} and {args.run_export} are both run exports: give a bill (FOCUS, AWS CUR, "
                         "GCP or Azure) and one run export")
    if first_kind == "billing" and second_kind == "billing":
        raise ValueError(f"{args.run_export} is a bill, not a run export: give one bill and one run export "
                         "(Slurm sacct or W&B)")
    if first_kind == "runs" or second_kind == "billing":
        return second, first, first_params  # given the other way round
    return first, second, second_params


def _positive(value: float | None, name: str) -> float | None:
    if value is not None and not (math.isfinite(value) and 0 < value <= MAX_PARAMS):
        raise ValueError(f"{name} must be a positive number of parameters up to {MAX_PARAMS:g}")
    return value


def result_json(measured: dict[str, Any], period: str, use_thin: tuple[str, ...] = ()) -> dict[str, Any]:
    """The JSON object: the period and, per key, every field (``refused``: why it was not measured from implausible
    values, else null), the source rows as ``source_rows`` (how many) and ``source_lines`` (their line numbers in the
    file the figure read, 1,000 of them when there are more). ``value`` is what the next plan takes: null when the
    input is not measured, or thin and not in ``use_thin``, with ``reason`` saying which; ``measured`` is the figure
    the files gave (a thin one too), ``low`` and ``high`` its interval."""
    from dashboard.retro.calibrate import not_applied

    keys = {}
    for key, item in measured.items():
        fields = {name: getattr(item, name) for name in ("low", "high", "count", "exposure", "basis", "rule",
                                                         "caveat", "thin", "refused")}
        reason = not_applied(item, use_thin)
        keys[key] = {"value": None if reason else item.value, "reason": reason, "measured": item.value} | fields | {
            "source_rows": len(item.source_rows), "source_lines": list(item.source_rows)}
    return {"period": period, "inputs": keys}


def _text(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.4g}"


def _print_table(measured: dict[str, Any], period: str, plan_name: str, use_thin: tuple[str, ...] = ()) -> None:
    print(f"Calibrated from {period or 'the imports'} (plan: {plan_name})")
    width = max(len(key) for key in measured)
    for key, item in measured.items():
        spread = f" [{_text(item.low)}–{_text(item.high)}]" if item.low is not None and item.high is not None else ""
        flag = "" if item.value is None or not item.thin else (
            " (thin)" if key in use_thin else " (thin: not applied)")
        print(f"{key:<{width}}  {_text(item.value) + spread + flag:<28}  {item.basis}")
        if item.caveat:
            print(f"{'':<{width}}  {'':<28}  note: {item.caveat}")


def refit_line(fitted: Any, plan: Any) -> str:
    """The refit in one line: the cluster's efficiency, what it rests on and, with a plan, its layout's MFU."""
    from dashboard.core.refit import predict_layout
    from dashboard.retro.refit_runs import layout_source as refit_layout_source

    line = (f"refit: this cluster runs at {fitted.efficiency:.3g} × the throughput model's predicted MFU (over "
            f"{len(fitted.rows)} jobs, mean error {100 * fitted.mean_error:.2g} %, worst "
            f"{100 * fitted.worst_error:.2g} %; layout {refit_layout_source(fitted)})")
    if plan is not None:
        predicted = predict_layout(fitted, plan)
        line += (f"; the plan's {predicted.layout}: {100 * predicted.mfu:.3g} % (the model alone "
                 f"{100 * predicted.predicted_mfu:.3g} %)")
    return line


def run(args: argparse.Namespace) -> int:
    """Measure, print, and write the calibrated scenario when asked; 2 with a one-line message on bad input."""
    from dashboard.cli.scenario_args import load_scenario
    from dashboard.core.provenance import KEYS
    from dashboard.core.scenario import ScenarioError
    from dashboard.ingest.schema import UnreadableFile
    from dashboard.retro.calibrate import calibrate, calibration_period, model_sizes, scenario_from
    from dashboard.retro.carry import as_json, banner, from_quarter
    from dashboard.retro.refit_runs import as_json as refit_json
    from dashboard.retro.refit_runs import beyond_anchor, jobs, refit_of

    unknown = [key for key in args.use_thin if key not in KEYS]
    if unknown:  # checked here, not by argparse: parsing any command must not load the plan model
        return fail(f"--use-thin takes an input key ({', '.join(KEYS)}), not {unknown[0][:60]!r}")
    try:
        base = load_scenario(argparse.Namespace(scenario=args.plan, set=[]))
    except ScenarioError as error:
        return fail(f"--plan: {error}")
    try:
        params = _positive(args.params, "--params")
        if args.gpus_per_node is not None and not 1 <= args.gpus_per_node <= 1024:
            raise ValueError("--gpus-per-node must be 1 to 1,024")
        bill, runs, report = _tables(args)
        logged, layouts = (report.model_params, report.run_layout) if report is not None else ({}, {})
        run_params, params = model_sizes(logged, params, float(base.active) if args.plan is not None else None)
        measured = calibrate(bill, runs, main_run_ids=args.main_run or None, model_params=params,
                             gpus_per_node=args.gpus_per_node or base.gpus_per_node,
                             gpu_type=base.gpu_type if args.plan is not None else None, run_params=run_params)
        period = calibration_period(bill, runs)
        found = jobs(runs, measured["mfu"], base, run_params, params, layouts) if runs is not None else []
        fitted = refit_of(found, base) if found else None
        carried = None
        if args.carry:
            if args.plan is None or bill is None:
                raise ValueError("--carry needs --plan (the plan last quarter is compared with) and a bill")
            carried = from_quarter(bill, runs, measured, base, tuple(args.use_thin), args.main_run or None)
    except (UnreadableFile, ValueError, OSError) as exc:
        return fail(" ".join(str(exc).split()))
    except MemoryError:
        return fail("the files need more memory than this machine has free: export a shorter period")
    written = None
    if args.write:
        scenario, applied = ((carried.scenario, carried.applied) if carried is not None
                             else scenario_from(measured, base, use_thin=tuple(args.use_thin)))
        if carried is None and "mfu" in applied and args.plan is not None:
            scenario = beyond_anchor(scenario, found, fitted)  # a plan unlike every measured job: the refit's MFU
        try:
            Path(args.write).write_text(json.dumps(scenario.to_json_dict(), indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            return fail(f"cannot write {args.write}: {error.strerror or error}")
        written = {"path": args.write, "name": scenario.name, "applied": list(applied)}
    if args.json:
        print_json(result_json(measured, period, tuple(args.use_thin))
                   | refit_json(found, fitted, base if args.plan is not None else None)
                   | ({"carried": as_json(carried)} if carried is not None else {})
                   | ({"written": written} if written else {}))
    else:
        _print_table(measured, period, base.name, tuple(args.use_thin))
        if fitted is not None:
            print(refit_line(fitted, base if args.plan is not None else None))
        if carried is not None:
            print(banner(carried))
            for part in carried.parts:
                print(f"  {part.how:<8}{part.text}")
        if written:
            print(f"wrote {written['path']} ({len(written['applied'])} inputs set: {', '.join(written['applied'])})")
    return 0
