"""`kvfit serve`: a local web page and JSON API, each a view of kvfit's Python API (kvfit.api).

kvfit.web.app builds the ASGI app (Starlette); kvfit/web/static holds the page (plain HTML, a
stylesheet and one vanilla script that draws the report JSON and computes nothing). Needs the
optional `web` extra (starlette, uvicorn).
"""
