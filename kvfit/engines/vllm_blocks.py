"""Block sizes and per-request state blocks that vLLM's attention backends and recurrent
prefill kernels force, as engine-spec rules keyed on the GPU's compute capability, the KV
dtype, the model's head size, its components and its config (specs/engines/vllm.yaml).

Worked example (Gemma-4-26B-A4B, fp8 KV, H100 = capability 9.0): the model's head size is
max(head_dim 256, global_head_dim 512) = 512, so FLASH_ATTN runs FlashAttention 4 with its
64-token FP8 page (attention_block_by_head_size) and every layer gets 64-token blocks.
Kimi-K3 on an H100: its KDA layers declare a full-rank gate, gate_lower_bound -5 and head_dim
128, so FlashKDA prefills and exports one checkpoint: 3 state blocks per request in align
mode; Kimi-Linear (no gate bound) takes the Triton path: 2 (recurrent_blocks_by_kernel).
"""

from __future__ import annotations

import math

from ..state.fields import value_at
from .common import Inputs, num


def attention_block(rules, inp: Inputs) -> dict:
    """Tokens per block for plain attention: the default, unless the backend vLLM selects for
    this GPU, KV dtype and head size forces another (attention_block_by_head_size), or the
    model's own backends take only one size (component_block_size: the lcm with the default)."""
    bs = num(rules["default_block_size"], rules.basis("default_block_size"))
    rows = rules.values.get("attention_block_by_head_size")
    if rows and inp.capability and inp.head_size:
        major = int(str(inp.capability).split(".")[0])
        for row in rows["value"]:
            if major in row["cc_major"] and inp.kv_name in row["kv"] and \
                    inp.head_size == row["head_size"] and \
                    all(_config_holds(inp.config or {}, c) for c in row.get("when_config", ())):
                bs = num(row["block_size"], f"engine rule {rows['source']}: compute capability "
                         f"{inp.capability}, {inp.kv_name} KV, head size {inp.head_size} -> "
                         f"{row['backend']}")
                break
    rows = rules.values.get("component_block_size")
    names = {c.name for c in inp.components if c.layers}
    for row in rows["value"] if rows else ():
        if row["component"] in names:
            bs = num(math.lcm(bs.value, row["block_size"]), f"engine rule {rows['source']}: "
                     f"{row['architecture']} {row['component']} -> {row['backend']}")
    return bs


def state_blocks(rules, inp: Inputs, groups) -> dict:
    """{recurrent group name: (state blocks per request in align mode, the kernel rule)}: the
    first recurrent_blocks_by_kernel row whose prefix, capability and config conditions hold
    (none when the GPU is unknown: those groups keep mamba_blocks_align)."""
    rule = rules.values.get("recurrent_blocks_by_kernel")
    out = {}
    if not rule or not inp.capability:     # GPU unknown: the kernel is unknown too
        return out
    major = int(str(inp.capability).split(".")[0])
    for g in groups:
        if g.family != "recurrent":
            continue
        for row in rule["value"]:
            if all(part.startswith(row["component_prefix"]) for part in g.name.split("+")) and \
                    ("cc_major" not in row or major in row["cc_major"]) and \
                    all(_config_holds(inp.config or {}, c) for c in row.get("when_config", ())):
                where = f" on compute capability {inp.capability}" if "cc_major" in row else ""
                out[g.name] = (row["blocks"], f"{row['kernel']}{where} (engine rule "
                               f"recurrent_blocks_by_kernel: {rule['source'].split(';')[0]})")
                break
    return out


def _config_holds(root: dict, cond: dict) -> bool:
    value = value_at(root, cond["key"])
    if "present" in cond:
        return (value is not None) == cond["present"]
    return value == cond["equals"] and type(value) is type(cond["equals"])
