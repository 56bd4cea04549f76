"""Secrets are redacted and control characters escaped before anything is printed."""

from __future__ import annotations

from kvfit.errors import HubError
from kvfit.textsafe import escape_controls, redact, safe


def test_userinfo_in_any_url_is_redacted():
    assert redact("http://user:SECRET@host:8080/x") == "http://***@host:8080/x"
    assert redact("see https://tok@hub.example/api and ftp://a:b@c") == (
        "see https://***@hub.example/api and ftp://***@c")
    # an unencoded '@' inside the password: everything up to the last '@' of the authority
    assert redact("http://u:p@ss@host/path@x") == "http://***@host/path@x"
    assert redact("http://host/a@b") == "http://host/a@b"            # '@' in the path only


def test_tokens_and_authorization_values_are_redacted(monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert redact("token hf_AbCdEf123456 used") == "token hf_*** used"
    # the flag's name stays readable; a token that merely starts with those letters does not
    assert redact("--hf-overrides / hf_overrides: not JSON") == "--hf-overrides / hf_overrides: not JSON"
    assert redact("hf_overridesAbC123") == "hf_***"
    assert redact("Authorization: Bearer abc.def") == "Authorization: Bearer ***"
    assert redact("authorization=xyz123") == "authorization=***"
    assert redact("sent Bearer abcdefgh12345678") == "sent Bearer ***"
    assert redact('{"api_key": "k-123"}') == '{"api_key": "***"}'
    monkeypatch.setenv("HF_TOKEN", "plainsecretvalue")
    assert redact("oops plainsecretvalue leaked") == "oops *** leaked"


def test_ordinary_text_is_untouched(monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    text = "64 layers x 2 x 8 KV heads; tokens: 32768; the token in use may not read it"
    assert redact(text) == text


def test_control_characters_are_escaped():
    assert escape_controls("a\x1b[31mb\rc\x00\x7f\x9b") == "a\\x1b[31mb\\x0dc\\x00\\x7f\\x9b"
    assert escape_controls("x\u202ey\ud800") == "x\\u202ey\\ud800"
    assert escape_controls("one\ntwo\tthree") == "one\ntwo\tthree"
    assert escape_controls("one\ntwo", keep_newlines=False) == "one\\x0atwo"
    assert escape_controls("naïve ü 日本") == "naïve ü 日本"


def test_every_ascii_character_is_escaped_as_before_the_ascii_shortcut():
    """The ASCII shortcut (printable text returned as it is) escapes exactly what the
    character loop does: each of the 128 characters alone and inside printable text, in
    both modes. Expected by the rule: 0x00-0x1f and 0x7f as \\xNN, but \\n and \\t kept
    with keep_newlines; every other ASCII character as it is."""
    for code in range(128):
        ch = chr(code)
        for keep in (True, False):
            want = ch if (0x20 <= code < 0x7F or (keep and ch in "\n\t")) else f"\\x{code:02x}"
            assert escape_controls(ch, keep_newlines=keep) == want, (code, keep)
            assert escape_controls(f"kv {ch} fits", keep_newlines=keep) == f"kv {want} fits"
    assert escape_controls("") == ""


def test_error_rendering_uses_the_helper():
    err = HubError("could not connect to http://me:SECRET@127.0.0.1:9 \x1b]0;title\x07",
                   hint="HF_TOKEN=hf_abcdefghij")
    for text in (err.render(), str(err.to_json())):
        assert "SECRET" not in text and "hf_abcdefghij" not in text and "\x1b" not in text
    assert err.render() == ("kvfit: hub error: could not connect to http://***@127.0.0.1:9 "
                            "\\x1b]0;title\\x07 HF_TOKEN=***")
    assert safe("a\x1b") == "a\\x1b"
