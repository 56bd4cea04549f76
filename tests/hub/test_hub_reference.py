"""Reference parsing: every accepted form, and hostile or malformed input rejected."""

from __future__ import annotations

import re

import pytest

from kvfit.errors import UsageError
from kvfit.hub import Reference, parse_reference

SHA = "aca966e4e02791568aa6a4ced368624b3d897f42"


@pytest.mark.parametrize(("text", "revision", "expected"), [
    ("Qwen/Qwen3-32B", None, ("hub", "Qwen/Qwen3-32B", None, None)),
    ("Qwen/Qwen3-32B@main", None, ("hub", "Qwen/Qwen3-32B", "main", None)),
    ("Qwen/Qwen3-32B", "v1.0", ("hub", "Qwen/Qwen3-32B", "v1.0", None)),
    ("Qwen/Qwen3-32B@v1.0", "v1.0", ("hub", "Qwen/Qwen3-32B", "v1.0", None)),
    (f"zai-org/GLM-5.3@{SHA}", None, ("hub", "zai-org/GLM-5.3", SHA, None)),
    ("org/name@refs/pr/12", None, ("hub", "org/name", "refs/pr/12", None)),
    ("https://huggingface.co/deepseek-ai/DeepSeek-V4-Flash", None,
     ("hub", "deepseek-ai/DeepSeek-V4-Flash", None, None)),
    ("https://huggingface.co/deepseek-ai/DeepSeek-V4-Flash/", None,
     ("hub", "deepseek-ai/DeepSeek-V4-Flash", None, None)),
    ("https://hf.co/org/name/tree/dev", None, ("hub", "org/name", "dev", None)),
    ("https://huggingface.co/org/name/tree/refs%2Fpr%2F3", None,
     ("hub", "org/name", "refs/pr/3", None)),
    ("https://huggingface.co/org/name/tree/main/Q4_K_M", None,
     ("hub", "org/name", "main", "Q4_K_M")),
    (f"https://huggingface.co/zai-org/GLM-5.3/blob/{SHA}/config.json", None,
     ("hub", "zai-org/GLM-5.3", SHA, None)),
    ("https://huggingface.co/unsloth/gpt-oss-120b-GGUF/blob/main/Q4_K_M/"
     "gpt-oss-120b-Q4_K_M-00001-of-00002.gguf", None,
     ("hub-artifact", "unsloth/gpt-oss-120b-GGUF", "main",
      "Q4_K_M/gpt-oss-120b-Q4_K_M-00001-of-00002.gguf")),
    ("https://huggingface.co/org/name/resolve/main/model.safetensors?download=true", None,
     ("hub-artifact", "org/name", "main", "model.safetensors")),
    ("hf://org/name", None, ("hub", "org/name", None, None)),
    ("hf://org/name@dev", None, ("hub", "org/name", "dev", None)),
    ("hf://org/name@dev/sub/x-Q8_0.gguf", None, ("hub-artifact", "org/name", "dev",
                                                "sub/x-Q8_0.gguf")),
])
def test_valid_references(text, revision, expected):
    ref = parse_reference(text, revision)
    assert (ref.kind, ref.repo_id, ref.revision, ref.path) == expected
    assert ref.text == text


def test_source_is_the_normalised_repo_id():
    assert parse_reference("https://hf.co/Qwen/Qwen3-32B/tree/main").source == "Qwen/Qwen3-32B"


def test_local_directory_and_gguf_file(tmp_path, monkeypatch):
    model = tmp_path / "my-model"
    model.mkdir()
    gguf = tmp_path / "tiny-Q8_0.gguf"
    gguf.write_bytes(b"GGUF")
    assert parse_reference(str(model)) == Reference("local", None, None, str(model), str(model))
    assert parse_reference(str(gguf)).kind == "gguf-file"
    assert parse_reference(str(gguf)).source == "tiny-Q8_0.gguf"
    monkeypatch.chdir(tmp_path)
    assert parse_reference("./my-model").kind == "local"
    assert parse_reference("my-model").kind == "local"  # an existing path wins over a Hub id


def test_test_hub_urls_are_accepted_only_for_hf_endpoint(monkeypatch):
    url = "http://127.0.0.1:5555/org/name/blob/main/a.gguf"
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    with pytest.raises(UsageError, match="not a Hugging Face Hub URL"):
        parse_reference(url)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:5555")
    assert parse_reference(url).kind == "hub-artifact"


@pytest.mark.parametrize(("text", "revision", "message"), [
    ("", None, "empty"),
    ("Qwen/Qwen3-32B@main", "dev", "names revision 'main' but the revision argument says"),
    ("https://huggingface.co/org/name/tree/main", "dev", "revision argument"),
    ("https://example.com/org/name", None, "not a Hugging Face Hub URL"),
    ("https://huggingface.co.evil.com/org/name", None, "not a Hugging Face Hub URL"),
    ("https://huggingface.co:8443/org/name", None, "not a Hugging Face Hub URL"),
    ("ftp://huggingface.co/org/name", None, "not a Hugging Face Hub URL"),
    ("https://user:pw@huggingface.co/org/name", None, "credentials"),
    ("https://huggingface.co/org", None, "does not name a repository"),
    ("https://huggingface.co/datasets/org/name", None, "not a model repository"),
    ("https://huggingface.co/org/name/commit/abc", None, "not a repo, tree, blob or resolve"),
    ("https://huggingface.co/org/name/blob/main", None, "names no file"),
    ("https://huggingface.co/org/name/blob/main/../../etc/passwd", None, "unsafe"),
    ("https://huggingface.co/org/name/blob/main/%2e%2e/x.gguf", None, "unsafe"),
    ("https://huggingface.co/org/name/blob/main//etc/passwd.gguf", None, "unsafe"),
    ("https://huggingface.co/org/name/blob/main/a%2Fb.gguf", None, "unsafe"),
    ("https://huggingface.co/org/name/blob/main/a%00b.gguf", None, "unsafe"),
    ("https://huggingface.co/org/name/blob/main/README.md", None, "not a .safetensors or .gguf"),
    ("https://huggingface.co/org/name/tree/..%2F..", None, "not a valid branch"),
    ("https://huggingface.co/%2e%2e/name", None, "not a valid Hugging Face repo id"),
    ("hf://datasets/org/name", None, "model repos only"),
    ("hf://org", None, "not an hf://org/name"),
    ("hf://org/name/../x.gguf", None, "unsafe"),
    ("org/na me", None, "not a valid Hugging Face repo id"),
    ("org/name/extra", None, "not a valid Hugging Face repo id"),
    ("org--x/name", None, "not a valid Hugging Face repo id"),
    ("org/na..me", None, "not a valid Hugging Face repo id"),
    ("org/name;rm -rf", None, "not a valid Hugging Face repo id"),
    ("org/näme", None, "not a valid Hugging Face repo id"),
    ("org/name@", None, "not a valid branch"),
    ("org/name@../../x", None, "not a valid branch"),
    ("org/name@a b", None, "not a valid branch"),
    ("org/name", "bad rev", "not a valid branch"),
    ("org/na\nme", None, "control characters"),
    ("org/name\x00", None, "control characters"),
    ("./definitely-missing-dir", None, "does not exist"),
])
def test_rejected_references(text, revision, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        parse_reference(text, revision)


def test_local_path_with_revision_is_rejected(tmp_path):
    with pytest.raises(UsageError, match="was given for the local path") as info:
        parse_reference(str(tmp_path), "main")
    assert "Hub references only" in info.value.render()
