"""explain-log on a doctored log: numbers that are not numbers are ignored with a note, engine
arguments out of range exit 2; never a traceback or a negative prediction."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest
from engine_log_cases import CONFIGS, LOGS

from kvfit.cli.explain_log import main

LOG = LOGS / "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1.log"
MODEL = CONFIGS / "meta-llama--Llama-3.1-8B"


def cli(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def _doctored(tmp_path, old: str, new: str):
    text = LOG.read_text()
    assert old in text
    path = tmp_path / "doctored.log"
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize(("old", "new", "needle"), [
    ("'gpu_memory_utilization': 0.95", "'gpu_memory_utilization': -1",
     "gpu_memory_utilization = '-1', which is not a fraction in (0, 1]"),
    ("'gpu_memory_utilization': 0.95", "'gpu_memory_utilization': 1e999",
     "gpu_memory_utilization = 'inf'"),
    ("'max_model_len': 16384", "'max_model_len': 'eight'",
     "max_model_len = 'eight', which is not a whole number of at least 1"),
    ("'max_model_len': 16384", "'max_model_len': 01", "max_model_len = '01'"),
    ("'max_model_len': 16384", "'max_model_len': 0", "max_model_len = '0'"),
    ("'max_model_len': 16384", "'max_model_len': True", "max_model_len = 'True'"),
])
def test_bad_engine_arguments_exit_2(tmp_path, old, new, needle):
    code, out, err = cli(_doctored(tmp_path, old, new), "--model-dir", MODEL)
    assert code == 2 and not out, err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(("old", "new", "name"), [
    ("Available KV cache memory: 58.11 GiB", "Available KV cache memory: . GiB", "available_gib"),
    ("Available KV cache memory: 58.11 GiB", "Available KV cache memory: 1.2.3 GiB",
     "available_gib"),
    ("total_memory=79.19GiB", "total_memory=0GiB", "total_gib"),
    ("Available KV cache memory: 58.11 GiB",
     "Available KV cache memory: 58.11 GiB\nMultiplying the GPU KV cache size by the "
     "dcp_world_size 0", "dcp"),
    ("Requested memory: 0.950000 (util)", "Requested memory: 0.000 (util)",
     "gpu_memory_utilization"),
])
def test_unusable_printed_numbers_are_ignored_with_a_note(tmp_path, old, new, name):
    code, out, err = cli(_doctored(tmp_path, old, new), "--model-dir", MODEL, "--json")
    assert code == 0, err
    assert "Traceback" not in err
    doc = json.loads(out)
    assert any(n.startswith(f"ignored the log's {name} value") for n in doc["notes"])
    predicted = [r["predicted"] for r in doc["rows"] if isinstance(r["predicted"], int | float)]
    assert predicted and all(v >= 0 for v in predicted)


# A number 100,000 digits long where the patterns look for one: each line costs one pass. Before
# the patterns were made linear (kvfit/engines/logparse.py: possessive _NUM, numbers that start a
# pattern start their run) a 5,000-digit run cost ~0.5 s of CPU per pattern per line, quadratic
# in its length: this log would take ~15 CPU minutes a pattern. The child gets 60 CPU seconds
# (RLIMIT_CPU: CPU time, which a loaded machine does not inflate); it needs well under 1.
_LONG_LOG = r"""
import json, sys
from kvfit.engines.logparse import parse
text = open(sys.argv[1]).read()
run = "9" * 100_000
extra = [f"GPU KV cache size: {run}", f"Maximum concurrency for {run} tokens",
         f"Actual usage is 1 GiB for weight, {run} GiB for peak act", f"noise {run}.{run} GiB"]
facts = parse(text + "\n" + "\n".join(extra))
print(json.dumps([facts.printed, parse(text).printed]))
"""


def test_a_very_long_number_is_read_in_linear_time():
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (60, 60))

    proc = subprocess.run([sys.executable, "-c", _LONG_LOG, str(LOG)], capture_output=True,
                          text=True, preexec_fn=limit, check=False)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-400:])
    doctored, plain = json.loads(proc.stdout)
    # the lines with the long runs match nothing new: every number is the real log's own
    assert doctored == plain and plain["kv_tokens"] == 476016 and plain["concurrency_len"] == 16384
