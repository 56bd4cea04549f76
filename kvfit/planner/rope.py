"""RoPE scaling the deployment serves with: `--rope-scaling JSON` (or vLLM's `--hf-overrides
'{"rope_scaling": {...}}'`, SGLang's `--json-model-override-args`, or a preset's rope_scaling
table) raises the declared maximum context to factor x original_max_position_embeddings
(the original defaults to the config's declared maximum). A RoPE scaling the config itself
declares is only reported (sections.rope_warning): the config's maximum already includes it.

How the engines derive their maximum from a stated rope_scaling, and why kvfit's launch
command also overrides max_position_embeddings to the raised maximum:

- vLLM 0.33 (vllm/config/model.py:2599-2634, `_get_and_verify_max_len`): the derived
  max_model_len is max_position_embeddings, multiplied by `factor` except for rope types
  su, longrope, llama3, yarn, deepseek_yarn and deepseek_llama_scaling (and gemma3 models),
  which it takes as already scaled; a longer --max-model-len is refused
  (model.py:2657-2683) unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. `--hf-overrides` dict values
  are set as config attributes (model.py:555-570, 691-692); flat values go through
  config.update (transformers_utils/config.py:989-991).
- SGLang 0.5.23 (sglang/srt/utils/hf_transformers/common.py:677-694, `get_context_length`):
  factor x max_position_embeddings, except factor 1 when rope_scaling has
  original_max_position_embeddings or is llama3; a longer --context-length is refused
  (srt/configs/model_config.py:1291-1316) unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1.
  `--json-model-override-args` (srt/arg_groups/fields/model.py:152-155) merges a
  rope_scaling dict into the config's own and sets other keys
  (srt/utils/hf_transformers/config.py:405-424).

So for YaRN with original_max_position_embeddings (the common case) neither engine raises
its maximum from rope_scaling alone: the command states max_position_embeddings too.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from ..errors import UsageError
from ..numbers import shown

EXAMPLE = '{"rope_type":"yarn","factor":4,"original_max_position_embeddings":32768}'
RULE = "factor x original_max_position_embeddings (the original defaults to the declared maximum)"


def engine_notes() -> dict:
    """{engine id: how it reads a stated rope_scaling} (Engine.rope_note)."""
    from ..engines import engines
    return {e.id: e.rope_note for e in engines() if e.rope_note}


def _json(text, flag: str):
    if isinstance(text, dict):
        return text
    try:
        return json.loads(text)
    except (TypeError, ValueError, RecursionError) as exc:
        raise UsageError(f"{flag} {shown(text)} is not valid JSON ({exc}).",
                         hint=f"Write it as {flag} '{EXAMPLE}'.") from None


def parse_rope(text, flag: str = "--rope-scaling") -> dict:
    """The rope_scaling dict from JSON text (or a preset table), checked."""
    rope = _json(text, flag)
    if not isinstance(rope, dict) or not rope:
        raise UsageError(f"{flag} must be a JSON object such as '{EXAMPLE}'.")
    kind = rope.get("rope_type", rope.get("type"))
    if not isinstance(kind, str) or not kind:
        raise UsageError(f"{flag} needs a rope_type (yarn, linear, dynamic, longrope, llama3, "
                         "...).", hint=f"For example '{EXAMPLE}'.")
    factor = rope.get("factor")
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not (
            math.isfinite(factor) and 1 <= factor <= 1024):
        raise UsageError(f"{flag}: factor must be a number between 1 and 1024, got "
                         f"{factor!r}.", hint=f"For example '{EXAMPLE}'.")
    orig = rope.get("original_max_position_embeddings")
    if orig is not None and (isinstance(orig, bool) or not isinstance(orig, int) or orig < 1):
        raise UsageError(f"{flag}: original_max_position_embeddings must be a whole number of "
                         f"tokens, got {orig!r}.")
    odd = sorted(k for k, v in rope.items() if isinstance(v, float) and not math.isfinite(v))
    if odd:                 # the engines get this object as JSON, which cannot carry inf / nan
        raise UsageError(f"{flag}: {', '.join(map(str, odd))} is not a finite number.")
    return rope


def from_overrides(text, flag: str) -> dict:
    """The rope_scaling of an engine's config-override JSON (--hf-overrides and kin)."""
    doc = _json(text, flag)
    other = sorted(set(doc) - {"rope_scaling"}) if isinstance(doc, dict) else []
    if other:
        raise UsageError(f"{flag} sets {', '.join(other)}: kvfit models only rope_scaling from "
                         "config overrides; other keys would change what it counts.",
                         hint="Drop them, or edit the checkpoint's config.json and plan that.")
    if not isinstance(doc, dict) or "rope_scaling" not in doc:
        raise UsageError(f"{flag}: kvfit reads only a rope_scaling object from it.",
                         hint=f"Write {flag} '{{\"rope_scaling\": {EXAMPLE}}}'.")
    return parse_rope(doc["rope_scaling"], f"{flag} rope_scaling")


@dataclass(frozen=True, slots=True)
class Scaling:
    """A stated RoPE scaling: the dict as given, where it came from, and the raised maximum."""

    rope: dict
    source: str
    declared: int | None
    original: int
    max_tokens: int

    def factor_text(self) -> str:
        kind = self.rope.get("rope_type", self.rope.get("type"))
        return (f"RoPE {kind} factor {self.rope['factor']:g} x original "
                f"{self.original:,} = {self.max_tokens:,}")

    def section(self) -> dict:
        """The report's `rope_scaling` (next to context_tokens / max_context_tokens)."""
        return {"stated": dict(self.rope), "source": self.source,
                "rope_type": self.rope.get("rope_type", self.rope.get("type")),
                "factor": self.rope["factor"], "original_max_position_embeddings": self.original,
                "declared_max_tokens": self.declared, "max_context_tokens": self.max_tokens,
                "rule": RULE, "engines": engine_notes()}

    def override(self) -> str:
        """The config override both engines take: rope_scaling plus max_position_embeddings."""
        rope = dict(self.rope)
        rope.setdefault("original_max_position_embeddings", self.original)
        return json.dumps({"rope_scaling": rope, "max_position_embeddings": self.max_tokens},
                          separators=(",", ":"))


def scaling(rope: dict | None, source: str | None, declared: int | None,
            warnings: list[str], config_rope=None) -> Scaling | None:
    """The raised maximum for a stated rope_scaling (None when none was stated).

    config_rope: the config's own rope_scaling; a stated one replaces it in the engines'
    config (vLLM sets the attribute; SGLang merges the keys into it)."""
    if not rope:
        return None
    if isinstance(config_rope, dict) and config_rope:
        warnings.append(f"The config already declares rope_scaling {json.dumps(config_rope)}; "
                        f"the stated one ({source}) replaces it (SGLang merges its keys into "
                        "the config's), and its factor counts from the declared maximum.")
    orig = rope.get("original_max_position_embeddings") or declared
    if orig is None:
        raise UsageError("the config declares no maximum context, so the RoPE scaling needs "
                         "original_max_position_embeddings.", hint=f"For example '{EXAMPLE}'.")
    raised = int(rope["factor"] * orig)
    if declared is not None and raised <= declared:
        warnings.append(f"The stated RoPE scaling ({source}) gives {raised:,} tokens, not more "
                        f"than the declared maximum {declared:,}; the declared maximum stands.")
        raised = declared
    return Scaling(rope, source or "--rope-scaling", declared, orig, raised)


def how_to_state(ctx: int, declared: int) -> str:
    """The refusal's hint for a context beyond the declared maximum."""
    factor = math.ceil(ctx / declared)
    rope = (f'{{"rope_type":"yarn","factor":{factor},'
            f'"original_max_position_embeddings":{declared}}}')
    return (f"If the deployment serves it with RoPE scaling (see the model card), state it: "
            f"--rope-scaling '{rope}' (factor x original >= {ctx:,}; vLLM's --hf-overrides "
            "'{\"rope_scaling\": ...}' and SGLang's --json-model-override-args are accepted "
            "too). Or use --allow-context-overflow to plan it anyway; the result is then "
            "labelled hypothetical.")
