"""SGLang behind the engine seam (kvfit.engines.base.Engine): its prediction
(kvfit.engines.sglang), its spellings, launch, calibration and probe details. Numbers and
spellings stay in specs/engines/sglang.yaml."""

from __future__ import annotations

from ..model.base import ABSENT
from .base import DpaProfile, Engine, Tunable, TuneFacts, halvings, memory_tunable, speculative_tunable


class Sglang(Engine):
    id = "sglang"
    title = "SGLang"
    dpa = DpaProfile(
        "sglang-dpa", "SGLang", "DPA{a} / attention TP{t} / EP{g}",
        "--tp {g} --attn-dp-size {a} --ep-size {g}", 1, 64,
        "SGLang gives every attention-DP rank its own token pool holding one extra padding "
        "page (mem_cache/memory_pool.py; a Mamba pool one extra slot); page_size is 1 by default "
        "and 64 with the FlashMLA / NSA backends that serve latent (MLA, DSA) caches",
        predict_at="group", attention_dp_flag="attn_dp_size",
        selected_by="--enable-dp-attention")
    memory_flag = "mem_fraction_static"
    rope_note = ("SGLang 0.5.23 ignores factor when original_max_position_embeddings is given "
                 "(srt/utils/hf_transformers/common.py:677-694) and refuses a longer "
                 "--context-length (srt/configs/model_config.py:1291-1316): the command "
                 "overrides max_position_embeddings too")
    suggests_pp = False
    prefix_cache_off = ("disable_radix_cache", "--disable-radix-cache", "radix (prefix) cache")
    pp_binding_note = ("SGLang: max_total_num_tokens is the minimum over the PP ranks, "
                       "mem_cache/kv_cache_configurator.py:3107-3115")
    default_port = 30000
    server_args = ("--enable-metrics",)
    probe_script = "probe_sglang.py"

    def predict(self, rules, flags: dict, inp):
        from . import sglang
        return sglang.predict(rules, flags, inp)

    def per_instance(self, e, ctx: int) -> tuple[int | None, str]:
        """max_total_num_tokens // context_len, capped by max_running_requests (per DP worker,
        kv_cache_configurator.py:3119-3172)."""
        label = f"{self.title} {e.version}"
        if e.refusal:
            return 0, f"{label} refuses to start: {e.refusal.reason}"
        tokens = e.max_total_num_tokens.value
        if tokens is None:
            return None, e.max_total_num_tokens.basis
        per = tokens // ctx
        why = f"{label}: {tokens:,} pool tokens / {ctx:,} = {per} per instance"
        cap = e.max_running_requests.value if e.max_running_requests else None
        if cap is not None and per > cap:
            per, why = cap, why + f", capped at max_running_requests {cap}"
        return per, why

    def budget_utilization(self, rules) -> tuple[float | None, str]:
        return None, "kvfit default; SGLang sizes its pool by its own --mem-fraction-static rule"

    def tunable_settings(self, rules, facts: TuneFacts) -> tuple[Tunable, ...]:
        """Chunked prefill: the GPU tier's size halved down to the smallest tier's, and
        max_running_requests: the tier's decode batch halved down to 32 (both shrink SGLang's
        reserve before --mem-fraction-static, capacity_tiers, arg_groups/memory_hook.py:89-180,
        296-322; without the radix cache the running cap is also the recurrent slot count);
        page size 1 or 64 where no backend or architecture fixes it; the radix cache on / off
        for recurrent state only; speculative tokens from the asked number down to 1; the
        memory fraction up to the user's cap; context_length = the context."""
        from .common import MIB
        from .sglang import _page, _tier
        from .sglang_dsv4 import rule as dsv4_rule

        inp, held = facts.inputs, facts.stated
        tiers = rules.values["capacity_tiers"]["value"]
        tier = _tier(rules, inp.visible_bytes // MIB)
        tier_rule = rules.basis("capacity_tiers")
        out = [Tunable("context_length", "--context-length", "context length", inp.max_context,
                       "the declared maximum" if inp.max_context else "the model's",
                       (inp.context,), "the context the target needs (srt/configs/"
                       "model_config.py: a longer one than declared is refused)", context=True)]
        if "chunked_prefill_size" not in held and "mem_fraction_static" not in held:
            chunk, floor = tier["chunked_prefill_size"], min(t["chunked_prefill_size"]
                                                              for t in tiers)
            out.append(Tunable(
                "chunked_prefill_size", "--chunked-prefill-size", "chunked prefill size", chunk,
                f"{chunk:,}", (None, *halvings(chunk, floor)[1:]),
                f"{tier_rule}: the GPU's tier, halved down to the smallest tier's {floor:,}; "
                "SGLang reserves activation memory per chunk token before its static fraction",
                "a smaller prefill chunk prefills long prompts in more steps (slower time to "
                "first token)"))
        if "max_running_requests" not in held:
            top = max(tier["max_bs_tp4"] if tp >= 4 else tier["max_bs"]
                      for tp in facts.tp_sizes)
            out.append(Tunable(
                "max_running_requests", "--max-running-requests", "max running requests",
                None, "sized from the pool", (None, *halvings(top, 32)),
                f"{tier_rule}: the tier's decode batch ({top}) halved down to 32; the decode "
                "CUDA graphs SGLang reserves for grow with it (memory_hook.py:296-322)",
                "fewer max running requests caps how many requests run in one batch"))
        page, page_rule = _page(rules, {}, inp)
        if "page_size" not in held and "attention_backend" not in held and \
                page_rule == rules.basis("page_size_default") and not dsv4_rule(rules, inp):
            out.append(Tunable(
                "page_size", "--page-size", "page size", page, f"{page}",
                (None, *(p for p in (16, 64) if p > page)), f"{page_rule}; larger pages only "
                "cost (a request's last page is partly empty)",
                "a larger page wastes more of each request's last page"))
        if inp.recurrent and "disable_radix_cache" not in held:
            out.append(Tunable(
                "disable_radix_cache", "--disable-radix-cache", "radix (prefix) cache", False,
                "on", (None, True), f"{rules.basis('mamba_slots_per_request')}: "
                f"{rules['mamba_slots_per_request']} recurrent slots per running request with "
                f"the radix cache, {rules['mamba_slots_no_radix']} without "
                "(rule mamba_slots_no_radix)",
                "without the radix cache repeated prompt prefixes are recomputed (no cache "
                "hits)", texts=((False, "on"), (True, "off"))))
        if facts.speculative:
            out.append(speculative_tunable(facts.speculative))
        if not held & {"utilization", "mem_fraction_static"}:
            out.append(memory_tunable("utilization", "--mem-fraction-static", None,
                                      "SGLang's rule", facts.utilization_cap,
                                      rules.basis("mem_fraction_rule")))
        return tuple(out)

    def memory_parts(self, e, hw) -> dict | None:
        """total = the device memory; state = the token pool; engine overheads = the static
        reserve (free before load x (1 - mem_fraction_static)) + what the CUDA context and
        driver hold (memory - free before load)."""
        def v(q):
            return q.value if q else None

        pool, free0 = v(e.pool_bytes), v(e.free_before_load_bytes)
        mfs, total = v(e.mem_fraction_static), hw.memory_bytes_per_gpu
        total = None if total is ABSENT else total
        if None in (pool, free0, mfs, total):
            return None
        over = int(free0 * (1 - mfs)) + max(0, total - free0)
        return {"total": total, "basis": f"SGLang {e.version} memory terms (device memory)",
                "weights": v(e.weights_bytes), "state": pool, "engine_overheads": over}

    def concurrency_basis(self, e) -> str:
        return e.max_total_num_tokens.basis + " / context"

    def check_pipeline(self, pp: int, mtp: bool) -> None:
        if pp > 1 and mtp:
            from ..errors import UsageError
            raise UsageError(f"--pp {pp} with --mtp under --engine sglang: kvfit does not model "
                             "where SGLang keeps the EAGLE draft's weights and KV under pipeline "
                             "parallelism (arg_groups/validation_hook.py:119-160 allows only "
                             "EAGLE).", hint="Drop --mtp, or use --engine vllm for a PP plan "
                             "with MTP.")

    def launch_memory(self, flags: dict, stated: bool, utilization: float, e
                      ) -> tuple[float | None, float | None]:
        """--mem-fraction-static only when the user stated a utilization or the fraction: the
        fraction the prediction used."""
        stated = stated or "mem_fraction_static" in flags
        flags.pop("mem_fraction_static", None)
        mfs = e.mem_fraction_static if e else None
        return None, (mfs.value if mfs else None) if stated else None

    def launcher(self, python: str) -> list[str]:
        """`python -m ...` (the launch template names the module)."""
        return [python]

    def bench_args(self, values: dict, result) -> list[str]:
        return ["--model", str(values["model"]), "--output-file", str(result)]

    def api_key(self, key: str | None) -> tuple[dict, list[str]]:
        return {}, (["--api-key", key] if key else [])

    def metadata(self, base: str, key: str | None, get_json) -> dict:
        """The version, KV dtype and TP/DP sizes from /server_info (or /get_server_info)."""
        out = {"version": None, "version_source": None, "server_info": None}
        for path in ("/server_info", "/get_server_info"):
            data = get_json(base + path, 10.0, key)
            if isinstance(data, dict):
                out["server_info"] = info = {
                    "path": path, "version": data.get("version"),
                    "kv_cache_dtype": data.get("kv_cache_dtype"),
                    "tp_size": data.get("tp_size"), "dp_size": data.get("dp_size")}
                if isinstance(info["version"], str):
                    out["version"], out["version_source"] = info["version"], f"GET {path}"
                break
        return out


ENGINE = Sglang()
