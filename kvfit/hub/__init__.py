"""Model references and checkpoint metadata from the Hugging Face Hub, GGUF files and the
offline catalog.

    ref = parse_reference("Qwen/Qwen3-32B@main")
    meta = resolve(ref, timeout=10.0)          # kvfit.checkpoint.metadata.Metadata

Importing this package is cheap: huggingface_hub, gguf and ruamel.yaml load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..checkpoint.metadata import Metadata
    from .reference import Reference, parse_reference

__all__ = ["Reference", "lookup_catalog", "parse_reference", "resolve"]


def __getattr__(name: str):
    """Reference and parse_reference load on first use (a local plan imports kvfit.hub's
    weight-file helpers but never parses a Hub reference)."""
    if name in ("Reference", "parse_reference"):
        from . import reference

        return getattr(reference, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def resolve(ref: Reference, *, offline: bool = False, timeout: float = 10.0,
            read_headers: bool = False, quiet: bool = False,
            started: float | None = None) -> Metadata:
    """Metadata for a reference.

    offline: never contact the Hub (also implied by HF_HUB_OFFLINE=1); answers come from
      kvfit's metadata cache or the offline catalog.
    timeout: seconds allowed for all of the Hub requests (a finite number above 0), counted
      from `started` (a time.monotonic() reading; default: now; the plan CLI passes the
      process start, kvfit.hub.deadline.process_started()).
    read_headers: also read safetensors/GGUF headers of the served weight files
      (Metadata.tensor_bytes), with HTTP Range requests.
    quiet: no progress line on stderr (--json); otherwise each Hub request is shown when
      stderr is a terminal and CI is unset (kvfit.progress).
    Local directories (kind "local") are handled by kvfit.checkpoint.local, not here.
    """
    from .deadline import check_timeout

    timeout = check_timeout(timeout)
    if ref.kind == "local":
        raise NotImplementedError("local checkpoint directories are resolved by kvfit.checkpoint.local")
    if ref.kind == "gguf-file":
        from .gguf_source import local_gguf_metadata

        return local_gguf_metadata(ref, read_headers)
    from .failures import HubUnreachable
    from .transport import HubClient, offline_requested

    if offline or offline_requested():
        from .offline import answer_offline

        why = "offline mode (HF_HUB_OFFLINE)" if not offline else "offline mode was requested"
        return answer_offline(ref, why, read_headers)
    from ..progress import progress
    from .resolver import resolve_online
    try:
        with progress("hub", quiet=quiet) as shown, HubClient(
                timeout=timeout, progress=shown, started=started) as client:
            return resolve_online(ref, client, read_headers)
    except HubUnreachable as exc:
        from ..textsafe import safe
        from .offline import answer_offline

        reason = safe(f"the Hub could not be reached ({exc.message})", keep_newlines=False)
        return answer_offline(ref, reason, read_headers)


def lookup_catalog(repo_id: str, revision: str | None = None) -> Metadata | None:
    """The offline catalog's snapshot of a repo (see kvfit.hub.catalog.lookup_catalog)."""
    from .catalog import lookup_catalog as lookup

    return lookup(repo_id, revision)
