"""The `kvfit MODEL ...` argument parser: the one definition of a plan's options, read by the
CLI and by the Python API (kvfit.api: keywords are the flags' destinations). Every flag's help
says what it means and its unit."""

from __future__ import annotations

import argparse

from .. import __version__
from ..numbers import flag


def add_offline(p: argparse.ArgumentParser, what: str) -> None:
    """--offline on a subcommand (every kvfit command takes it); `what`: what it does there."""
    p.add_argument("--offline", action="store_true", help=what)


class Parser(argparse.ArgumentParser):
    """argparse with kvfit's one-paragraph usage errors (exit 2); an epilog given as a function
    is composed only when help is formatted."""

    def error(self, message):
        from ..errors import UsageError
        raise UsageError(message, hint=f"See `{self.prog} --help`.")

    def format_help(self) -> str:
        if callable(self.epilog):
            self.epilog = self.epilog()
        return super().format_help()


# argparse's RawDescriptionHelpFormatter: descriptions and epilogs keep their own line breaks
Formatter = argparse.RawDescriptionHelpFormatter


def build_parser(epilog=None) -> argparse.ArgumentParser:
    """The plan parser; epilog: its help's closing text, or a function composing it (the CLI's
    exit codes and examples, kvfit.cli.helptext)."""
    p = Parser(prog="kvfit", formatter_class=Formatter,
               argument_default=argparse.SUPPRESS, epilog=epilog,
               description="Will this exact checkpoint fit these accelerators at this context "
               "and concurrency? kvfit counts the checkpoint's weights and the exact per-sequence "
               "state its architecture keeps (KV, sliding windows, latent, recurrent), per rank, "
               "for every TP x DP layout, and says why a layout fits or not.")
    p.add_argument("model", nargs="?", help="checkpoint directory, config.json, Hub id "
                   "(org/name[@rev]), Hub URL, or a *.toml preset")
    p.add_argument("--version", action="version", version=f"kvfit {__version__}")
    p.add_argument("--config", metavar="FILE", help="TOML preset; command-line flags override it")
    g = p.add_argument_group("model")
    g.add_argument("--revision", help="Hub branch, tag or commit (also org/name@rev)")
    g.add_argument("--context", help="tokens per sequence: 32768 exact, or 32k / 1m (powers of "
                   "1024: 90k = 92,160). Default: the declared maximum")
    g.add_argument("--allow-context-overflow", action="store_true",
                   help="plan beyond the declared maximum context (labelled hypothetical)")
    g.add_argument("--rope-scaling", metavar="JSON", help="the RoPE scaling the deployment "
                   "serves with, e.g. '{\"rope_type\":\"yarn\",\"factor\":4,"
                   "\"original_max_position_embeddings\":32768}': raises the declared maximum "
                   "context to factor x original (default original: the declared maximum) and "
                   "is passed on in --print-command")
    g.add_argument("--kv-dtype", help="cache dtype: auto (checkpoint declaration, else model "
                   "dtype), bf16, fp16, fp32, fp8, fp8_e4m3, fp8_e5m2, int8, mxfp4, nvfp4")
    g.add_argument("--index-dtype", help="sparse-indexer key dtype (default: same as KV); fp4 where the "
                   "architecture's indexer takes one 4-bit format (DeepSeek-V4: mxfp4)")
    g.add_argument("--weight-gib", type=flag("weight_gib"), help="override checkpoint weight size (GiB)")
    g.add_argument("--cache-layout", help="engine storage layout of the state (see the spec)")
    g.add_argument("--mtp", action="store_true", help="count declared MTP (draft) layers")
    g.add_argument("--offline", action="store_true", help="never contact the Hub (answer from "
                   "the local cache or kvfit's pinned catalog)")
    g.add_argument("--verify-headers", action="store_true", help="read the safetensors headers "
                   "(HTTP Range requests on the Hub): tensor bytes per dtype, and refuse "
                   "weights that miss a declared layer")
    g.add_argument("--timeout", type=flag("timeout"), help="seconds for all of the plan's Hub requests, "
                   "counted from kvfit's start (default 10)")
    h = p.add_argument_group("hardware and layout")
    h.add_argument("--hardware", help="accelerator preset (h100-80, b300-288, dgx-spark, ...; "
                   "any letter case), custom:<GiB>, or auto: the local GPUs nvidia-smi reports, "
                   "mapped to their preset (all of them unless --gpus is smaller)")
    h.add_argument("--gpus", type=flag("gpus"), help="number of accelerators (default 1); with "
                   "--min-gpus, the largest count tried (default 1024)")
    h.add_argument("--system", help="a complete system preset (dgx-h100, dgx-b300, gb200-nvl72, "
                   "dgx-spark, ...; see --list-systems); not with --hardware or --gpus")
    h.add_argument("--nodes", type=flag("nodes"), help="number of complete systems with --system "
                   "(default 1)")
    h.add_argument("--tp", help="tensor-parallel size: auto (every divisor) or N; the other "
                   "GPUs form DP replicas. With --parallelism sglang-dpa / vllm-dp-ep, N is "
                   "also the model-group (EP) size")
    h.add_argument("--pp", type=flag("pp"), metavar="N", help="pipeline-parallel stages per replica "
                   "(default 1): each stage holds a contiguous run of decoder layers (the engine's "
                   "split: vLLM's, or SGLang's under --engine sglang), its weights and its "
                   "layers' KV; the fullest stage binds. Layouts become TP x PP x DP (plain TP "
                   "only)")
    h.add_argument("--pp-layer-partition", metavar="N,N,...", help="decoder layers per "
                   "pipeline stage instead of the engine's even split (vLLM's "
                   "VLLM_PP_LAYER_PARTITION, SGLang's SGLANG_PP_LAYER_PARTITION), e.g. 16,32")
    from ..engines import parallelisms
    h.add_argument("--parallelism", choices=["tp", *parallelisms()],
                   help="tp (default): TP x DP only. sglang-dpa: also SGLang attention-DP with "
                   "expert parallelism (--attn-dp-size, --ep-size); vllm-dp-ep: vLLM "
                   "--data-parallel-size with --enable-expert-parallel. Both need the "
                   "routed-expert bytes: safetensors headers, a pinned "
                   "checkpoint-tensor-split.json, or the spec's parameters estimate "
                   "(labelled); non-expert tensors are split over each attention group")
    h.add_argument("--utilization", type=flag("utilization"), help="fraction of each GPU's memory to budget "
                   "(default 0.9)")
    h.add_argument("--runtime-reserve-gib", type=flag("runtime_reserve_gib"),
                   help="fixed GiB per GPU kept out of "
                   "the budget for runtime overheads (default 0)")
    h.add_argument("--memory-basis", choices=["visible", "nominal", "free"], help="budget "
                   "from the memory the driver reports (default; e.g. 275,040 MiB = 268.6 GiB "
                   "for a B300 sold as 288 GB), the nominal size, or (with --hardware auto) the "
                   "memory nvidia-smi reports free on the least free GPU now; unified-memory "
                   "parts use their documented planning default")
    h.add_argument("--device-memory-gib", type=flag("device_memory_gib"),
                   help="memory per accelerator in GiB, "
                   "overriding both bases")
    h.add_argument("--concurrent-users", "--users", type=flag("concurrent_users"), metavar="N",
                   help="users to serve at once (default 1)")
    h.add_argument("--active-sequences-per-user", "--branches", metavar="N",
                   type=flag("active_sequences_per_user"), help="resident full-context "
                   "sequences (branches) per user (default 1)")
    h.add_argument("--list-hardware", action="store_true", help="list accelerator presets")
    h.add_argument("--list-systems", action="store_true", help="list system presets with their "
                   "accelerators, scale-up domains and memory domains")
    q = p.add_argument_group("questions")
    q.add_argument("--systems", nargs="+", metavar="ID", help="search these system families "
                   "for the fewest complete systems that hold the target (not with --hardware, "
                   "--gpus, --system or --nodes)")
    q.add_argument("--max-nodes", type=flag("max_nodes"), help="largest node count --systems tries "
                   "(default 8)")
    q.add_argument("--max-context", action="store_true", help="the longest context (up to "
                   "--context, default the declared maximum) at which the target still fits, "
                   "per layout")
    q.add_argument("--min-gpus", action="store_true", help="the fewest accelerators of "
                   "--hardware that hold the target (tries 1..--gpus)")
    q.add_argument("--sweep", action="append", metavar="AXIS=V1,V2,...", help="answer a grid "
                   "in one run: one plan per value of AXIS (context: 8k,32k,128k,1m as "
                   "--context takes them; users; gpus; nodes; kv-dtype: bf16,fp8,...), each "
                   "by the plan's capacity model (the engine's with --engine); a second "
                   "--sweep makes a 2-D grid. Prints a table (rows = values, max resident "
                   "sequences and verdict per layout, the recommended layout); --json adds a "
                   "`sweep` object. Exit 0 every cell meets the target, 1 some cell does not, "
                   "5 some cell could not be judged (and none failed)")
    q.add_argument("--tune", action="store_true", help="with --engine: search the engine's "
                   "settings (batched tokens / chunked prefill, max sequences, block or page "
                   "size, prefix caching, speculative tokens, memory fraction) for the one that "
                   "holds the target with the most headroom; prints what each costs and the "
                   "launch command")
    q.add_argument("--tune-max-utilization", type=flag("tune_max_utilization"), metavar="U",
                   help="highest memory fraction --tune may choose (default: the engine's own "
                   "default, never raised)")
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="machine-readable report "
                   "(schemas/report.schema.json)")
    o.add_argument("--plot", metavar="FILE.png|FILE.svg", help="also draw the answer: max "
                   "resident sequences per layout along the --sweep axis with the target line, "
                   "and a stacked per-rank memory bar per layout (weights, state, reserve, "
                   "engine overheads, free); needs matplotlib (the optional `plot` extra: `uv sync "
                   "--extra plot` in a source checkout). The plotted series are embedded in the "
                   "file's metadata")
    o.add_argument("--verbose", action="store_true", help="text report with the provenance: "
                   "every config field and where it came from, layer sets, dtype sources, "
                   "checkpoint details, every layout's engine block and the assumptions (--json "
                   "always has all of it)")
    _check_args(p)
    from ..engines import engine_args
    engine_args(p)
    return p


def _check_args(p: argparse.ArgumentParser) -> None:
    """The installed-engine preflight flags (kvfit.preflight)."""
    c = p.add_argument_group("installed engine check (--check-engine)")
    from ..preflight.options import probed
    c.add_argument("--check-engine", choices=[*probed(), "all"], help="ask the vLLM "
                   "and/or SGLang installed in --engine-python whether it accepts this "
                   "checkpoint: architecture, quantization and KV/index-cache dtypes (no "
                   "--hardware needed; with it the report has both)")
    c.add_argument("--engine-python", metavar="PATH", help="the serving environment's Python "
                   "(default: the interpreter running kvfit)")
    c.add_argument("--engine-probe", choices=["registry", "config", "load"], help="registry: "
                   "read the engine's registries only; config (default): also let the engine "
                   "parse the config and resolve its class (no weights, no allocation); load: "
                   "start the engine on a CUDA host, download missing weights and generate one "
                   "token")
    c.add_argument("--engine-timeout", type=flag("engine_timeout"), metavar="SECONDS",
                   help="stop a probe after "
                   "this many seconds (default 300); a timeout exits 2")
    c.add_argument("--engine-tp", type=flag("engine_tp"), metavar="N", help="tensor-parallel size the engine "
                   "is checked at (default: --tp, else --gpus, else 1)")
    c.add_argument("--require-engine-pass", action="store_true", help="exit 3 unless every "
                   "requested engine gets preflight-pass (or smoke-pass with load)")
