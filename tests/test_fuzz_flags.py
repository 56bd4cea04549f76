"""Random flag values never crash kvfit: every run answers or exits 2 with one paragraph."""

from __future__ import annotations

import random
from pathlib import Path

from conftest import run_cli

QWEN = Path(__file__).resolve().parent / "architectures" / "qwen3" / "configs" / "Qwen--Qwen3-32B"
FLAGS = ["--context", "--kv-dtype", "--index-dtype", "--weight-gib", "--hardware", "--gpus",
         "--tp", "--utilization", "--runtime-reserve-gib", "--concurrent-users",
         "--active-sequences-per-user", "--memory-basis", "--system", "--nodes",
         "--device-memory-gib", "--cache-layout", "--parallelism", "--max-nodes"]
VALUES = ["0", "-1", "1", "8", "3", "1e309", "nan", "inf", "32k", "1m", "9" * 40, "", "auto",
          "bf16", "fp4", "h100-80", "custom:96", "custom:-5", "dgx-h100", "dgx-spark", "x",
          "0.5", "2", "nominal", "sglang-dpa", "vllm-fp8-mla", "--json"]


def test_random_flag_values_exit_cleanly():
    rng = random.Random("kvfit-flags")
    codes = set()
    for _ in range(120):
        argv = [str(QWEN)]
        for flag in rng.sample(FLAGS, rng.randint(1, 5)):
            argv += [flag, rng.choice(VALUES)]
        code, _, err = run_cli(*argv)
        assert code in (0, 1, 2, 5), (argv, err)
        assert "Traceback" not in err, (argv, err)
        if code == 2:
            assert err.startswith("kvfit: ") and err.count("\n") == 1, (argv, err)
        codes.add(code)
    assert codes >= {2} and codes & {0, 5}   # answers (judged or state only) and refusals
