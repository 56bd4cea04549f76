"""The tools `kvfit mcp` serves: name, description (when an agent should use it), input
schema and the call, each a thin view of the public API (kvfit.api). No MCP SDK here.

A call returns (structured, text, exit code): the JSON the same question's `kvfit ... --json`
prints (a JSON object; a listing is wrapped in one), one paragraph an agent can quote, and the
CLI's exit code. Bad input is the API's typed exception (kvfit.KvfitError), carrying the CLI's
paragraph. The installed-engine check is not offered, nor a TOML preset (which may ask for it):
it starts programs (a named Python, the engine itself), which a tool an agent calls should not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

# A pasted start-up log is kilobytes to a few megabytes; anything longer is not one.
MAX_LOG_CHARS = 16 << 20


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    title: str
    description: str
    schema: Callable[[], dict]
    call: Callable[[dict, bool], tuple[dict, str, int]]   # (arguments, offline) -> answer
    open_world: bool = False       # may reach the Hugging Face Hub


def _api():
    from .. import api

    return api


def _object(properties: Mapping, required: tuple[str, ...] = ()) -> dict:
    return {"type": "object", "properties": dict(properties), "required": list(required),
            "additionalProperties": False}


# kvfit.plan's installed-engine check (--check-engine and its flags) and a TOML preset (which
# may ask for it): not over MCP.
NOT_OFFERED = frozenset({"check_engine", "engine_python", "engine_probe", "engine_timeout",
                          "engine_tp", "require_engine_pass", "config"})


def _options(schema: dict) -> dict:
    """The option properties of an API options schema, less those not offered."""
    return {k: v for k, v in schema.get("properties", {}).items() if k not in NOT_OFFERED}


def _offered(args: dict) -> dict:
    asked = sorted(NOT_OFFERED & set(args))
    model = args.get("model")
    if isinstance(model, str) and model.endswith(".toml"):
        asked.append("a *.toml preset as the model")
    if asked:
        from ..errors import UsageError
        raise UsageError(f"kvfit mcp does not run the installed-engine check nor read presets, "
                         f"which may ask for it ({', '.join(asked)}): it starts programs (the "
                         "serving environment's Python, the engine itself). Give the preset's "
                         "options as arguments, or run `kvfit MODEL --check-engine ...` in a "
                         "terminal.", fields=tuple(a for a in asked if a in NOT_OFFERED))
    return args


MODEL = {"type": "string", "minLength": 1,
         "description": "the checkpoint: a Hugging Face repo id (org/name, org/name@revision), "
                        "a Hub URL, a local checkpoint folder, config.json or GGUF file, or a "
                        "kvfit catalog id (see catalog_search)"}


def _plan_schema() -> dict:
    return _object({"model": MODEL} | _options(_api().plan_options_schema()), ("model",))


def _sweep_schema() -> dict:
    from ..api.options import SWEEP, schema

    return _object({"model": MODEL} | _options(schema(SWEEP)), ("model", "sweep"))


def _fit_schema() -> dict:
    from ..api.fitting import FIT
    from ..api.options import schema

    paths = {"type": "array", "items": {"type": "string"},
             "description": "local checkpoint folders to plan as well"}
    return _object(_options(schema(FIT)) | {"paths": paths})


def _explain_schema() -> dict:
    from ..api.explain import EXPLAIN
    from ..api.options import schema

    text = {"type": "string", "minLength": 1, "maxLength": MAX_LOG_CHARS,
            "description": "the engine's start-up log as text (vLLM or SGLang), from its first "
                           "line through the KV-cache and CUDA-graph lines"}
    return _object({"text": text} | _options(schema(EXPLAIN)), ("text",))


def _no_arguments() -> dict:
    return _object({})


def _search_schema() -> dict:
    return _object({
        "query": {"type": "string", "default": "",
                  "description": "a substring of the repo id, any letter case (e.g. qwen3, "
                                 "deepseek-v3, nvfp4); empty lists the whole catalog"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 10_000, "default": 20,
                  "description": "at most this many entries, best first"}})


def _plan(args: dict, offline: bool) -> tuple[dict, str, int]:
    from ..report.answer import plan_answer

    api, args = _api(), _offline(_offered(args), offline)
    _needs(args, "plan", "model", MODEL["description"])
    model = args.pop("model")
    report = api.plan(model, **args)
    text = plan_answer(report, api.command_line(model, **args))
    return report.to_json(), text, api.exit_code(report)


def _sweep(args: dict, offline: bool) -> tuple[dict, str, int]:
    from ..report.answer import sweep_answer

    api, args = _api(), _offline(_offered(args), offline)
    _needs(args, "sweep", "model", MODEL["description"])
    _needs(args, "sweep", "sweep", "one or two axes AXIS=V1,V2,... (e.g. context=8k,32k,128k)")
    model = args.pop("model")
    report = api.sweep(model, **args)
    text = sweep_answer(report, api.command_line(model, **args))
    return report.to_json(), text, api.exit_code(report)


def _fit(args: dict, offline: bool) -> tuple[dict, str, int]:
    from .answers import fit_answer

    api = _api()
    result = api.fit(**args)
    return result.to_json(), fit_answer(result.to_json()), api.exit_code(result)


def _explain(args: dict, offline: bool) -> tuple[dict, str, int]:
    from .answers import explain_answer

    api, args = _api(), dict(args)
    _needs(args, "explain_log", "text", "the engine's start-up log as text")
    text = args.pop("text")
    if isinstance(text, str) and len(text) > MAX_LOG_CHARS:
        from ..errors import UsageError
        raise UsageError(f"explain_log takes a start-up log of at most {MAX_LOG_CHARS:,} "
                         f"characters; this one has {len(text):,}. Give the start-up part "
                         "(through the KV-cache and CUDA-graph lines).", fields=("text",))
    result = api.explain_log(text, **args)
    return result.to_json(), explain_answer(result.to_json()), api.exit_code(result)


def _hardware(args: dict, offline: bool) -> tuple[dict, str, int]:
    _no_extra(args, "list_hardware")
    rows = _api().list_hardware().to_json()
    return {"hardware": rows}, (f"{len(rows)} accelerator presets: "
                                + ", ".join(r["id"] for r in rows) + "."), 0


def _systems(args: dict, offline: bool) -> tuple[dict, str, int]:
    _no_extra(args, "list_systems")
    rows = _api().list_systems().to_json()
    return {"systems": rows}, (f"{len(rows)} system presets: "
                               + ", ".join(f"{r['id']} ({r['accelerators']} x {r['hardware']})"
                                           for r in rows) + "."), 0


def _search(args: dict, offline: bool) -> tuple[dict, str, int]:
    rows = _api().catalog_search(**args).to_json()
    ids = ", ".join(r["repo_id"] for r in rows)
    return {"entries": rows}, (f"{len(rows)} catalog entries"
                               + (f": {ids}." if rows else ".")), 0


def _offline(args: dict, offline: bool) -> dict:
    """The call's arguments; `kvfit mcp --offline` makes every plan offline."""
    return dict(args) | ({"offline": True} if offline else {})


def _needs(args: dict, tool: str, name: str, what: str) -> None:
    if args.get(name) is None:
        from ..errors import UsageError
        raise UsageError(f"the {tool} tool needs `{name}`: {what}.", fields=(name,))


def _no_extra(args: dict, name: str) -> None:
    if args:
        from ..errors import UsageError
        raise UsageError(f"{name} takes no arguments; got {', '.join(sorted(args))}.")


PLAN = (
    "Will this exact Hugging Face checkpoint fit these GPUs (or complete systems) at this "
    "context for this many concurrent users? Use it for any 'can I serve / run MODEL on "
    "HARDWARE at CONTEXT for N users' question. Give `hardware` (an id from list_hardware) "
    "and `gpus`, or `system` (from list_systems) and `nodes`, or `systems` (several system "
    "ids: kvfit searches the fewest complete systems that hold the target); `context` "
    "(32768, 32k, 1m), `concurrent_users`, `kv_dtype` (fp8 halves a bf16 cache). Add "
    "`engine` vllm or sglang to answer with that engine's own KV pool and launch flags "
    "instead of the static bound; with an engine, `tune` true also recommends the engine "
    "settings that hold the most (batched tokens, running requests, block or page size, "
    "the memory fraction, capped by `tune_max_utilization`), what each costs and the launch "
    "command with them. The answer counts the architecture's exact per-sequence "
    "state (sliding windows, MLA latents, hybrid recurrent state) per rank for every TP x DP "
    "and attention-DP + EP layout, recommends one, and when it does not fit lists the "
    "smallest changes that would. Result: the full report (what `kvfit MODEL ... --json` "
    "prints) as structured content, and a paragraph to quote with the equivalent command.")
SWEEP = (
    "One checkpoint across several values of one or more settings at once, e.g. context "
    "8k/32k/128k or 1/2/4/8 GPUs: every combination is planned exactly as `plan` plans it. "
    "Use it to compare options side by side (which context or GPU count still fits, where "
    "fp8 KV starts to matter) instead of calling `plan` once per value. Takes `plan`'s "
    "options plus `sweep` (axes AXIS=V1,V2,...). Result: the report with its `sweep` cells "
    "(what `kvfit MODEL --sweep ... --json` prints) and a paragraph.")
FIT = (
    "Which checkpoints fit this machine? Plans every checkpoint of kvfit's offline catalog "
    "(and local checkpoint folders given in `paths`) on the given hardware, context and "
    "users with `plan`'s own code and lists those that fit, best first (most resident "
    "sequences), with their layout, weights and quantized siblings. Use it when the user has "
    "hardware and asks what they can run; narrow it with `family` (an organisation or "
    "model_type such as Qwen, qwen3, deepseek_v3); with `engine`, `tune` true plans each "
    "with the settings that hold the most and names those it changed. Result: what `kvfit fit ... --json` "
    "prints, and a paragraph naming the best three.")
EXPLAIN = (
    "Explain a vLLM or SGLang start-up log: each number the engine printed (GPU total, "
    "weights, activation peak, available KV memory, num_gpu_blocks / max_total_num_tokens, "
    "maximum concurrency) beside kvfit's prediction for the same model, version and flags, "
    "with the engine rule (file:line) it comes from. Use it when a user pastes an engine log "
    "and asks why the KV cache or concurrency is what it is, or whether kvfit agrees. Give "
    "the log as `text` and the model's config (`model_dir` or `config`, a local path); flags "
    "the log does not state (tp, engine_version, hardware) can be given. Result: what "
    "`kvfit explain-log LOG --json` prints, and a paragraph naming the largest differences.")
LIST_HARDWARE = (
    "The accelerator presets kvfit knows: id, aliases, nominal and driver-visible memory. "
    "Use it to turn a user's 'H100', '4090' or 'Spark' into the `hardware` id that plan, "
    "sweep and fit take. Result: what `kvfit --list-hardware --json` prints, under "
    "`hardware`.")
LIST_SYSTEMS = (
    "The complete-system presets kvfit knows (DGX/HGX nodes, GB200/GB300 NVL racks, ...): "
    "accelerators per node, scale-up domain and scale-out fabric. Use it to pick `system` or "
    "`systems` ids for plan when the user speaks of nodes or racks rather than GPUs. Result: "
    "what `kvfit --list-systems --json` prints, under `systems`.")
CATALOG_SEARCH = (
    "Search kvfit's offline catalog of pinned checkpoint metadata by a substring of the repo "
    "id, best first. Use it to find the exact `model` id for plan (e.g. 'glm', 'qwen3-32b', "
    "'deepseek-v3'), or to see which checkpoints kvfit answers without the Hub. Result: the "
    "matching entries under `entries`.")

TOOLS: dict[str, Tool] = {t.name: t for t in (
    Tool("plan", "Plan a model on GPUs", PLAN, _plan_schema, _plan, open_world=True),
    Tool("fit", "What fits this hardware", FIT, _fit_schema, _fit),
    Tool("sweep", "Plan a model across settings", SWEEP, _sweep_schema, _sweep,
         open_world=True),
    Tool("explain_log", "Explain an engine start-up log", EXPLAIN, _explain_schema, _explain),
    Tool("list_hardware", "Accelerator presets", LIST_HARDWARE, _no_arguments, _hardware),
    Tool("list_systems", "System presets", LIST_SYSTEMS, _no_arguments, _systems),
    Tool("catalog_search", "Search the offline catalog", CATALOG_SEARCH, _search_schema,
         _search),
)}
