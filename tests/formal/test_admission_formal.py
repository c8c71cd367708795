"""Bounded proofs (SymbiYosys, yices) of the admission stage's invariants, and the proof
failing on mutants of the stage (see ``admission_props.py`` for the invariants).

``make test`` proves them from reset without the burst list, for 9 cycles (order, deferral
count; 4 tenants) and 8 cycles (underflow; 2 tenants): enough for a grant write, a COMMIT
that refills the allocations and back-to-back charges of one tenant on the refilled word,
under any backpressure, hold and register traffic. ``make test-long`` proves them with
BORROW from the burst list reachable, for 10 and 8 cycles (the LFSR draws and the lender
reads make each step several times more expensive; underflow at 9 cycles took more than
8 CPU-minutes of yices on its last step without finishing). ``FORMAL_DEPTH`` / ``FORMAL_DEPTH_LONG``
override the depths. Each mutant must make its invariant's proof fail within the same depth
(``no_lendable_hit`` within one more: its case is one step deeper, see its entry; it runs in
``make test-long`` only, see MUTANTS_LONG).
"""

import importlib.util
import os
import pathlib

import pytest

from burstgate.admission import Admission

from .admission_props import invariant_at, observed
from .sby import prove

ROOT = pathlib.Path(__file__).resolve().parents[2]
ADMISSION = ROOT / "rtl" / "burstgate" / "admission.py"


def _depth(variable, default):
    return int(os.environ.get(variable, default))


# Small memories become flip-flops, which yices handles faster than arrays; the burst list
# (1024 entries whatever the tenant count) stays an array.
SCRIPT = "memory_map t:$mem_v2 n:*burst* %d"


def _workdir(tmp_path, name):
    # Under the build folder when there is one, so a failure's trace can be opened later.
    base = os.environ.get("BG_BUILD_DIR")
    return (pathlib.Path(base).parent / "formal" / name) if base else tmp_path / name


def _report(result):
    failed = ", ".join(f"{loc} ({invariant_at(loc)})" for loc in result.failed) or "no failed assertion"
    return f"{result.status}: {failed}; log {result.workdir / 'sby.log'}"


def _mutant(tmp_path, original, replacement):
    """The admission stage with one edit, imported as a module of the burstgate package."""
    source = ADMISSION.read_text()
    assert source.count(original) == 1, f"mutation target not found once in {ADMISSION}: {original!r}"
    path = tmp_path / "admission_mutant.py"
    path.write_text(source.replace(original, replacement))
    spec = importlib.util.spec_from_file_location("burstgate._admission_mutant", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Admission


# Each proof: the invariants it checks, whether the burst list is in use, tenants, depth.
# Proved apart because the solver's time grows with every assertion it must hold at once.
# The underflow proof copies every tenant's RAM words, so it runs on two tenants (a payer
# and a different lender or a different next tenant: every forwarding case of the stage).
DEPTH_ORDER = _depth("FORMAL_DEPTH", 9)
DEPTH_UNDERFLOW = _depth("FORMAL_DEPTH", 8)
PROOFS = {
    "order_deferred": (("order", "deferred"), False, 4, DEPTH_ORDER),
    "underflow": (("underflow",), False, 2, DEPTH_UNDERFLOW),
}
PROOFS_LONG = {
    "order_deferred_lenders": (("order", "deferred"), True, 4, _depth("FORMAL_DEPTH_LONG", 10)),
    "underflow_lenders": (("underflow",), True, 2, _depth("FORMAL_DEPTH_LONG", 8)),
}


def _check_proof(tmp_path, name, proof, timeout=600):
    invariants, lenders, tenants, depth = proof
    design = observed(Admission, lenders=lenders, invariants=invariants)(tenants=tenants)
    result = prove(design, depth=depth, workdir=_workdir(tmp_path, name), script=SCRIPT, timeout=timeout)
    assert result.status == "PASS", _report(result)


@pytest.mark.parametrize("name", sorted(PROOFS))
def test_admission_invariants(tmp_path, name):
    _check_proof(tmp_path, name, PROOFS[name])


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(PROOFS_LONG))
def test_admission_invariants_long(tmp_path, name):
    _check_proof(tmp_path, name, PROOFS_LONG[name], timeout=int(os.environ.get("FORMAL_TIMEOUT_LONG", "7200")))


# Each mutant is a bug the proof must catch, with the invariant whose assertion fails.
MUTANTS = {
    # The output register is overwritten while o holds an untaken decision: one is lost.
    "overwrite_held_output": ("advance.eq((~self.o.valid | self.o.ready) & ~self.hold & ~s.mat_valid)",
                              "advance.eq(~self.hold & ~s.mat_valid)", "order", 4, DEPTH_ORDER),
    # Every kind of deferral (egress full, no buffer) is counted as an admission deferral.
    "count_all_deferrals": ("with m.If(final == C[\"SRC_DEFER\"]):\n                m.d.sync += deferred.eq",
                            "with m.If(final >= C[\"SRC_DEFER\"]):\n                m.d.sync += deferred.eq",
                            "deferred", 4, DEPTH_ORDER),
    # The same mistake in the tenant's own word: TENANT.THROTTLE_N counts every deferral.
    "count_all_throttles": ("with m.If(final == C[\"SRC_DEFER\"]):\n            m.d.comb += [new_own.throttle_n.eq",
                            "with m.If(final >= C[\"SRC_DEFER\"]):\n            m.d.comb += [new_own.throttle_n.eq",
                            "deferred", 4, DEPTH_ORDER),
    # The reserved pool / the global budget are charged without checking they cover the cost.
    "no_pool_cover": ("pool_ok = ~a4.hot & s.a4_pool_ge.all()", "pool_ok = ~a4.hot", "underflow", 2, DEPTH_UNDERFLOW),
    "no_global_cover": ("glob_ok = s.a4_glob_ge.all()", "glob_ok = 1", "underflow", 2, DEPTH_UNDERFLOW),
    # The pools' compares made in A3 miss the charge of the decision in A4 beside them:
    # the next decision sees the pool before that charge and spends it again.
    "no_pool_charge_ahead": ("Mux(charged, vec[d] >= c34[d], vec[d] >= c3[d])", "vec[d] >= c3[d]",
                             "underflow", 2, DEPTH_UNDERFLOW),
    # A waiting A4 keeps the compare of a pool that firmware has just rewritten.
    "no_pool_write_in_held_a4": ("with m.Elif(written):\n                    m.d.sync += ge[d].eq(reg.w_data >= c4[d])",
                                 "with m.Elif(0):\n                    m.d.sync += ge[d].eq(reg.w_data >= c4[d])",
                                 "underflow", 2, DEPTH_UNDERFLOW),
    # A3 does not forward the write-back of the cycle before: an I/O one behind another of
    # the same tenant sees the allocation before that I/O's charge and spends it again.
    "no_lendable_forwarding": ("m.d.sync += s.lendable_fwd3[j].eq(s.lendable_wp.en & (s.lendable_wp.addr == nxt[j]))",
                               "m.d.sync += s.lendable_fwd3[j].eq(0)", "underflow", 2, DEPTH_UNDERFLOW),
    # A4 does not take the write of the cycle before (the registered hit flags stay low, and
    # the compares made in A3 take the word as if unpaid): a decision right behind another
    # paid by the same tenant or lender charges the word as it was before that decision. One cycle deeper than the underflow proof: after the GRANT,
    # its COMMIT and the drain, the second of two back-to-back decisions reaches ``o`` in
    # step 8 at the earliest (at depth 8 this mutant passes: the proof's own depth misses that case, which
    # the unit tests' back-to-back cases cover).
    "no_lendable_hit": ("m.d.comb += s.lendable_hit_next[j].eq(s.lendable_write & paid)",
                        "m.d.comb += s.lendable_hit_next[j].eq(0)", "underflow", 2, DEPTH_UNDERFLOW + 1),
    # The same for the tenant's own word: a deferral right behind another of the same tenant
    # counts from the THROTTLE_N before it.
    "no_own_hit": ("m.d.comb += s.own_hit_next.eq(s.decide & s.tenant_ok & (k4 == k3))",
                   "m.d.comb += s.own_hit_next.eq(0)", "deferred", 4, DEPTH_ORDER),
}


def _check_mutant(tmp_path, name, mutant):
    original, replacement, invariant, tenants, depth = mutant
    design = observed(_mutant(tmp_path, original, replacement), lenders=False,
                      invariants=(invariant,))(tenants=tenants)
    result = prove(design, depth=depth, workdir=_workdir(tmp_path, f"mutant_{name}"), script=SCRIPT)
    assert result.status == "FAIL", f"the proof missed mutant {name}: {_report(result)}"
    assert invariant in {invariant_at(loc) for loc in result.failed}, \
        f"mutant {name} should break {invariant!r}: {_report(result)}"


# One cycle deeper than the rest, and after round 12 (the compares made a cycle ahead) the
# slowest proof of make test: 211 s of yices in CI, which took the parallel pytest part from
# about 9 to 13 minutes (make test's budget is 20). make test-long proves it; the unit tests'
# back-to-back cases (test_admission_rtl.py, test_exhaustion_back_to_back) cover its case in
# make test.
MUTANTS_LONG = {"no_lendable_hit"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.long) if n in MUTANTS_LONG else n
                                  for n in sorted(MUTANTS)])
def test_proof_catches_mutant(tmp_path, name):
    _check_mutant(tmp_path, name, MUTANTS[name])

