"""The page in a real browser: `kvfit serve --offline` as a child process, driven by Playwright
in Debian's chromium (no browser download: the executable is the system's). A user types a
model, picks hardware, reads the verdict, clicks a "what would fit" suggestion and copies the
command; every expected value is read from the CLI's --json for the same question.

Skipped, with the reason, only when no chromium executable is found (.ci/run installs it)."""

from __future__ import annotations

import os
import shutil

import pytest
from playwright import sync_api as playwright
from served import serve, stop

from conftest import run_json

CHROMIUM = os.environ.get("KVFIT_CHROMIUM") or shutil.which("chromium") or \
    shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium executable on PATH (Debian: apt-get install chromium; "
    "or set KVFIT_CHROMIUM to one)")
WAIT_MS = 120_000      # generous: the machine may be busy; nothing here measures time


@pytest.fixture(scope="module")
def served():
    proc, url = serve()
    yield url
    stop(proc)


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser, served):
    yield from _page(browser, served)


def _page(browser, url):
    context = browser.new_context(viewport={"width": 1366, "height": 768},
                                  permissions=["clipboard-read", "clipboard-write"],
                                  base_url=url)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.set_default_timeout(WAIT_MS)
    yield pg
    context.close()
    assert not errors, errors                     # no script error on any page


def _answered(pg) -> None:
    pg.wait_for_selector("body[data-state=answered], body[data-state=error]")


def _count(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_page_answers_as_the_cli(page):
    page.goto("/")
    page.wait_for_selector("#hardware option[value=h100-80]", state="attached")
    page.fill("#model", "Qwen/Qwen3-32B")
    page.select_option("#hardware", "h100-80")
    page.fill("#gpus", "8")
    page.fill("#context", "32k")
    page.click("#plan")
    page.wait_for_url("**/?model=*")
    _answered(page)
    _, cli = run_json("Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "8", "--context",
                      "32k", "--offline")
    word = {True: "Fits", False: "Does not fit"}[cli["fits"]]
    assert page.text_content("#verdict-word") == word
    assert _count(page.text_content("#max-sequences")) == cli["recommended"]["max_sequences"]
    assert page.text_content("#verdict-layout") == cli["recommended"]["label"]
    # the layout table has a row per layout, the memory bars a bar per layout with bars
    assert page.locator("#layouts tbody tr").count() == len(cli["layouts"])
    page.wait_for_selector("body[data-bars=drawn]")
    _, swept = run_json("Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "8", "--sweep",
                        f"context={cli['context_tokens']}", "--offline")
    barred = [x for x in swept["sweep"]["cells"][0]["layouts"] if x["memory_per_rank"]]
    assert barred and page.locator("#bars svg rect.weights").count() == len(barred)
    assert page.locator("#capacity svg polyline.curve").count() == len(cli["layouts"])
    # the question lives in the address: loading it again answers again
    again = page.url
    page.goto(again)
    _answered(page)
    assert _count(page.text_content("#max-sequences")) == cli["recommended"]["max_sequences"]


def test_a_what_would_fit_click_replans(page):
    # 61 GiB of Qwen3-32B weights cannot fit one 32 GiB card: the CLI names what would
    ask = ["Qwen/Qwen3-32B", "--hardware", "rtx-5090-32", "--context", "32k", "--offline"]
    _, cli = run_json(*ask)
    assert cli["fits"] is False and cli["suggestions"]
    page.goto("/?model=Qwen/Qwen3-32B&hardware=rtx-5090-32&context=32k")
    _answered(page)
    assert page.text_content("#verdict-word") == "Does not fit"
    shown = page.locator("a.suggestion").all_text_contents()
    assert shown == [s["description"] for s in cli["suggestions"]]
    more = next(s for s in cli["suggestions"] if s["change"] == "gpus")
    page.click(f"a.suggestion >> text={more['description']}")
    page.wait_for_url(f"**gpus={more['value']}*")
    _answered(page)
    _, replanned = run_json(*ask, "--gpus", str(more["value"]))
    assert page.text_content("#verdict-word") == "Fits" and replanned["fits"] is True
    assert _count(page.text_content("#max-sequences")) == \
        replanned["recommended"]["max_sequences"] == more["max_sequences"]


def test_the_copy_buttons_copy_the_commands(page):
    page.goto("/?model=Qwen/Qwen3-32B&hardware=h100-80&gpus=8&context=32k&engine=vllm")
    _answered(page)
    command = page.text_content("#command")
    assert command.startswith("kvfit Qwen/Qwen3-32B ")
    page.click("button[data-copy=command]")
    page.wait_for_selector("body[data-copied]")
    assert page.get_attribute("body", "data-copied") == command
    assert page.evaluate("navigator.clipboard.readText()") == command
    _, cli = run_json("Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "8", "--context",
                      "32k", "--engine", "vllm", "--print-command", "vllm", "--offline")
    assert page.text_content("#launch") == cli["engine_command"]["launch"]
    page.focus("#copy-launch")
    page.keyboard.press("Enter")                   # a real <button>: the keyboard presses it
    page.wait_for_selector("body[data-copied^='vllm serve']")
    assert page.evaluate("navigator.clipboard.readText()") == cli["engine_command"]["launch"]


def test_bad_input_shows_the_paragraph_as_text(page):
    hostile = "<img src=x onerror=document.title='owned'>"
    page.goto("/?" + "&".join([f"model={hostile}", "hardware=h100-80", "gpus=0"]))
    _answered(page)
    box = page.locator("#error")
    assert box.is_visible()
    assert box.text_content().startswith("kvfit: usage error: --gpus must be")
    assert page.locator("img").count() == 0 and page.title() != "owned"


def test_every_control_has_a_label(page):
    for path in ("/", "/fit"):
        page.goto(path)
        unlabeled = page.evaluate("""[...document.querySelectorAll('input, select')]
            .filter((e) => !document.querySelector(`label[for="${e.id}"]`)).map((e) => e.id)""")
        assert unlabeled == [], (path, unlabeled)


def test_the_fit_page_lists_what_fits(page):
    page.goto("/fit?hardware=h100-80&gpus=8&context=32k&family=qwen3")
    _answered(page)
    _, cli = run_json("fit", "--hardware", "h100-80", "--gpus", "8", "--context", "32k",
                      "--family", "qwen3", "--offline")
    first = page.locator("#fit-rows tr th a").first
    assert first.text_content() == cli["rows"]["fits"][0]["model"]
    first.click()
    page.wait_for_url("**/?*model=*")
    _answered(page)
    assert page.text_content("#verdict-word") == "Fits"


# two GPUs as nvidia-smi prints them (name, total MiB, free MiB): an RTX 5090 is preset
# rtx-5090-32 (kvfit.hardware.detect.NAMES)
SMI_LINES = ("NVIDIA GeForce RTX 5090, 32607, 31500", "NVIDIA GeForce RTX 5090, 32607, 31200")


def test_detected_gpus_are_preselected(browser, tmp_path, monkeypatch):
    tool = tmp_path / "nvidia-smi"
    tool.write_text("#!/bin/sh\n" + "".join(f"echo '{x}'\n" for x in SMI_LINES))
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    proc, url = serve(dict(os.environ))
    try:
        for pg in _page(browser, url):
            pg.goto("/")
            pg.wait_for_selector("#hardware option[value=auto]", state="attached")
            assert pg.input_value("#hardware") == "auto"
            assert "2 x NVIDIA GeForce RTX 5090" in pg.text_content("#detected")
            pg.fill("#model", "Qwen/Qwen3-30B-A3B")
            pg.fill("#context", "32k")
            pg.click("#plan")
            pg.wait_for_url("**hardware=auto*")
            _answered(pg)
            _, cli = run_json("Qwen/Qwen3-30B-A3B", "--hardware", "auto", "--context", "32k",
                              "--offline")
            assert (cli["hardware"]["id"], cli["hardware"]["gpus"]) == ("rtx-5090-32", 2)
            assert _count(pg.text_content("#max-sequences")) == \
                cli["recommended"]["max_sequences"]
    finally:
        stop(proc)
