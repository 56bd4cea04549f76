"""--max-context and --min-gpus agree with brute force: every context / every GPU count is
tried with independent arithmetic (no kvfit code) and the answers must match.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import config_without_weights, run_cli, run_json

ROOT = Path(__file__).resolve().parents[1]
QWEN = ROOT / "tests" / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
GLM = ROOT / "tests" / "fixtures" / "systems" / "zai-org--GLM-5.3"
GIB = 2**30
H100_BUDGET = int(81559 * 2**20 * 0.9)         # 76,968,728,985 B
QWEN_W = round(61 * GIB)                        # --weight-gib 61


def _qwen_total(tp: int, gpus: int, ctx: int) -> int | None:
    """Qwen3-32B sequences at TP=tp on `gpus` H100s (None when TP is invalid).

    64 layers x 2 x 128 x 2 B = 32,768 B per KV head per token; 8 KV heads split across TP
    (one head per rank beyond 8); 64 query heads must divide by TP.
    """
    if gpus % tp or 64 % tp or (tp <= 8 and 8 % tp) or (tp > 8 and tp % 8):
        return None
    heads = 8 // tp if tp <= 8 else 1
    state = 64 * 2 * heads * 128 * 2 * ctx
    left = H100_BUDGET - -(-QWEN_W // tp)
    return max(0, left) // state * (gpus // tp)


@pytest.mark.parametrize("users", [1, 16, 40, 60])
def test_max_context_matches_brute_force(users):
    code, report = run_json(QWEN, "--hardware", "h100-80", "--gpus", "8", "--kv-dtype", "bf16",
                            "--weight-gib", "61", "--concurrent-users", str(users),
                            "--max-context")
    rows = {r["id"]: r["max_context_tokens"] for r in report["inverse"]["per_layout"]}
    for tp in (1, 2, 4, 8):
        fitting = [c for c in range(1, 40961) if (_qwen_total(tp, 8, c) or 0) >= users]
        assert rows[f"tp{tp}"] == (max(fitting) if fitting else None), tp
    best = max((v for v in rows.values() if v), default=None)
    assert report["inverse"]["max_context_tokens"] == best
    assert code == (0 if best else 1)
    if best:
        assert report["context_tokens"] == best and report["fits"] is True


def test_max_context_for_attention_dp_matches_brute_force():
    # GLM-5.3 on one B300 node, nominal basis, 16 sequences; 54,728 B per token per rank
    # (latent copied on every rank), see tests/test_dpa.py. Attention-DP layouts split the
    # 20,998,426,304 B of non-expert tensors over their attention TP (8 / A ranks).
    args = ("--system", "dgx-b300", "--tp", "8", "--concurrent-users", "16", "--kv-dtype", "fp8",
            "--parallelism", "sglang-dpa", "--cache-layout", "sglang-dsa-scaled", "--mtp",
            "--runtime-reserve-gib", "8", "--utilization", "0.8", "--memory-basis", "nominal",
            "--max-context")
    code, report = run_json(GLM, *args)
    rows = {r["id"]: r["max_context_tokens"] for r in report["inverse"]["per_layout"]}
    budget, reserve, pad = int(288 * GIB * 0.8), 8 * GIB, 64 * 54728
    tp8_w = -(-(20998426304 + 734618714112) // 8)
    dpa_w = {a: -(-20998426304 // (8 // a)) + 734618714112 // 8 for a in (8, 4, 2, 1)}
    cases = {f"sglang-dpa-g8-a{a}": (dpa_w[a] + pad, a) for a in (8, 4, 2, 1)}
    cases["tp8"] = (tp8_w, 1)
    for lid, (fixed, groups) in cases.items():
        left = budget - fixed - reserve
        fitting = [c for c in range(1, 1048577, 1) if left // (54728 * c) * groups >= 16]
        assert rows[lid] == (max(fitting) if fitting else None), lid
    assert code == 0 and report["inverse"]["best"]["id"] == "sglang-dpa-g8-a8"


def _min_gpus(users: int, ceiling: int) -> int | None:
    for n in range(1, ceiling + 1):
        if any((_qwen_total(tp, n, 32768) or 0) >= users for tp in range(1, n + 1)):
            return n
    return None


@pytest.mark.parametrize(("users", "ceiling"), [(1, 16), (8, 16), (40, 16), (64, 16),
                                                (65, 16), (130, 16), (300, 16)])
def test_min_gpus_matches_brute_force(users, ceiling):
    code, report = run_json(QWEN, "--hardware", "h100-80", "--context", "32k", "--kv-dtype",
                            "bf16", "--weight-gib", "61", "--concurrent-users", str(users),
                            "--gpus", str(ceiling), "--min-gpus")
    want = _min_gpus(users, ceiling)
    assert report["inverse"]["min_gpus"] == want
    assert code == (0 if want else 1)
    if want:
        assert report["hardware"]["gpus"] == want
        assert report["recommended"]["max_sequences"] >= users


def test_inverse_text_and_bad_input(tmp_path):
    code, text, _ = run_cli(QWEN, "--hardware", "h100-80", "--gpus", "8", "--weight-gib", "61",
                            "--concurrent-users", "40", "--max-context")
    assert code == 0 and text.splitlines()[3].startswith("MAX CONTEXT:")
    for args, needle in ((["--max-context"], "needs --hardware"),
                         (["--system", "dgx-h100", "--min-gpus"], "--min-gpus needs --hardware"),
                         (["--hardware", "h100-80", "--min-gpus"], "weight bytes")):
        model = config_without_weights(QWEN, tmp_path) if needle == "weight bytes" else QWEN
        code, _, err = run_cli(model, *args)
        assert code == 2 and needle in err, err

