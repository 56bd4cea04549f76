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
