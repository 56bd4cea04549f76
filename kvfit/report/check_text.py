"""The text block of the `engine_check` section (renders only; computes nothing)."""

from __future__ import annotations

_WORDS = {
    "preflight-pass": "PREFLIGHT-PASS (config-compatible on the detected backend, not load-tested)",
    "preflight-fail": "PREFLIGHT-FAIL", "unknown": "UNKNOWN", "unsupported": "UNSUPPORTED",
    "missing": "MISSING", "error": "ERROR", "smoke-pass": "SMOKE-PASS (started and generated "
    "one token)", "smoke-fail": "SMOKE-FAIL",
}


def _engine_lines(r: dict) -> list[str]:
    head = r["engine"] + (f" {r['version']}" if r["version"] else "")
    if r["backend"]:
        head += f" on {r['backend']}"
    out = [f"  {head}: {_WORDS[r['status']]}"]
    if not r["checks"] or r["status"] in ("error", "unsupported", "smoke-pass", "smoke-fail"):
        out.append(f"    {r['reason']}")
    out += [f"    {c['status']:<7} {c['name']:<17} {c['detail']}" for c in r["checks"]]
    if r["engine_flags"]:
        out.append(f"    engine flags: {' '.join(r['engine_flags'])}")
    return out


def render_text(section: dict) -> list[str]:
    """Lines of the 'Installed engine check' block."""
    out = ["", f"Installed engine check (--engine-probe {section['probe']}; {section['python']}; "
               f"TP {section['tp']} ({section['tp_source']}); {section['context_tokens']:,} "
               f"tokens; config from {section['config_source']})"]
    for r in section["results"]:
        out += _engine_lines(r)
    out.append(f"  {section['meaning']}")
    return out
