#!/usr/bin/env python
"""Parse SGLang launch commands with SGLang's own argument parser, on CPU.

stdin:  a JSON list of command strings, e.g.
        ["python -m sglang.launch_server --model-path X --tp-size 8 ...", ...]
stdout: one JSON object per command (JSON lines), in input order.

What it runs (SGLang 0.5.23, in an environment with sglang==0.5.23 installed with --no-deps plus a CPU torch):
  * sglang.srt.server_args.prepare_server_args(argv) -- exactly what
    `python -m sglang.launch_server` calls (launch_server.py), which builds the
    argparse parser with ServerArgs.add_cli_args, parses, and returns
    ServerArgs.from_cli_args(...). It does NOT resolve: ServerArgs.__post_init__
    is a no-op; resolution (resolve_once -> run_resolution_pipeline) is what
    needs the model config / GPU, and it is not run.
  * Two resolution steps that need neither GPU nor network are then replayed
    on the record, to report the effective layout:
      - arg_groups/parallel_hook.handle_deprecated_dp_attention
        (`--dp-size N --enable-dp-attention` -> attn_dp_size=N, dp_size=1);
      - the speculative-algorithm upper-casing + alias
        (speculative_hook.handle_speculative_decoding upper-cases, and
        _resolve_speculative_algorithm_alias maps NEXTN -> EAGLE); replayed via
        SpeculativeAlgorithm.from_string, which applies the same alias, because
        importing speculative_hook pulls in transformers/torchvision. The Gemma4
        assistant-draft promotion to FROZEN_KV_MTP needs the draft's HF config,
        so when --speculative-draft-model-path is given the alias step is done
        without looking at the draft (flagged in "notes").
    Auto-chosen speculative defaults (steps/topk/draft tokens when unset), the
    topk==1 draft-token adjustment, the default mem_fraction_static, etc. all
    need the model config or GPU and are NOT computed: unset values print as
    null in "resolved" too.

Each output line: {"index", "command", "ok", "raw": {...}, "resolved": {...},
"warnings": [...], "notes": [...]} or {"index", "command", "ok": false,
"error": "..."}.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import shlex
import sys

FIELDS = [
    "model_path",
    "revision",
    "tp_size",
    "dp_size",
    "attn_dp_size",
    "enable_dp_attention",
    "ep_size",
    "pp_size",
    "mem_fraction_static",
    "kv_cache_dtype",
    "context_length",
    "speculative_algorithm",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_draft_model_path",
    "nnodes",
    "node_rank",
    "dist_init_addr",
    "host",
    "port",
    "json_model_override_args",
]

ENTRYPOINTS = (
    ("python", "-m", "sglang.launch_server"),
    ("python3", "-m", "sglang.launch_server"),
    ("sglang", "serve"),
)


def _strip_entrypoint(tokens: list[str]) -> list[str]:
    # Drop leading VAR=value environment assignments.
    while tokens and "=" in tokens[0] and not tokens[0].startswith("-"):
        tokens = tokens[1:]
    for ep in ENTRYPOINTS:
        n = len(ep)
        head = tokens[:n]
        if len(head) == n and head[0].rsplit("/", 1)[-1] == ep[0] and head[1:] == list(ep[1:]):
            return tokens[n:]
    return tokens


class _ListHandler(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record):
        msg = record.getMessage()
        # Strip ANSI colour codes used by print_deprecated_warning.
        for code in ("\033[1;33m", "\033[0m"):
            msg = msg.replace(code, "")
        self.messages.append(msg)


def _jsonable(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return repr(v)


def _deprecated_dp_attention_rewrite(sa, notes: list) -> None:
    """Replay arg_groups/parallel_hook.py:39-61 (handle_deprecated_dp_attention).

    The real hook is used when it imports; in a light venv it does not, because
    parallel_hook imports sglang.srt.configs, which imports torchvision. The
    fallback restates the same three decisions, declared the same way.
    """
    from sglang.srt.arg_groups.overrides import declare_resolution, resolving_view

    try:
        from sglang.srt.arg_groups.parallel_hook import handle_deprecated_dp_attention
    except ImportError as e:
        notes.append(
            f"parallel_hook not importable ({e}); replayed "
            "handle_deprecated_dp_attention (parallel_hook.py:39-61) inline"
        )
    else:
        handle_deprecated_dp_attention(sa)
        return
    cfg = resolving_view(sa)
    if not cfg.enable_dp_attention:
        return
    if cfg.attn_dp_size == 1:
        declare_resolution(
            sa,
            "_handle_deprecated_dp_attention",
            attn_dp_size=cfg.dp_size,
            dp_size=1,
        )
    declare_resolution(sa, "_handle_deprecated_dp_attention", enable_dp_attention=False)


def probe_one(command: str) -> dict:
    from sglang.srt.arg_groups.arg_utils import record_fields
    from sglang.srt.arg_groups.overrides import declare_resolution, resolution_result
    from sglang.srt.server_args import prepare_server_args

    # speculative_hook itself imports the model-config stack (transformers,
    # torchvision); SpeculativeAlgorithm.from_string applies the same
    # NEXTN -> EAGLE alias (speculative/spec_info.py:50-65,
    # spec_registry.py:183) without it.
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    argv = _strip_entrypoint(shlex.split(command))
    handler = _ListHandler()
    root = logging.getLogger()
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            # prepare_server_args calls logging.basicConfig(force=True), which
            # replaces root handlers; the argparse actions' warnings are logged
            # during parse_args, i.e. before that, so attach first and re-attach.
            root.addHandler(handler)
            try:
                sa = prepare_server_args(argv)
            except SystemExit as e:
                text = stderr.getvalue().strip()
                err_lines = [ln for ln in text.splitlines() if "error:" in ln]
                err = "\n".join(err_lines) or text or f"argparse exit {e.code}"
                return {"ok": False, "error": err, "warnings": handler.messages}
            finally:
                for h in list(root.handlers):
                    if h is not handler:
                        root.removeHandler(h)
                if handler not in root.handlers:
                    root.addHandler(handler)

            raw = {f: _jsonable(getattr(sa, f, None)) for f in FIELDS}
            notes = []

            # Replay the CPU-only resolution steps (see module docstring).
            sa._raw_input = {
                field.name: getattr(sa, field.name) for field in record_fields(type(sa))
            }
            sa._resolved_overrides = []
            _deprecated_dp_attention_rewrite(sa, notes)
            algo = resolution_result(sa, "speculative_algorithm")
            if algo is not None:
                draft = resolution_result(sa, "speculative_draft_model_path")
                if draft:
                    notes.append(
                        "speculative_draft_model_path set: alias resolved without "
                        "reading the draft config (Gemma4 assistant drafts would "
                        "become FROZEN_KV_MTP)"
                    )
                upper = algo.upper()
                try:
                    parsed = SpeculativeAlgorithm.from_string(upper)
                    final = (
                        parsed.name if isinstance(parsed, SpeculativeAlgorithm) else upper
                    )
                except ValueError as e:
                    final = upper
                    notes.append(f"speculative_algorithm: {e}")
                declare_resolution(
                    sa, "probe.speculative_alias", speculative_algorithm=final
                )
            resolved = {f: _jsonable(resolution_result(sa, f)) for f in FIELDS}
            # Cheap checks resolution would make (handle_data_parallelism,
            # arg_groups/parallel_hook.py:282-292); reported, not raised.
            a, d = resolved["attn_dp_size"], resolved["dp_size"]
            if a is not None and a < 1:
                notes.append("resolution would reject: --attn-dp-size must be positive")
            if a and d and a > 1 and d > 1:
                notes.append(
                    "resolution would reject: --dp-size > 1 with --attn-dp-size > 1 "
                    "(replicas combined with attention DP are not supported)"
                )
    finally:
        root.removeHandler(handler)
    return {
        "ok": True,
        "raw": raw,
        "resolved": resolved,
        "warnings": handler.messages,
        "notes": notes,
    }


def main() -> int:
    commands = json.load(sys.stdin)
    if isinstance(commands, str):
        commands = [commands]
    import sglang

    version = getattr(sglang, "__version__", None)
    for i, cmd in enumerate(commands):
        try:
            out = probe_one(cmd)
        except Exception as e:  # report, keep going
            out = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        out = {"index": i, "command": cmd, "sglang_version": version, **out}
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
