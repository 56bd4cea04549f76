"""Cache dtype widths (exact, as fractions of a byte) and how `--kv-dtype auto` resolves.

4-bit formats carry block scales, included in the width:
  nvfp4: 4-bit E2M1 values + one FP8 (E4M3) scale per 16 values = 4.5 bits = 9/16 byte;
  mxfp4: 4-bit E2M1 values + one E8M0 scale per 32 values = 4.25 bits = 17/32 byte.
(OCP MX spec v1.0 for MXFP4; NVIDIA's NVFP4 description for the 16-value FP8 scale. A per-
tensor FP32 scale is a few bytes per layer and is not counted.)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .errors import UsageError

WIDTHS = {
    "bf16": Fraction(2), "fp16": Fraction(2), "fp32": Fraction(4),
    "fp8": Fraction(1), "fp8_e4m3": Fraction(1), "fp8_e5m2": Fraction(1), "int8": Fraction(1),
    "mxfp4": Fraction(17, 32), "nvfp4": Fraction(9, 16),
}
SCALE_NOTES = {
    "mxfp4": "4-bit values plus one 8-bit scale per 32 values: 4.25 bits per value",
    "nvfp4": "4-bit values plus one FP8 scale per 16 values: 4.5 bits per value",
}
SPELLINGS = {
    "bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
    "fp8_e4m3fn": "fp8_e4m3", "float8_e4m3fn": "fp8_e4m3", "e4m3": "fp8_e4m3",
    "float8_e5m2": "fp8_e5m2", "e5m2": "fp8_e5m2",
}


@dataclass(frozen=True, slots=True)
class CacheDtype:
    """A chosen cache dtype: name, exact bytes per value, and why it was chosen."""

    name: str
    bytes: Fraction
    provenance: str

    @property
    def note(self) -> str | None:
        return SCALE_NOTES.get(self.name)


def normalize(text: str) -> str | None:
    """Canonical dtype name for a spelling, or None if unknown."""
    t = str(text).strip().lower()
    t = SPELLINGS.get(t, t)
    return t if t in WIDTHS else None


def explicit(text: str, flag: str = "--kv-dtype") -> CacheDtype:
    """A dtype the user named; ambiguous or unknown names are usage errors."""
    if str(text).lower() == "fp4":
        raise UsageError(f"{flag} fp4 is ambiguous: choose mxfp4 (32-value E8M0 scales) or "
                         "nvfp4 (16-value FP8 scales); the formats are not interchangeable.")
    name = normalize(text)
    if name is None:
        raise UsageError(f"{flag} {text!r} is not a known cache dtype.",
                         hint="Choose auto, " + ", ".join(WIDTHS) + ".")
    return CacheDtype(name, WIDTHS[name], f"user: {flag} {text}")


def model_dtype(config: dict, root: dict, root_name: str = "") -> CacheDtype | None:
    """The checkpoint's activation dtype from torch_dtype/dtype (root first), if declared."""
    places = [(f"{root_name}." if root_name else "", root)] + ([("", config)] if root_name else [])
    for prefix, d in places:
        for key in ("torch_dtype", "dtype"):
            value = d.get(key)
            name = normalize(value) if isinstance(value, str) else None
            if name in ("bf16", "fp16", "fp32"):
                return CacheDtype(name, WIDTHS[name], f"config: {prefix}{key} = {value}")
    return None
