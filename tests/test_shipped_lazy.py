"""The shipped spec data is read lazily: while kvfit/specs/shipped.json is as ship.render wrote
it, an entry is parsed only when asked for and the architecture matchers come from its index;
the index says what each spec's own validated data says, and an edited file is read whole."""

from __future__ import annotations

import json

import pytest

from kvfit.cli import ship
from kvfit.specs import cache, registry
from kvfit.specs.registry import ARCH_SCHEMA, spec_files


@pytest.fixture
def fresh_registry():
    for f in (cache.shipped, registry.builtin_matchers, registry.builtin_architecture):
        f.cache_clear()
    yield
    for f in (cache.shipped, registry.builtin_matchers, registry.builtin_architecture):
        f.cache_clear()


def test_matching_parses_only_the_matched_spec(fresh_registry, monkeypatch, tmp_path):
    monkeypatch.setenv("KVFIT_CACHE_DIR", str(tmp_path / "c"))
    entries, whole, matchers = cache.shipped()
    assert whole and len(matchers) == len(spec_files())     # the committed file is as rendered
    registry.builtin_architecture("qwen3")
    qwen3 = cache.key((registry.specs_dir("architectures") / "qwen3.yaml").read_bytes(),
                      ARCH_SCHEMA)
    assert set(entries._parsed) == {qwen3}                   # 1 of the corpus' entries parsed
    assert not (tmp_path / "c").exists()                     # and nothing was written


def test_the_index_is_each_specs_own_data(fresh_registry):
    indexed = {m.id: m for m in registry.builtin_matchers()}
    entries, _, _ = cache.shipped()
    for path in spec_files():
        data = entries[cache.key(path.read_bytes(), ARCH_SCHEMA)]["data"]
        m = indexed[data["id"]]
        assert (m.path, m.model_types, m.architectures) == (
            path, tuple(data["match"]["model_type"]), tuple(data["match"].get("architectures", ())))


def test_an_edited_file_is_read_whole_without_its_index(fresh_registry, monkeypatch, tmp_path):
    monkeypatch.setenv("KVFIT_CACHE_DIR", str(tmp_path / "c"))
    text = cache.SHIPPED.read_text(encoding="utf-8")
    edited = tmp_path / "shipped.json"
    # one matcher edited after ship wrote the file: its checksum no longer holds
    edited.write_text(text.replace('["qwen3",["qwen3"],', '["qwen3",["qwen3","llama"],', 1))
    assert edited.read_text() != text
    monkeypatch.setattr(cache, "SHIPPED", edited)
    cache.shipped.cache_clear()
    entries, whole, matchers = cache.shipped()
    assert not whole and matchers == {} and len(entries) == len(json.loads(text)["entries"])
    qwen3 = next(m for m in registry.builtin_matchers() if m.id == "qwen3")
    assert qwen3.model_types == ("qwen3",)                 # the spec's own data, not the edit
    assert not (tmp_path / "c").exists()                   # every entry still answered


def test_a_file_without_matchers_still_answers(fresh_registry, monkeypatch, tmp_path):
    monkeypatch.setenv("KVFIT_CACHE_DIR", str(tmp_path / "c"))
    bundle = json.loads(cache.SHIPPED.read_text(encoding="utf-8"))
    bundle.pop("sha256")
    del bundle["matchers"]
    plain = tmp_path / "shipped.json"
    ship.write(plain, ship.render(bundle))
    monkeypatch.setattr(cache, "SHIPPED", plain)
    cache.shipped.cache_clear()
    entries, whole, matchers = cache.shipped()
    assert whole and matchers == {} and len(entries) == len(bundle["entries"])
    assert registry.builtin_architecture("qwen3").id == "qwen3"


def _shape(params) -> object:
    """A Parameters block as plain values: every expression by its text (Expr holds an AST,
    which compares by identity)."""
    def plain(v):
        if hasattr(v, "names") and hasattr(v, "text"):
            return ("expr", v.text)
        if isinstance(v, tuple | list):
            return tuple(plain(x) for x in v)
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        if hasattr(v, "__dataclass_fields__"):
            return (type(v).__name__, {k: plain(getattr(v, k)) for k in v.__dataclass_fields__})
        return v
    return plain(params)


def test_a_plans_deferred_parameters_are_the_eager_compile(fresh_registry):
    """A plan's spec compiles its `parameters:` block when first read; it is the block
    `specs check` compiles at once, for every bundled spec."""
    for path in spec_files():
        eager, problems = registry.load_architecture_file(path)
        assert not problems
        lazy, problems = registry.load_architecture_file(path, defer_parameters=True)
        assert not problems
        if eager.parameters is not None:                 # deferred until this read
            assert type(lazy.compiled_parameters).__name__ == "_Deferred"
        assert _shape(lazy.parameters) == _shape(eager.parameters), path.name
        assert lazy.compiled_parameters is lazy.parameters        # compiled once, then kept


def _split_reader(body: bytes):
    """The reader before plan-trim (kvfit.specs.cache._rendered at main 11a2dc3, which split the
    body into copied lines), kept as the oracle the offset reader must agree with."""
    lines = body.split(b"\n")
    if lines[-2:] != [b"}}", b""]:
        return None
    lines = lines[:-2]
    cut = lines.index(cache.MATCHERS_LINE) if cache.MATCHERS_LINE in lines else len(lines)
    entries = {}
    for line in lines[:cut]:
        name, sep, value = line.partition(b'": ')
        if not sep or name[:1] != b'"':
            return None
        entries[name[1:].decode("ascii")] = value.removesuffix(b",")
    index = json.loads(b"{" + b"\n".join(lines[cut + 1:]) + b"}") if cut < len(lines) else {}
    return entries, index


def _outcome(read):
    try:
        found = read()
    except (ValueError, UnicodeDecodeError) as exc:
        return type(exc).__name__
    if found is None:
        return None
    entries, index = found
    parsed = {}
    for k in entries:
        try:
            parsed[k] = json.loads(entries[k]) if isinstance(entries, dict) else entries[k]
        except ValueError:
            parsed[k] = "not JSON"
    return parsed, index


def test_the_offset_reader_reads_every_layout_as_the_split_reader_did():
    """The committed file and edited ones (no matchers, matchers last, an empty or a
    comma-less line, a key without quotes, truncated, bare "}}"): the same entries, the same
    index, the same refusals."""
    raw = cache.SHIPPED.read_bytes()
    head, _, body = raw.partition(b"\n")
    lines = body.split(b"\n")
    cut = lines.index(cache.MATCHERS_LINE)
    bodies = [body, b"}}\n", b"\n}}\n", b"", b"}}", b'"a": 1\n}}\n', b'"a": 1,\n"b": [2]\n}}\n',
              b"\n".join(lines[:cut] + lines[-2:]),                  # no matchers section
              b"\n".join(lines[:cut + 1] + lines[-2:]),              # matchers line last
              b"\n".join(lines[:3] + [b""] + lines[3:]),             # an empty line
              b"\n".join(lines[:2] + [b'a": {}'] + lines[2:]),       # a key without its quote
              b"\n".join(lines[:2] + [b'"x": {not json},'] + lines[2:]),
              b"\n".join(lines[:2] + [b'"\xff": 1,'] + lines[2:]),   # a key that is not ASCII
              body[:-1], body + b"\n", body.replace(b"}}\n", b"}}}\n")]
    for b in bodies:
        whole = head + b"\n" + b
        want = _outcome(lambda b=b: _split_reader(b))
        got = _outcome(lambda whole=whole: cache._rendered(whole, len(head) + 1))
        assert got == want, b[:60]
    assert _outcome(lambda: cache._rendered(raw, len(head) + 1))[0]     # the real file reads
