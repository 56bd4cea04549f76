"""Run under a vLLM interpreter: list the parameters vLLM builds for one pinned config.

    $KVFIT_VLLM_PYTHON tests/engine_probe/vllm_param_probe.py DIR > OUT.txt

Builds the model class on the meta device at TP 1 with vLLM's own EngineArgs and
initialize_model (as vllm_kv_probe.py does, under the same SM90 emulation), then prints one
line per distinct (name with layer numbers folded to N, shape, dtype) with its count, and the
bytes per dtype and in total. The meta device allocates nothing, so a 600 GB model lists in
seconds. The one compiled-op call a model makes while it is built (FlashKDA's workspace size,
models/glm5next/common/kda.py) is answered 0: it sizes a scratch buffer, not a parameter.
"""

from __future__ import annotations

import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import vllm_gpu_emulation as emu  # noqa: E402
import vllm_kv_probe as probe  # noqa: E402  (installs the emulation)

_call = emu._StubOp.__call__


def _workspace_zero(self, *args, **kwargs):
    if self._name.endswith("get_workspace_size"):
        return 0
    return _call(self, *args, **kwargs)


emu._StubOp.__call__ = _workspace_zero


def main() -> None:
    import torch
    from vllm.config import set_current_vllm_config
    from vllm.engine.arg_utils import EngineArgs
    from vllm.model_executor.model_loader.utils import initialize_model
    from vllm.usage.usage_lib import UsageContext
    from vllm.utils.torch_utils import set_default_torch_dtype

    path = sys.argv[1]
    args = EngineArgs(model=path, tensor_parallel_size=1, skip_tokenizer_init=True)
    vc = args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)
    emu.set_tensor_parallel(1)
    with set_current_vllm_config(vc), set_default_torch_dtype(vc.model_config.dtype), \
            torch.device("meta"), emu.building():
        model = initialize_model(vllm_config=vc)
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
