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
    def predict(self, rules, flags: dict, inp) -> dict:
        """The engine's prediction body for one layout (a kvfit.engines.common.Inputs): its
        pool, refusal and per-instance concurrency numbers, each with a basis."""

    @abstractmethod
    def per_instance(self, e: dict, ctx: int) -> tuple[int | None, str]:
        """(full-context sequences one engine instance admits, why) from its prediction `e`;
        None when the prediction could not size the pool."""

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

    def memory_parts(self, e: dict, hw: dict) -> dict | None:
        """Its prediction's per-rank memory as chart parts: {total, basis, weights, state,
        reserve, engine_overheads} in bytes (kvfit.planner.memory_bars), or None."""
        return None

    def concurrency_basis(self, e: dict) -> str:
        """Where its per-instance concurrency comes from, for calibration's deployment."""
        return e.get("basis", f"{self.title} prediction")

    def check_pipeline(self, pp: int, mtp: bool) -> None:
        """Raise UsageError for a pipeline request kvfit does not model for this engine."""
        return None

    # -- spellings and launch ------------------------------------------------------------
    def kv_spelling(self, rules, kvfit_dtype: str | None) -> str:
        """Its --kv-cache-dtype spelling of a kvfit dtype name."""
        from .command import engine_spelling
        return engine_spelling(rules, kvfit_dtype)

    def index_spelling(self, name: str) -> str | None:
        """Its launch spelling of a sparse-indexer cache dtype, None when it takes none."""
        return None

    def launch_memory(self, flags: dict, stated: bool, utilization: float, e: dict
                      ) -> tuple[float | None, float | None]:
        """(utilization, memory fraction) its launch command states; pops the flags that carry
        them. stated: the user gave a utilization; utilization: the plan's resolved one;
        e: the layout's prediction."""
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
