"""The burstgate_model binding against a pure-Python reading of the COST block formula.

This catches binding and marshalling errors (argument order, bool/int conversion, tuple
packing, batch indexing); the RTL-vs-model check is tests/unit/test_cost_rtl.py and the
cocotb testbench. Register addresses, widths and constants come from the Python register map.
"""

import pathlib
import random
import sys

import pytest

try:
    from burstgate.regmap import C, REGMAP
except ImportError:   # not pip-installed: the package's source is rtl/ (see pyproject.toml)
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "rtl"))
    from burstgate.regmap import C, REGMAP

COST = REGMAP.block("COST")
DIMS = C["COST_DIMS"]
CLASSES = C["SIZE_CLASSES"]
COST_MAX = (1 << C["COST_BITS"]) - 1
SIZE_LIMIT = 1 << C["SIZE_BITS"]
DESCRIPTORS = 20_000


class Reference:
    """The COST block as docs/registers.md states it, one register element per list item."""

    def __init__(self):
        self.regs = {r.name: list(r.resets) for r in COST.registers}

    def write(self, addr, value):
        offset = (addr - COST.base) & ~3
        for r in COST.registers:
            if r.access == "rw" and r.offset <= offset < r.offset + r.size and (offset - r.offset) % r.stride == 0:
                self.regs[r.name][(offset - r.offset) // r.stride] = value & r.mask

    def estimate(self, product, write, size):
        bounds = self.regs["SIZE_LO"]
        k = max([k for k in range(1, CLASSES) if bounds[k - 1] <= size], default=0)
        lo = bounds[k - 1] if k else 0
        e = (product * 2 + int(write)) * CLASSES + k
        cost = []
        for d in range(DIMS):
            base, slope = self.regs["TABLE_BASE"][e * DIMS + d], self.regs["TABLE_SLOPE"][e * DIMS + d]
            raw = min(base + ((size - lo) * slope >> C["SLOPE_SHIFT"]), COST_MAX)
            cost.append(min(raw * self.regs["FACTOR"][d] >> C["FACTOR_FRAC_BITS"], COST_MAX))
        return tuple(cost)


def addr(name, index):
    r = COST.register(name)
    return COST.base + r.offset + index * r.stride


def random_writes(rng):
    """(address, value) pairs: every register, with garbage above its width, plus holes."""
    writes = []
    for d in range(DIMS):
        edge = rng.random() < 0.15   # a factor of 0 or 1 zeroes most of a dimension: keep it rare
        factor = rng.choice([0, 1]) if edge else rng.choice([4096, 8192, 2048, 0xFFFF, rng.getrandbits(16)])
        writes.append((addr("FACTOR", d), factor))
    bounds = sorted(rng.getrandbits(rng.choice([10, 14, 18, 24])) for _ in range(CLASSES - 1))
    if rng.random() < 0.25:
        rng.shuffle(bounds)   # non-ascending bounds are still well-defined
    writes += [(addr("SIZE_LO", j), b) for j, b in enumerate(bounds)]
    count = COST.register("TABLE_BASE").count
    for i in range(count):
        writes.append((addr("TABLE_BASE", i), rng.getrandbits(rng.choice([8, 16, 24, 32]))))
        writes.append((addr("TABLE_SLOPE", i), rng.getrandbits(rng.choice([4, 12, 24, 32]))))
    writes = [(a, v | (rng.getrandbits(8) << 24) if rng.random() < 0.3 else v) for a, v in writes]
    writes += [(COST.base + rng.randrange(0, COST.size, 4), rng.getrandbits(32)) for _ in range(50)]
    rng.shuffle(writes)
    return writes


def random_sizes(rng, bounds, n):
    sizes = []
    for _ in range(n):
        r = rng.random()
        if r < 0.3:
            size = rng.choice(bounds) + rng.choice([-1, 0, 1])
        elif r < 0.35:
            size = rng.choice([0, SIZE_LIMIT - 1])
        else:
            size = rng.getrandbits(rng.choice([9, 12, 13, 17, 20, 24]))
        sizes.append(min(max(size, 0), SIZE_LIMIT - 1))
    return sizes


def test_binding_matches_formula(bg_model):
    rng = random.Random(20240611)
    configs = 4
    for config in range(configs):
        model, ref = bg_model.CostEstimator(), Reference()
        for a, v in random_writes(rng):
            model.write(a, v)
            ref.write(a, v)
        for r in COST.registers:
            for i in range(r.count):
                assert model.read(addr(r.name, i)) == ref.regs[r.name][i], (config, r.name, i)

        n = DESCRIPTORS // configs
        products = [rng.randrange(C["PRODUCTS"]) for _ in range(n)]
        writes = [rng.choice([0, 1, False, True]) for _ in range(n)]
        sizes = random_sizes(rng, ref.regs["SIZE_LO"], n)
        expected = [ref.estimate(p, w, s) for p, w, s in zip(products, writes, sizes)]

        got = model.estimate_many(products, writes, sizes)
        assert isinstance(got, list) and all(type(t) is tuple and len(t) == DIMS for t in got)
        mismatches = [(i, products[i], writes[i], sizes[i], got[i], expected[i])
                      for i in range(n) if got[i] != expected[i]]
        assert not mismatches, f"config {config}: {len(mismatches)} mismatches, first {mismatches[:3]}"
        # Any sequence works, and the single-I/O call agrees with the batch.
        assert model.estimate_many(tuple(products[:100]), tuple(writes[:100]), tuple(sizes[:100])) == got[:100]
        for i in range(0, n, 97):
            assert model.estimate(products[i], bool(writes[i]), sizes[i]) == expected[i]
            assert model.size_class(sizes[i]) == max(
                [k for k in range(1, CLASSES) if ref.regs["SIZE_LO"][k - 1] <= sizes[i]], default=0)


def test_reset_and_ownership(bg_model):
    model = bg_model.CostEstimator()
    model.write(addr("FACTOR", 1), 5)
    model.write(addr("TABLE_SLOPE", 3), 0xFFFF_FFFF)
    assert model.read(addr("TABLE_SLOPE", 3)) == COST.register("TABLE_SLOPE").mask
    model.reset()
    assert model.read(addr("FACTOR", 1)) == COST.register("FACTOR").resets[1]
    assert model.read(addr("TABLE_SLOPE", 3)) == 0
    assert model.owns(COST.base) and model.owns(COST.base + COST.size - 4)
    assert not model.owns(COST.base + COST.size) and not model.owns(COST.base - 4)


def test_bad_descriptors_raise(bg_model):
    model = bg_model.CostEstimator()
    with pytest.raises(ValueError, match="product"):
        model.estimate(C["PRODUCTS"], False, 0)
    with pytest.raises(ValueError, match="size"):
        model.estimate(0, False, SIZE_LIMIT)
    with pytest.raises(ValueError, match="length"):
        model.estimate_many([0, 1], [0, 1], [0])
    with pytest.raises(ValueError, match="descriptor 1: .*product"):
        model.estimate_many([0, C["PRODUCTS"]], [0, 0], [0, 0])
    with pytest.raises(ValueError, match="descriptor 0: write"):
        model.estimate_many([0], [2], [0])
