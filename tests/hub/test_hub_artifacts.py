"""choose_weight_files and layer coverage, on file lists shaped like real repos."""

from __future__ import annotations

import pytest

from kvfit.checkpoint.artifacts import check_index_covers_layers, choose_weight_files, missing_layers
from kvfit.checkpoint.metadata import FileEntry as F
from kvfit.errors import ConfigError, UsageError

LLAMA_LIKE = [F("config.json", 900), F("model-00001-of-00002.safetensors", 5_000),
              F("model-00002-of-00002.safetensors", 3_000), F("model.safetensors.index.json", 20),
              F("original/consolidated.00.pth", 8_000), F("original/params.json", 10)]


def _paths(files):
    return [f.path for f in files]


def test_root_shards_win_over_original_and_consolidated():
    files = [*LLAMA_LIKE, F("consolidated.safetensors", 8_000),
             F("original/model.safetensors", 8_000), F("pytorch_model.bin", 8_000)]
    chosen, text = choose_weight_files(files, None)
    assert _paths(chosen) == ["model-00001-of-00002.safetensors",
                              "model-00002-of-00002.safetensors"]
    assert text.startswith("chose root *.safetensors shards: 2 file(s), 8,000 bytes")
    assert "not counted: consolidated*.safetensors (1 file(s), 8,000 bytes" in text
    assert "original/ (1 file(s)" in text and "pytorch_model*.bin" in text


def test_index_limits_the_root_group_to_its_shards():
    files = [*LLAMA_LIKE, F("adapter_model.safetensors", 77)]
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors",
                            "b": "model-00002-of-00002.safetensors"}}
    chosen, _ = choose_weight_files(files, None, index=index)
    assert "adapter_model.safetensors" not in _paths(chosen)


@pytest.mark.parametrize(("files", "expected", "reason"), [
    ([F("consolidated.safetensors", 10), F("params.json", 1)], ["consolidated.safetensors"],
     "Mistral-native"),
    ([F("original/model.safetensors", 10)], ["original/model.safetensors"], "only original/"),
    ([F("pytorch_model-00001-of-00002.bin", 4), F("pytorch_model-00002-of-00002.bin", 4),
      F("training_args.bin", 1)],
     ["pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin"], "fall back"),
    ([F("x-Q4_K_M.gguf", 9), F("mmproj-x-f16.gguf", 3)], ["x-Q4_K_M.gguf"], "only GGUF"),
])
def test_fallback_groups(files, expected, reason):
    chosen, text = choose_weight_files(files, None)
    assert _paths(chosen) == expected
    assert reason in text


def test_several_gguf_variants_need_a_choice():
    files = [F("a-Q4_K_M.gguf", 1), F("a-Q8_0.gguf", 2)]
    with pytest.raises(UsageError, match="several weight variants"):
        choose_weight_files(files, None)
    chosen, text = choose_weight_files(files, "a-Q8_0.gguf")
    assert _paths(chosen) == ["a-Q8_0.gguf"] and text.startswith("selected artifact a-Q8_0.gguf")


def test_selecting_one_split_part_selects_the_set():
    files = [F(f"Q4/m-0000{i}-of-00003.gguf", 10 * i) for i in (1, 2, 3)] + [F("m-Q8_0.gguf", 1)]
    chosen, text = choose_weight_files(files, "Q4/m-00002-of-00003.gguf")
    assert len(chosen) == 3 and "3 file(s), 60 bytes" in text
    folder, _ = choose_weight_files(files, "Q4")
    assert _paths(folder) == _paths(chosen)


def test_missing_split_parts_and_unknown_selection():
    files = [F("m-00001-of-00003.gguf", 1), F("m-00003-of-00003.gguf", 1)]
    with pytest.raises(ConfigError, match="m-00002-of-00003.gguf"):
        choose_weight_files(files, "m-00001-of-00003.gguf")
    with pytest.raises(UsageError, match="neither a file nor a folder"):
        choose_weight_files(files, "elsewhere")


def test_no_weights_and_unknown_sizes():
    assert choose_weight_files([F("config.json", 1)], None)[0] == []
    _, text = choose_weight_files([F("model.safetensors", None)], None)
    assert "size unknown for 1" in text


def test_index_layer_coverage():
    index = {"weight_map": {"model.layers.0.w": "a", "model.layers.2.w": "a",
                            "model.layers.11.w": "b", "lm_head.weight": "b"}}
    assert check_index_covers_layers(index, 4) == [1, 3]
    assert check_index_covers_layers(index, 12)[:3] == [1, 3, 4]
    with pytest.raises(ConfigError, match="no weight_map"):
        check_index_covers_layers({"metadata": {}}, 4)


def test_gguf_layer_coverage():
    assert missing_layers(["blk.0.attn_q.weight", "blk.1.ffn_up.weight"], 3, marker="blk") == [2]
