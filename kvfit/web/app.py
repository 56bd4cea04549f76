"""The ASGI app of `kvfit serve`: the page, its script and a JSON API over kvfit's Python API.

Routes (GET takes the question as URL query parameters named like kvfit.plan's keywords, so a
link reproduces the answer; POST /api/plan also takes them as a JSON object):
  /  /fit                  the pages (kvfit/web/static), which fetch the JSON API below
  /api/plan                kvfit.plan(...).to_json()      == `kvfit MODEL ... --json`
  /api/sweep               kvfit.sweep(...).to_json()     == `kvfit MODEL --sweep ... --json`
  /api/fit                 kvfit.fit(...).to_json()       == `kvfit fit ... --json`
  /api/explain-log         kvfit.explain_log(body, ...)   == `kvfit explain-log FILE --json`
  /api/command             {"command": kvfit.command_line(...)}: the equivalent command
  /api/hardware            kvfit.list_hardware()          == `kvfit --list-hardware --json`
  /api/hardware/detect     the local GPUs `--hardware auto` plans on, or why none
  /api/systems             kvfit.list_systems()           == `kvfit --list-systems --json`
  /api/catalog?q=          kvfit.catalog_search(q): suggestions for the model box
  /api/folders?q=          local folders under a typed path (/, ./, ~): the model box's too
  /openapi.json            the OpenAPI description, its parameters from kvfit.plan_options_schema()
Bad input is a 4xx whose body is the CLI's --json error, {"error": {kind, message, hint, fields,
exit_code}}; anything unexpected is a 500 with one paragraph, never a traceback. Requests are
bounded (query and body size); the values themselves are validated by the API, as the CLI's.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import kvfit

MAX_QUERY_CHARS = 8_192           # a question is a few hundred characters
MAX_JSON_BODY = 64 << 10          # POST /api/plan: the same question as a JSON object
MAX_LOG_BODY = 16 << 20           # POST /api/explain-log: a start-up log is KiB to a few MiB
# Options a web request may not set: they read or write local files, run a program, or only
# shape the CLI's own output. The CLI has them all.
REFUSED = {
    "config": "reads a TOML preset file", "plot": "writes an image file",
    "check_engine": "runs the installed engine", "engine_python": "runs a Python executable",
    "engine_probe": "runs the installed engine", "engine_timeout": "runs the installed engine",
    "engine_tp": "runs the installed engine", "require_engine_pass": "runs the installed engine",
    "json": "is implied (the API answers JSON)", "verbose": "shapes the text report",
    "version": "prints kvfit's version", "list_hardware": "is /api/hardware",
    "list_systems": "is /api/systems",
}
STATIC = ("index.html", "fit.html", "kvfit.js", "kvfit.css")
TYPES = {"index.html": "text/html; charset=utf-8", "fit.html": "text/html; charset=utf-8",
         "kvfit.js": "text/javascript; charset=utf-8", "kvfit.css": "text/css; charset=utf-8"}


class WebInputError(Exception):
    """A request kvfit's API never saw: too large, not JSON, an option the web refuses."""

    def __init__(self, status: int, message: str, hint: str | None = None, field: str = ""):
        super().__init__(message)
        self.status, self.message, self.hint, self.field = status, message, hint, field

    def to_json(self) -> dict:
        return {"error": {"kind": "usage error", "message": self.message, "hint": self.hint,
                          "fields": [self.field] if self.field else [], "exit_code": 2}}


def _properties(form: str = "plan") -> dict[str, dict]:
    """The JSON Schema properties of a route's keywords (kvfit.plan_options_schema() for the
    plan routes; kvfit.fit's and kvfit.explain_log's from their own parsers), less REFUSED."""
    props = _schema(form)["properties"]
    return {k: v for k, v in props.items() if not _refused(k, form)}


def _schema(form: str) -> dict:
    if form == "plan":
        return kvfit.plan_options_schema()
    from ..api.explain import EXPLAIN
    from ..api.fitting import FIT
    from ..api.options import schema
    return schema({"fit": FIT, "explain": EXPLAIN}[form])


def _refused(name: str, form: str) -> bool:
    # explain-log's --config is the model's config.json, read like model_dir's folder
    return name in REFUSED and not (form == "explain" and name == "config")


def _kind(spec: dict) -> str:
    """How a query value is read: a list (array), true/false (boolean), else text."""
    types = spec.get("type", "string")
    types = [types] if isinstance(types, str) else list(types)
    return next((t for t in ("array", "boolean") if t in types), "string")


def _flag(name: str, text: str) -> bool:
    low = text.strip().lower()
    if low in ("", "true", "1", "on", "yes"):
        return True
    if low in ("false", "0", "off", "no"):
        return False
    from ..numbers import shown
    raise WebInputError(400, f"{name}={shown(text, 40)}: expected true or false.", field=name)


def _check_name(name: str, form: str = "plan") -> None:
    if _refused(name, form):
        raise WebInputError(400, f"the option {name} is not available from the web page: it "
                            f"{REFUSED[name]}.", hint="Use the kvfit command line for it.",
                            field=name)


def _query_options(request: Request, form: str = "plan", positional: tuple[str, ...] = ()
                   ) -> dict[str, Any]:
    """The URL query as keyword arguments: a repeated or array option is a list, a boolean
    one true/false, every other value the text as given, which the API reads and checks with
    the CLI's own parser (so a value is refused with the flag's paragraph). An unknown name
    is passed on for the API to refuse by name."""
    if len(request.url.query) > MAX_QUERY_CHARS:
        raise WebInputError(414, f"the query string is {len(request.url.query):,} characters; "
                            f"kvfit serve reads at most {MAX_QUERY_CHARS:,}.")
    props = _properties(form)
    out: dict[str, Any] = {}
    for name in dict.fromkeys(request.query_params.keys()):
        values = request.query_params.getlist(name)
        _check_name(name, form)
        kind = _kind(props[name]) if name in props and name not in positional else "string"
        if kind == "array":
            out[name] = [v for v in values if v != ""]
        elif kind == "boolean":
            out[name] = _flag(name, values[-1])
        else:
            out[name] = values[-1]
    return out


async def _body(request: Request, cap: int) -> bytes:
    """The request body, refused past `cap` bytes without reading the rest."""
    chunks, total = [], 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > cap:
            raise WebInputError(413, f"the request body is over {cap:,} bytes, the most kvfit "
                                "serve reads for this route.")
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_options(request: Request) -> dict[str, Any]:
    raw = await _body(request, MAX_JSON_BODY)
    try:
        options = json.loads(raw)
    except (ValueError, RecursionError) as exc:   # ValueError: also an int past 4,300 digits
        raise WebInputError(400, f"the request body is not JSON ({type(exc).__name__}); send "
                            "a JSON object of kvfit.plan's options.") from None
    if not isinstance(options, dict):
        raise WebInputError(400, "the request body is JSON but not an object; send an object "
                            "of kvfit.plan's options, e.g. {\"model\": \"Qwen/Qwen3-32B\", "
                            "\"hardware\": \"h100-80\"}.")
    for name in options:
        _check_name(name)
    return options


def _model(options: dict[str, Any]) -> str:
    model = options.pop("model", None)
    if not isinstance(model, str) or not model.strip():
        raise WebInputError(400, "no model: give model=<Hub id, catalog id or local folder>, "
                            "e.g. model=Qwen/Qwen3-32B.", field="model")
    if model.strip().lower().endswith(".toml"):
        # a preset may set any option, those REFUSED included
        raise WebInputError(400, "a TOML preset is not available from the web page: it may "
                            "set options that run programs or write files.",
                            hint="Use kvfit PRESET.toml on the command line.", field="model")
    return model


class App:
    """The routes, bound to one server's settings (offline: every plan stays off the Hub)."""

    def __init__(self, offline: bool):
        self.offline = offline

    def _opts(self, options: dict[str, Any]) -> dict[str, Any]:
        return options | {"offline": True} if self.offline else options

    # the pages and their files

    async def page(self, request: Request) -> Response:
        name = {"/": "index.html", "/fit": "fit.html"}.get(request.url.path) or \
            request.path_params.get("name", "")
        if name not in STATIC:
            raise HTTPException(404)
        text = resources.files("kvfit.web").joinpath("static", name).read_bytes()
        return Response(text, media_type=TYPES[name],
                        headers={"Content-Security-Policy": CSP, "X-Content-Type-Options":
                                 "nosniff", "Referrer-Policy": "no-referrer"})

    # the JSON API

    async def plan(self, request: Request) -> Response:
        options = (await _json_options(request) if request.method == "POST"
                   else _query_options(request, positional=("model",)))
        model = _model(options)
        report = await _threaded(kvfit.plan, model, **self._opts(options))
        return _answer(report.to_json(), kvfit.exit_code(report))

    async def sweep(self, request: Request) -> Response:
        options = _query_options(request, positional=("model",))
        model = _model(options)
        specs = [v for v in request.query_params.getlist("sweep") if v]
        options.pop("sweep", None)
        result = await _threaded(kvfit.sweep, model, specs, **self._opts(options))
        return _answer(result.to_json())

    async def command(self, request: Request) -> Response:
        options = _query_options(request, positional=("model",))
        model = _model(options)
        text = await _threaded(kvfit.command_line, model, **self._opts(options))
        return JSONResponse({"command": text})

    async def fit(self, request: Request) -> Response:
        options = _query_options(request, "fit")
        result = await _threaded(kvfit.fit, **self._opts(options))
        return _answer(result.to_json())

    async def explain_log(self, request: Request) -> Response:
        options = _query_options(request, "explain")
        raw = await _body(request, MAX_LOG_BODY)
        text = raw.decode("utf-8", errors="replace")
        result = await _threaded(kvfit.explain_log, text, **self._opts(options))
        return _answer(result.to_json())

    async def hardware(self, request: Request) -> Response:
        return JSONResponse((await _threaded(kvfit.list_hardware)).to_json())

    async def detect(self, request: Request) -> Response:
        """What `--hardware auto` would plan on: {"detected": ..., "error": None} or
        {"detected": None, "error": {the paragraph}} (no GPU is not a bad request)."""
        from ..errors import KvfitError
        from ..hardware.detect import describe, detect
        try:
            d = await _threaded(detect)
        except KvfitError as err:
            return JSONResponse({"detected": None, "error": err.to_json()})
        d["summary"] = describe(d, d["count"], "", "--hardware auto plans on")
        return JSONResponse({"detected": d, "error": None})

    async def systems(self, request: Request) -> Response:
        return JSONResponse((await _threaded(kvfit.list_systems)).to_json())

    async def catalog(self, request: Request) -> Response:
        if len(request.url.query) > MAX_QUERY_CHARS:
            raise WebInputError(414, f"the query string is over {MAX_QUERY_CHARS:,} characters.")
        query = request.query_params.get("q", "")
        rows = await _threaded(kvfit.catalog_search, query=query, limit=20)
        return JSONResponse(rows.to_json())

    async def folders(self, request: Request) -> Response:
        """Local folders for the model box: the subfolders of the typed path's folder whose
        names start with its last part ([{"path", "checkpoint": holds a config.json}])."""
        if len(request.url.query) > MAX_QUERY_CHARS:
            raise WebInputError(414, f"the query string is over {MAX_QUERY_CHARS:,} characters.")
        return JSONResponse(await _threaded(local_folders, request.query_params.get("q", "")))

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(openapi())


MAX_FOLDERS = 20          # suggestions shown
MAX_SCANNED = 2_000       # directory entries read for them


def local_folders(typed: str) -> list[dict]:
    """Subfolders of `typed`'s folder whose names begin with its last part (hidden ones only
    when that part begins with a dot), sorted; [] unless `typed` is a path (/, ./, ../, ~)."""
    import os
    if not typed.startswith(("/", "./", "../", "~")) or "\0" in typed:
        return []
    path = os.path.expanduser(typed)
    head, prefix = os.path.split(path)
    found = []
    try:
        with os.scandir(head or ".") as entries:
            for n, entry in enumerate(entries):
                if n >= MAX_SCANNED:
                    break
                name = entry.name
                if not name.startswith(prefix) or (name.startswith(".") and
                                                   not prefix.startswith(".")):
                    continue
                if entry.is_dir():
                    full = os.path.join(head, name)
                    found.append({"path": full, "checkpoint":
                                  os.path.isfile(os.path.join(full, "config.json"))})
    except (OSError, ValueError):
        return []
    return sorted(found, key=lambda f: f["path"])[:MAX_FOLDERS]


async def _threaded(fn, *args, **kwargs):
    from starlette.concurrency import run_in_threadpool
    return await run_in_threadpool(fn, *args, **kwargs)


def _answer(body: dict, exit_code: int | None = None) -> Response:
    """A 200 with the CLI's JSON; the CLI's exit code (0 fits, 1 not met, 5 not judged) rides
    in the X-Kvfit-Exit-Code header, since "does not fit" is an answer, not an error."""
    headers = {"X-Kvfit-Exit-Code": str(exit_code)} if exit_code is not None else None
    return JSONResponse(body, headers=headers)


CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")


def _error_json(err) -> dict:
    return {"error": err.to_json() | {"exit_code": err.exit_code}}


async def _kvfit_error(request: Request, err: Exception) -> Response:
    status = 422 if isinstance(err, kvfit.Unsupported) else 400
    return JSONResponse(_error_json(err), status_code=status)


async def _web_error(request: Request, err: Exception) -> Response:
    assert isinstance(err, WebInputError)
    return JSONResponse(err.to_json(), status_code=err.status)


async def _http_error(request: Request, err: Exception) -> Response:
    assert isinstance(err, HTTPException)
    message = {404: f"no such page or route: {request.url.path[:200]}",
               405: f"{request.method} is not accepted on {request.url.path[:200]}"}.get(
        err.status_code, str(err.detail))
    from ..textsafe import safe
    return JSONResponse({"error": {"kind": "usage error", "message": safe(message),
                                   "hint": "The routes are listed in /openapi.json.",
                                   "fields": [], "exit_code": 2}}, status_code=err.status_code)


async def _internal(request: Request, exc: Exception) -> Response:
    """One paragraph for an unexpected exception (a kvfit bug), as the CLI's exit 70."""
    from ..textsafe import safe
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    what = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    message = safe(f"an unexpected {what} while answering {request.url.path[:200]}; this is a "
                   "kvfit bug, please report it with the request.", keep_newlines=False)
    return JSONResponse({"error": {"kind": "internal error", "message": message, "hint": None,
                                   "fields": [], "exit_code": 70}}, status_code=500)


def _params(form: str, model: bool) -> list[dict]:
    """Query parameters: a route's keyword options (model first on the plan routes)."""
    out = []
    if model:
        out.append({"name": "model", "in": "query", "required": True, "description":
                    "checkpoint: Hub id (org/name[@revision]), catalog id or local folder",
                    "schema": {"type": "string", "minLength": 1,
                               "examples": ["Qwen/Qwen3-32B"]}})
    required = set(_schema(form).get("required", ()))
    for name, spec in sorted(_properties(form).items()):
        param = {"name": name, "in": "query", "required": name in required, "schema": spec}
        if _kind(spec) == "array":
            param |= {"style": "form", "explode": True}
        out.append(param | ({"description": spec["description"]}
                            if spec.get("description") else {}))
    return out


def _json(description: str, schema: dict) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def openapi() -> dict:
    """The OpenAPI 3.1 description of the JSON API: the plan routes' parameters are
    kvfit.plan_options_schema(), /api/fit's and /api/explain-log's their functions' options."""
    error = _json("bad input: the CLI's --json error paragraph",
                  {"$ref": "#/components/schemas/Error"})
    bad = {"400": error, "413": error, "414": error, "422": error}
    answer = {"200": _json("what the matching `kvfit ... --json` prints (the header "
                           "X-Kvfit-Exit-Code carries a plan's exit code)",
                           {"type": "object"})} | bad
    listing = {"200": _json("the listing", {"type": "array", "items": {"type": "object"}})}
    plan = _params("plan", True)
    sweep = {"name": "sweep", "in": "query", "required": True, "style": "form",
             "explode": True, "description": "AXIS=V1,V2,... (context, users, gpus, nodes, "
             "kv-dtype); once or twice",
             "schema": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                        "maxItems": 2}}
    body = {"type": "object", "required": ["model"],
            "properties": {"model": {"type": "string", "minLength": 1}} | _properties("plan")}

    def get(op: str, summary: str, params: list, responses: dict) -> dict:
        return {"get": {"operationId": op, "summary": summary, "parameters": params,
                        "responses": responses}}

    paths = {
        "/api/plan": get("plan", "plan one checkpoint (kvfit MODEL ... --json)", plan, answer)
        | {"post": {"operationId": "planPost", "summary": "the same, the options as a JSON "
                    "object", "requestBody": {"required": True, "content": {
                        "application/json": {"schema": body}}}, "responses": answer}},
        "/api/sweep": get("sweep", "plan over one or two axes (kvfit MODEL --sweep ...)",
                          plan + [sweep], answer),
        "/api/command": get("command", "the equivalent kvfit command line", plan,
                            {"200": _json("the command", {"type": "object"})} | bad),
        "/api/fit": get("fit", "what fits this hardware (kvfit fit ... --json)",
                        _params("fit", False), answer),
        "/api/explain-log": {"post": {
            "operationId": "explainLog", "summary": "a start-up log against kvfit's "
            "prediction (kvfit explain-log FILE --json)", "parameters": _params("explain", False),
            "requestBody": {"required": True, "content": {"text/plain": {
                "schema": {"type": "string"}}}}, "responses": answer}},
        "/api/hardware": get("hardware", "hardware presets (kvfit --list-hardware --json)", [],
                             listing),
        "/api/hardware/detect": get("detect", "the local GPUs --hardware auto plans on", [],
                                    {"200": _json("what was seen, or why nothing",
                                                  {"type": "object"})}),
        "/api/systems": get("systems", "system presets (kvfit --list-systems --json)", [],
                            listing),
        "/api/catalog": get("catalog", "catalog entries whose id holds q, best first",
                            [{"name": "q", "in": "query", "required": False,
                              "schema": {"type": "string"}}], listing | bad),
        "/api/folders": get("folders", "local folders whose path begins with q",
                            [{"name": "q", "in": "query", "required": False,
                              "schema": {"type": "string"}}], listing | bad),
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "kvfit", "version": kvfit.__version__, "description":
                 "kvfit's answers as JSON: each route returns exactly what the matching "
                 "`kvfit ... --json` command prints."},
        "paths": paths,
        "components": {"schemas": {"Error": {"type": "object", "required": ["error"],
                                             "properties": {"error": {"type": "object"}}}}},
    }


def create_app(*, offline: bool = False, allowed_hosts: list[str] | None = None) -> Starlette:
    """The app. allowed_hosts: the Host headers answered (default: the loopback names, which
    keeps a web page elsewhere from reaching this server through DNS rebinding)."""
    app = App(offline)
    routes = [
        Route("/", app.page), Route("/fit", app.page),
        Route("/static/{name}", app.page),
        Route("/api/plan", app.plan, methods=["GET", "POST"]),
        Route("/api/sweep", app.sweep), Route("/api/command", app.command),
        Route("/api/fit", app.fit), Route("/api/explain-log", app.explain_log, methods=["POST"]),
        Route("/api/hardware", app.hardware), Route("/api/hardware/detect", app.detect),
        Route("/api/systems", app.systems), Route("/api/catalog", app.catalog),
        Route("/api/folders", app.folders),
        Route("/openapi.json", app.openapi),
    ]
    hosts = allowed_hosts or ["127.0.0.1", "localhost", "[::1]", "::1"]
    return Starlette(
        routes=routes,
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)],
        exception_handlers={kvfit.KvfitError: _kvfit_error, WebInputError: _web_error,
                            HTTPException: _http_error, Exception: _internal})
