"""vLLM's profiling-run activation peak ("torch peak memory increase"), derived from the
engine's code rather than fitted.

profile_run (v1/worker/gpu_model_runner.py: 0.19.0 :5721-5795, 0.24.0 :6239-6312, 0.33.0
:6072-6145) runs three phases in order, and the peak is the largest of them:

1. encoder: the vision tower on the largest dummy items the encoder budget admits; their
   outputs stay in the encoder cache (`encoder_cache["tmp_i"]`, 0.19.0 :5779) until the run
   ends, so they are live in the two later phases too;
2. forward: `_dummy_run(max_num_tokens)`, the compiled decoder over max_num_batched_tokens
   tokens; the profile run has no attention metadata, so attention and linear-attention
   cores return at once and the largest live set is one layer's projections, MLP or MoE;
3. sampler: `_dummy_sampler_run` over min(max_num_seqs, tokens) rows (0.19.0 :5556-5632).

The terms below are each tensor's size from the model shape; a fitted residual
(`activation_base_gib`) covers what no term names (library workspaces). Not modelled:
quantized activations (8-bit copies of layer inputs), encoders other than the families in
the engine rule `mm_encoder_items`, and MoE backends whose workspace is not the Triton
experts' shape.
"""

from __future__ import annotations

from ..errors import ConfigError, UsageError
from ..numbers import parse_whole, shown
from .common import GIB

_FWD = ("forward: one decoder layer over {t:,} tokens in the compiled graph (the piece's "
        "inputs - attention output and residual - are held by the caller while it runs; "
        "attention and linear-attention cores are skipped without metadata: "
        "qwen_gdn_linear_attn.py:1278-1280 in 0.24.0)")
_MOE = ("MoE workspace (Triton experts: workspace_shapes fused_moe.py:1976-1991 in 0.19.0, "
        "experts/triton_moe.py:181-196 in 0.24.0; workspace13 and the output share one buffer,"
        " modular_kernel.py:1063-1068 / :1095-1100; held by the workspace manager for the rest"
        " of the run, v1/worker/workspace.py)")
_RECV = ("a later pipeline stage keeps the intermediate tensors it receives, hidden states and "
         "residual for {t:,} tokens (gpu_model_runner.py:5437-5447 in 0.19.0; "
         "models/utils.py:694-707, llama.py:393)")
_SAMPLER = ("sampler over {n:,} rows: logits in the model dtype (gpu_model_runner.py:5571), "
            "their fp32 copy (sampler.py:90), {extra}, softmax probs (topk_topp_sampler.py:112)"
            " and the exponential noise q (:334), line numbers of 0.19.0; 0.24.0 and 0.33.0 "
            "call the sampler a second time with a generator, which takes the same native "
            "path; the dummy run's hidden states stay live (:5553, :5569)")


# Expert weight formats whose MoE runs the modular Triton experts with the workspace manager's
# buffer; MXFP4 (gpt-oss) prefers the monolithic Triton kernel (fused_moe/oracle/mxfp4.py:103-110
# in 0.19.0: no workspace-manager buffer), other 4-bit backends are not modelled.
_MODULAR = (None, "fp8", "int8")
_QWEN_VIT = "qwen-vl-vit"   # the engine rule mm_encoder_items' tower shape name


_MAX = 1 << 40        # larger than any dimension a real config holds


def _c(cfg: dict, *names, default=None, least: int = 0):
    """The first of the config keys `names` that is set, as a whole number (`default` when
    none is); a value that is not a whole number from `least` to 2**40 is refused, naming
    the key, since the activation peak is sized from it."""
    for n in names:
        v = cfg.get(n)
        if v is None:
            continue
        ok = (isinstance(v, int) and not isinstance(v, bool)) or (
            isinstance(v, float) and v.is_integer())
        if not ok or not least <= v <= _MAX:
            raise ConfigError(f"config key '{n}' = {shown(v)} is not a whole number from "
                              f"{least} to 2**40; kvfit sizes vLLM's activation peak from it.",
                              fields=(n,))
        return int(v)
    return default


def _shard(n: int, tp: int) -> int:
    return max(1, -(-n // tp))


def _sm_rows(rows: int, sms: int) -> int:
    """Rows of the Triton top-k/top-p buffer: min(next power of 2 of min(SMs, rows), SMs)
    (topk_topp_triton.py:1013-1018 in 0.19.0)."""
    progs = min(sms, rows)
    return min(1 << (progs - 1).bit_length(), sms)


def sampler_bytes(rules, rows: int, vocab: int, act_bytes: int, hidden: int,
                  tokens: int) -> tuple[int, str]:
    """Bytes live at the sampler's peak and the basis."""
    sort_below = int(rules["sampler_sort_below_rows"])
    sms = int(rules["sampler_buffer_sms"])
    copy = 0 if act_bytes == 4 else 1          # .to(float32) of fp32 logits is no copy
    if rows < sort_below:
        # sort values + int64 indices + softmax of the sorted values (:279-291), then the
        # probs and q once those are freed: the sort step is the larger.
        fp32 = copy + max(1 + 2 + 1, 2)
        extra = f"the sort of the top-k/top-p filter below {sort_below} rows (:279-291)"
    else:
        fp32 = copy + 2 + _sm_rows(rows, sms) / rows
        extra = (f"the Triton top-k/top-p buffer of min(SMs, rows) rows "
                 f"(topk_topp_triton.py:1013-1018; {sms} SMs)")
    logits = rows * vocab * (act_bytes + 4 * fp32)
    held = (tokens + 2 * rows) * hidden * act_bytes
    return int(logits + held), _SAMPLER.format(n=rows, extra=extra)


def _moe(cfg: dict, tp: int) -> tuple[int, int, int] | None:
    """(experts per token, expert intermediate per rank, shared intermediate per rank)."""
    experts = _c(cfg, "num_experts", "num_local_experts", "n_routed_experts")
    if not experts or experts <= 1:
        return None
    k = _c(cfg, "num_experts_per_tok", "experts_per_token", "moe_topk", default=1)
    inter = _c(cfg, "moe_intermediate_size", "intermediate_size", default=0)
    shared = (_c(cfg, "shared_expert_intermediate_size", default=0) or
              _c(cfg, "n_shared_experts", default=0) * inter)
    return k, _shard(inter, tp), _shard(shared, tp) if shared else 0


def moe_workspace_bytes(cfg: dict, tp: int, tokens: int, act_bytes: int) -> int:
    """The Triton experts' workspace for `tokens` tokens: max(M x k x max(N/2, K), M x K) +
    M x k x max(N, K) elements, N = 2 x the expert intermediate per rank, K = hidden."""
    moe = _moe(cfg, tp)
    if moe is None:
        return 0
    k, inter, _ = moe
    hidden = _c(cfg, "hidden_size", default=0)
    ws13 = max(tokens * k * max(inter, hidden), tokens * hidden)
    ws2 = tokens * k * max(2 * inter, hidden)
    return (ws13 + ws2) * act_bytes


def forward_bytes(cfg: dict, tp: int, tokens: int, act_bytes: int) -> int:
    """The largest live set of one decoder layer over `tokens` tokens (MoE workspace
    excluded: see moe_workspace_bytes). Elements per token: the held attention output
    (heads x head_dim per rank) and input residual, the new residual, and then the largest
    of the dense MLP (gate_up 2I + act I per rank), the MoE layer (its input, router
    logits in the model dtype, the shared expert's gate_up and act) and, for hybrid models,
    the linear-attention projections (in_proj_qkvz, core output, gated-norm output per
    rank)."""
    hidden = _c(cfg, "hidden_size", default=0)
    heads = _c(cfg, "num_attention_heads", default=1, least=1)
    # the attention output per head: v_head_dim for MLA models, else head_dim
    head_dim = _c(cfg, "v_head_dim", "head_dim", default=hidden // heads) or hidden // heads
    held = _shard(heads, tp) * head_dim + 2 * hidden
    parts = []
    dense = _c(cfg, "intermediate_size_mlp", "intermediate_size")
    moe = _moe(cfg, tp)
    mixed = _c(cfg, "first_k_dense_replace", default=0) > 0 or \
        _c(cfg, "interleave_moe_layer_step", default=1) > 1
    if dense and (moe is None or mixed):
        parts.append(3 * _shard(dense, tp))
    if moe is not None:
        experts = _c(cfg, "num_experts", "num_local_experts", "n_routed_experts")
        parts.append(hidden + experts + 3 * moe[2])
    kh, vh = _c(cfg, "linear_num_key_heads"), _c(cfg, "linear_num_value_heads")
    if kh and vh:
        kd = _shard(kh, tp) * _c(cfg, "linear_key_head_dim", default=128)
        vd = _shard(vh, tp) * _c(cfg, "linear_value_head_dim", default=128)
        parts.append(2 * kd + 2 * vd + 2 * vd)
    return tokens * (held + max(parts or [0])) * act_bytes


def _mm_row(rules, model_config: dict | None) -> dict | None:
    if not model_config or not isinstance(model_config.get("vision_config"), dict):
        return None
    for rule in rules["mm_encoder_items"]:
        if model_config.get("model_type") in rule["model_type"]:
            return rule
    return None


def encoder(rules, model_config: dict | None, tp: int, mnbt: int, seqs: int,
            max_model_len: int, image_limit: int | None, act_bytes: int, out_hidden: int
            ) -> tuple[int, int, str] | None:
    """(encoder-phase peak bytes, bytes of outputs kept in the encoder cache, basis), or
    None when the model has no vision tower kvfit models or the image limit is 0."""
    rule = _mm_row(rules, model_config)
    if rule is None or image_limit == 0:
        return None
    vc = model_config["vision_config"]
    if "tokens_per_item" in rule:
        toks = int(rule["tokens_per_item"])
    else:
        toks = _c(model_config, rule["tokens_key"], default=0, least=1)
    budget = max(mnbt, toks)        # encoder_cache_manager.py:309-314 (0.24.0)
    limit = 999 if image_limit is None else image_limit
    per_prompt = max(1, min(limit, max_model_len // toks))
    items = max(1, min(budget // toks, seqs * per_prompt))   # encoder_budget.py:140-180
    # Qwen3-VL's deepstack mergers add one out_hidden-wide feature per listed layer to each
    # output token (qwen3_vl.py:824-833 in 0.24.0: torch.cat of the merger and deepstack outputs)
    indexes = vc.get("deepstack_visual_indexes")
    deep = len(indexes) if isinstance(indexes, list) and rule.get("vit") == _QWEN_VIT else 0
    cached = items * toks * out_hidden * (1 + deep) * act_bytes
    basis = (f"encoder: {items} image item{'s' * (items != 1)} of {toks:,} tokens (budget max("
             f"max_num_batched_tokens, largest item) = {budget:,}; {rule['source']})")
    peak = cached     # a tower kvfit does not model: only its outputs
    if rule.get("vit") == _QWEN_VIT:
        patches = items * toks * _c(vc, "spatial_merge_size", default=2) ** 2
        d = _c(vc, "hidden_size", default=0)
        f = _c(vc, "intermediate_size", default=0)
        pix = _c(vc, "in_channels", default=3) * _c(vc, "temporal_patch_size", default=2) * \
            _c(vc, "patch_size", default=0) ** 2
        # A block's attention holds x, norm1(x) (caller), then per rank qkv 3D, the
        # contiguous q/k 2D, rotated q/k 2D, the attention output D, and the projection D
        # (qwen2_5_vl.py:399-457 in 0.24.0); the MLP x, norm2(x), fc1 F and act F per rank
        # (qwen3_vl.py:409-411, 446-466). Outside the blocks: the dummy pixels, already in
        # the model dtype (multimodal/processing/context.py:226-238 casts the processor's
        # floating outputs; qwen3_vl.py:2168 then copies nothing), the position embeddings D.
        attn = 2 * d + (3 * d + 2 * d + 2 * d + d) // tp + d
        mlp = 2 * d + 2 * f // tp
        # the blocks, with the deepstack features already made; then the final torch.cat,
        # when the parts and the concatenated output are live at once
        outside = patches * (pix + d) * act_bytes
        blocks = patches * max(attn, mlp) * act_bytes + \
            items * toks * out_hidden * deep * act_bytes
        peak = outside + max(blocks, 2 * cached)
        basis += (f"; vision tower on {patches:,} patches: max(attention {attn:,}, MLP "
                  f"{mlp:,}) values per patch, dummy pixels and position embeddings")
    return peak, cached, basis


def model_dtype_bytes(flags: dict, cfg: dict | None) -> int:
    """2, or 4 for --dtype float32 (a float32 config under auto is served in 16 bits:
    rule float32_model_bytes)."""
    return 4 if str(flags.get("dtype") or "") in ("float32", "float") else 2


def profile_peak(rules, inp, flags: dict, seqs: int, mnbt: int, algo: str | None
                 ) -> tuple[int, dict, str]:
    """(code-derived peak bytes without the fitted residual, phase bytes, basis); `algo`:
    the checkpoint's weight format (the MoE workspace depends on the experts' kernel)."""
    cfg = inp.config or {}
    act = model_dtype_bytes(flags, cfg)
    hidden = _c(cfg, "hidden_size", default=0)
    if mnbt < 1 or seqs < 1 or not (hidden or (inp.sampler and inp.vocab)):
        return 0, {}, ""
    tokens = mnbt
    rows = min(seqs, tokens)
    phases: dict = {}
    bases = []
    ws = 0
    if hidden:   # without hidden_size only the sampler's logits are sized
        ws = moe_workspace_bytes(cfg, inp.tp, tokens, act) if algo in _MODULAR else 0
        phases["forward"] = forward_bytes(cfg, inp.tp, tokens, act) + ws
        bases.append(_FWD.format(t=tokens) + (f"; {_MOE}" if ws else ""))
    if hidden and not inp.pp_first:
        ws += 2 * tokens * hidden * act
        phases["forward"] += 2 * tokens * hidden * act
        bases.append(_RECV.format(t=tokens))
    if inp.sampler and inp.vocab:
        s, why = sampler_bytes(rules, rows, inp.vocab, act, hidden, tokens)
        phases["sampler"] = s + ws
        bases.append(why)
    mc = inp.model_config
    enc = encoder(rules, mc, inp.tp, mnbt, seqs, int(flags.get("max_model_len") or
                                                     inp.context or 0) or mnbt,
                  _image_limit(flags), act, hidden)
    if enc is not None:
        peak, cached, why = enc
        phases = {k: v + cached for k, v in phases.items()}
        phases = {"encoder": peak, **phases}
        bases.insert(0, why)
    top = max(phases, key=phases.get)
    basis = (f"engine rule vllm/v1/worker/gpu_model_runner.py profile_run, its phases derived "
             f"from the model shape (largest: {top}): " + "; ".join(bases))
    return phases[top], {k: round(v / GIB, 3) for k, v in phases.items()}, basis


def _image_limit(flags: dict) -> int | None:
    """--limit-mm-per-prompt's image count ({"image": 2} or {"image": {"count": 2}})."""
    lim = flags.get("limit_mm_per_prompt")
    if not isinstance(lim, dict) or "image" not in lim:
        return None
    image = lim["image"]          # the flag's dict form: {"image": {"count": 2}}
    count = parse_whole(flags["limit_mm_per_prompt"]["image"].get("count")
                        if isinstance(image, dict) else image)
    if count is None:
        raise UsageError(f"--limit-mm-per-prompt: the image limit {shown(image)} is not a whole "
                         "number of items (such as {\"image\": 2}).")
    return count
