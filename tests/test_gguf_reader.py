"""kvfit.hub.gguf_header reads a GGUF header from the file's first bytes; for whole files written
by gguf.GGUFWriter its answer must be gguf.GGUFReader's own (the oracle: the gguf package's
public reader on the same file)."""

from __future__ import annotations

import math

import gguf
import numpy as np
import pytest

from kvfit.hub import gguf_header


def _write(path, alignment: int | None = None) -> None:
    w = gguf.GGUFWriter(path, "qwen3")
    if alignment:
        w.add_custom_alignment(alignment)
    w.add_uint8("x.u8", 200)
    w.add_int8("x.i8", -5)
    w.add_uint16("x.u16", 65535)
    w.add_int16("x.i16", -300)
    w.add_uint32("qwen3.block_count", 4)
    w.add_int32("x.i32", -(2**31))
    w.add_float32("x.f32", 1e-6)                 # not exact in float32: the stored value counts
    w.add_float32("x.nan", math.nan)
    w.add_uint64("x.u64", 2**64 - 1)
    w.add_int64("x.i64", -(2**63))
    w.add_float64("x.f64", 0.1)
    w.add_bool("x.yes", True)
    w.add_bool("x.no", False)
    w.add_string("x.text", "é 漢字")
    w.add_array("x.ints", [1, 2, 3])
    w.add_array("x.floats", [0.5, 1e-3])
    w.add_array("x.words", ["a", "bé"])
    w.add_array("tokenizer.ggml.tokens", [f"t{i}" for i in range(gguf_header.MAX_KEPT_ARRAY + 1)])
    w.add_tensor("token_embd.weight", np.zeros((8, 64), dtype=np.float16))
    w.add_tensor("blk.0.attn_k.weight", np.zeros((3, 5), dtype=np.float32))
    w.add_tensor("blk.0.q8", np.zeros((2, 34), dtype=np.uint8),
                 raw_dtype=gguf.GGMLQuantizationType.Q8_0)      # 2 rows of one 34-byte block
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _oracle(path) -> tuple[dict, dict, dict, int]:
    reader = gguf.GGUFReader(path)
    fields, lengths = {}, {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):                # the reader's own version / count entries
            continue
        if field.types[0] == gguf.GGUFValueType.ARRAY and len(field.data) > \
                gguf_header.MAX_KEPT_ARRAY:
            lengths[key] = len(field.data)
        else:
            fields[key] = field.contents()
    tensors = {t.name: (t.tensor_type.name, int(t.n_bytes)) for t in reader.tensors}
    end = max(t.data_offset + int(t.n_bytes) for t in reader.tensors)
    return fields, lengths, tensors, end


@pytest.mark.parametrize("alignment", [None, 64])
def test_a_header_reads_as_ggufs_own_reader_reads_it(tmp_path, alignment):
    path = tmp_path / "m.gguf"
    _write(path, alignment)
    want_fields, want_lengths, want_tensors, want_end = _oracle(path)
    for header in (gguf_header.read_local_gguf(str(path)),
                   gguf_header.read_remote_gguf(
                       lambda s, n: path.read_bytes()[s:s + n], "m.gguf", None)):
        assert repr(header.fields) == repr(want_fields)          # repr: NaN equals itself
        assert header.array_lengths == want_lengths == {"tokenizer.ggml.tokens": 4097}
        assert header.tensors == want_tensors
        assert header.data_end == want_end
    # hand check of two of them: 8x64 f16, and Q8_0's 2 blocks of 34 bytes
    assert want_tensors["token_embd.weight"] == ("F16", 8 * 64 * 2)
    assert want_tensors["blk.0.q8"] == ("Q8_0", 2 * 34)
