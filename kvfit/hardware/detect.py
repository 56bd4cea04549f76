"""The local accelerators: `--hardware auto` and `kvfit hardware detect [--json]`.

kvfit asks NVML when the optional `nvidia-ml-py` package is installed (kvfit.hardware.nvml),
else the driver's own tool, `nvidia-smi --query-gpu=name,memory.total,memory.free
--format=csv,noheader,nounits` (one line per GPU, MiB), and maps each name to a hardware
preset by the NAMES table below (most specific pattern first).
A plan on `--hardware auto` runs on N x that preset (N = the GPUs seen, or --gpus when
smaller) and says what it saw; `--memory-basis free` budgets from the least free GPU's free
memory instead of the preset's. Without nvidia-smi, with GPUs of two kinds, or with a name no
preset matches, the run exits 2 with one paragraph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..errors import UsageError

QUERY = ["--query-gpu=name,memory.total,memory.free", "--format=csv,noheader,nounits"]
# nvidia-smi product names -> preset ids (case-insensitive regex, first match wins).
NAMES = [
    (r"\bGB10\b", "dgx-spark"), (r"\bGB200\b", "gb200-186"), (r"\bGB300\b", "gb300-288"),
    (r"\bGH200\b.*\b144", "gh200-144"), (r"\bGH200\b", "gh200-96"),
    (r"\bH200\b.*\bNVL\b", "h200-nvl-141"), (r"\bH200\b", "h200-141"),
    (r"\bH100\b.*\bNVL\b", "h100-nvl-94"), (r"\bH100\b.*\bPCIe\b", "h100-pcie-80"),
    (r"\bH100\b", "h100-80"), (r"\bH20\b", "h20-96"),
    (r"\bB300\b", "b300-288"), (r"\bB200\b", "b200-180"),
    (r"\bA100\b.*\b40GB\b", "a100-40"), (r"\bA100\b.*\bPCIe\b", "a100-pcie-80"),
    (r"\bA100\b", "a100-80"), (r"\bA10G\b", "a10g-24"), (r"\bA10\b", "a10-24"),
    (r"\bL40S\b", "l40s-48"), (r"\bL4\b", "l4-24"),
    (r"\bRTX PRO 6000\b", "rtx-pro-6000-96"), (r"\bRTX 5090\b", "rtx-5090-32"),
    (r"\bRTX 4090\b", "rtx-4090-24"), (r"\bThor\b", "jetson-thor-128"),
]
NO_TOOL = ("--hardware auto: no nvidia-smi on PATH, so kvfit cannot see a local NVIDIA GPU "
           "(none is installed, the driver is missing, or this is a container without GPU "
           "access; NVML was not available either: the optional nvidia-ml-py package is not "
           "installed or could not reach a driver).")
NO_TOOL_HINT = ("Name the accelerator instead: --hardware h100-80 --gpus 8, --system dgx-spark, "
                "or --hardware custom:<GiB> (`kvfit --list-hardware` lists the presets).")


@dataclass(frozen=True, slots=True)
class Gpu:
    """One line of nvidia-smi: name, total and free MiB (None where it reports [N/A])."""

    index: int
    name: str
    total_mib: int | None
    free_mib: int | None


MAX_OUTPUT_BYTES = 1 << 20   # about 100 bytes a GPU: 10,000 GPUs' worth
MAX_GPUS = 4096
MAX_MIB = 100_000 * 1024     # 100,000 GiB: far beyond any accelerator
_NOT_REPORTED = re.compile(r"\[[A-Za-z /]{1,40}\]")     # [N/A], [Not Supported], ...


def _mib(text: str, line: str) -> int | None:
    """A memory figure in MiB (None where nvidia-smi says [N/A]); exit 2 on anything else."""
    from ..numbers import parse_real, shown

    text = text.strip()
    if _NOT_REPORTED.fullmatch(text):
        return None
    value = parse_real(text) if re.fullmatch(r"[0-9]{1,12}(\.[0-9]{1,6})?", text) else None
    if value is None or value > MAX_MIB:
        raise UsageError(f"--hardware auto: nvidia-smi's line {shown(line)} gives the memory "
                         f"figure {shown(text)}, not a number of MiB from 0 to {MAX_MIB:,}.",
                         hint=NO_TOOL_HINT)
    return int(value)


def _run(tool: str, timeout: float) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) of nvidia-smi, each stream read up to MAX_OUTPUT_BYTES and
    the whole run within `timeout` seconds; the tool is killed past either bound."""
    import os
    import selectors
    import subprocess
    import time

    try:
        proc = subprocess.Popen([tool, *QUERY], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        raise UsageError(f"--hardware auto: nvidia-smi did not start ({exc.strerror}).",
                         hint=NO_TOOL_HINT) from None
    got = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    deadline = time.monotonic() + timeout
    problem = None
    try:
        with selectors.DefaultSelector() as sel:
            for stream in got:
                sel.register(stream, selectors.EVENT_READ)
            while sel.get_map() and problem is None:
                left = deadline - time.monotonic()
                ready = sel.select(left) if left > 0 else []
                if not ready:
                    problem = f"did not answer within {timeout:g} s"
                for key, _ in ready:
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        sel.unregister(key.fileobj)
                    elif len(got[key.fileobj]) + len(chunk) > MAX_OUTPUT_BYTES:
                        problem = f"printed more than {MAX_OUTPUT_BYTES:,} bytes"
                    else:
                        got[key.fileobj] += chunk
        if problem is None:
            try:
                code = proc.wait(max(deadline - time.monotonic(), 0.05))
            except subprocess.TimeoutExpired:
                problem = f"did not exit within {timeout:g} s"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    if problem is not None:
        raise UsageError(f"--hardware auto: nvidia-smi {problem}; kvfit stopped it.",
                         hint=NO_TOOL_HINT)
    return code, bytes(got[proc.stdout]), bytes(got[proc.stderr])


def query(timeout: float = 15.0) -> list[Gpu]:
    """The local GPUs as nvidia-smi reports them (exit 2 when it cannot answer)."""
    import shutil

    tool = shutil.which("nvidia-smi")
    if tool is None:
        raise UsageError(NO_TOOL, hint=NO_TOOL_HINT)
    return read_output(*_run(tool, timeout))


def read_output(code: int, out: bytes, err: bytes) -> list[Gpu]:
    """The GPUs in nvidia-smi's output (its exit code, stdout and stderr bytes), or exit 2."""
    from ..numbers import shown

    try:
        stdout = out.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("--hardware auto: nvidia-smi printed bytes that are not UTF-8 text, "
                         "so kvfit cannot read its GPU list.", hint=NO_TOOL_HINT) from None
    lines = [x for x in stdout.splitlines() if x.strip()]
    if code != 0 or not lines:
        said = (err.decode("utf-8", "replace") or stdout).strip().splitlines()
        raise UsageError("--hardware auto: nvidia-smi found no usable GPU (exit "
                         f"{code}{': ' + said[0][:200] if said else ''}).",
                         hint=NO_TOOL_HINT)
    if len(lines) > MAX_GPUS:
        raise UsageError(f"--hardware auto: nvidia-smi lists {len(lines):,} lines, more GPUs "
                         f"than kvfit plans on one host ({MAX_GPUS:,}).", hint=NO_TOOL_HINT)
    gpus = []
    for i, line in enumerate(lines):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3 or not parts[0] or len(parts[0]) > 200:
            raise UsageError(f"--hardware auto: cannot read nvidia-smi's line {shown(line)} "
                             "(expected name, memory.total, memory.free).", hint=NO_TOOL_HINT)
        gpus.append(Gpu(i, parts[0], _mib(parts[1], line), _mib(parts[2], line)))
    return gpus


def preset_for(name: str) -> str | None:
    """The hardware preset id for an nvidia-smi product name (None when none matches)."""
    for pattern, preset in NAMES:
        if re.search(pattern, name, re.IGNORECASE):
            return preset
    return None


def query_any() -> tuple[list[Gpu], str, str]:
    """(GPUs, the source's short name, how it was asked): NVML first, else nvidia-smi."""
    from . import nvml

    found = nvml.query()
    if found is not None:
        return ([Gpu(*g) for g in found], "NVML",
                "NVML (nvidia-ml-py): nvmlDeviceGetName, nvmlDeviceGetMemoryInfo")
    return query(), "nvidia-smi", "nvidia-smi " + " ".join(QUERY)


def detect(gpus: list[Gpu] | None = None) -> dict:
    """What was seen and the preset it maps to: {"tool", "source", "gpus", "count", "name",
    "preset", "total_mib", "free_mib" (least free GPU), "unified", "notes"}; exit 2 when
    unmappable. `gpus` given: those (a test's), attributed to nvidia-smi."""
    from .presets import find_accelerator

    if gpus is None:
        gpus, source, tool = query_any()
    else:
        source, tool = "nvidia-smi", "nvidia-smi " + " ".join(QUERY)
    for g in gpus:
        if any(v is not None and not 0 <= v <= MAX_MIB for v in (g.total_mib, g.free_mib)):
            raise UsageError(f"--hardware auto: {source} reports a memory figure for GPU "
                             f"{g.index} that is not a number of MiB from 0 to {MAX_MIB:,}.",
                             hint=NO_TOOL_HINT)
        if g.total_mib is not None and g.free_mib is not None and g.free_mib > g.total_mib:
            raise UsageError(f"--hardware auto: {source} reports {g.free_mib:,} MiB free of "
                             f"{g.total_mib:,} MiB total on GPU {g.index}; free memory cannot "
                             "exceed the total, so kvfit does not trust these figures.",
                             hint=NO_TOOL_HINT)
    names = sorted({g.name for g in gpus})
    seen = [{"index": g.index, "name": g.name, "total_mib": g.total_mib,
             "free_mib": g.free_mib, "preset": preset_for(g.name)} for g in gpus]
    if len(names) > 1:
        raise UsageError(f"--hardware auto: {source} reports GPUs of {len(names)} kinds "
                         f"({'; '.join(names)}); kvfit plans one accelerator type.",
                         hint="Pass --hardware ID --gpus N for the GPUs to plan on.")
    preset = preset_for(names[0])
    total = min((g.total_mib for g in gpus if g.total_mib is not None), default=None)
    if preset is None:
        size = f"custom:{total / 1024:.0f}" if total else "custom:<GiB>"
        raise UsageError(f"--hardware auto: {source} reports '{names[0]}'"
                         + (f" ({total:,} MiB)" if total else "") + ", which no kvfit "
                         "hardware preset matches.", hint=f"Pass --hardware {size} (its "
                         "memory in GiB) or a preset id from `kvfit --list-hardware`.")
    acc = find_accelerator(preset)
    free = [g.free_mib for g in gpus]
    most = max((f for f in free if f is not None), default=None)
    if most is not None and acc.visible_mib and most > acc.visible_mib:
        raise UsageError(f"--hardware auto: {source} reports {most:,} MiB free on a GPU it "
                         f"names '{names[0]}', whose preset {acc.id} has {acc.visible_mib:,} MiB "
                         "in all; free memory cannot exceed the card's total, so kvfit does "
                         "not trust these figures.", hint=NO_TOOL_HINT)
    out = {"tool": tool, "source": source, "gpus": seen, "count": len(gpus),
           "name": names[0], "preset": acc.id, "total_mib": total,
           "free_mib": None if None in free else min(free), "unified": acc.unified,
           "notes": []}
    if total and acc.visible_mib and abs(total - acc.visible_mib) > 0.02 * acc.visible_mib:
        out["notes"].append(f"{source} reports {total:,} MiB per GPU, the {acc.id} preset "
                            f"{acc.visible_mib:,} MiB: the plan uses the preset's figure "
                            "(--memory-basis free or --device-memory-gib budget otherwise).")
    if acc.unified:
        out["notes"].append(f"{acc.name} has unified memory shared with the CPU and the "
                            "operating system: kvfit plans on the preset's documented planning "
                            f"default, not on what {source} reports; close other programs "
                            "and check the budget before serving.")
    return out


def describe(d: dict, used: int, lead: str = "--hardware auto: ", verb: str = "planned on"
             ) -> str:
    """One sentence: what the driver (NVML or nvidia-smi) saw and what the plan runs on."""
    mem = (f"{d['total_mib']:,} MiB total" if d["total_mib"] else "memory total not reported")
    if d["free_mib"] is not None:
        mem += f", {d['free_mib']:,} MiB free on the least free"
    subset = f" (the first {used} of {d['count']}: --gpus)" if used < d["count"] else ""
    return (f"{lead}{d.get('source', 'nvidia-smi')} sees {d['count']} x {d['name']} ({mem}); {verb} "
            f"{used} x {d['preset']}{subset}.")


def seen(system, gpus) -> tuple[dict, int]:
    """(what --hardware auto detects, the GPUs to plan on: all, or --gpus of them)."""
    if system is not None:
        raise UsageError("--hardware auto and --system both name the accelerators; give one.")
    d = detect()
    used = d["count"] if gpus is None else gpus
    if not 0 < used <= d["count"]:
        raise UsageError(f"--gpus {gpus} with --hardware auto: {d['source']} sees "
                         f"{d['count']} x {d['name']}.", hint="Give at most that many, or "
                         "name the hardware (--hardware ID --gpus N) to plan GPUs not here.")
    return d, used


def apply(req, warnings: list[str]):
    """(request on the detected preset, the report's `detected_hardware`) for --hardware auto;
    the request unchanged and None otherwise."""
    if req.memory_basis == "free" and str(req.hardware or "").casefold() != "auto":
        raise UsageError("--memory-basis free budgets from the free memory nvidia-smi reports, "
                         "so it needs --hardware auto.", hint="Add --hardware auto, or use "
                         "--device-memory-gib G for a figure you measured.")
    if str(req.hardware or "").casefold() != "auto":
        return req, None
    d, used = seen(req.system, req.gpus)
    if req.memory_basis == "free" and d["free_mib"] is None:
        raise UsageError(f"--memory-basis free: {d['source']} reports no free memory for "
                         f"{d['name']}" + (" (unified memory)" if d["unified"] else "") + ".",
                         hint="Use --device-memory-gib G with the memory you can give the "
                              "engine (on a unified-memory system, what `free -g` leaves).")
    warnings.extend(d["notes"])
    return (replace(req, hardware=d["preset"], gpus=used, detected=d),
            d | {"planned_gpus": used, "summary": describe(d, used)})
