"""Bounded retries and one clear HubError per kind of Hub failure.

Only rate limits (429), server errors (5xx) and connections dropped mid-response are
retried, at most ATTEMPTS times with a short exponential backoff; a Retry-After longer
than MAX_RETRY_AFTER_S is not waited for (the error says how long the Hub asked for).
Everything else fails at once with a message that says what happened and what to do.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ..errors import HubError, KvfitError

T = TypeVar("T")

ATTEMPTS = 3
BACKOFF_S = 0.25
MAX_RETRY_AFTER_S = 2.0
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class HubUnreachable(HubError):
    """The endpoint could not be contacted at all (DNS, refused connection, offline mode)."""


@dataclass(frozen=True, slots=True)
class Where:
    """What was being read, for messages: endpoint URL (credentials already redacted), repo id,
    revision, file, timeout (s)."""

    endpoint: str
    repo_id: str
    revision: str | None = None
    path: str | None = None
    timeout: float | None = None

    @property
    def what(self) -> str:
        at = f"@{self.revision}" if self.revision else ""
        return f"{self.repo_id}{at}" + (f" file {self.path}" if self.path else " (repo info)")


def with_retries(call: Callable[[], T], where: Where,
                 left: Callable[[], float] | None = None) -> T:
    """Run `call`, retrying transient Hub failures; any failure ends as a HubError.
    left(): the seconds the plan's Hub budget still has; a retry that would wait past it
    is not made (the failure is final)."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return call()
        except KvfitError:
            raise
        except Exception as exc:  # noqa: BLE001 - every library failure is translated below
            wait = _retry_wait(exc, attempt)
            if wait is None or (left is not None and wait >= left()):
                raise translate(exc, where, attempt) from None
            time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


def _retry_wait(exc: Exception, attempt: int) -> float | None:
    """Seconds to wait before the next attempt, or None when the failure is final."""
    if attempt >= ATTEMPTS:
        return None
    status = status_of(exc)
    if status in _RETRY_STATUSES:
        after = retry_after(exc)
        if after is not None:
            return after if after <= MAX_RETRY_AFTER_S else None
        return BACKOFF_S * 2 ** (attempt - 1)
    if status is None and _kind(exc) == "dropped":
        return BACKOFF_S * 2 ** (attempt - 1)
    return None


def status_of(exc: Exception) -> int | None:
    """The HTTP status of an error answer (huggingface_hub's HfHubHTTPError), else None."""
    from huggingface_hub.errors import HfHubHTTPError

    return exc.response.status_code if isinstance(exc, HfHubHTTPError) else None


MAX_RETRY_AFTER_CHARS = 12


def retry_after(exc: Exception) -> float | None:
    """The Retry-After header of an HTTP error answer, in seconds: ASCII digits with an
    optional fraction, at most MAX_RETRY_AFTER_CHARS long; else None (an HTTP date too)."""
    value = (exc.response.headers.get("Retry-After") or "").strip() \
        if status_of(exc) is not None else ""
    whole, _, fraction = value.partition(".")
    if (not value or len(value) > MAX_RETRY_AFTER_CHARS or not value.isascii()
            or not whole.isdigit() or not (fraction == "" or fraction.isdigit())):
        return None
    return float(value)


def _kind(exc: Exception) -> str:
    """Classify a failure without an HTTP status: "timeout" | "unreachable" | "dropped" |
    "redirects" | "bad-url" | "other". A ValueError is the URL parser's (the library's hooks
    read the URL's port) or a header that does not encode."""
    import httpx2
    from huggingface_hub.errors import OfflineModeIsEnabled

    if isinstance(exc, (TimeoutError, httpx2.TimeoutException)):
        return "timeout"
    if isinstance(exc, (OfflineModeIsEnabled, httpx2.ConnectError, httpx2.ProxyError,
                        httpx2.UnsupportedProtocol)):
        return "unreachable"
    if isinstance(exc, (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError,
                        httpx2.DecodingError)):
        return "dropped"
    if isinstance(exc, httpx2.TooManyRedirects):
        return "redirects"
    if isinstance(exc, (httpx2.InvalidURL, httpx2.LocalProtocolError, ValueError)):
        return "bad-url"
    return "other"


def _untrusted(exc: BaseException) -> bool:
    """Whether a TLS certificate check failed somewhere in the exception's chain."""
    import ssl

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, ssl.SSLCertVerificationError):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def translate(exc: Exception, where: Where, attempts: int = 1) -> HubError:
    """One paragraph per failure kind; HubUnreachable when the endpoint never answered.
    The library's own exception text is not printed (it can hold parts of a URL's userinfo);
    only its class name is, where it helps."""
    status = status_of(exc)
    if status is not None:
        return _http_error(status, exc, where, attempts)
    kind = _kind(exc)
    name = type(exc).__name__
    if kind == "unreachable" and _untrusted(exc):
        return HubUnreachable(f"could not connect to {where.endpoint} to read {where.what}: "
                              "its TLS certificate is not signed by an authority this machine "
                              "trusts (SSLCertVerificationError; behind a proxy or mirror with "
                              "its own certificate authority, set SSL_CERT_FILE to that CA "
                              "bundle)")
    if kind == "unreachable":
        return HubUnreachable(f"could not connect to {where.endpoint} to read {where.what} "
                              f"({name}).", hint="Check the network, proxy settings and "
                              "HF_ENDPOINT.")
    if kind == "timeout":
        return HubError(f"{where.endpoint} did not answer within {where.timeout:g} s (--timeout: "
                        "one budget for all of the plan's Hub requests, counted from kvfit's "
                        f"start) while reading {where.what}.",
                        hint="Retry with a longer timeout, or plan offline from the catalog.")
    if kind == "dropped":
        return HubError(f"the connection closed before the full response for {where.what} "
                        f"arrived, or the answer broke HTTP framing ({name}, {attempts} "
                        "attempt(s)).", hint="Retry; the Hub or a proxy cut the transfer short "
                        "or garbled it.")
    if kind == "redirects":
        return HubError(f"{where.endpoint} redirected the request for {where.what} too many "
                        "times (a redirect loop).", hint="Check HF_ENDPOINT and any proxy in "
                        "between.")
    if kind == "bad-url":
        return HubError(f"the request for {where.what} to {where.endpoint} could not be sent: "
                        f"the URL or a header is not valid HTTP ({name}).", hint="Check "
                        "HF_ENDPOINT (percent-encode reserved characters in a user name or "
                        "password) and HF_TOKEN.")
    return HubError(f"reading {where.what} from {where.endpoint} failed ({name}).")


def _http_error(status: int, exc: Exception, where: Where, attempts: int) -> HubError:
    """Messages for HTTP status failures (401, 403, 404, 429, 5xx and the rest): the error class
    hf_raise_for_status chose (from X-Error-Code / X-Error-Message), then the status."""
    from huggingface_hub import errors

    code = ("RevisionNotFound" if isinstance(exc, errors.RevisionNotFoundError)
            else "EntryNotFound" if isinstance(exc, errors.RemoteEntryNotFoundError)
            else "GatedRepo" if isinstance(exc, errors.GatedRepoError) else "")
    said = exc.response.headers.get("X-Error-Message", "")
    repo = where.repo_id
    if code == "RevisionNotFound" or code == "EntryNotFound":
        return _not_found(code, where)
    if isinstance(exc, errors.DisabledRepoError):
        return HubError(f"the Hub has disabled access to {repo} (HTTP {status}).",
                        hint="The repository was disabled by its owner or the Hub; pick "
                        "another checkpoint.")
    if status == 401 and not isinstance(exc, errors.RepositoryNotFoundError) \
            and said == "Invalid credentials in Authorization header":
        return HubError(f"the Hub rejected the token in use as invalid while reading "
                        f"{where.what} (HTTP 401).", hint="Set HF_TOKEN to a valid token (or "
                        "run `hf auth login` again), or unset it to read public repositories.")
    if status == 401:
        return HubError(f"the Hub refused {where.what} without valid credentials (HTTP 401): the "
                        "repository is private or gated, or does not exist - the Hub answers "
                        "all three the same way.", hint="If you have access, set HF_TOKEN "
                        "(or run `hf auth login`); otherwise check the repo id's spelling.")
    if status == 403 and code == "GatedRepo":
        return HubError(f"{repo} is a gated repository and the token in use has not been "
                        "granted access (HTTP 403).", hint=f"Request access at "
                        f"https://huggingface.co/{repo} and retry once it is approved.")
    if status == 403:
        return HubError(f"the token in use may not read {where.what} (HTTP 403 Forbidden).",
                        hint="Use a token with read access to this repository (HF_TOKEN).")
    if status == 404:
        return _not_found(code, where)
    if status == 429:
        after = retry_after(exc)
        asked = f"; it asked to wait {after:g} s" if after is not None else ""
        return HubError(f"the Hub rate-limited requests for {where.what} (HTTP 429) on all "
                        f"{attempts} attempt(s){asked}.", hint="Wait a minute and retry; "
                        "authenticated requests (HF_TOKEN) get higher limits.")
    if status >= 500:
        return HubError(f"the Hub answered HTTP {status} (server error) for {where.what} on all "
                        f"{attempts} attempt(s).", hint="The Hub may be degraded: retry later, "
                        "or plan offline (HF_HUB_OFFLINE=1) if the model is in the catalog.")
    return HubError(f"the Hub answered HTTP {status} for {where.what}.")


def _not_found(code: str, where: Where) -> HubError:
    """404: a missing revision, a missing file, or a missing repository."""
    if code == "RevisionNotFound":
        return HubError(f"revision {where.revision!r} does not exist in {where.repo_id} "
                        "(HTTP 404).", hint="Check the branch, tag or commit sha.")
    if code == "EntryNotFound" or where.path:
        at = where.revision or "the default branch"
        return HubError(f"{where.path} is not in {where.repo_id} at {at} (HTTP 404).")
    return HubError(f"the repository {where.repo_id} was not found on {where.endpoint} "
                    "(HTTP 404).", hint="Check the org/name spelling.")
