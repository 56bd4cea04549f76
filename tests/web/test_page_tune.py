"""The page's "recommend engine settings" (--tune, issue 24) in a real browser: turned on with
the keyboard, its figures, table and launch command are the CLI's `--tune --json` for the same
question; /fit offers it too. `kvfit serve --offline` as a child process and Debian's chromium,
as in test_page_browser (skipped, with the reason, only when no chromium is found)."""

from __future__ import annotations

import pytest
from playwright import sync_api as playwright
from served import serve, stop
from test_page_browser import CHROMIUM, _answered, _count, _page

from conftest import run_json

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium executable on PATH (Debian: apt-get install chromium; "
    "or set KVFIT_CHROMIUM to one)")

# tests/test_tune.py's question (its 2,048 batched tokens derived by hand from vLLM's rules)
MODEL = "deepseek-ai/DeepSeek-V4-Flash"
ASK = "hardware=h100-80&gpus=8&context=32k"
ARGV = [MODEL, "--hardware", "h100-80", "--gpus", "8", "--context", "32k", "--engine", "vllm",
        "--tune"]



@pytest.fixture(scope="module")
def chromium():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def served_url():
    proc, url = serve()
    yield url
    stop(proc)


@pytest.fixture
def page(chromium, served_url):
    """A 1366x768 tab whose page must raise no script error (test_page_browser's)."""
    yield from _page(chromium, served_url)


def test_tune_is_turned_on_with_the_keyboard_and_answers_as_the_cli(page):
    page.goto(f"/?model={MODEL}&{ASK}")
    _answered(page)
    # no engine: the control is off and the page says why
    assert page.is_disabled("#tune") and page.is_disabled("#tune_max_utilization")
    assert "needs an engine" in page.text_content("#tune-note")
    assert page.locator("#tune-block").is_hidden()
    page.focus("#engine")
    page.keyboard.press("ArrowDown")                       # none -> vLLM
    assert page.input_value("#engine") == "vllm"
    page.keyboard.press("Tab")                             # the version box
    page.keyboard.press("Tab")                             # the checkbox
    assert page.evaluate("document.activeElement.id") == "tune"
    page.keyboard.press("Space")
    assert page.is_checked("#tune") and page.is_enabled("#tune_max_utilization")
    page.keyboard.press("Tab")
    page.keyboard.type("0.9")                              # the memory fraction cap
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "plan"
    page.keyboard.press("Enter")
    page.wait_for_url("**tune=true*")
    assert "tune_max_utilization=0.9" in page.url and "engine=vllm" in page.url
    _answered(page)
    _, cli = run_json(*ARGV, "--tune-max-utilization", "0.9", "--offline")
    t = cli["tune"]
    assert _count(page.text_content("#tune-max-sequences")) == t["max_sequences"]
    assert _count(page.text_content("#tune-default-sequences")) == t["default_max_sequences"]
    assert page.text_content("#tune-word") == {True: "Holds", False: "Does not hold"}[t["holds"]]
    # the engine is named as the picker names it, with the version the report planned
    assert f"with vLLM {t['version']}'s defaults" in page.text_content("#tune-verdict")
    assert "combinations of vLLM's settings tried" in page.text_content("#tune-summary")
    assert page.text_content("#tune-launch") == t["command"]["launch"]
    assert "--max-num-batched-tokens 2048" in t["command"]["launch"]
    rows = page.locator("#tune-settings tbody tr")
    assert rows.count() == len(t["settings"])
    for i, s in enumerate(t["settings"]):
        cells = rows.nth(i).locator("td").all_text_contents()
        assert s["flag"] in rows.nth(i).locator("th").text_content()
        assert cells[0] == s["default_text"] and cells[2].startswith(s["recommended_text"])
        assert _count(cells[1]) == s["max_sequences_at_default"]
        assert _count(cells[3]) == s["max_sequences"]
    assert page.locator("#tune-warnings li").all_text_contents() == t["warnings"]
    # the chart and bars are the plan's (the sweep they come from is asked without tune)
    page.wait_for_selector("body[data-bars=drawn]")
    assert page.locator("#capacity svg polyline.curve").count() == len(cli["layouts"])
    # the copy button, pressed from the keyboard, copies the tuned launch
    page.focus("#copy-tune-launch")
    page.keyboard.press("Enter")
    page.wait_for_selector("body[data-copied^='vllm serve']")
    assert page.evaluate("navigator.clipboard.readText()") == t["command"]["launch"]
    # the question is in the address: loading it again keeps tune on with its cap
    page.goto(page.url)
    _answered(page)
    assert page.is_checked("#tune") and page.input_value("#tune_max_utilization") == "0.9"
    assert _count(page.text_content("#tune-max-sequences")) == t["max_sequences"]


def test_the_fit_page_lists_the_tuned_settings(page):
    page.goto(f"/fit?{ASK}&engine=vllm&tune=true&family=deepseek_v4")
    _answered(page)
    assert page.is_checked("#tune")
    _, cli = run_json("fit", "--hardware", "h100-80", "--gpus", "8", "--context", "32k",
                      "--engine", "vllm", "--tune", "--family", "deepseek_v4", "--offline")
    best = cli["rows"]["fits"][0]
    first = page.locator("#fit-rows tr").first
    assert first.locator("th a").text_content() == best["model"]
    flags = first.locator("td.tuned code").all_text_contents()
    assert flags == [f"{c['flag']} {c['value']}" for c in best["tune"]["changed"]]
    assert _count(first.locator("td.num").first.text_content()) == best["max_sequences"]
