"""huggingface_hub's HTTP session, with kvfit's limits on what a reply may cost.

The session is the library's own (get_session(): an httpx2 client with its proxies from the
environment, TLS, redirects that drop the token when they leave the origin, and its offline
guard). kvfit adds one response hook to it. The hook acts only on requests kvfit makes inside
limited() (a context variable; other users of the shared session are untouched) and wraps the
raw body so that reading it stops at the request's deadline and after a byte cap. It also
covers the bodies httpx2 reads by itself: redirect answers it follows and error answers
hf_raise_for_status reads for their message, which get a small cap (NON_SUCCESS_CAP).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import httpx2
from huggingface_hub.utils import get_session

from ..errors import HubError, UsageError
from .deadline import Deadline

NON_SUCCESS_CAP = 64 * 1024   # a redirect's or an error's body (the Hub's are a few hundred bytes)


class _Limit:
    """The deadline and raw byte cap of one kvfit request, and what it reads (for messages)."""

    __slots__ = ("deadline", "cap", "what")

    def __init__(self, deadline: Deadline, cap: int, what: str):
        self.deadline, self.cap, self.what = deadline, cap, what


_LIMIT: ContextVar[_Limit | None] = ContextVar("kvfit_hub_limit", default=None)


class _CappedStream(httpx2.SyncByteStream):
    """A response body that ends at the deadline and after `cap` raw bytes."""

    def __init__(self, inner: httpx2.SyncByteStream, limit: _Limit, cap: int, status: int):
        self._inner, self._limit, self._cap, self._status = inner, limit, cap, status

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        for chunk in self._inner:
            self._limit.deadline.check()
            seen += len(chunk)
            if seen > self._cap:
                raise HubError(f"the HTTP {self._status} answer for {self._limit.what} is larger "
                               f"than {self._cap:,} bytes; kvfit stopped reading it.",
                               hint="An answer this large is not genuine: check HF_ENDPOINT "
                               "and any proxy in between.")
            yield chunk

    def close(self) -> None:
        self._inner.close()


def _limit_body(response: httpx2.Response) -> None:
    """Response hook: bound the body of a kvfit request (see the module docstring)."""
    limit = _LIMIT.get()
    if limit is None:
        return
    status = response.status_code
    cap = limit.cap if 200 <= status < 300 else NON_SUCCESS_CAP
    # httpx2 itself replaces response.stream at this point (BoundSyncStream); hooks run next
    response.stream = _CappedStream(response.stream, limit, cap, status)


@contextmanager
def limited(deadline: Deadline, cap: int, what: str):
    """The library's session, with kvfit's bounds on every answer read in this context."""
    token = _LIMIT.set(_Limit(deadline, cap, what))
    try:
        yield _session()
    finally:
        _LIMIT.reset(token)


def _session() -> httpx2.Client:
    """get_session() with the hook in place (a session the library re-made gets it again)."""
    try:
        session = get_session()
    except (ValueError, TypeError, httpx2.InvalidURL) as exc:
        raise UsageError("a proxy setting (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY) is not a URL the "
                         f"HTTP client accepts ({type(exc).__name__}).", hint="Percent-encode "
                         "reserved characters in a proxy's user name or password (/ as %2F, "
                         "@ as %40, # as %23).") from None
    hooks = session.event_hooks
    if _limit_body not in hooks["response"]:
        session.event_hooks = {**hooks, "response": [*hooks["response"], _limit_body]}
    return session
