"""vLLM's CUDA-graph capture sizes, hence its CUDA-graph memory estimate, by release and GPU.

vLLM 0.33.0 captures up to min(platform default, 2 x max_num_seqs x (1 + speculative tokens))
tokens, the platform default being 1024 on the capability-10 family (B200, GB200, B300) and 512
elsewhere (vllm/config/vllm.py:2463-2470; platforms/interface.py:577-588); 0.24.0 caps at 512
everywhere (config/vllm.py:1689-1694). Sizes 1, 2, 4, then every 8 to 248, then every 16: 51
graphs up to 512, 83 up to 1024. kvfit's estimate is first + 6 MiB per further graph per mode
(specs/engines/vllm.yaml cudagraph_first_mib 231, cudagraph_per_graph_mib 6), PIECEWISE up to
the largest size and FULL up to min(largest, max_num_seqs).
"""

from __future__ import annotations

from kvfit.engines.budget import capture_sizes, cudagraph
from kvfit.engines.common import Inputs
from kvfit.engines.spec import rules_for

MIB = 2**20


def _graphs(version: str, capability: str, seqs: int = 1024):
    inp = Inputs([], 1, 8192, None, 0, capability=capability)
    return cudagraph(rules_for("vllm", version), inp, seqs, eager=False, mnbt=8192)


def test_capture_size_counts():
    # 1, 2, 4 + 8..248 by 8 (31) + 256..512 by 16 (17) = 51; + 528..1024 by 16 (32) = 83
    assert capture_sizes(512) == 3 + 31 + 17 == 51
    assert capture_sizes(1024) == 51 + 32 == 83


def test_blackwell_captures_up_to_1024_tokens_in_033():
    # B200 (10.0): min(1024, 2 x 1024) = 1024 -> 83 PIECEWISE + 83 FULL graphs:
    # 231 + 6 x (82 + 82) = 1,215 MiB
    b200 = _graphs("0.33.0", "10.0")
    assert b200.more["graphs"] == 166 and b200.value == 1215 * MIB
    # H100 (9.0): 512 -> 51 + 51 graphs: 231 + 6 x (50 + 50) = 831 MiB
    assert _graphs("0.33.0", "9.0").value == 831 * MIB
    # RTX 5090 (12.0) is not the capability-10 family: 512
    assert _graphs("0.33.0", "12.0").value == 831 * MIB


def test_024_caps_at_512_on_every_gpu():
    assert _graphs("0.24.0", "10.0").value == 831 * MIB
