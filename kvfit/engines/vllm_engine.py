"""vLLM behind the engine seam (kvfit.engines.base.Engine): its prediction (kvfit.engines.vllm),
its spellings, launch, calibration and probe details. Numbers and spellings stay in
specs/engines/vllm.yaml."""

from __future__ import annotations

from pathlib import Path

from .base import DpaProfile, Engine, Tunable, TuneFacts, halvings, memory_tunable, speculative_tunable

MAIN = "from vllm.entrypoints.cli.main import main; main()"
INDEXER_DTYPES = ("bf16", "fp8", "mxfp4", "nvfp4")   # vllm/config/attention.py:93-98


def _v(q) -> int | None:
    """A Quantity's value (None for a term the prediction does not have)."""
    return q.value if q else None


class Vllm(Engine):
    id = "vllm"
    title = "vLLM"
    dpa = DpaProfile(
        "vllm-dp-ep", "vLLM", "DP{a} x attention TP{t} + EP{g}",
        "--data-parallel-size {a} --tensor-parallel-size {t} --enable-expert-parallel", 16, 64,
        "every vLLM DP engine owns its KV pool, and block 0 of it is the reserved null block "
        "(v1/core/kv_cache_utils.py); blocks are 16 tokens by default and 64 with FlashMLA",
        predict_at="attention", selected_by="--enable-expert-parallel")
    utilization_flag = "gpu_memory_utilization"
    memory_flag = "gpu_memory_utilization"
    rope_note = ("vLLM 0.33 takes max_position_embeddings as already scaled for yarn, longrope, "
                 "llama3 (vllm/config/model.py:2599-2634) and refuses a longer --max-model-len "
                 "(model.py:2657-2683): the command overrides max_position_embeddings too")
    pp_binding_note = "vllm/v1/core/kv_cache_planning.py:1580-1595"
    pp_weights_note = ("; the MTP draft's weights are split like the rest, though vLLM loads the "
                       "draft on the last stage (gpu_model_runner.py:594-598) and shares its "
                       "embedding and head with the target only at PP=1 "
                       "(llm_base_proposer.py _maybe_share_embeddings)")
    default_port = 8000
    cache_info_metric = "vllm:cache_config_info"
    probe_script = "probe_vllm.py"

    def predict(self, rules, flags: dict, inp):
        from . import vllm
        return vllm.predict(rules, flags, inp)

    def per_instance(self, e, ctx: int) -> tuple[int | None, str]:
        """num_gpu_blocks // blocks per request (the integer part of the "Maximum concurrency"
        vLLM prints, kv_cache_utils.py:1061-1093), capped by max_num_seqs."""
        label = f"{self.title} {e.version}"
        if e.refusal:
            return 0, f"{label} refuses to start: {e.refusal.reason}"
        n, blocks = e.num_gpu_blocks.value, e.blocks_per_request.value
        if n is None:
            return None, e.num_gpu_blocks.basis
        per = n // blocks if blocks else 0
        cap = e.max_num_seqs.value
        why = (f"{label}: {n:,} blocks / {blocks:,} per {ctx:,}-token request = "
               f"{e.max_concurrency.value:.2f}x concurrency -> {per} per instance")
        if per > cap:
            per, why = cap, why + f", capped at max_num_seqs {cap}"
        return per, why

    def budget_utilization(self, rules) -> tuple[float | None, str]:
        return rules["gpu_memory_utilization"], rules.basis("gpu_memory_utilization")

    def tunable_settings(self, rules, facts: TuneFacts) -> tuple[Tunable, ...]:
        """Batched tokens: the GPU tier's default halved down to the smallest tier's default
        (batch_default_tiers, vllm/engine/arg_utils.py:2940-3039); max_num_seqs: likewise;
        block size: FlashAttention's multiples of 16 for plain attention only (MLA backends,
        DeepSeek-V4's own blocks and hybrid alignment fix it); prefix caching on / off for
        recurrent state only; speculative tokens from the asked number down to 1; the memory
        fraction up to the user's cap; max_model_len = the context."""
        from .packed import own_blocks
        from .pages import layer_pages
        from .vllm import _mm_prefix_floor, batch_defaults
        from .vllm_blocks import attention_block

        inp, held = facts.inputs, facts.stated
        seqs, mnbt, why = batch_defaults(rules, inp)
        mnbt, why = _mm_prefix_floor(rules, inp, mnbt, why)
        item = _mm_prefix_floor(rules, inp, 0, "")[0]      # one multimodal item fits a step
        tiers = (rules.values.get("batch_default_tiers") or {}).get("value") or [
            {"max_num_seqs": seqs, "max_num_batched_tokens": mnbt}]
        out = [Tunable("max_model_len", "--max-model-len", "max model len", inp.max_context,
                       "the declared maximum" if inp.max_context else "the model's",
                       (inp.context,), "the context the target needs (vllm/config/model.py "
                       "_get_and_verify_max_len: a longer one must still fit one request)",
                       context=True)]
        if "max_num_batched_tokens" not in held:
            floor = max(item, min(t["max_num_batched_tokens"] for t in tiers))
            out.append(Tunable(
                "max_num_batched_tokens", "--max-num-batched-tokens", "batched tokens", mnbt,
                f"{mnbt:,}", (None, *halvings(mnbt, floor)[1:]),
                f"{why}; halved down to the smallest tier's {floor:,}; sliding-window and "
                "compressor layers reserve 2 x this per request (vllm/config/vllm.py:588-609, "
                "v1/kv_cache_interface.py:918-955)",
                "a smaller batched-token budget prefills long prompts in more steps (slower "
                "time to first token)"))
        if "max_num_seqs" not in held:
            floor = min(t["max_num_seqs"] for t in tiers)
            out.append(Tunable(
                "max_num_seqs", "--max-num-seqs", "max sequences", seqs, f"{seqs:,}",
                (None, *halvings(seqs, floor)[1:]), f"{why}; halved down to the smallest "
                f"tier's {floor:,} (fewer CUDA-graph sizes and sampler rows)",
                "fewer max sequences caps how many requests run in one batch"))
        pages = layer_pages(inp.components, inp.tp)
        plain = {p.family for p in pages} <= {"full", "sliding", "chunked"}
        if "block_size" not in held and plain and not (inp.latent or own_blocks(pages)):
            bs = attention_block(rules, inp).value
            out.append(Tunable(
                "block_size", "--block-size", "block size", bs, f"{bs}",
                (None, *(b for b in (16, 32, 64) if b > bs and b % bs == 0)),
                f"{rules.basis('default_block_size')}; larger multiples of 16 (FlashAttention "
                "blocks) only cost: a request's last block is partly empty",
                "a larger block wastes more of each request's last block"))
        if inp.recurrent and "enable_prefix_caching" not in held:
            on = rules["prefix_caching_default"]
            out.append(Tunable(
                "enable_prefix_caching", "--enable-prefix-caching", "prefix caching", on,
                "on" if on else "off", (None, not on),
                f"{rules.basis('prefix_caching_default')}; on, recurrent layers keep align-mode "
                "state blocks per request (vllm/platforms/interface.py:1114-1115)",
                "without prefix caching repeated prompt prefixes are recomputed (no cache hits)"))
        if facts.speculative:
            out.append(speculative_tunable(facts.speculative))
        if not held & {"utilization", self.utilization_flag}:
            u = rules["gpu_memory_utilization"]
            out.append(memory_tunable("utilization", "--gpu-memory-utilization", u, f"{u:g}",
                                      facts.utilization_cap,
                                      rules.basis("gpu_memory_utilization")))
        return tuple(out)

    def pool_stated(self, flags: dict) -> bool:
        """--kv-cache-memory-bytes sizes the pool from the stated bytes (gpu_worker.py:753-757
        is skipped)."""
        return flags.get("kv_cache_memory_bytes") is not None

    def pool_overflow(self, flags: dict, weights: int, total: int) -> str | None:
        """vLLM takes --kv-cache-memory-bytes as given and skips its memory check
        (gpu_worker.py:656-680), so weights plus the stated pool larger than the GPU's memory
        run out of memory while loading or allocating the cache: the engine does not start."""
        pool = int(flags["kv_cache_memory_bytes"])
        if weights + pool <= total:
            return None
        return (f"the weights ({weights / 2**30:.2f} GiB per rank) and the stated "
                f"--kv-cache-memory-bytes pool ({pool / 2**30:.2f} GiB) exceed the GPU's "
                f"{total / 2**30:.2f} GiB: vLLM skips its memory check for a stated pool "
                "(vllm/v1/worker/gpu_worker.py:656-680), so it runs out of memory loading the "
                "weights or allocating the cache")

    def memory_parts(self, e, hw) -> dict | None:
        """total = CUDA total; engine overheads = activation peak + non-torch + CUDA graphs
        (when charged); state = the available KV memory; reserve = total - requested."""
        mem = e.memory
        if not mem:
            return None
        total, requested = _v(mem.total_bytes), _v(mem.requested_bytes)
        if total is None or requested is None or _v(mem.available_kv_bytes) is None:
            return None
        graphs = mem.cudagraph_bytes
        over = (_v(mem.activation_peak_bytes) or 0) + (_v(mem.non_torch_bytes) or 0) + (
            (_v(graphs) or 0) if graphs and graphs.charged is not False else 0)
        return {"total": total, "basis": f"vLLM {e.version} memory terms (CUDA total)",
                "weights": _v(mem.weights_bytes), "state": _v(mem.available_kv_bytes),
                "reserve": total - requested, "engine_overheads": over}

    def concurrency_basis(self, e) -> str:
        return e.max_concurrency.basis

    def index_spelling(self, name: str) -> str | None:
        """indexer_kv_dtype takes bf16, fp8, mxfp4 and nvfp4."""
        name = "fp8" if name in ("fp8", "fp8_e4m3") else name
        return name if name in INDEXER_DTYPES else None

    def launch_memory(self, flags: dict, stated: bool, utilization: float, e
                      ) -> tuple[float | None, float | None]:
        """--gpu-memory-utilization is always the plan's resolved utilization."""
        flags.pop("gpu_memory_utilization", None)
        return utilization, None

    def launcher(self, python: str) -> list[str]:
        """The `vllm` script beside `python`, else `python -c` on the same entry point."""
        script = Path(python).parent / "vllm"
        return [str(script)] if script.is_file() else [python, "-c", MAIN]

    def bench_args(self, values: dict, result) -> list[str]:
        out = []
        if values["served_model"] != values["model"]:
            out += ["--served-model-name", str(values["served_model"])]
        return out + ["--result-dir", str(result.parent), "--result-filename", result.name]

    def api_key(self, key: str | None) -> tuple[dict, list[str]]:
        return ({"VLLM_API_KEY": key} if key else {}), []

    def kv_usage_names(self, legacy: list[str]) -> list[str]:
        return ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", *legacy]

    def metadata(self, base: str, key: str | None, get_json) -> dict:
        """The version from GET /version."""
        out = {"version": None, "version_source": None, "server_info": None}
        data = get_json(base + "/version", 10.0, key)
        if isinstance(data, dict) and isinstance(data.get("version"), str):
            out["version"], out["version_source"] = data["version"], "GET /version"
        return out

    def probe_env(self, tmp, load: bool = False) -> dict:
        return {} if load else {"VLLM_CACHE_ROOT": str(Path(tmp) / "vllm-cache")}


ENGINE = Vllm()
