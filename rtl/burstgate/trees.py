"""Balanced reduction trees for the gateware: an OR or a sum of many values in log2(n) levels
instead of a chain of n, which is what the load balancer's picks and the cost estimator's
selects need to stay shallow (docs/results.md, "UltraScale+ timing estimate")."""

from amaranth.hdl import Const

__all__ = ["reduce_tree", "or_tree", "popcount"]


def reduce_tree(op, values):
    """``op`` over ``values`` (at least one) pairwise, as a balanced tree."""
    values = list(values)
    while len(values) > 1:
        values = [op(values[i], values[i + 1]) if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]


def or_tree(values):
    """The OR of ``values``, as a balanced tree."""
    return reduce_tree(lambda a, b: a | b, values)


def popcount(bits):
    """The number of set bits of ``bits`` (a list of 1-bit values), as a balanced adder tree."""
    bits = list(bits)
    return reduce_tree(lambda a, b: a + b, bits) if bits else Const(0, 1)
