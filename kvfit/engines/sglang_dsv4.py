"""SGLang's DeepSeek-V4 pools: its own DSV4PoolConfigurator (model_executor/pool_configurator.py:
1067-1713), as the engine rule `dsv4_pool` states it, on the components' `sglang-dsv4` layout.

SGLang 0.5.23 on CUDA with its defaults (flashmla attention, KV layout v4, fp32 compressor state,
no unified KV, which is HIP only; the operator-set SWA ratio 0.1 of the V4 override, so ratio
mode, not cap mode) sizes three kinds of storage per rank:

  full pool (one slot per token): per C4 / C128 layer the compressed rows, page-padded
      (pool_configurator.py:1353-1370, 1390-1404), and per C4 layer the 132 B indexer key / 4;
  SWA pool (swa_full_tokens_ratio x the full tokens): per layer the page-padded sliding-window
      row, plus the C4 compressor rings, ring rows per SWA page (:1372-1388);
  fixed, before the token pools: the C128 compressor rings, (max_running_requests + 1) x ring
      + ring + 1 rows rounded up to 128 per C128 layer (:1509-1528), max_running_requests being
      the V4 default 256 unless stated (arg_groups/deepseek_v4_hook.py:138-145).

bytes per full token = ratio x bytes per SWA token + the full pool's bytes per token (:1437-1455);
full tokens = (budget - fixed) / that, rounded down to the page (:1638-1660); SWA tokens =
full x ratio rounded down to the page (:1457-1461).

Worked example (DeepSeek-V4-Flash, 43 layers: 21 C4, 20 C128, 2 sliding only; 40 GiB budget):
SWA token 43 x 585 + 21 x (65,536 + 16,384) / 256 = 31,875 B; full token 0.1 x 31,875 + 21 x
(146.25 + 33) + 20 x 6.75 = 7,086.75 B; fixed 20 x 33,152 rows x 4,096 B = 2,715,811,840 B;
(42,949,672,960 - 2,715,811,840) / 7,086.75 = 5,677,337 -> 5,677,312 tokens (page 256), SWA
567,552: SGLang's recorded answer (tests/engine_probe/sglang-0.5.23-kv.jsonl).
"""

from __future__ import annotations

import math

from ..model.engine import Refusal
from .common import num
from .pages import layer_pages, page_bytes

RULE = "engine rule sglang/srt/model_executor/pool_configurator.py"


def rule(rules, inp) -> dict | None:
    """The dsv4_pool rule when SGLang sizes this checkpoint with DSV4PoolConfigurator."""
    r = rules.values.get("dsv4_pool")
    if not r or not inp.architectures or inp.architectures[0] not in r["value"]["architectures"]:
        return None
    return r["value"]


def page(rules) -> tuple[int, str]:
    """The V4 page: SGLang sets it for the architecture whatever --page-size says."""
    return rules["dsv4_pool"]["page_size"], rules.basis("dsv4_pool") + " (page_size)"


def _per_token(c, tp: int, block: int) -> float:
    """Bytes one token costs in this component's paged pool on one rank (page-padded)."""
    (p,) = layer_pages([c], tp)
    return page_bytes(p, block) / block * p.layers


def cells(r: dict, components, tp: int, block: int) -> dict:
    """Bytes per SWA token, per full token (pool sums), fixed state rows and what is left out."""
    role = {row["component"]: row for row in r["pools"]}
    swa = full = 0.0
    requests, skipped = [], []
    for c in components:
        row = role.get(c.name)
        if c.kind == "none" or not c.bytes_per_sequence:
            continue
        if row is None:
            skipped.append(c.name)
        elif row["pool"] == "swa":
            swa += _per_token(c, tp, block)
        elif row["pool"] == "full":
            full += _per_token(c, tp, block)
        elif row["pool"] == "swa_page_state":   # ring rows per SWA page: the state / page
            swa += c.per_rank(tp) / block
        else:                                   # request_state: a fixed pool of ring rows
            requests.append((c, row))
    return {"swa": swa, "full": full, "requests": requests, "unmodelled": skipped, "tp": tp}


def fixed_bytes(requests, tp: int, running: int) -> int:
    """The request-slot state pools (C128 rings) for `running` requests (:1504-1528)."""
    total = 0
    for c, row in requests:
        ring = row["ring"]
        rows = math.ceil(((running + 1) * ring + ring + 1) / row["rows_align"]) * row["rows_align"]
        total += rows * (c.per_rank(tp) // c.layers // ring) * c.layers
    return total


def pools(rules, r: dict, flags: dict, rest: float, cell: dict, block: int, attn_dp: int,
          running_fn) -> dict:
    """max_total_num_tokens, SWA tokens and the running cap (calculate_pool_sizes, :1638-1700),
    as EnginePrediction fields."""
    ratio = float(flags.get("swa_full_tokens_ratio") or r["swa_full_tokens_ratio"])
    requested = int(flags.get("max_running_requests") or r["max_running_requests"])
    running = max(1, requested // attn_dp)          # per attention-DP worker (:1141-1145)
    per_full = ratio * cell["swa"] + cell["full"]
    fixed = fixed_bytes(cell["requests"], cell["tp"], running)
    tokens = int(max(rest - fixed, 0) / per_full) // block * block if per_full else 0
    if flags.get("max_total_tokens"):
        tokens = min(tokens, int(flags["max_total_tokens"]) // block * block)
    swa = int(tokens * ratio) // block * block
    basis = rules.basis("dsv4_pool")
    out = {"max_total_num_tokens": num(tokens, f"{RULE}:1638-1660 (DSV4PoolConfigurator: (budget - "
                                       f"{fixed:,} B fixed) / {per_full:,.2f} B per full token, "
                                       f"rounded down to the {block}-token page)"),
           "swa_tokens": num(swa, f"{RULE}:1457-1461 (full tokens x swa_full_tokens_ratio "
                             f"{ratio:g}, rounded down to the page; {basis})"),
           "fixed_state_bytes": num(fixed, f"{RULE}:1504-1528 (C128 compressor rings for "
                                    f"{running} + 1 request slots)"),
           "bytes_per_full_token": num(per_full, f"{RULE}:1437-1455 (swa_full_tokens_ratio x "
                                       f"{cell['swa']:,.2f} B per SWA token + {cell['full']:,.2f} B)"),
           "pool_bytes": num(int(tokens * per_full + fixed), f"{RULE}:1638-1700 (full tokens x "
                             "bytes per full token + the fixed state pools)")}
    out["refusal"] = None if tokens > 0 else Refusal(
        reason=f"Not enough memory: the fixed DeepSeek-V4 state pools ({fixed:,} B for {running} "
               "running requests) leave no room for one page of tokens. Increase "
               "--mem-fraction-static or lower --max-running-requests.",
        rule=f"{RULE}:94-99 (MemoryPoolConfig refuses max_total_num_tokens <= 0)")
    cap = dict(flags, max_running_requests=requested)
    out["max_running_requests"] = running_fn(rules, cap, tokens, attn_dp)
    out["log_lines"] = (f"DSV4 pool sizes: full={tokens}, swa={swa}, c4={tokens // 4}, "
                        f"c128={tokens // 128}, c4_state={swa // block * r['c4_ring']}, "
                        "c128_state=0",)
    return out
