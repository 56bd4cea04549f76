"""The engine seam: what the planner, the launch command, calibration and the preflight ask of
a serving engine. vLLM (kvfit.engines.vllm_engine) and SGLang (kvfit.engines.sglang_engine)
implement it; kvfit.engines.get(name) returns the one a request names.

An implementation keeps its numbers and spellings in its spec (specs/engines/<id>.yaml) and
its rules' meaning in its own modules; this class only names the questions. Methods with a
body are defaults an engine may keep (no such feature, no such text).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DpaProfile:
    """An engine's attention-DP + expert-parallel layout mode (`--parallelism <name>`).

    label / flags: templates over {a} attention groups, {t} attention TP, {g} model group;
    default_page / latent_page: tokens of the padding page each attention-DP pool holds;
    predict_at: "attention" when the engine's prediction runs at the attention TP (every DP
    engine sizes its own pool), "group" when it runs at the model group with the attention-DP
    size passed as flag `attention_dp_flag`; selected_by: the engine's own flag that selects
    this mode.
    """

    name: str
    engine: str
    label: str
    flags: str
    default_page: int
    latent_page: int
    padding_rule: str
    predict_at: str = "attention"
    attention_dp_flag: str | None = None
    selected_by: str = ""

    def prediction_layout(self, tp: int, attention_tp: int, attention_dp: int, flags: dict
                          ) -> tuple[int, dict]:
        """(TP the engine predicts at, its flags) for one layout of this mode (model group
        `tp` of `attention_dp` attention groups of `attention_tp` GPUs)."""
        if self.predict_at == "attention":
            return attention_tp, flags
        if self.attention_dp_flag:
            flags = flags | {self.attention_dp_flag: attention_dp}
        return tp, flags


@dataclass(frozen=True, slots=True)
class TuneFacts:
    """What an engine needs to name its tunable settings for one plan (`--tune`).

    inputs: the prediction inputs (kvfit.engines.common.Inputs) of the plan's first layout,
    for the engine's own defaults (GPU tier, block, page); speculative: the speculative tokens
    the user asked for (0: none asked, so none offered); utilization_cap:
    --tune-max-utilization (None: the engine's default memory setting, never raised);
    stated: the engine flags the user gave (held, not searched); tp_sizes: the TP sizes of the
    plan's layouts."""

    inputs: object
    speculative: int
    utilization_cap: float | None
    stated: frozenset
    tp_sizes: tuple[int, ...] = (1,)


@dataclass(frozen=True, slots=True)
class Tunable:
    """One engine setting `--tune` searches: its flag (`key` in the engine's flags, `spelling`
    on its command line), the engine's default (`default`, shown as `default_text`; None in
    `candidates` leaves the flag unset), the values to try in the engine's order of preference,
    and what moving away from the default costs besides memory (`tradeoff`, a warning; empty
    when nothing). key "utilization" is the memory fraction: the engine's utilization_flag, or
    the plan's utilization when it has none."""

    key: str
    spelling: str
    label: str
    default: object
    default_text: str
    candidates: tuple
    rule: str
    tradeoff: str = ""
    context: bool = False       # the setting is max_model_len: its default is judged by refusal
    texts: tuple = ()           # (value, how it reads) where the value alone misleads


def halvings(top: int, floor: int) -> tuple[int, ...]:
    """top, top / 2, ... while at least `floor` (whole numbers)."""
    out = []
    while top >= floor and top > 0:
        out.append(top)
        top //= 2
    return tuple(out)


def memory_tunable(key: str, spelling: str, default, default_text: str, cap: float | None,
                   rule: str) -> Tunable:
    """The memory fraction: held at the engine's default unless the user set a cap; with a cap
    the default is tried only when it stays under it (never raised silently)."""
    if cap is None:
        values: tuple = (None,)
    elif default is not None and default <= cap:
        values = (None, cap) if cap > default else (None,)
    else:
        values = (cap,)
    return Tunable(key, spelling, "memory fraction", default, default_text, values,
                   rule + ("" if cap is None else f"; capped at --tune-max-utilization {cap:g}"))


def speculative_tunable(asked: int) -> Tunable:
    """Speculative tokens from the asked number down to 1 (never added, never raised)."""
    return Tunable("num_speculative_tokens", "--num-speculative-tokens", "speculative tokens",
                   asked, f"{asked} (asked)", tuple(range(asked, 0, -1)),
                   "the user's speculation (--mtp / --num-speculative-tokens), fewer tried: each "
                   "draft token holds state per request",
                   "fewer speculative tokens per step: less speculative speed-up")


class Engine(ABC):
    """One serving engine. `id` is its spec's id (specs/engines/<id>.yaml), `title` its name
    in sentences ("vLLM")."""

    id: str = ""
    title: str = ""
    dpa: DpaProfile | None = None       # its attention-DP + EP mode, if kvfit models one
    # --utilization as the engine's own flag (vLLM: gpu_memory_utilization); None: the stated
    # utilization reaches the prediction as Inputs.utilization and the engine converts it
    utilization_flag: str | None = None
    memory_flag: str | None = None      # the memory knob a launch sets (calibration)
    rope_note: str | None = None        # how it reads a stated rope_scaling (kvfit.planner.rope)
    suggests_pp: bool = True            # a plan under it may suggest pipeline stages
    # (flag, its spelling, noun) that trades prefix reuse for fewer recurrent slots per request
    prefix_cache_off: tuple[str, str, str] | None = None
    pp_binding_note: str = ""           # why the fullest pipeline stage binds (cited)
    pp_weights_note: str = ""           # how it places the MTP draft's weights under PP
    # calibration: where its server listens by default, and its extra server arguments
    default_port: int = 8000
    server_args: tuple[str, ...] = ()
    cache_info_metric: str | None = None     # a metric whose cache_dtype label names the KV dtype
    probe_script: str | None = None     # its installed-engine probe (kvfit/preflight/<script>)

    # -- rules and prediction ------------------------------------------------------------
    def rules(self, version: str | None = None, strict: bool = False):
        """The spec's rules at `version` (None: the spec's default version)."""
        from .spec import rules_for
        return rules_for(self.id, version, strict)

    @abstractmethod
    def predict(self, rules, flags: dict, inp):
        """The engine's prediction for one layout (a kvfit.engines.common.Inputs), typed: a
        kvfit.model.engine.EnginePrediction (kvfit.engines.common.prediction) with its pool,
        refusal and per-instance concurrency numbers, each with a basis."""

    @abstractmethod
    def per_instance(self, e, ctx: int) -> tuple[int | None, str]:
        """(full-context sequences one engine instance admits, why) from its prediction `e`
        (an EnginePrediction); None when the prediction could not size the pool."""

    def budget_utilization(self, rules) -> tuple[float | None, str]:
        """(utilization every budget of the plan uses when none was stated, its basis); None:
        kvfit's default, with the basis given."""
        return None, "kvfit default"

    def pool_stated(self, flags: dict) -> bool:
        """True when the flags state the KV pool's bytes, so no weights are needed to size it."""
        return False

    def pool_overflow(self, flags: dict, weights: int, total: int) -> str | None:
        """Why a stated pool cannot sit beside `weights` on a GPU of `total` bytes, or None."""
        return None

    def memory_parts(self, e, hw) -> dict | None:
        """Its prediction's (EnginePrediction `e`) per-rank memory on the plan's hardware
        (kvfit.model.plan.Hardware `hw`) as chart parts: {total, basis, weights, state,
        reserve, engine_overheads} in bytes (kvfit.planner.memory_bars), or None."""
        return None

    def concurrency_basis(self, e) -> str:
        """Where its per-instance concurrency comes from, for calibration's deployment."""
        return f"{self.title} prediction"

    def check_pipeline(self, pp: int, mtp: bool) -> None:
        """Raise UsageError for a pipeline request kvfit does not model for this engine."""
        return None

    def tunable_settings(self, rules, facts: TuneFacts) -> tuple[Tunable, ...]:
        """The settings `--tune` searches for this engine and plan, each with its candidate
        values in the engine's order; none by default."""
        return ()

    # -- spellings and launch ------------------------------------------------------------
    def kv_spelling(self, rules, kvfit_dtype: str | None) -> str:
        """Its --kv-cache-dtype spelling of a kvfit dtype name."""
        from .command import engine_spelling
        return engine_spelling(rules, kvfit_dtype)

    def index_spelling(self, name: str) -> str | None:
        """Its launch spelling of a sparse-indexer cache dtype, None when it takes none."""
        return None

    def launch_memory(self, flags: dict, stated: bool, utilization: float, e
                      ) -> tuple[float | None, float | None]:
        """(utilization, memory fraction) its launch command states; pops the flags that carry
        them. stated: the user gave a utilization; utilization: the plan's resolved one;
        e: the layout's prediction (an EnginePrediction; ABSENT without one)."""
        return None, None

    def launch(self, version: str | None, spec) -> dict:
        """The launch command of a kvfit.engines.command.Launch in its spelling."""
        from .command import launch
        return launch(self.id, version, spec)

    # -- calibration ----------------------------------------------------------------------
    def launcher(self, python: str) -> list[str]:
        """How to start its CLI with interpreter `python`."""
        return [python]

    def bench_args(self, values: dict, result) -> list[str]:
        """The serving benchmark's arguments naming the model and the result file."""
        return ["--model", str(values["model"]), "--output-file", str(result)]

    def api_key(self, key: str | None) -> tuple[dict, list[str]]:
        """(environment, server arguments) that give its server the API key `key`."""
        return {}, []

    def kv_usage_names(self, legacy: list[str]) -> list[str]:
        """KV-usage gauge names accepted after the spec's own (`legacy`: the spec's older ones)."""
        return []

    def metadata(self, base: str, key: str | None, get_json) -> dict:
        """What its server says about itself: {version, version_source, server_info}."""
        return {"version": None, "version_source": None, "server_info": None}

    # -- logs and the installed engine -----------------------------------------------------
    def read_log(self, text: str):
        """The facts of one of its start-up logs (kvfit.engines.logparse.LogFacts); UsageError
        for another engine's log."""
        from .logparse import parse
        facts = parse(text)
        if facts.engine != self.id:
            from ..errors import UsageError
            raise UsageError(f"this is a {facts.engine} start-up log, not a {self.title} one.")
        return facts

    def probe_env(self, tmp, load: bool = False) -> dict:
        """Environment for its installed-engine probe: caches inside `tmp` unless the probe
        loads the model (`load`)."""
        return {}
