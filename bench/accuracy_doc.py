"""Write docs/accuracy.md: kvfit's engine predictions against every public start-up log in the
fixtures, and the size of the recorded-engine comparisons.

    uv run python bench/accuracy_doc.py            # rewrite docs/accuracy.md
    uv run python bench/accuracy_doc.py --check    # exit 1 when docs/accuracy.md is stale

The log rows are bench/engine_accuracy.py's evaluation (explain-log on each fixture log, the
pinned config, the log's own flags): "given weights" takes the weights the log prints, "end to
end" never takes them from the log. The recorded-engine section counts the points of the
records made by the engines' own code; tests/test_vllm_kv_record.py and
tests/test_sglang_kv_record.py fail on any point that misses outside the listed known causes.
tests/test_accuracy_doc.py checks that the committed file is what this writes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import engine_accuracy as acc  # noqa: E402
from generated_file import write_or_check  # noqa: E402

DOC = ROOT / "docs" / "accuracy.md"


def _flags(meta: dict) -> str:
    flags = meta.get("flags") or {}
    parts = []
    for key, value in flags.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}: {v}" for k, v in value.items())
            value = "{" + value + "}"
        parts.append(f"{key}={value}")
    return "; ".join(parts) or "-"


def _gpu(meta: dict) -> str:
    gpu = meta.get("gpu") or {}
    model = gpu.get("model") or "not stated"
    count = gpu.get("count")
    return f"{count} x {model}" if count else model


def _config(case) -> str:
    """The pinned config the log is predicted from: the served checkpoint's own, or a stand-in
    (another checkpoint of the same geometry; its provenance YAML says why)."""
    model = case.meta.get("model")
    own = acc._config_kind(case) == "exact" and (
        not model or model.replace("/", "--") == case.model_dir.name)
    return f"{'pinned' if own else 'stand-in'}: {case.model_dir.name}"


def _misses(records: list[dict]) -> list[str]:
    """Each held-out log not within 5 % end to end, with what its provenance YAML records about
    the cause (`end_to_end_miss`, `not_predicted`) or, for a hit that rests on extrapolated
    constants, its `end_to_end_note`."""
    out = []
    for r in records:
        if r.get("fit") or "error" in r:
            continue
        meta = r["case"].meta
        hit = acc._ok(r["full"]["mem"]) and acc._ok(r["full"]["tok"])
        text = meta.get("end_to_end_note") if hit else (
            meta.get("end_to_end_miss") or meta.get("not_predicted"))
        if text and (not hit or meta.get("end_to_end_note")):
            mem = r["full"]["mem"]
            label = "hit, with a caveat" if hit else (
                "miss" if mem and mem["predicted"] is not None else "not predicted")
            out.append(f"- **{r['case'].slug}** ({label}): {' '.join(str(text).split())}")
    return out


def _constants() -> list[str]:
    """Every fitted non-KV constant of the engine specs, with the logs it was fitted on."""
    from kvfit.engines.spec import load_spec

    out = ["| engine | constant | value | basis | fitted on |", "|---|---|---|---|---|"]
    for engine in ("vllm", "sglang"):
        for name, c in load_spec(engine)["estimates"].items():
            fitted = ", ".join(c["fitted_on"]) or "-"
            cells = (engine, name, c["value"], c["basis"], fitted)
            out.append("| " + " | ".join(str(x).replace("|", "/") for x in cells) + " |")
    return out


def _activation(records: list[dict]) -> list[str]:
    """Every log that prints vLLM's torch peak: printed, kvfit's code-derived peak, the error,
    the largest profile-run phase and the set (the residual was fitted on the "fitted" logs)."""
    from kvfit.engines.spec import load_spec

    fitted = load_spec("vllm")["estimates"]["activation_base_gib"]["fitted_on"]
    out = ["| log | printed GiB | ours | err | largest phase | phases GiB (ours, residual "
           "excluded) | set |", "|---|---|---|---|---|---|---|"]
    held: list[float] = []
    for r in records:
        if "error" in r or r["case"].engine != "vllm":
            continue
        row = next((x for x in r["result"]["rows"] if x["number"] == "activation peak"), None)
        if row is None or row["printed"] is None:
            continue
        act = r["result"]["prediction"]["memory"]["activation_peak_bytes"]
        phases = act.get("phases_gib") or {}
        stages = r["result"]["prediction"].get("pipeline_stages")
        if stages:   # the printed peak is the first such line's worker's: compare its stage
            m = re.search(r"\(Worker_PP(\d+)[^)]*\)[^\n]*torch peak memory increase",
                          r["case"].text)
            k = int(m.group(1)) if m else 0
            got = stages["value"][k]["activation_peak_bytes"] / 2**30
            row = dict(row, predicted=got,
                       diff_pct=100 * (got - row["printed"]) / row["printed"])
            phases = {f"stage {k}": round(got, 3)}
        top = max(phases, key=phases.get) if phases else "-"
        cells = (r["case"].slug, f"{row['printed']:.2f}", f"{row['predicted']:.2f}",
                 f"{row['diff_pct']:+.1f}%", top,
                 ", ".join(f"{k} {v:.2f}" for k, v in phases.items()) or "-",
                 "fitted" if r["case"].slug in fitted else "held out")
        out.append("| " + " | ".join(cells) + " |")
        if r["case"].slug not in fitted:
            held.append(abs(row["diff_pct"]))
    if held:
        out += ["", f"Held out: {len(held)} logs, mean absolute error "
                f"{sum(held) / len(held):.1f} %, {sum(e <= 5 for e in held)} within 5 %."]
    return out


def _cells(row, unit: str = "") -> tuple[str, str, str]:
    return acc._cell(row, unit)


def _log_rows(records: list[dict]) -> list[str]:
    head = ("log", "source", "config", "engine", "GPU", "flags", "avail KV GiB (log)", "ours",
            "err",
            "tokens (log)", "ours", "err", "end to end: avail ours", "err", "tokens ours", "err",
            "set", "why")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        case = r["case"]
        meta = case.meta
        if "error" in r:
            lines.append(f"| {case.slug} | {meta.get('url', '-')} | {_config(case)} | "
                         f"{case.engine}@{case.version} "
                         f"| {_gpu(meta)} | {_flags(meta)} |" + " - |" * 10 +
                         f" {'fitted' if case.slug in acc.fitted_logs() else 'held out'} | "
                         f"not predicted: {r['error']} |")
            continue
        m, t = _cells(r["mem"], "gib"), _cells(r["tok"])
        fm, ft = _cells(r["full"]["mem"], "gib"), _cells(r["full"]["tok"])
        cells = (case.slug, meta.get("url", "-"), _config(case), f"{case.engine}@{case.version}",
                 _gpu(meta),
                 _flags(meta), m[0], m[1], m[2], t[0], t[1], t[2], fm[1], fm[2], ft[1], ft[2],
                 "fitted" if r["fit"] else "held out", r["why"])
        lines.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    return lines


def _count(records: list[dict], key: str | None) -> tuple[int, int]:
    """(logs with memory and tokens within 5 %, logs): given the printed weights (key None),
    end to end ("full") or end to end without a stated served weight format ("bare")."""
    good = [r for r in records if "error" not in r]
    rows = [(r["mem"], r["tok"]) if key is None else (r[key]["mem"], r[key]["tok"])
            for r in good]
    return sum(acc._ok(m) and acc._ok(t) for m, t in rows), len(records)


def _pct(hits: int, n: int) -> str:
    return f"{hits} ({100 * hits / n:.0f} %)" if n else "0"


def _summary(records: list[dict]) -> list[str]:
    held = [r for r in records if not r.get("fit")]
    fitted = [r for r in records if r.get("fit")]
    predictable = [r for r in held if "error" not in r and r["full"]["mem"] is not None
                   and r["full"]["mem"]["predicted"] is not None]
    printed = [r for r in predictable if acc._weights_printed(r)]
    new = [r for r in held if r["case"].meta.get("added_in") == "session 11"]
    out = []
    for label, rows in (("held-out logs, all", held),
                        ("held-out logs kvfit can predict from the pinned inputs", predictable),
                        ("fitted logs (not independent)", fitted),
                        ("held-out logs that print the loaded weights", printed),
                        ("held-out logs from before session 11",
                         [r for r in held if r not in new]),
                        ("held-out logs added in session 11 (one vLLM 0.19.0 H100 sweep)", new)):
        given, n = _count(rows, None)
        full, _ = _count(rows, "full")
        bare, _ = _count(rows, "bare")
        out.append(f"| {label} | {n} | {_pct(given, n)} | {_pct(full, n)} | {_pct(bare, n)} |")
    return ["| logs | count | given the printed weights: memory and tokens within 5 % | "
            "end to end (the checkpoint alone): within 5 % | end to end, stand-in configs "
            "without the served weight format: within 5 % |", "|---|---|---|---|---|", *out]


def _records() -> list[str]:
    import engine_record_cases as vrec
    import sglang_record_cases as srec

    out = ["| engine | record | configs | points | not built by the engine here | "
           "known misses |", "|---|---|---|---|---|---|"]
    rows = [("vLLM 0.33.0", vrec.points(), vrec.RECORD, len(vrec.not_built()), vrec.KNOWN)]
    for gpu, (_, device, _) in vrec.GPU_RECORDS.items():   # tests/test_vllm_gemma4_blackwell.py
        path = vrec.gpu_record(gpu)
        refused = vrec.not_built(path)
        rows.append((f"vLLM 0.33.0 on {device}", vrec.points(path), path,
                     f"{len(refused)}: vLLM refuses the nvfp4 cache (no attention backend), "
                     "and so does kvfit", {}))
    rows.append(("SGLang 0.5.23", srec.points(), srec.RECORD, len(srec.not_built()), srec.KNOWN))
    for name, points, path, not_built, known in rows:
        configs = len({p.dir for p in points})
        out.append(f"| {name} | {path.relative_to(ROOT)} | {configs} | {len(points):,} | "
                   f"{not_built} | {', '.join(sorted(known)) or 'none'} |")
    return out


def render() -> str:
    records = acc.evaluate()
    lines = [
        "# Engine predictions against real start-ups",
        "",
        "Generated by `uv run python bench/accuracy_doc.py` (tests/test_accuracy_doc.py checks "
        "it is current). Each row is one public start-up log in `tests/fixtures/engine_logs/`, "
        "predicted by `kvfit explain-log` from the pinned config and the log's own flags. "
        "\"Given weights\" takes the loaded weights the log prints (where it prints them); "
        "\"end to end\" never takes a figure from the log, only the GPU and the flags. An error is "
        "(ours - log) / log. \"Fitted\" logs were used to fit a non-KV constant, so their "
        "errors are not independent; \"held out\" logs were not. Misses stay, with the reason.",
        "",
        "Six logs serve a quantized re-release (RedHatAI fp8-dynamic and w8a8 checkpoints) whose "
        "own config is not pinned here; their pinned config is the bf16 original, which declares "
        "no quantization. For those the end-to-end prediction is also given the served "
        "checkpoint's linear-weight format (fp8 or int8) as the engine reported it per layer "
        "('Using scheme: CompressedTensorsW8A8Fp8 / W8A8Int8' in the full log; the YAML's "
        "`served_quantization`, with where): a property of the checkpoint, not a memory figure. "
        "The last summary column leaves it out. `--quantization fp8` (vLLM quantizing a bf16 "
        "checkpoint while loading) is a flag, so every column applies it "
        "(kvfit/engines/load_quant.py).",
        "",
        "How logs are counted: \"held-out logs, all\" counts every held-out log, a log kvfit "
        "cannot predict as a miss; \"held-out logs kvfit can predict from the pinned inputs\" "
        "leaves out the logs marked \"not predicted\" in the table below, each for an input "
        "the log and its pinned config do not give (the GPU is not stated; a trimmed config "
        "without the field the spec needs and no weights printed), not for a kvfit error.",
        "",
        "The config column says whether the pinned config is the served checkpoint's own or a "
        "stand-in of the same geometry (its provenance YAML says why and what it lacks). A hit "
        "marked \"within 5%, with the non-KV constants extrapolated\" is predicted outside the "
        "regime those constants were fitted in (engine version, GPU, TP, batch settings): the "
        "log does not check them, and errors of opposite sign may cancel.",
        "",
        "## Summary",
        "",
        *_summary(records),
        "",
        "## Every log",
        "",
        *_log_rows(records),
        "",
        "## Held-out misses and caveats",
        "",
        "What each log's provenance YAML records about why it misses end to end (or, for a hit "
        "resting on extrapolated constants, why the hit is not evidence for them).",
        "",
        *_misses(records),
        "",
        "## Fitted non-KV constants",
        "",
        "The terms of the start-up budget not yet derived from the engines' code, as the "
        "engine specs (`specs/engines/*.yaml` `estimates`) state them, with the logs each was "
        "fitted on; those logs are the \"fitted\" set above, scored apart from the held-out "
        "ones. `uv run python bench/engine_accuracy.py --fit` refits them with leave-one-out "
        "errors.",
        "",
        *_constants(),
        "",
        "Session 11 (issue 24): the activation peak is derived from vLLM's code "
        "(kvfit/engines/vllm_activation.py: the encoder profile with its cached outputs, the "
        "forward pass over max_num_batched_tokens, the sampler over min(max_num_seqs, tokens) "
        "rows; the largest phase sets the peak). `activation_logits_copies` (3.799 x the fp32 "
        "sampler logits) is gone: the sampler's live tensors give 3.5 logits-sized copies plus "
        "the Triton buffer from the code. `activation_base_gib` (0.044 before) is now only the "
        "residual no term names, the mean of printed - derived over the same five logs. On the "
        "ten held-out logs from before session 11 that print the peak, the session-10 fit's "
        "mean absolute error was 8.1 %, 6 of them within 5 % (CodeLlama-7b -34.1 %, whose "
        "forward pass sets the peak; the fp32 run -13.9 %); the code-derived peak's is 4.3 %, 8 "
        "within 5 % (the fp32 run got worse, -20.8 %: no term explains its extra 0.5 GiB). "
        "The summary under the table below covers every held-out log that prints the peak. "
        "End to end, the held-out RTX 5090 run moved from +24 % to -7 % and the MTP run on "
        "2x RTX 3090 from -4 % to -29 % (each YAML's reason below); no other log crossed 5 %.",
        "",
        "## Activation peak: printed and derived",
        "",
        "Every log that prints vLLM's 'torch peak memory increase', with kvfit's code-derived "
        "peak (fitted residual included) and its phases; for a pipeline-parallel run, the "
        "stage of the worker whose line the log prints first (a later stage also keeps the "
        "intermediate tensors it receives; no term explains the first stage's extra 0.19 "
        "GiB).",
        "",
        *_activation(records),
        "",
        "## Recorded engine views",
        "",
        "Records made by the engines' own code (vLLM's KV-cache planner, SGLang's server-args "
        "resolution and pool configurator) on emulated GPUs, compared point by point with "
        "kvfit's engine model: block size, blocks, page bytes, tokens and concurrency (vLLM); "
        "memory fraction, cell bytes, tokens, SWA and Mamba pools and running requests (SGLang). "
        "The record tests fail on any miss outside the known causes listed here; "
        "`uv run python bench/engine_record_diff.py` and `bench/sglang_record_diff.py` print "
        "the per-check rates.",
        "",
        *_records(),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return write_or_check(argv, __file__, DOC, render)


if __name__ == "__main__":
    sys.exit(main())
