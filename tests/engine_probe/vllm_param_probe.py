"""Run under a vLLM interpreter: list the parameters vLLM builds for one pinned config.

    $KVFIT_VLLM_PYTHON tests/engine_probe/vllm_param_probe.py DIR > OUT.txt

Builds the model class on the meta device at TP 1 with vLLM's own EngineArgs and
initialize_model (vllm_kv_probe.build_model, under the same SM90 emulation), then prints one
line per distinct (name with layer numbers folded to N, shape, dtype) with its count, and the
bytes per dtype and in total. The meta device allocates nothing, so a 600 GB model lists in
seconds.
"""

from __future__ import annotations

import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import vllm_kv_probe as probe  # noqa: E402  (installs the emulation)


def main() -> None:
    path = sys.argv[1]
    _, model = probe.build_model(path, 1, "auto")
    rows: collections.Counter = collections.Counter()
    per_dtype: collections.Counter = collections.Counter()
    for name, tensor in model.named_parameters():
        rows[(re.sub(r"\.\d+\.", ".N.", name), tuple(tensor.shape), str(tensor.dtype))] += 1
        per_dtype[str(tensor.dtype).removeprefix("torch.")] += tensor.numel() * tensor.element_size()
    out = probe.OUT
    print(f"# vLLM parameters of {os.path.basename(os.path.normpath(path))} at TP 1 (meta device)", file=out)
    for (name, shape, dtype), count in sorted(rows.items()):
        print(f"{count:5d}  {name}  {list(shape)}  {dtype.removeprefix('torch.')}", file=out)
    for dtype, size in sorted(per_dtype.items()):
        print(f"bytes {dtype} {size}", file=out)
    print(f"bytes total {sum(per_dtype.values())}", file=out)


if __name__ == "__main__":
    main()
