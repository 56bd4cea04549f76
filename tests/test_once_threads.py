"""kvfit.checkpoint.metadata.once is shared by plans run from threads (kvfit.plan from a
notebook, the web page, the MCP server): eviction past its cap must not break under them."""

import threading

from kvfit.checkpoint import metadata
from kvfit.checkpoint.metadata import Metadata, once


def test_once_from_many_threads_keeps_its_cap_and_every_value():
    threads, per_thread = 8, 3 * metadata._ONCE_KEEP   # each thread alone overflows the cap
    metas = [Metadata(source=f"m{i}", origin="local", config={"i": i}) for i in range(threads)]
    start = threading.Barrier(threads)
    errors, wrong = [], []

    def work(i):
        start.wait()   # all threads insert and evict at once
        try:
            for n in range(per_thread):
                got = once(metas[i], ("k", n), lambda n=n: (i, n))
                if got != (i, n):
                    wrong.append((i, n, got))
        except Exception as exc:  # noqa: BLE001 - the failure under test is any exception
            errors.append(exc)

    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert errors == [] and wrong == []
    assert len(metadata._ONCE) <= metadata._ONCE_KEEP
