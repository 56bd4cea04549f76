"""Launch mode: the exact server command, the refusals before it runs, and the process.

A default managed launch is the engine spec's launch command for the planned layout (TP, DP,
context, the resolved KV dtype in the engine's spelling). It is refused for multi-node
topologies (kvfit cannot provision remote workers or a router: use attach or a
server_command), for non-TP parallelism profiles, and when the preflight did not pass. Every
launch is refused without a CUDA accelerator visible to the calibration interpreter unless
allow_cpu.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from ..errors import UsageError
from . import CalibrationError, procs
from .commands import default_server, fill

_CUDA = ("import json\ntry:\n    import torch\n    n = torch.cuda.device_count() if "
         "torch.cuda.is_available() else 0\nexcept Exception:\n    n = 0\n"
         "print(json.dumps({'devices': n}))\n")


def cuda_devices(python: str, timeout: float = 300.0) -> int:
    """CUDA/ROCm devices torch sees in `python` (0 without torch, on error or on timeout)."""
    try:
        proc = subprocess.Popen([python, "-c", _CUDA], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                start_new_session=True, env=procs.child_env())
    except OSError as exc:
        raise UsageError(f"calibration.python {python}: cannot run it "
                         f"({exc.strerror or exc}).") from None
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        procs.stop(proc, grace=2.0)
        return 0
    try:
        return int(json.loads(out.decode().strip().splitlines()[-1])["devices"])
    except (ValueError, KeyError, IndexError, TypeError):
        return 0


def refuse_topology(dep) -> None:
    """A default launch covers one host and plain TP x DP; anything else is refused."""
    if dep.nodes > 1:
        raise UsageError(f"the plan spans {dep.nodes} systems ({dep.hardware}); kvfit cannot "
                         "provision the remote workers and the router, and will not pretend "
                         "to.", hint="Use mode = \"attach\" with the cluster's OpenAI-"
                         "compatible endpoint, or give a version-specific server_command.")
    if dep.parallelism != "tp":
        raise UsageError(f"the recommended layout uses --parallelism {dep.parallelism}; the "
                         "default launch command covers plain TP x DP only.",
                         hint="Give a checked server_command, or attach to the server.")


def _flags(cal, dep) -> dict:
    if dep.utilization is None:
        return {}
    from ..engines import get
    flag = get(cal.engine).memory_flag
    return {flag: dep.utilization} if flag else {}


def _preflight_extra(pre: dict | None) -> tuple[str | None, list[str]]:
    """(KV spelling the installed version confirmed, other flags it asked for)."""
    if not pre:
        return None, []
    kv = (pre.get("kv_cache_dtype") or {}).get("engine")
    extra = []
    for flag in pre.get("engine_flags", ()):
        if not flag.startswith("--kv-cache-dtype"):
            extra += shlex.split(flag)
    return kv, extra


def command(cal, dep, values: dict, rules, key: str | None) -> tuple[list[str], str, dict]:
    """(argv, where it came from, extra environment) for the server."""
    from ..engines import get
    env, key_args = get(cal.engine).api_key(key)
    if cal.server_command:
        return fill(cal.server_command, values), "calibration.server_command", env
    refuse_topology(dep)
    from ..engines.command import engine_spelling
    kv, extra = _preflight_extra(dep.preflight)
    kv = kv or engine_spelling(rules, dep.kv_dtype)
    extra += list(cal.server_args)
    extra += key_args
    argv = default_server(cal.engine, rules.version, values, kv, _flags(cal, dep), extra)
    src = rules.commands.get("source") or "engine spec"
    return argv, f"default: specs/engines/{cal.engine}.yaml {rules.label} ({src})", env


def check_before_launch(cal, dep, custom: bool) -> list[str]:
    """Refusals (UsageError) and warnings before a managed launch runs anything."""
    warnings = []
    pre = dep.preflight
    passing = bool(pre) and pre["status"] in ("preflight-pass", "smoke-pass")
    if not passing:
        why = f"{pre['status']}: {pre['reason']}" if pre else "it did not run"
        if not custom:
            raise UsageError(f"the {cal.engine} preflight in {cal.python} did not pass ({why}); "
                             "a default launch would start an engine that does not accept "
                             "this deployment.", hint="Fix the environment, or give a checked "
                             "server_command, or attach to a running server.")
        warnings.append(f"the {cal.engine} preflight in {cal.python} did not pass ({why}); the "
                        "custom server_command was started anyway.")
    devices = cuda_devices(cal.python)
    if devices == 0 and not cal.allow_cpu:
        raise UsageError(f"no CUDA accelerator is visible to {cal.python} (torch reports none); "
                         "a managed launch is refused.", hint="Run on the GPU host, attach "
                         "to a server, or set allow_cpu = true for a deliberate test.")
    if devices == 0:
        warnings.append("allow_cpu: launched without a CUDA accelerator; this run is a test "
                        "of the procedure, not a production qualification.")
    return warnings


class Managed:
    """The launched server: its process group and log."""

    def __init__(self, argv: list[str], env: dict, log: Path, shown: str):
        self.log = log
        self.proc = procs.spawn(argv, log, procs.child_env(env), "server", shown)

    def exited(self) -> str | None:
        """An error text when the server process has already exited, else None."""
        code = self.proc.poll()
        if code is None:
            return None
        lines = procs.tail(self.log, lines=8)
        return (f"the server exited with status {code} before it was ready. Its last log "
                "lines: " + " | ".join(lines) if lines else f"the server exited with status "
                f"{code} before it was ready (no output).")

    def stop(self) -> None:
        """Stop the whole process group (SIGTERM, then SIGKILL)."""
        procs.stop(self.proc, grace=30.0)


def ensure_python(python: str) -> None:
    """The calibration interpreter must exist before anything runs with it."""
    if not Path(python).is_file():
        raise CalibrationError(f"calibration.python {python}: no such file.")
