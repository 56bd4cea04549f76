"""`kvfit audit` resolves each checkpoint once: its first plan resolves the branch, every
later plan of that model (each context, each fleet, the oracle, the dtype check) reads the
snapshot pinned to the commit it resolved, which costs no request (test_hub_requests.py)."""

from __future__ import annotations

from kvfit.audit.config import load_frontier
from kvfit.audit.run import run

FRONTIER = """
[audit]
name = "hub requests"
offline = false
[[models]]
family = "qwen3"
model = "kvfit-test/tiny-qwen3"
contexts = ["4k", "8k"]
[[hardware]]
preset = "h100-80"
counts = [1, 2, 4]
[[systems]]
preset = "dgx-h100"
node_counts = [1, 2]
"""


def test_an_audit_resolves_each_model_once(hub, tmp_path):
    path = tmp_path / "audit.toml"
    path.write_text(FRONTIER)
    hub.state.log.clear()
    report = run(load_frontier(path))
    assert all(c["status"] == "answered" for c in report["cells"]), report["cells"]
    # the pin, then 2 contexts x (1 plan + 5 fleets + the oracle) + the dtype check's 2 plans:
    # 17 reads of the model, one cold resolution (info, config; the index is not needed, see
    # test_hub_requests.py), then none.
    hits = [(h.kind, h.path) for h in hub.state.log]
    assert hits == [("api", None), ("resolve", "config.json")]


FOUR = """
[audit]
name = "four test-hub models"
offline = false
{models}
[[hardware]]
preset = "h100-80"
counts = [1, 2]
"""
MODELS = ("kvfit-test/tiny-qwen3", "kvfit-test/moving", "kvfit-test/gated",
          "hf://kvfit-test/tiny-gguf/tiny-Q8_0.gguf")


def test_four_models_cold_make_two_requests_each(hub, hub_env, tmp_path):
    # issue 13's bar (bench/speed_run.py HUB_MODELS): <= 2 requests per model cold, the CDN
    # read behind an LFS redirect counted too. tiny-qwen3: info + config.json (its index is
    # not needed); moving, gated: info + config.json; the GGUF file: its ranged read's
    # redirect + the CDN (no repo info: the answer names commit and size)
    hub_env.setenv("HF_TOKEN", "hf_good")                  # granted for the gated repo
    rows = "\n".join(f'[[models]]\nfamily = "qwen3"\nmodel = "{m}"\ncontexts = ["4k"]\n'
                     'required = false' for m in MODELS)
    path = tmp_path / "four.toml"
    path.write_text(FOUR.format(models=rows))
    hub.state.log.clear()
    report = run(load_frontier(path))
    assert all(c["status"] == "answered" for c in report["cells"]), report["cells"]
    per_model = {}
    for h in hub.state.log:
        repo = h.repo or "kvfit-test/tiny-gguf"            # the CDN read serves the GGUF
        per_model[repo] = per_model.get(repo, 0) + 1
    assert per_model == {"kvfit-test/tiny-qwen3": 2, "kvfit-test/moving": 2,
                         "kvfit-test/gated": 2, "kvfit-test/tiny-gguf": 2}
