"""explain-log on logs that are huge, cut short, unreadable or about another TP: a streamed
answer or one paragraph (exit 2), in a child process capped at 512 MiB where size matters
(tests/hostile/bounded.py); never an internal error (exit 70)."""

from __future__ import annotations

import errno
import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from engine_log_cases import CONFIGS, LOGS, load_cases
from hostile.bounded import refused, run_bounded

from kvfit.cli.explain_log import MAX_LOG_BYTES, main
from kvfit.engines import logparse

LOG = LOGS / "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1.log"
MODEL = CONFIGS / "meta-llama--Llama-3.1-8B"
SGLANG = LOGS / "sglang-vunknown-qwen3-14b-rtxa6000.log"
CASES = {c.slug: c for c in load_cases()}
# A request-log line as vLLM prints it once serving (loggers.py), none of it a start-up line.
FILLER = ("(APIServer pid=1) INFO 04-22 01:50:15 [loggers.py:123] Engine 000: Avg prompt "
          "throughput: 0.0 tokens/s, Running: 0 reqs\n")


def cli(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def test_a_1_gib_log_is_refused_by_its_size(tmp_path):
    # was: read whole (11 s, 2 GB)
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        f.truncate(1 << 30)                      # sparse: 1 GiB without the disk space
    refused(*run_bounded("explain-log", big, "--model-dir", MODEL), "reads at most")


def test_a_1_gib_stream_on_stdin_is_cut_off(tmp_path):
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        f.truncate(1 << 30)
    with big.open("rb") as stream:
        code, out, err = run_bounded("explain-log", "-", "--model-dir", MODEL, stdin=stream)
    refused(code, out, err, f"more than {MAX_LOG_BYTES:,} bytes")


def test_a_million_line_log_is_streamed_to_the_same_answer(tmp_path):
    # was: 14 s. The start-up lines first, then 10**6 request lines: the same rows.
    path = tmp_path / "long.log"
    with path.open("w") as f:
        f.write(LOG.read_text())
        f.write(FILLER * 1_000_000)
    code, out, err = run_bounded("explain-log", path, "--model-dir", MODEL, "--json")
    assert code == 0, err[-600:]
    want = cli(LOG, "--model-dir", MODEL, "--json")
    assert json.loads(out) == json.loads(want[1])


def test_a_log_of_start_up_lines_without_end_is_refused(tmp_path):
    path = tmp_path / "loop.log"
    line = "(EngineCore pid=1) INFO [gpu_worker.py:436] Available KV cache memory: 58.11 GiB\n"
    path.write_text(LOG.read_text() + line * (logparse.MAX_KEPT_LINES + 1))
    refused(*run_bounded("explain-log", path, "--model-dir", MODEL), "lines that look like")


def test_a_directory_is_not_a_log(tmp_path):
    refused(*cli(tmp_path, "--model-dir", MODEL), "is not a regular file")


def test_a_failing_read_is_one_paragraph(tmp_path, monkeypatch):
    # a read that fails (EIO) mid-file, as a bad disk or a network file system gives
    class Failing(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, b):
            raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(Path, "open", lambda self, *a, **k: io.BufferedReader(Failing()))
    refused(*cli(LOG, "--model-dir", MODEL), "Input/output error")


def test_a_failing_read_of_stdin_is_one_paragraph(monkeypatch):
    class Failing(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, b):
            raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(Failing())))
    refused(*cli("-", "--model-dir", MODEL), "cannot read log 'standard input'")


def _cut_after(text: str, needle: str) -> str:
    i = text.index(needle) + len(needle)
    return text[:i]


@pytest.mark.parametrize(("log", "needle"), [
    # SGLang's "Load weight end." line cut between 'avail mem=' and 'mem usage=': was KeyError
    # 'weights_gib'
    (SGLANG, "avail mem=19.67 GB,"),
    # vLLM cut mid-way through the FULL graph estimate before any PIECEWISE count: was
    # KeyError 'graphs_piecewise'
    (LOG, "Estimated FULL CUDA graph memory: 260.00 MiB first-capture + (51"),
])
def test_a_log_cut_mid_line_answers_or_refuses(tmp_path, log, needle):
    text = log.read_text()
    cut = _cut_after(text, needle)
    if "PIECEWISE=" in cut:           # keep only the FULL estimate: drop the PIECEWISE lines
        cut = "\n".join(x for x in cut.splitlines() if "PIECEWISE" not in x)
    path = tmp_path / "cut.log"
    path.write_text(cut + "\nAvailable KV cache memory: 1.00 GiB\n" if log == LOG else cut
                    + "\n[2025-05-19 01:06:15] KV Cache is allocated. #tokens: 1000\n")
    model = MODEL if log == LOG else CASES[log.stem].model_dir
    code, out, err = cli(path, "--model-dir", model, "--json")
    assert code in (0, 2) and "internal error" not in err, err
    if code == 2:
        refused(code, out, err)


def test_a_rank_of_5000_digits_is_no_rank(tmp_path):
    # was: int() of the 5,000 digits after Worker_TP: ValueError, exit 70
    text = LOG.read_text().replace("(EngineCore pid=243)", f"(Worker_TP{'9' * 5000} pid=243)")
    path = tmp_path / "ranks.log"
    path.write_text(text)
    code, out, err = cli(path, "--model-dir", MODEL)
    assert code == 0 and "TP=1 (assumed)" in out, err


def test_ranks_beyond_the_given_tp_are_refused(tmp_path):
    text = LOG.read_text().replace("(EngineCore pid=243)", "(Worker_TP3 pid=243)", 1)
    path = tmp_path / "ranks.log"
    path.write_text(text)
    refused(*cli(path, "--model-dir", MODEL, "--tp", "2"), "rank 3, beyond TP=2 (--tp)")
    refused(*cli(path, "--model-dir", MODEL), "up to Worker_TP3")
    code, out, err = cli(path, "--model-dir", MODEL, "--tp", "4")
    assert code == 0 and "TP=4 (user)" in out, err


def test_a_worker_log_without_its_tp_is_not_guessed():
    # The RTX 3090 log's lines come from Worker_TP0 (vLLM's multi-process workers; the run
    # was TP=2 per its provenance YAML) and it states no tensor_parallel_size: kvfit assumed
    # TP=1 and predicted negative available KV memory. Now it asks for --tp ...
    case = CASES["vllm-0.24.0-qwen3.6-27b-fp8-mtp-2x3090-tp2"]
    path = LOGS / f"{case.slug}.log"
    refused(*cli(path, "--model-dir", case.model_dir, "--hardware", case.hardware),
            "Worker_TP0")
    # ... and with it (and the run's --quantization fp8, from its non-default args: the
    # stand-in config is bf16), no predicted number is negative
    code, out, err = cli(path, "--model-dir", case.model_dir, "--hardware", case.hardware,
                         "--tp", "2", "--quantization", "fp8", "--json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert all(r["predicted"] is None or r["predicted"] >= 0 for r in rows), rows


def test_every_pattern_key_holds_an_anchor():
    keys = {k for ks in logparse.KEYS.values() for k in ks} | set(logparse._ARGS_KEYS)
    assert all(any(a in k for a in logparse.ANCHORS) for k in keys)
    assert set(logparse.KEYS) == set(logparse.VLLM) | set(logparse.SGLANG)


def test_no_fixture_line_a_pattern_reads_lacks_its_keys():
    # the keys only skip lines: every line of every fixture log a pattern matches holds one
    for path in sorted(LOGS.glob("*.log")):
        for line in path.read_text().splitlines():
            for name, pattern in (logparse.VLLM | logparse.SGLANG).items():
                if re.search(pattern, line):
                    assert any(k in line for k in logparse.KEYS[name]), (path.name, name, line)
