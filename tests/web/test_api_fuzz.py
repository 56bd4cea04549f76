"""A schema-driven fuzz of `kvfit serve`'s API: schemathesis generates requests from the app's
own /openapi.json (its plan parameters are kvfit.plan_options_schema()) and sends them to the
ASGI app in-process. Whatever the values, no response is a 5xx and none carries a traceback.
Bounded and repeatable: a fixed number of examples per operation, derandomized."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings

from kvfit.web.app import create_app

# the test transport names its host "testserver"; the served app answers loopback names only
APP = create_app(offline=True, allowed_hosts=["testserver", "127.0.0.1", "localhost"])
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


def _check(case, response) -> None:
    assert response.status_code < 500, (case.path, case.query, case.body, response.text[:500])
    assert "Traceback" not in response.text, (case.path, case.query)
    if response.status_code >= 400:
        error = response.json()["error"]
        assert error["message"] and error["exit_code"] == 2, error


@schema.parametrize()
@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_no_input_is_a_server_error(case):
    _check(case, case.call())
    # a generated model name is never in the offline catalog, so the options would only meet
    # the model lookup's refusal: ask the same options of a catalog model too, so they reach
    # the planner
    for holder in (case.query, case.body):
        if isinstance(holder, dict) and "model" in holder:
            holder["model"] = "Qwen/Qwen3-32B"
            _check(case, case.call())
