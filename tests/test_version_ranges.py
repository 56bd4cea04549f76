"""Engine version ranges (kvfit.engines.spec): packaging's PEP 440 answer, prereleases allowed
(an engine's dev build or release candidate is planned as the version it is)."""

from __future__ import annotations

import itertools

import pytest

from kvfit.engines.spec import in_range, parse_version
from kvfit.errors import UsageError

VERSIONS = ["0", "0.4", "0.4.0", "0.5.22", "0.33.0", "0.34", "01.2", "0.34.0rc1",
            "0.33.0.post1", "0.33.0+cu128", "v0.33.0", "0.34.0.dev3", "0.33.1 "]
RANGES = [">=0.33", "<0.23", ">=0.33,<0.34", ">=0.4,<0.6", ">0.33", "<=0.33.0", "==0.33",
          "!=0.33.0", ">= 0.21", "==0.33.*", "~=0.33.0", "===0.33.0", "<0.34.0rc2"]
# (version, range) pairs that hold, by PEP 440's rules; every other pair of the two lists does not
HOLDS = {
    # >=0.33: 0.33.0 == 0.33 (zero-padded); 0.34.0rc1 is after 0.33; .post1, +local after 0.33.0
    *((v, ">=0.33") for v in ("0.33.0", "0.34", "0.34.0rc1", "0.33.0.post1", "0.33.0+cu128",
                              "v0.33.0", "0.34.0.dev3", "0.33.1 ", "01.2")),
    *((v, "<0.23") for v in ("0", "0.4", "0.4.0", "0.5.22")),
    # <0.34 excludes 0.34's own pre-releases (rc1, dev3) only when they are pre-releases of the
    # bound itself: PEP 440 "<V" excludes pre-releases of V
    *((v, ">=0.33,<0.34") for v in ("0.33.0", "0.33.0.post1", "0.33.0+cu128", "v0.33.0",
                                    "0.33.1 ")),
    *((v, ">=0.4,<0.6") for v in ("0.4", "0.4.0", "0.5.22")),
    # >0.33 excludes post and local releases of 0.33 (0.33.0 == 0.33)
    *((v, ">0.33") for v in ("0.34", "0.34.0rc1", "0.34.0.dev3", "0.33.1 ", "01.2")),
    *((v, "<=0.33.0") for v in ("0", "0.4", "0.4.0", "0.5.22", "0.33.0", "0.33.0+cu128",
                                "v0.33.0")),
    *((v, "==0.33") for v in ("0.33.0", "0.33.0+cu128", "v0.33.0")),
    *((v, "!=0.33.0") for v in ("0", "0.4", "0.4.0", "0.5.22", "0.34", "01.2", "0.34.0rc1",
                                "0.33.0.post1", "0.34.0.dev3", "0.33.1 ")),
    *((v, ">= 0.21") for v in ("0.33.0", "0.34", "0.34.0rc1", "0.33.0.post1", "0.33.0+cu128",
                               "v0.33.0", "0.34.0.dev3", "0.33.1 ", "01.2")),
    *((v, "==0.33.*") for v in ("0.33.0", "0.33.0.post1", "0.33.0+cu128", "v0.33.0",
                                "0.33.1 ")),
    *((v, "~=0.33.0") for v in ("0.33.0", "0.33.0.post1", "0.33.0+cu128", "v0.33.0",
                                "0.33.1 ")),
    # arbitrary equality compares strings: parse_version normalizes "v0.33.0" to "0.33.0"
    ("0.33.0", "===0.33.0"), ("v0.33.0", "===0.33.0"),
    *((v, "<0.34.0rc2") for v in ("0", "0.4", "0.4.0", "0.5.22", "0.33.0", "0.34.0rc1",
                                  "0.33.0.post1", "0.33.0+cu128", "v0.33.0", "0.34.0.dev3",
                                  "0.33.1 ")),
}


@pytest.mark.parametrize("version,spec", list(itertools.product(VERSIONS, RANGES)))
def test_in_range_follows_pep440(version, spec):
    assert in_range(parse_version(version), spec) is ((version, spec) in HOLDS)


def test_not_a_version_and_a_bad_range():
    assert parse_version("latest") is None
    assert parse_version("0.33.x") is None
    with pytest.raises(UsageError, match="bad version range"):
        in_range(parse_version("0.33.0"), ">=0.33,<<0.34")
