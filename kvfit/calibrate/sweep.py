"""The measured run: reach the server (launch or attach), then every concurrency point.

Nothing is left running: the launched server's process group is stopped on the way out
(success, failure or interrupt) unless keep_server, and each benchmark is stopped at its
time limit.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from ..engines import resolve_version
from ..engines.spec import rules_for
from ..errors import UsageError
from . import bench, endpoint, metrics, qualify, server


def choose_rules(engine: str, version: str | None, basis: str | None, warnings: list):
    """(Rules, how the version was chosen); an unknown version falls back to the newest
    range kvfit knows, with a warning (a missing gauge still fails its point closed)."""
    if version is None:
        version, basis = resolve_version(engine, None)
    try:
        return rules_for(engine, version), basis
    except UsageError:
        rules = rules_for(engine, None)
        warnings.append(f"kvfit has no {engine} rules for version {version} ({basis}); its "
                        f"metric names and benchmark command are those of {rules.version}.")
        return rules, f"{basis}; rules of {rules.version} (assumed)"


def base_values(cal, dep, points: list[int], served: str | None = None) -> dict:
    """The placeholder values shared by every command of the run."""
    return {"python": cal.python, "engine": cal.engine, "base_url": cal.base_url,
            "host": cal.host, "port": cal.port, "model": dep.model,
            "served_model": served or dep.model, "tokenizer": dep.model,
            "revision": dep.revision or "", "context": dep.context,
            "input_tokens": dep.context - cal.output_tokens, "output_tokens": cal.output_tokens,
            "seed": bench.SEED, "tensor_parallel": dep.tp, "data_parallel": dep.dp,
            "utilization": dep.utilization if dep.utilization is not None
            else dep.report["hardware"].get("utilization", ""),
            "max_concurrency": max(points)}


def _served(meta: dict, model: str) -> str | None:
    ids = [m["id"] for m in meta["models"]]
    return model if model in ids else (ids[0] if ids else None)


def _launch(run: dict, cal, dep, shown) -> None:
    from .deploy import preflight
    custom = cal.server_command is not None
    if not custom:
        server.refuse_topology(dep)
    server.ensure_python(cal.python)
    preflight(dep, cal)
    run["warnings"] += server.check_before_launch(cal, dep, custom)
    pre = dep.preflight or {}
    run["rules"], run["version_basis"] = choose_rules(
        cal.engine, cal.version or pre.get("version"),
        "requested" if cal.version else "installed in calibration.python (preflight)",
        run["warnings"])
    argv, source, env = server.command(cal, dep, run["values"], run["rules"], run["key"])
    log = run["workdir"] / "server.log"
    run["server"] = {"command": argv, "source": source, "log": str(log), "pid": None,
                     "kept": False, "ready_after_s": None, "preflight": dep.preflight}
    run["managed"] = server.Managed(argv, env, log, shown(argv))
    run["server"]["pid"] = run["managed"].proc.pid
    run["server"]["ready_after_s"] = endpoint.wait_ready(
        cal.base_url, cal.startup_timeout, run["key"], alive=run["managed"].exited)


def _attach(run: dict, cal) -> None:
    run["ready_after_s"] = endpoint.wait_ready(cal.base_url, cal.startup_timeout, run["key"])


def reach(run: dict, cal, dep, shown, quiet: bool = False) -> None:
    """Start (launch) or find (attach) the server; fill run's endpoint facts and rules."""
    from ..progress import progress

    with progress("calibrate", quiet=quiet) as p:
        p.note(f"starting the {cal.engine} server and waiting until it answers" if
               cal.mode == "launch" else f"reaching the server at {cal.base_url}")
        if cal.mode == "launch":
            _launch(run, cal, dep, shown)
        else:
            _attach(run, cal)
    meta = endpoint.metadata(cal.base_url, cal.engine, run["key"])
    if cal.mode == "attach":
        basis = "requested" if cal.version else (
            f"reported by the server ({meta['version_source']})" if meta["version"] else None)
        run["rules"], run["version_basis"] = choose_rules(
            cal.engine, cal.version or meta["version"], basis, run["warnings"])
    served = _served(meta, dep.model) if (cal.mode == "attach" or cal.server_command) else None
    run["values"]["served_model"] = served or dep.model
    status, body = endpoint.get(cal.base_url + "/metrics", 10.0, run["key"])
    parsed = metrics.parse(body) if status == 200 else {}
    if status != 200:
        run["warnings"].append(f"GET /metrics answered {status or body}: no point can measure "
                               "resident requests (they fail closed).")
    run["endpoint_meta"], run["metrics_before"] = meta, parsed
    for m in meta["models"]:
        if m["max_model_len"] and m["max_model_len"] < dep.context:
            run["warnings"].append(f"{m['id']} admits {m['max_model_len']:,} tokens per "
                                   f"request; the workload needs {dep.context:,}.")


def sweep(run: dict, cal, dep, points: list[int], shown, quiet: bool = False) -> list[dict]:
    """Run the points in order; stop_on_failure ends at the first that does not qualify.
    Progress per point on a terminal's stderr unless `quiet` (kvfit.progress)."""
    from ..progress import progress

    names = metrics.names(cal.engine, run["rules"])
    run["metric_names"] = names
    session = bench.Session(cal, run["rules"], run["values"], run["workdir"], names,
                            run["key"], Path(run["server"]["log"]) if run.get("server") else None)
    judged = []
    with progress("calibrate", total=len(points), quiet=quiet) as p:
        for c in points:
            p.step(f"benchmark at concurrency {c:,}")
            raw = bench.run_point(session, c, shown)
            judged.append(qualify.judge(raw, dep.context - cal.output_tokens, cal.slo))
            if cal.stop_on_failure and not judged[-1]["qualified"]:
                break
    return judged


def finish(run: dict, cal) -> None:
    """Stop the launched server unless keep_server (then its pid and log are reported)."""
    managed = run.get("managed")
    if managed is None:
        return
    if cal.keep_server and managed.proc.poll() is None:
        run["server"]["kept"] = True
        run["warnings"].append(f"keep_server: the server (pid {managed.proc.pid}, process "
                               f"group {managed.proc.pid}) is still running; its log is "
                               f"{run['server']['log']}.")
        return
    managed.stop()


def text(argv: list[str]) -> str:
    """A command as one shell-quoted line."""
    return shlex.join(argv)
