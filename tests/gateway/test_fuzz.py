"""The seeded NBD protocol fuzzer (nbd_fuzz.py) against a gateway with memory exports: a short
run in `make test`, a long one in `make test-long` (seed: RANDOM_SEED, else fixed). Catches a
crash or hang on any option or command number, a wrong error for a bound, a reply that is not
the shadow's data, a torn write applied, or one tenant's write on the other's disk."""

import os

import pytest

from . import gateway as g
from . import nbd_fuzz

SEED = int(os.environ.get("RANDOM_SEED", "19"))


def fuzz(tmp_path, cases, seed):
    gw = g.Gateway(tmp_path, "--handshake-timeout", "20000", export_size="8m")
    stats = nbd_fuzz.run(gw, seed, cases, 8 << 20)
    report = gw.stop()
    print(f"fuzz seed {seed}: {stats}")
    assert report["ios"]["bad_completions"] == 0 and report["ios"]["in_flight"] == 0
    assert stats["requests"] > cases  # the transmission phase was reached, not only handshakes


def test_fuzz_short(tmp_path):
    fuzz(tmp_path, 150, SEED)


@pytest.mark.long
def test_fuzz_long(tmp_path):
    fuzz(tmp_path, 3000, SEED + 1)
