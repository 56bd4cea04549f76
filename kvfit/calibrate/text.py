"""The calibration document as text: the plan under test, the points, the result."""

from __future__ import annotations

import shlex

from ..report.words import count, number


def _n(value, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.3g}{unit}"
    return f"{number(int(value))}{unit}"


_AGREE = {True: "matches the plan", False: "DIFFERS from the plan",
          None: "not comparable with the plan"}


def _frac(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def _head(doc: dict) -> list[str]:
    p, w, e = doc["plan"], doc["workload"], doc["engine"]
    pred = p["predicted_boundary"]
    out = [f"kvfit calibrate: {p['model']} | {e['name']} {e['version']} ({e['version_basis']}) "
           f"| {doc['mode']} {doc['endpoint']['base_url']}",
           f"Plan (prediction): {p['layout']} on {p['hardware']}, {p['context_tokens']:,} tokens, "
           f"KV {p['kv_dtype']}: {_n(pred)} resident {'sequence' if pred == 1 else 'sequences'} "
           "predicted"]
    ep = p.get("engine_prediction")
    if ep and ep.get("total") is not None:
        out.append(f"  engine rules ({ep['engine']} {ep['version']}): {ep['total']:,} "
                   f"({ep['per_replica']:,} per replica; {ep['basis']})")
    out.append(f"Workload: {w['dataset']}, {w['input_tokens']:,} input + {w['output_tokens']:,} "
               f"output tokens per request, length variation {w['length_variation']}, "
               f"{count(w['requests_per_concurrency'], 'request')} per concurrency, seed {w['seed']}")
    c = doc["concurrency"]
    out.append(f"Concurrency points: {', '.join(number(x) for x in c['points'])} ({c['how']})")
    out += [f"  note: {n}" for n in c["notes"]]
    return out


def _server(doc: dict) -> list[str]:
    s = doc.get("server")
    if not s:
        return []
    out = [f"Server command ({s['source']}):", f"  {shlex.join(s['command'])}"]
    if s.get("preflight"):
        pre = s["preflight"]
        out.append(f"  preflight: {pre['engine']} {pre.get('version') or '?'} "
                   f"{pre['status']} ({pre.get('backend') or 'backend unknown'})")
    if s.get("ready_after_s") is not None:
        out.append(f"  ready after {s['ready_after_s']:g} s; pid {s['pid']}"
                   + ("; kept running" if s.get("kept") else "; stopped afterwards"))
    return out


def _endpoint(doc: dict) -> list[str]:
    ep = doc["endpoint"]
    models = ", ".join(m["id"] for m in ep["models"]) or "not reported"
    cp, tp = ep["cache_precision"], ep["topology"]
    return [f"Endpoint: models {models}; version {ep['version'] or 'not reported'}",
            f"  cache precision: planned {cp['planned']}, {cp['status']}"
            + (f" ({cp['reported']}: {_AGREE[cp['agrees']]})" if cp["reported"] else ""),
            f"  topology: planned TP {tp['planned']['tp']} x DP {tp['planned']['dp']}, "
            f"{tp['status']}" + (f" ({tp['reported']})" if tp["reported"] else "")]


def _points(doc: dict) -> list[str]:
    out = ["  offered  completed  resident  queued(max waiting)  kv-use  input tokens "
           "(requested / reported)  OOM  SLO   verdict"]
    for p in doc["points"]:
        q, t, c = p["queueing"], p["tokens"], p["completions"]
        queued = "-" if q["queued"] is None else (f"yes ({q['max_waiting']})" if q["queued"]
                                                  else "no")
        slo = {None: "-", True: "pass", False: "fail"}[p["slo"]["qualified"]]
        out.append(f"  {p['offered_concurrency']:>7}  {_n(c['completed']):>4}/{c['requested']:<4}"
                   f"  {_n(p['resident']['max_running']):>8}  {queued:>19}  "
                   f"{_frac(p['kv_usage']['max']):>6}  {t['requested_total']:>16,} / "
                   f"{_n(t['reported_total']):<13}  {'yes' if p['oom']['detected'] else 'no':>3}"
                   f"  {slo:<4}  {'qualified' if p['qualified'] else 'FAILED'}")
        out += [f"           - {r}" for r in p["reasons"]]
        if t.get("qualified_by") == "server prompt-token counter":
            sc, sf = t["server_counter"], t["benchmark_shortfall"]
            out.append(f"           - input tokens proven by the server's {sc['metric']} "
                       f"(+{sc['delta']:,}); the benchmark reported {sf['per_request']} per "
                       f"request fewer: {sf['reason']}")
        out += [f"           - OOM evidence ({e['source']}): {e['line']}"
                for e in p["oom"]["evidence"][:3]]
    return out


def _result(doc: dict) -> list[str]:
    r = doc["result"]
    out = [f"Result ({r['provenance']}):",
           f"  measured capacity ceiling: {_n(r['measured_capacity_ceiling'])} resident "
           f"requests ({r['ceiling_bound']})",
           f"  largest fully resident concurrency: {_n(r['largest_fully_resident_concurrency'])}"]
    if r["slo_thresholds_ms"]:
        limits = ", ".join(f"{k.removeprefix('max_')} <= {v:g}"
                           for k, v in r["slo_thresholds_ms"].items())
        out.append(f"  SLO-qualified ceiling (p99 {limits}): "
                   f"{_n(r['slo_qualified_ceiling'])}")
    for key, label in (("predicted_vs_measured", "plan"),
                       ("engine_predicted_vs_measured", "engine rules")):
        cmp = r[key]
        if cmp:
            ratio = f", {cmp['ratio']:.1%} of predicted" if cmp["ratio"] is not None else ""
            out.append(f"  predicted ({label}) vs measured: {cmp['predicted']:,} vs "
                       f"{cmp['measured']:,} ({cmp['difference']:+,}{ratio})")
    verdict = "CALIBRATED" if r["calibrated"] else "NOT CALIBRATED"
    out.append(f"  {verdict} (exit {doc['exit_code']})")
    out += [f"    - {why}" for why in r["reasons"]]
    return out


def _dry(doc: dict) -> list[str]:
    e = doc["engine"]
    out = ["Dry run: no server, benchmark or engine probe was started or contacted (the plan "
           "read the checkpoint's metadata as `kvfit PRESET` does)."]
    if doc["mode"] == "launch":
        out.append(f"  would first run the {e['name']} preflight ([engine] probe, default config) "
                   "and the CUDA check in calibration.python, start the server, then poll "
                   "/health and /v1/models")
    else:
        out.append(f"  would poll {doc['endpoint']['base_url']}/health and /v1/models, then "
                   "read /v1/models and the engine version the server reports")
    names = "; ".join(f"{k} {' | '.join(v) or '-'}" for k, v in e["metrics"].items())
    out.append(f"  would sample /metrics: {names}")
    out.append("Benchmark commands:")
    out += [f"  c={b['concurrency']}: {shlex.join(b['command'])}" for b in doc["benchmarks"]]
    return out


def render(doc: dict) -> str:
    """The whole document as text."""
    lines = _head(doc)
    lines += _server(doc)
    if doc["status"] == "dry-run":
        lines += _dry(doc)
    else:
        lines += _endpoint(doc) + ["Points:"] + _points(doc) + _result(doc)
    if doc["warnings"]:
        lines += ["Warnings:"] + [f"  - {w}" for w in doc["warnings"]]
    return "\n".join(lines) + "\n"
