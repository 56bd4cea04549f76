"""One GGUF file of a Hub repo, read without the repo's file listing.

A plan of a single (unsplit) GGUF artifact needs the file's commit, its size and its header;
the header is read anyway, and the Hub's answer to that first ranged read names the commit
(X-Repo-Commit) and the size (X-Linked-Size on an LFS file's redirect, else Content-Range), as
huggingface_hub's get_hf_file_metadata reads them. So a cold plan is that one read (the
resolve answer plus, for an LFS file, the CDN's), not a repo-info call first. Everything else is
read at the commit the answer named, so a branch that moves meanwhile cannot mix two commits.

The result is cached per (repo, commit, file) - never as the commit's snapshot, which lists
every file - so a later plan pinned to that commit makes no request. A branch seen before is
re-resolved with one repo-info call, as for any reference; an endpoint whose answer names no
commit or size is read the listing way.
"""

from __future__ import annotations

from .cache import MetadataCache
from .gguf_header import FIRST_READ_BYTES, read_remote_gguf
from .gguf_source import header_from_json, header_to_json
from .reference import Reference
from .snapshot import Snapshot, valid_snapshot
from .transport import HubClient

NOTE = ("commit and size of {path} from the Hub's answer to reading it (X-Repo-Commit, "
        "X-Linked-Size / Content-Range): a single GGUF file needs no repository listing")


def _key(path: str) -> str:
    return f"artifact:{path}"


def load_artifact(cache: MetadataCache, ref: Reference, sha: str) -> Snapshot | None:
    """The cached one-file snapshot of ref.path at `sha` (with its GGUF header cached too)."""
    doc = cache.load(ref.repo_id, sha, _key(ref.path),
                     valid=lambda d: _valid(d) and d["files"][0][0] == ref.path)
    if doc is None or cache.load(ref.repo_id, sha, f"gguf:{ref.path}",
                                 valid=lambda d: header_from_json(d) is not None) is None:
        return None
    return _snapshot(ref, sha, doc["files"][0][1])


def known(cache: MetadataCache, ref: Reference) -> bool:
    """Whether the branch's last recorded commit has this file cached (then a repo-info call
    re-resolves the branch: one request, as for any warm branch)."""
    sha = cache.recall_ref(ref.repo_id, ref.revision)
    return sha is not None and load_artifact(cache, ref, sha) is not None


def read_artifact(client: HubClient, cache: MetadataCache, ref: Reference) -> Snapshot | None:
    """Read the file's header at ref.revision (the default branch: "main", huggingface_hub's
    DEFAULT_REVISION); None when the answer names no commit or no size."""
    from huggingface_hub import constants

    revision = ref.revision or constants.DEFAULT_REVISION
    first = client.read_first(ref.repo_id, revision, ref.path, FIRST_READ_BYTES)
    if first.commit is None or first.size is None:
        return None
    sha, size = first.commit, first.size

    def read_range(start: int, length: int) -> bytes:
        if start + length <= len(first.data) or len(first.data) >= size:
            return first.data[start:start + length]
        return client.read_range(ref.repo_id, sha, ref.path, start, length)

    header = read_remote_gguf(read_range, ref.path, size)
    cache.save(ref.repo_id, sha, f"gguf:{ref.path}", header_to_json(header))
    cache.save(ref.repo_id, sha, _key(ref.path), {"files": [[ref.path, size]], "config": None,
                                                    "quant_config": None, "index": None})
    cache.remember_ref(ref.repo_id, ref.revision, sha)
    return _snapshot(ref, sha, size)


def _snapshot(ref: Reference, sha: str, size: int) -> Snapshot:
    from ..checkpoint.metadata import FileEntry

    return Snapshot(ref.repo_id, sha, (FileEntry(ref.path, size),), None, None, None,
                    source_note=NOTE.format(path=ref.path))


def _valid(doc: dict) -> bool:
    files = doc.get("files")
    return valid_snapshot(doc) and isinstance(files, list) and len(files) == 1 \
        and isinstance(files[0][1], int)
