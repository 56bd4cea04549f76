"""Engine version ranges: a final release against ordered comparisons of final releases is
compared without packaging (kvfit.engines.spec); every answer must be packaging's own."""

from __future__ import annotations

import itertools

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from kvfit.engines.spec import _version, in_range

VERSIONS = ["0", "0.4", "0.4.0", "0.5.22", "0.5.23", "0.6", "0.8.0", "0.21", "0.21.0.0", "0.33.0",
            "0.33.1", "0.34", "0.34.0", "1.0", "01.2", "0.34.0rc1", "0.33.0.post1", "0.33.0+cu128",
            "v0.33.0", "0.34.0.dev3", "0.33.1 "]
RANGES = [">=0.33", "<0.23", ">=0.33,<0.34", ">=0.8,<0.34", ">=0.21,<0.34", ">=0.4,<0.6",
          ">=0.5.22,<0.6", ">=0.4,<0.5", ">0.33", "<=0.33.0", "==0.33", "!=0.33.0", ">= 0.21",
          "==0.33.*", "~=0.33.0", "===0.33.0", ">0.33.0.post1", "<0.34.0rc2"]


@pytest.mark.parametrize("version,spec", list(itertools.product(VERSIONS, RANGES)))
def test_in_range_is_packagings_answer(version, spec):
    # the oracle: packaging's own PEP 440 evaluation, prereleases allowed as the rules ask
    want = SpecifierSet(spec).contains(Version(version.strip()), prereleases=True)
    assert in_range(_version(version), spec) is want


def test_plain_releases_order_as_pep440_versions():
    plain = [v for v in VERSIONS if isinstance(_version(v), tuple)]
    assert len(plain) == 16                 # "v0.33.0", rc, post, local and dev: packaging
    for a, b in itertools.product(plain, repeat=2):
        pa, pb = _version(a), _version(b)
        va, vb = Version(a.strip()), Version(b.strip())
        assert (pa < pb, pa == pb, pa > pb) == (va < vb, va == vb, va > vb), (a, b)


def test_not_a_version():
    assert _version("latest") is None
    assert _version("0.33.x") is None
