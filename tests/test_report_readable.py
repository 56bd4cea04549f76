"""A report people read (issue 15, part 5): the default text report is the answer, --verbose
restores the provenance, numbers are grouped one way and counted nouns agree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kvfit.report.words import count, gib, noun, number, plural

from conftest import run_cli

SNAPSHOTS = Path(__file__).parent / "__snapshots__"
ROPE = '{"rope_type":"yarn","factor":4,"original_max_position_embeddings":32768}'
QWEN_128K = ("Qwen/Qwen3-32B", "--offline", "--hardware", "h100-80", "--gpus", "8", "--context",
             "128k", "--kv-dtype", "fp8", "--rope-scaling", ROPE)
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
PROVENANCE = ("layers = 64 (config: num_hidden_layers)", "kv_heads = 8 (config: "
              "num_key_value_heads)", "layers full: 64 [0-63]", "Dtypes:",
              "kv: fp8 (1 B/value; user: --kv-dtype fp8)", "Checkpoint:",
              "config pinned from ai-dynamo/aiconfigurator@", "Assumptions:")


def test_must_show_qwen3_32b_on_8_h100_is_short_and_verbose_restores_provenance():
    code, short, _ = run_cli(*QWEN_128K)
    code_v, verbose, _ = run_cli(*QWEN_128K, "--verbose")
    assert code == code_v == 0
    lines = short.splitlines()
    assert len(lines) <= 40, len(lines)
    # The answer is on top: verdict, the layout table, the state, where things came from.
    assert lines[1].startswith("FITS (static bound): TP=8 x DP=1: holds 32 sequences")
    assert "Target: 1 user x 1 resident sequence = 1 sequence" in lines
    # 64 layers x 131,072 tokens x 2 (K, V) x 8 kv heads x 128 head_dim x 1 B (fp8)
    # = 17,179,869,184 B per sequence.
    assert "State per sequence: 16.000 GiB (17,179,869,184 B) at 131,072 tokens" in lines
    assert any(x.startswith("Source: config from kvfit's pinned offline catalog") for x in lines)
    for needle in PROVENANCE:
        assert needle not in short and needle in verbose, needle
    # Every number the short report prints is also in the verbose one.
    wanted = set(NUMBER.findall(short))
    have = set(NUMBER.findall(verbose))
    assert wanted <= have, sorted(wanted - have)
    # The verbose report is the short one with sections added, never a second answer.
    body = [x for x in lines if x and not x.startswith(("Source:", "(--verbose"))]
    rest = iter(verbose.splitlines())
    assert all(any(x == y for y in rest) for x in body)     # body is a subsequence


def test_json_is_the_same_with_or_without_verbose():
    _, plain, _ = run_cli(*QWEN_128K, "--json")
    _, verbose, _ = run_cli(*QWEN_128K, "--json", "--verbose")
    assert plain == verbose and json.loads(plain)["architecture"]["fields"]


def test_recommended_names_its_layout_once():
    _, text, _ = run_cli(*QWEN_128K)
    rec = next(x for x in text.splitlines() if x.startswith("Recommended:"))
    # TP=8: 71.683 GiB budget - 7.628 GiB weights = 64.05 GiB / 2.000 GiB = 32 sequences;
    # TP=4: (71.683 - 15.256) / 4.000 = 14 per group x 2 groups = 28.
    assert rec == "Recommended: TP=8 x DP=1: holds the most sequences (32); next best TP=4 x DP=2 holds 28"
    assert rec.count("TP=8 x DP=1") == 1


@pytest.mark.parametrize(("n", "word", "want"), [
    (1, "sequence", "1 sequence"), (2, "sequence", "2 sequences"), (0, "user", "0 users"),
    (1, "user", "1 user"), (3504, "sequence", "3,504 sequences"), (2, "copy", "2 copies"),
    (8, "GPU", "8 GPUs"), (1, "memory domain", "1 memory domain"), (4, "family", "4 families"),
    (2, "box", "2 boxes"), (2, "day", "2 days")])
def test_count_groups_and_agrees(n, word, want):
    assert count(n, word) == want


def test_number_and_gib_formats():
    assert number(3504) == "3,504" and number(None) == "-" and number(True) == "True"
    assert number(1048576.0) == "1,048,576" and number(0.805) == "0.805"
    assert gib(17_179_869_184) == "16.000 GiB" and gib(None) == "unknown"
    assert gib(2**40, 2) == "1,024.00 GiB"
    assert plural("sequence") == "sequences" and noun(1, "node") == "node"


def _text_snapshots():
    return sorted(SNAPSHOTS.rglob("*.txt"))


def test_no_text_snapshot_writes_a_maybe_plural():
    """'user(s)', 'sequence(s)' and friends are gone from every rendered report."""
    bad = {p.name: m.group(0) for p in _text_snapshots()
           for m in [re.search(r"\b[a-z]+\(s\)", p.read_text())] if m}
    assert not bad, bad


def test_no_text_snapshot_says_1_sequences():
    bad = {p.name: m.group(0) for p in _text_snapshots()
           for m in [re.search(r"(?<![\d,.])1 (sequences|users|nodes|GPUs|copies|blocks)\b",
                               p.read_text())] if m}
    assert not bad, bad


UNGROUPED = re.compile(r"(?<![\w.,/@=:+-])\d{4,}(?![\w.,/-])")


def _prose(line: str) -> str:
    """The prose of a report line: launch commands, flags with values, hex and paths dropped."""
    if line.lstrip().startswith(("vllm ", "python", "sglang ", "host ", "benchmark:")):
        return ""
    line = re.sub(r"--[\w-]+[ =]\S+", "", line)       # --context 9788, --port 8000
    return re.sub(r"\S*[/@]\S*", "", line)           # paths, repo@sha, file:line


def test_report_text_groups_every_count():
    """No report line prints a count like 3504 without its thousands separator (flags,
    launch commands, shas and file:line citations aside)."""
    bad = {}
    for p in _text_snapshots():
        if p.parent.name not in ("test_architectures", "test_cli", "test_dpa", "test_systems",
                                 "test_search"):
            continue
        for line in p.read_text().splitlines():
            if line.startswith(("kvfit: ", "error")) or "[config:" in line:
                continue
            hit = UNGROUPED.search(_prose(line))
            if hit:
                bad.setdefault(p.name, []).append(line.strip()[:140])
    assert not bad, dict(list(bad.items())[:5])
