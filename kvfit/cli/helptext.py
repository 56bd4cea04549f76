"""The words `kvfit --help` and the man page share: exit codes, examples, environment, files.

One table each, so the --help epilog, the man page's EXIT STATUS / EXAMPLES / ENVIRONMENT /
FILES sections and the test that runs every example (tests/test_manpage.py) cannot drift.
An example's `placeholder` names the words a reader replaces with their own (the test
substitutes fixtures for them); every other word runs as written.
"""

from __future__ import annotations

from dataclasses import dataclass

SUMMARY = ("will a Hugging Face checkpoint fit these GPUs at this context and concurrency, "
           "and if not, what would")

# (code, meaning) - the real codes: kvfit/errors.py, kvfit/cli/main.py, kvfit/preflight and
# kvfit/calibrate.
EXIT_CODES = (
    (0, "answered: the target fits (--sweep: in every cell; fit: at least one checkpoint fits; "
        "calibrate: calibrated; audit: every threshold met)"),
    (1, 'answered, but the target is not met / nothing fits (see "What would fit"); --sweep: '
        "some cell does not meet it; fit: no checkpoint fits; audit: a threshold missed or a "
        "check failed"),
    (2, "bad input (flags, files, configs, replies), unsupported architecture, Hub error, or "
        "an engine probe that timed out / could not run (--check-engine)"),
    (3, "with --require-engine-pass: a requested engine did not get preflight-pass"),
    (4, "kvfit calibrate: the sweep ran but did not fully calibrate"),
    (5, "answered, but the fit could not be judged (weights unknown, or no hardware: a "
        "state-only report); --sweep: some cell could not be judged and none failed"),
    (70, "an unexpected internal error: a kvfit bug (KVFIT_DEBUG=1 shows the traceback)"),
    (130, "interrupted (Ctrl-C)"),
)

CAPACITY = ("Without --engine the static bound (weights + counted state within the budget) "
            "answers; with --engine (or an engine-only flag, or --print-command) the engine's "
            "own pool answers every question, and the static bound is shown beside it.")

ROPE = '\'{"rope_type":"yarn","factor":4,"original_max_position_embeddings":32768}\''


@dataclass(frozen=True, slots=True)
class Example:
    """One example command line (without the leading `kvfit`) and what it shows."""

    args: str
    note: str = ""
    placeholder: tuple[str, ...] = ()     # words the reader replaces (ENV/bin/python, ...)


EXAMPLES = (
    Example("Qwen/Qwen3-32B --hardware h100-80 --gpus 8 --context 32k --kv-dtype bf16"),
    Example("Qwen/Qwen3-32B --hardware h100-80 --gpus 8 --context 128k --kv-dtype fp8 "
            f"--rope-scaling {ROPE}", "served at 128k with YaRN, as the model card says"),
    Example("Qwen/Qwen3-32B --hardware h100-80 --gpus 8 --context 32k --verbose",
            "with the provenance of every field"),
    Example("Qwen/Qwen3-32B --system dgx-h100 --nodes 2 --context 32k"),
    Example("zai-org/GLM-5.3 --systems dgx-h200 dgx-b200 dgx-b300 --max-nodes 32 "
            "--concurrent-users 25 --active-sequences-per-user 2 --context 1m --kv-dtype fp8 "
            "--parallelism sglang-dpa --cache-layout sglang-dsa-scaled --mtp",
            "the fewest systems"),
    Example("Qwen/Qwen3-32B --hardware h100-80 --gpus 8 --concurrent-users 16 --max-context"),
    Example("Qwen/Qwen3-32B --hardware h100-80 --context 32k --concurrent-users 40 --min-gpus"),
    Example("Qwen/Qwen3-32B --hardware h100-80 --context 32k --engine vllm --print-command vllm",
            "vLLM's own pool, and its launch command"),
    Example("deepseek-ai/DeepSeek-V4-Flash --offline --hardware h100-80 --gpus 8 --context 32k "
            "--engine vllm --tune", "the vLLM settings that hold the most, and their command"),
    Example("meta-llama/Llama-3.3-70B-Instruct --offline --hardware h100-80 --gpus 4 --pp 2 "
            "--context 32k --engine vllm", "TP x PP x DP layouts: each pipeline stage's weights "
            "and KV; the fullest stage binds"),
    Example("Qwen/Qwen3-32B --offline --hardware h100-80 --gpus 8 --sweep context=8k,32k,128k "
            f"--rope-scaling {ROPE} --plot cap.png", "a table and a chart of every layout"),
    Example("Qwen/Qwen3-32B --offline --hardware h100-80 --gpus 8 --context 32k "
            "--sweep users=16,64,128 --sweep kv-dtype=bf16,fp8", "a grid: users x KV dtype"),
    Example("examples/qwen3-32b-h100.toml --concurrent-users 32", "a TOML preset"),
    Example("openai/gpt-oss-120b --context 128k --check-engine all --engine-python "
            "ENV/bin/python", "ask the installed engines", ("ENV/bin/python",)),
    Example("openai/gpt-oss-20b --hardware auto --context 128k", "the local GPUs, via NVML or nvidia-smi"),
    Example("hardware detect --json", "what --hardware auto sees"),
    Example("fit --hardware dgx-spark --context 128k", "which catalog checkpoints fit one Spark"),
    Example("catalog list", "the offline catalog and where each entry came from"),
    Example("catalog show Qwen/Qwen3-32B", "one entry's files and sources"),
    Example("calibrate examples/calibration-dual-spark.toml --dry-run",
            "measure the plan on the host"),
    Example("specs list", "supported architectures"),
    Example("specs check", "validate the bundled specs; or a contributor's FILE.yaml"),
    Example("audit examples/audit/open-frontier.toml"),
    Example("explain-log vllm.log --model-dir ./checkpoint", "compare an engine's start-up log",
            ("vllm.log", "./checkpoint")),
)

ENVIRONMENT = (
    ("HF_TOKEN", "Hugging Face access token for gated or private repositories (read by "
     "huggingface_hub; never printed: kvfit redacts it from every message)."),
    ("HUGGING_FACE_HUB_TOKEN", "the older name of HF_TOKEN, read when HF_TOKEN is unset."),
    ("HF_OIDC_RESOURCE", "set: the token comes from huggingface_hub's OIDC exchange (CI trusted "
     "publishing), as in the library."),
    ("HF_ENDPOINT", "the Hub to ask (default https://huggingface.co); a mirror works."),
    ("HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY", "proxies for Hub requests, as "
     "huggingface_hub's client reads them (an http:// proxy; https goes through a CONNECT "
     "tunnel)."),
    ("SSL_CERT_FILE, SSL_CERT_DIR", "the CA bundle (file) or directory that verifies the Hub's "
     "TLS certificate, else the system's; TLS is always verified."),
    ("HF_HUB_OFFLINE", "1: never contact the Hub, as --offline (answers from kvfit's cache or "
     "its pinned catalog)."),
    ("HF_HOME", "huggingface_hub's home; kvfit's metadata cache is HF_HOME/kvfit unless "
     "KVFIT_CACHE_DIR is set."),
    ("KVFIT_CACHE_DIR", "kvfit's cache folder (Hub metadata and validated specs); off: no cache "
     "at all, nothing is written."),
    ("XDG_CACHE_HOME", "where the validated-spec cache lives without KVFIT_CACHE_DIR "
     "(default ~/.cache/kvfit/specs)."),
    ("KVFIT_DEBUG", "1: print the traceback of an internal error (exit 70)."),
    ("COLUMNS", "the width --help text is wrapped to (default: the terminal's, else 80)."),
    ("CI", "set: no progress lines on stderr (they are shown only on a terminal, never with "
     "--json)."),
    ("KVFIT_VLLM_PYTHON, KVFIT_SGLANG_PYTHON", "read by kvfit's own opt-in engine tests and "
     "recorders (tests/engine_probe): the Python of a vLLM / SGLang install."),
)

FILES = (
    ("$KVFIT_CACHE_DIR, else $HF_HOME/kvfit", "Hub metadata cache (config.json, indexes, file "
     "sizes per commit); safe to delete."),
    ("$KVFIT_CACHE_DIR/specs, else $XDG_CACHE_HOME/kvfit/specs", "validated spec cache; "
     "safe to delete."),
    ("*.toml", "presets (--config FILE, or FILE.toml as the model): keys named like the long "
     "flags (kv_dtype for --kv-dtype); flags override them. See examples/*.toml."),
    ("specs/*.yaml", "the architecture, hardware, system and engine specs kvfit is built with "
     "(kvfit specs list); kvfit specs check FILE.yaml validates a new one."),
)


def epilog() -> str:
    """The `kvfit --help` epilog: exit codes, capacity model, examples."""
    import textwrap

    out = ["exit codes:"]
    for code, meaning in EXIT_CODES:
        lines = textwrap.wrap(meaning, 80)
        out.append(f"  {code:<3} {lines[0]}")
        out += [f"      {x}" for x in lines[1:]]
    out += ["", "capacity model:"] + ["  " + x for x in textwrap.wrap(CAPACITY, 86)]
    out += ["", "examples:"]
    for ex in EXAMPLES:
        lines = _wrapped(f"kvfit {ex.args}", 86)
        out += ["  " + lines[0]] + [f"      {x}" for x in lines[1:]]
        if ex.note:
            if len(out[-1]) + len(ex.note) < 94:
                out[-1] += f"   ({ex.note})"
            else:
                out.append(f"      ({ex.note})")
    return "\n".join(out) + "\n"


def _wrapped(command: str, width: int) -> list[str]:
    """A command over lines ending in ` \\`, never splitting a flag from its value."""
    import shlex

    groups: list[str] = []
    for token in shlex.split(command):
        word = shlex.quote(token)
        if groups and not token.startswith("-") and groups[-1].startswith("-"):
            groups[-1] += " " + word
        else:
            groups.append(word)
    lines = [""]
    for g in groups:
        if lines[-1] and len(lines[-1]) + 1 + len(g) > width:
            lines.append(g)
        else:
            lines[-1] = f"{lines[-1]} {g}".strip()
    return [x + " \\" for x in lines[:-1]] + lines[-1:]
