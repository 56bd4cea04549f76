"""Accuracy of kvfit's engine predictions over every public start-up log in the fixtures.

    uv run python bench/engine_accuracy.py          # the table
    uv run python bench/engine_accuracy.py --fit    # refit the non-KV constants, with
                                                    # leave-one-out errors

A second table predicts every log with nothing taken from it but the GPU total and flags:
the weights come from the checkpoint or the spec's config-shape estimate even where the log
prints the loaded weights, so the weight estimate itself is checked against the engine.

For each log: the available KV memory (vLLM "Available KV cache memory"; SGLang the printed
K+V pool), the KV tokens (vLLM "GPU KV cache size"; SGLang max_total_num_tokens) and the
concurrency, printed vs predicted end to end, plus the tokens rebuilt from the printed memory
(the paging rules alone). "fit" marks logs some fitted constant was fitted on: their
end-to-end errors are not independent, so the FITTED and HELD-OUT logs are printed as separate
tables with separate counts (the #11 bar, 85 % within 5 %, is on the held-out table). Misses
stay in the table with the reason. The pipeline-parallel and MTP fixture logs are listed again
at the end with the check from the printed memory and what an end-to-end miss lacks, then the
PP/MTP logs found but not stored, with the input each lacks
(tests/fixtures/engine_log_candidates.yaml). Nothing here asserts; tests never time anything.

Session 6 figures (24 logs): FITTED 6/6 within 5 %. HELD-OUT 12/18 (67 %) with memory and tokens
both within 5 % end to end, 18/18 from the printed memory. The #11 bar is worded "given the
printed weights": 11 of the 18 held-out logs print the weights the engine loaded, and all 11
(100 %) are within 5 % on memory and tokens; those 11 are ten vLLM 0.19 runs on H100 and one
SGLang run on an RTX A6000, so they say little about other GPUs or releases. The 7 without
printed weights are predicted with kvfit's own weight figure (6 of them miss). The
held-out misses: MiMo-V2-Flash (SGLang; GPU not stated), Kimi-K2-Thinking TP8 and TP8+DCP8 (no
weights printed; the pinned config is a trimmed copy without the int4 quantization_config),
Qwen3.6-35B-A3B NVFP4 on an RTX 5090 (+13.8 %; max_num_seqs 1 is outside the activation fit's
settings, which the report now says), Qwen3-235B-A22B-FP8 on vLLM 0.10 (+45.7 %; LMCache
connector, no non-KV term printed, that release's source not readable here) and the vLLM 0.24.0
MTP run on 2x RTX 3090 (+61 %: no weights printed, the served FP8 checkpoint's config is not
pinned; from the printed memory, MTP draft layer included, -0.28 %). Fully predicted (weights
never taken from the log): 10/24.

Session 7: weights as loaded (kvfit/engines/load_quant.py, rope_cache.py). `--quantization fp8`
on a bf16 checkpoint is applied (Llama-3.1-8B: 8.49 GiB, as printed), the six RedHatAI logs get
the served checkpoint's 8-bit linear format their stand-in bf16 configs lack (the YAML's
served_quantization; _bare() keeps the count without it), and predicted vLLM weights add the
RoPE cos/sin cache vLLM's loading figure counts (Llama-4-Scout: 2.5 GiB per rank; its end-to-end
error goes from +16.9 % to +1.9 %). End to end, held-out: 12/18 within 5 % (12/15 of those
predictable from the pinned inputs; 7/18 without the served format). Remaining held-out misses:
the vLLM 0.24 MTP and NVFP4 runs and Qwen3-235B on vLLM 0.10 (each misses given the printed
figures too, or prints none), and the three logs not predicted (MiMo: GPU not stated;
Kimi-K2 x2: trimmed config, no weights printed).

Session 10 (held-out, 18 logs; before -> after): end to end 12/18 -> 13/18 within 5 % (12/15 ->
13/15 of those predictable), without the served weight format 7/18 -> 8/18. The vLLM 0.24 MTP
run now lands (-3.8 % memory, -4.1 % tokens): a bf16 stand-in of the same geometry under the
run's own --quantization fp8 (the NVFP4 stand-in's declaration is one vLLM refuses with it) and
the MTP draft's weights counted; its non-KV terms are extrapolated and likely cancel (its YAML's
end_to_end_note), and the table marks such hits. vLLM's default utilization is 0.92 from 0.20.0
(read from the wheels), which moves the NVFP4 RTX 5090 run to +24 %: its profile-run activation
(vision encoder, forward pass at 8,192 tokens with one sequence) is not modelled. Qwen3-235B on
vLLM 0.10 stays +46 %, unattributed (its YAML says what the 0.10.0 code does).

Session 11 (62 logs: 38 more from llm-d-planner's v0.19.0 H100 sweep, all held out). The 18 held
out before: unchanged, end to end 13/18 (13/15 predictable), checkpoint alone 13/18, without the
served weight format 8/18, given the printed weights 11/11. All 56 held out: end to end 51/56,
checkpoint alone 50/56 (89 %; 50/53 predictable), without the served format 43/56, given the
printed weights 49/49, from the printed memory 56/56. The new logs are one engine build on one
GPU with near-repeats, so the enlarged figure says little beyond that build; the fixture
README's session-11 table keeps both sets. explain-log now predicts the two PP runs per stage
(-0.08 % / -0.07 %; before, 1/PP of the printed tokens).

Session 11 (issue 24): vLLM's activation peak is derived from the engine's code
(kvfit/engines/vllm_activation.py); only a 0.062 GiB residual is fitted. Held-out, end to end:
13/18 -> 12/18 within 5 % on the logs from before session 11, 51/56 -> 50/56 (given the
printed weights) and 50/56 -> 49/56 (the checkpoint alone) on all. The RTX 5090 NVFP4 run
moves from +24.3 % to -7.3 % (its vision encoder's profile run, 1.88 GiB, now sets the peak);
the MTP run on 2x RTX 3090 from -3.8 % to -28.6 %: its session-10 hit rested on a too-low
activation cancelling other extrapolated terms (non-torch from H100 runs with custom
all-reduce; this one disables it). On the logs that print the peak, see --fit and
docs/accuracy.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from engine_log_cases import load_cases  # noqa: E402

from kvfit.engines.explain import explain  # noqa: E402
from kvfit.engines.spec import load_spec  # noqa: E402
from kvfit.errors import KvfitError  # noqa: E402

LIMIT = 5.0
MEMORY = {"vllm": "available KV memory", "sglang": ("KV pool bytes (K+V, per GPU)",
                                                    "SWA pool bytes (K+V, per GPU)")}
TOKENS = {"vllm": "GPU KV cache size", "sglang": "max_total_num_tokens"}


def fitted_logs() -> set[str]:
    """Slugs any fitted constant of any engine spec was fitted on."""
    return {s for e in ("vllm", "sglang") for c in load_spec(e)["estimates"].values()
            for s in c["fitted_on"]}


def _row(result: dict, names) -> dict | None:
    names = (names,) if isinstance(names, str) else names
    return next((r for r in result["rows"] if r["number"] in names), None)


def _cell(row: dict | None, unit: str = "") -> tuple[str, str, str]:
    if row is None:
        return "-", "-", "-"
    fmt = (lambda v: f"{v:.2f}") if unit == "gib" else (lambda v: f"{v:,.0f}" if v >= 100
                                                          else f"{v:.2f}")
    p = "-" if row["printed"] is None else fmt(row["printed"])
    q = "-" if row["predicted"] is None else fmt(row["predicted"])
    d = "-" if row["diff_pct"] is None else f"{row['diff_pct']:+.2f}%"
    return p, q, d


def _ok(row: dict | None) -> bool:
    return bool(row) and row["diff_pct"] is not None and abs(row["diff_pct"]) <= LIMIT


def _why(result: dict, mem: dict | None, tok: dict | None, known: str | None = None) -> str:
    if _ok(mem) and _ok(tok):
        regime = ((result.get("prediction") or {}).get("memory") or {}).get("fitted_regime")
        if regime and not regime["inside"]:   # a hit with extrapolated constants says so
            return "within 5%, with the non-KV constants extrapolated: " + \
                "; ".join(regime["outside"])
        return "within 5%"
    if known:  # the provenance YAML's `known_miss`: an input kvfit cannot express yet
        return f"known miss: {known}"
    for row in (mem, tok):
        if row and row["predicted"] is None and row["printed"] is not None:
            return row["rule"] or "not predicted"
        if row and row.get("why"):
            return row["why"]
    return "printed value absent" if mem is None or mem["printed"] is None else "-"


def evaluate() -> list[dict]:
    """One summary record per fixture log."""
    out, fit = [], fitted_logs()
    for case in load_cases():
        try:
            res = explain(case.text, model_dir=str(case.model_dir), engine_version=case.version,
                          tp=case.tp, hardware=case.hardware, flags=case.thread_flags)
        except KvfitError as err:
            out.append({"case": case, "error": err.message})
            continue
        e = case.engine
        mem, tok = _row(res, MEMORY[e]), _row(res, TOKENS[e])
        rule = _row(res, (f"{TOKENS[e]}, from the printed memory", f"{TOKENS[e]}, from the "
                          "printed pool", "SWA pool tokens, from the printed pool"))
        conc = _row(res, "maximum concurrency" if e == "vllm" else "max_running_requests")
        full = explain(case.text, model_dir=str(case.model_dir), engine_version=case.version,
                       tp=case.tp, hardware=case.hardware, flags=case.thread_flags,
                       log_weights=False, served_format=case.served_format)
        out.append({"case": case, "result": res, "mem": mem, "tok": tok, "rule": rule,
                    "conc": conc, "fit": case.slug in fit,
                    "why": _why(res, mem, tok, case.meta.get("known_miss")),
                    "bare": _bare(case, full),
                    "full": {"weights": _row(full, "weights per GPU"),
                             "mem": _row(full, MEMORY[e]), "tok": _row(full, TOKENS[e]),
                             "basis": (_row(full, "weights per GPU") or {}).get("rule")}})
    return out


def _bare(case, full: dict) -> dict:
    """End to end without the served checkpoint's stated weight format (the stand-in config
    alone): the memory and token rows, for the count that takes nothing but GPU and flags."""
    if case.served_format:
        full = explain(case.text, model_dir=str(case.model_dir), engine_version=case.version,
                       tp=case.tp, hardware=case.hardware, flags=case.thread_flags,
                       log_weights=False)
    e = case.engine
    return {"mem": _row(full, MEMORY[e]), "tok": _row(full, TOKENS[e])}


def _config_kind(case) -> str:
    """'exact' when the pinned config is the served checkpoint's own, else 'stand-in'."""
    return "exact" if case.config_note.startswith("the pinned config of this exact") else \
        "stand-in"


def print_full(records: list[dict]) -> None:
    """Every log predicted with the weights from the checkpoint or the config estimate."""
    head = ("log", "config", "weights printed", "weights pred", "err", "avail pred", "err",
            "tokens pred", "err", "weights basis")
    rows = [head]
    for r in records:
        if "error" in r:
            continue
        f = r["full"]
        w, m, t = _cell(f["weights"], "gib"), _cell(f["mem"], "gib"), _cell(f["tok"])
        basis = (f["basis"] or "-").split(":")[0]
        rows.append((r["case"].slug, _config_kind(r["case"]), w[0], w[1], w[2], m[1], m[2],
                     t[1], t[2], basis))
    widths = [max(len(x[i]) for x in rows) for i in range(len(head) - 1)]
    print("\nFully predicted (weights never taken from the log):")
    for x in rows:
        print("  ".join(f"{v:<{w}}" for v, w in zip(x[:-1], widths, strict=True)) + "  " + x[-1])
    good = [r for r in records if "error" not in r]
    both = [r for r in good if _ok(r["full"]["mem"]) and _ok(r["full"]["tok"])]
    wts = [r for r in good if r["full"]["weights"] and r["full"]["weights"]["printed"]
           is not None and r["full"]["weights"]["predicted"] is not None]
    exact = [r for r in good if _config_kind(r["case"]) == "exact"]
    print(f"\nfully predicted, memory and tokens both within 5%: {len(both)}/{len(records)} logs"
          f"; {sum(r in both for r in exact)}/{len(exact)} of the logs whose pinned config is "
          "the served checkpoint's own (a stand-in config lacks the served quantization)")
    print(f"predicted weights within 2% of the printed loaded weights: "
          f"{sum(abs(r['full']['weights']['diff_pct']) <= 2 for r in wts)}/{len(wts)} logs "
          "that print them")


def _table(records: list[dict]) -> None:
    head = ("log", "engine", "avail printed", "avail pred", "err", "tokens printed",
            "tokens pred", "err", "tokens from printed mem", "err", "concurrency printed",
            "pred", "err", "why")
    rows = [head]
    for r in records:
        c = r["case"]
        if "error" in r:
            rows.append((c.slug, c.engine, *["-"] * 11, f"error: {r['error']}"))
            continue
        m, t, rl, cc = _cell(r["mem"], "gib"), _cell(r["tok"]), _cell(r["rule"]), _cell(r["conc"])
        rows.append((c.slug, f"{c.engine}@{c.version}", *m, *t, rl[1], rl[2], *cc, r["why"]))
    widths = [max(len(x[i]) for x in rows) for i in range(len(head) - 1)]
    for x in rows:
        print("  ".join(f"{v:<{w}}" for v, w in zip(x[:-1], widths, strict=True)) + "  " + x[-1])


def print_table(records: list[dict]) -> None:
    """Two accuracy tables: the logs some fitted constant was fitted on (FITTED: their
    end-to-end errors are not independent evidence) and the rest (HELD-OUT), each with its
    own counts."""
    for label, part in (("FITTED", [r for r in records if r.get("fit")]),
                        ("HELD-OUT", [r for r in records if not r.get("fit")])):
        print(f"\n{label} logs ({len(part)}):" + (" some fitted constant was fitted on each; "
              "their errors are not independent" if label == "FITTED" else " no constant was "
              "fitted on any of them"))
        _table(part)
        _summary(part, label)
    held = [r for r in records if not r.get("fit")]
    given = [r for r in held if _weights_printed(r)]
    print(f"\nHELD-OUT, given the printed weights ({len(given)} of the {len(held)} held-out logs "
          "print the weights the engine loaded; the others are predicted with kvfit's own weight "
          "figure, so their error includes the weight estimate's):")
    _summary(given, "HELD-OUT given weights")
    print("\nbar (#11): held-out logs, given the printed weights, with memory and tokens both "
          "within 5% >= 85%")


def _weights_printed(record: dict) -> bool:
    """Whether the log prints the weights the engine loaded (the prediction then uses them)."""
    row = _row(record["result"], "weights per GPU") if "result" in record else None
    return bool(row) and row.get("printed") is not None


def _summary(records: list[dict], label: str) -> None:
    good = [r for r in records if "error" not in r]
    n = len(records)
    both = [r for r in good if _ok(r["mem"]) and _ok(r["tok"])]
    lines = [
        ("available KV memory within 5%", [r for r in good if _ok(r["mem"])]),
        ("KV tokens within 5% (end to end)", [r for r in good if _ok(r["tok"])]),
        ("memory and tokens both within 5%", both),
        ("KV tokens from the printed memory within 5%", [r for r in good if _ok(r["rule"])]),
    ]
    for what, hits in lines:
        pct = 100 * len(hits) / n if n else 0.0
        print(f"{label}: {what}: {len(hits)}/{n} logs ({pct:.0f}%)")


def _pp_or_mtp(case) -> str | None:
    """'mtp' / 'pp<N>' for a fixture log of a speculative (MTP) or pipeline-parallel run."""
    flags = case.meta.get("flags") or {}
    spec = flags.get("speculative_config") or {}
    if str(spec.get("method", "")).endswith("mtp"):
        return "mtp"
    pp = int(flags.get("pipeline_parallel_size") or 1)
    return f"pp{pp}" if pp > 1 else None


def print_pp_mtp(records: list[dict]) -> None:
    """The fixture logs of MTP and pipeline-parallel runs (#11 Must show), each predicted from
    the printed memory and end to end, with the input an end-to-end miss lacks."""
    rows = [r for r in records if "error" not in r and _pp_or_mtp(r["case"])]
    print("\nPipeline-parallel and MTP fixture logs (also in the tables above):")
    for r in rows:
        t, rl, m = _cell(r["tok"]), _cell(r["rule"]), _cell(r["mem"], "gib")
        lacks = r["case"].meta.get("end_to_end_miss", "").split(";")[0].strip()
        print(f"  {_pp_or_mtp(r['case'])}: {r['case'].slug}\n    tokens from the printed memory: "
              f"{rl[1]} vs {t[0]} printed ({rl[2]}); end to end: memory {m[2]}, tokens {t[2]}"
              + (f"\n    end to end lacks: {lacks}" if lacks and not (_ok(r["mem"]) and
                                                           _ok(r["tok"])) else ""))
    if not rows:
        print("  none")


def print_candidates() -> None:
    """The pipeline-parallel and MTP logs found in public material, with what each lacks."""
    from ruamel.yaml import YAML

    path = ROOT / "tests" / "fixtures" / "engine_log_candidates.yaml"
    doc = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    print("\nPipeline-parallel and MTP logs found but not stored (not predicted; listed with "
          "the missing input):")
    for c in doc["candidates"]:
        print(f"  {c['kind']}: {c['url']} ({c['engine']})\n    run: {c['run']}\n"
              f"    printed: {c['printed']}\n    missing: {c['missing']}")
        if c.get("check"):
            print(f"    check: {c['check']}")


def fit_report(records: list[dict]) -> None:
    """Refit the vLLM non-KV constants from the logs that print them; leave-one-out errors
    of each constant and of the available KV memory it feeds. The activation peak is derived
    from the engine's code (kvfit/engines/vllm_activation.py); only its residual
    activation_base_gib is fitted, as the mean of printed - derived over the logs it names."""
    spec = load_spec("vllm")["estimates"]["activation_base_gib"]
    base_now = spec["value"]
    recs = [r for r in records if "error" not in r and r["case"].engine == "vllm"
            and "activation_gib" in _printed(r)]
    pts = [(r, r["result"]["prediction"]["memory"]["activation_peak_bytes"]["value"] / 2**30
            - base_now, _printed(r)["activation_gib"]) for r in recs]
    fit = [p for p in pts if p[0]["case"].slug in spec["fitted_on"]]
    base = sum(y - x for _, x, y in fit) / len(fit)
    print(f"activation peak = code-derived phases + {base:.3f} GiB (mean residual over "
          f"{len(fit)} fitted logs); every log that prints the peak:")
    for r, x, y in pts:
        rest = [p for p in fit if p[0] is not r]
        b = sum(yy - xx for _, xx, yy in rest) / len(rest)
        nt = [_printed(o)["non_torch_gib"] for o, _, _ in pts if o is not r and
              "non_torch_gib" in _printed(o) and (o["case"].tp == 1) == (r["case"].tp == 1)]
        mem = r["result"]["prediction"]["memory"]
        shift = (mem["activation_peak_bytes"]["value"] / 2**30 - (b + x)
                 + mem["non_torch_bytes"]["value"] / 2**30 - sum(nt) / len(nt))
        avail, printed = mem["available_kv_bytes"]["value"] / 2**30 + shift, _printed(r)
        tag = "fitted" if r["case"].slug in spec["fitted_on"] else "held out"
        print(f"  {r['case'].slug} ({tag}): activation printed {y:.2f}, predicted "
              f"{base + x:.2f} ({100 * (base + x - y) / y:+.1f}%), leave-one-out {b + x:.2f} GiB;"
              f" available KV leave-one-out {avail:.2f} vs printed "
              f"{printed['available_gib']:.2f} GiB "
              f"({100 * (avail - printed['available_gib']) / printed['available_gib']:+.2f}%)")
    for label, want in (("TP=1", True), ("TP>1", False)):
        vals = [_printed(r)["non_torch_gib"] for r in records if "error" not in r
                and "non_torch_gib" in _printed(r) and (r["case"].tp == 1) == want]
        if vals:
            print(f"non-torch {label}: mean {sum(vals) / len(vals):.3f} GiB over {len(vals)} logs")
    firsts = [_printed(r)["cudagraph_gib"] * 1024 - 6 * (_printed(r)["graphs_piecewise"]
              + _printed(r)["graphs_full"] - 2) for r in records if "error" not in r
              and {"cudagraph_gib", "graphs_full"} <= set(_printed(r))]
    print(f"CUDA graphs: first capture mean {sum(firsts) / len(firsts):.0f} MiB over "
          f"{len(firsts)} logs ({', '.join(f'{f:.0f}' for f in firsts)})")


def _printed(record: dict) -> dict:
    from kvfit.engines.logparse import parse

    return parse(record["case"].text).printed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fit", action="store_true", help="refit the non-KV constants")
    args = p.parse_args(argv)
    if args.fit:
        fit_report(evaluate())
        return 0
    records = evaluate()
    print_table(records)
    print_full(records)
    print_pp_mtp(records)
    print_candidates()
    return 0


if __name__ == "__main__":
    sys.exit(main())
