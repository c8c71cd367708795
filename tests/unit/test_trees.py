"""burstgate.trees: the reductions the load balancer and the cost estimator use to stay shallow.
Catches a reduction that drops or repeats a value (an odd count's last element) and one that
chains instead of pairing (n - 1 levels instead of ceil(log2 n): the timing regression the
trees exist to prevent)."""

import math

from amaranth.hdl import Const

from burstgate.trees import or_tree, popcount, reduce_tree


def test_reductions_are_exact_for_every_count():
    for n in range(1, 40):
        bits = [(i * 7 + 3) % 5 == 0 for i in range(n)]
        assert popcount([int(b) for b in bits]) == sum(bits), n
        assert or_tree([1 << i for i in range(n)]) == (1 << n) - 1, n


def test_the_tree_is_balanced():
    # Each value carries its depth; an operation is one level above the deeper operand.
    for n in range(1, 70):
        depth = reduce_tree(lambda a, b: max(a, b) + 1, [0] * n)
        assert depth == math.ceil(math.log2(n)), (n, depth)


def test_popcount_of_nothing_is_a_constant_zero():
    zero = popcount([])
    assert isinstance(zero, Const) and zero.value == 0
