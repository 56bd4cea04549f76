"""Every command in README.md and docs/*.md, run offline, and the outputs they show.

A command is a line of a ```bash block that starts with `uv run` or `python3 -m uv run`
(after any `... &&`; continued with `\\`). A shown output is a plain ``` block right after a
```bash block (the output of its last command), or one whose first line is `$ kvfit ...`
(that command); a last line `...` shows only the lines above it (the first lines of the
output). Commands run as `python -m kvfit`
in a scratch folder with HF_HUB_OFFLINE=1; placeholders (`path/to/checkpoint-dir`, ...) get
the files in SUBSTITUTE, and files a command writes go to the scratch folder.

    uv run python tests/docs_sync.py           # say which shown outputs differ (exit 1)
    uv run python tests/docs_sync.py --write   # write what kvfit prints now into the docs

tests/test_docs_commands.py runs every command and checks every shown output is current.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))

# Placeholders in the docs -> files of this repository that stand in for them.
SUBSTITUTE = {
    "path/to/checkpoint-dir": "examples/models/openai--gpt-oss-20b",
    # explain-log: a real vLLM 0.19 start-up log and the checkpoint geometry it ran
    "vllm-startup.log": "tests/fixtures/engine_logs/vllm-0.19.0-codellama-7b-h100-tp1.log",
    "path/to/checkpoint": "tests/architectures/llama/configs/meta-llama--Llama-2-7b-hf",
    "deployment.toml": "examples/calibration-dual-spark.toml",
    "/path/to/vllm-env/bin/python": sys.executable,
}
# Flags whose value is a file the command writes: it goes to the scratch folder.
WRITES = ("--plot", "--output")
# Commands that are not run here, and why (matched on the command as written).
NOT_RUN = {
    "uv run pytest": "the test suite itself (tests/test_quickstart.py runs the quick start)",
    "uv run kvfit calibrate deployment.toml --output calibration.json":
        "measures a running vLLM server; the --dry-run of the same preset runs",
    "uv run kvfit-calibrate deployment.toml --output calibration.json":
        "measures a running vLLM server; the --dry-run of the same preset runs",
    "uv run --extra web kvfit serve --offline":
        "serves until stopped; tests/web/test_serve_cmd.py starts it and reads its address",
}
# Exit codes other than 0 that a command may give here, and why.
EXIT = {
    "uv run kvfit hardware detect": ({0, 2}, "exit 2 on a host without an NVIDIA GPU"),
    "uv run kvfit openai/gpt-oss-120b --context 128k --check-engine all --engine-python "
    "/path/to/vllm-env/bin/python": ({5}, "no --hardware: a state-only plan (exit 5)"),
}
# Shown outputs that cannot be produced on a host without the engine they describe.
ILLUSTRATION = "<!-- docs-sync: illustration -->"


@dataclass
class Command:
    doc: str
    line: int
    text: str               # as written (continuations joined, comment dropped)


@dataclass
class Shown:
    doc: str
    start: int              # index of the first line of the block's body
    end: int                # index of the closing fence
    command: Command
    lines: list[str]        # the body, without a `$ kvfit` first line and a `...` last line
    prompt: bool            # the first line is the command
    prefix: bool            # ends in `...`: only the first lines are shown


def _fences(lines: list[str]):
    """(language, opening index, closing index) of each fenced block."""
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*```(\w*)\s*$", lines[i])
        if m:
            j = i + 1
            while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
                j += 1
            yield m.group(1), i, j
            i = j
        i += 1


def _commands(doc: str, body: list[str], first: int) -> list[Command]:
    out, buf, at = [], "", None
    for n, raw in enumerate(body):
        line = raw.strip().split("&&")[-1].strip()      # `python3 -m pip install uv && ...`
        if line.startswith("python3 -m uv run"):        # the quick start's spelling
            line = "uv run" + line[len("python3 -m uv run"):]
        if not buf and not line.startswith("uv run"):
            continue
        at = first + n + 1 if not buf else at
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        words = shlex.split(buf, comments=True)
        out.append(Command(doc, at, " ".join(shlex.quote(w) if w != shlex.quote(w) else w
                                             for w in words)))
        buf = ""
    return out


def parse(doc: str, text: str) -> tuple[list[Command], list[Shown]]:
    lines = text.splitlines()
    commands: list[Command] = []
    shown: list[Shown] = []
    last_bash = None
    for lang, i, j in _fences(lines):
        body = lines[i + 1:j]
        if lang == "bash":
            found = _commands(doc, body, i + 1)
            commands += found
            last_bash = (j, found[-1] if found else None)
            continue
        if lang:
            continue
        illustration = i > 0 and lines[i - 1].strip() == ILLUSTRATION
        prompt = bool(body) and body[0].startswith("$ kvfit ")
        if prompt:
            cmd = Command(doc, i + 2, "uv run " + body[0][2:].strip())
        elif last_bash and last_bash[1] and not any(x.strip() for x in lines[last_bash[0] + 1:i]):
            cmd = last_bash[1]
        else:
            continue                       # a synopsis or a listing, not an output
        if illustration:
            continue
        rest = body[1:] if prompt else body
        prefix = bool(rest) and rest[-1].strip() == "..."
        shown.append(Shown(doc, i + 1, j, cmd, rest[:-1] if prefix else rest, prompt, prefix))
    return commands, shown


def argv_of(command: str, scratch: Path) -> list[str]:
    """`python -m kvfit ...` for a documented `uv run [--extra X] kvfit ...` command."""
    words = shlex.split(command)
    assert words[:2] == ["uv", "run"], command
    words = words[2:]
    while words and words[0].startswith("--"):           # uv run --extra plot
        words = words[2:] if words[0] in ("--extra", "--with") else words[1:]
    tool, args = words[0], words[1:]
    sub = {"kvfit": [], "kvfit-calibrate": ["calibrate"], "kvfit-audit": ["audit"]}[tool]
    out = []
    for k, w in enumerate(args):
        w = SUBSTITUTE.get(w, w)
        if k and args[k - 1] in WRITES:
            w = str(scratch / Path(w).name)
        elif not w.startswith("-") and ("/" in w or "." in w) and (ROOT / w).exists():
            w = str(ROOT / w)
        out.append(w)
    return [sys.executable, "-m", "kvfit", *sub, *out]


@cache
def run(command: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of a documented command, offline, paths made relative."""
    with tempfile.TemporaryDirectory(prefix="kvfit-docs-") as tmp:
        scratch = Path(tmp)
        env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(scratch / "hf"), CI="1",
                   COLUMNS="100", KVFIT_CACHE_DIR=str(scratch / "cache"))
        proc = subprocess.run(argv_of(command, scratch), cwd=scratch, env=env,
                              capture_output=True, text=True, timeout=600)
        out, err = (s.replace(str(ROOT) + "/", "").replace(str(scratch) + "/", "")
                    for s in (proc.stdout, proc.stderr))
    return proc.returncode, out, err


def _clean(lines) -> list[str]:
    out = [x.rstrip() for x in lines]
    while out and not out[-1]:
        out.pop()
    return out


def expected(shown: Shown) -> list[str]:
    """What the block should hold now: the command's output (its first lines for `...`)."""
    _, out, _ = run(shown.command.text)
    lines = _clean(out.splitlines())
    return lines[:len(shown.lines)] if shown.prefix else lines


def stale(text: str, doc: str) -> list[str]:
    """One line per shown output of `text` that differs from what kvfit prints now."""
    problems = []
    for s in parse(doc, text)[1]:
        want = expected(s)
        if _clean(s.lines) != want:
            first = next((i for i, (a, b) in enumerate(zip(_clean(s.lines), want, strict=False))
                          if a != b),
                         min(len(s.lines), len(want)))
            problems.append(f"{doc}:{s.start + first + 1 + s.prompt}: shown output of "
                            f"`{s.command.text}` differs from what it prints now")
    return problems


def write(text: str, doc: str) -> str:
    lines = text.splitlines()
    for s in reversed(parse(doc, text)[1]):
        body = expected(s) + (["..."] if s.prefix else [])
        head = lines[s.start:s.start + 1] if s.prompt else []
        lines[s.start:s.end] = head + body
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    problems = []
    for doc in DOCS:
        path = ROOT / doc
        text = path.read_text("utf-8")
        if "--write" in argv:
            new = write(text, doc)
            if new != text:
                path.write_text(new, "utf-8")
                print(f"wrote {doc}")
        else:
            problems += stale(text, doc)
    print("\n".join(problems) or "every shown output is current")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
