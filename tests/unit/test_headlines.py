"""Every reproduced BurstCBS headline (Fig. 19-24, Table 3, the BIOS variations) held by a test.

Each experiment runs once, through scripts/reproduce.py's own experiment functions and the
burstgate-sim binary (the numbers docs/results.md prints), and the test asserts the paper's
direction and a band around our number, so a change to the firmware, the model or a scenario
cannot move a result silently. The simulations are deterministic (seeded), so a band only has
to absorb a deliberate change; one that leaves it is a result to re-measure and re-document.
All of it costs about 35 s of simulation (`make test`).

What each test catches is in its docstring.
"""

import json
import subprocess

import pytest
import yaml

from .headlines import R, ROOT, SIM
from .headlines import run  # noqa: F401  (the shared fixture)


def _measure(run, key):
    return R.EXPERIMENTS[key].measure(run)


@pytest.fixture(scope="module")
def fig19(run):
    return _measure(run, "fig19")


@pytest.fixture(scope="module")
def fig20(run):
    return _measure(run, "fig20")


def _latency_checks(r, deepest_ratio, deepest_band, tolerance=1.05):
    for typ, lat in r.values.items():
        for i, depth in enumerate(r.xs):
            bios, wild = lat["bios"][i], lat["wild"][i]
            assert bios <= tolerance * wild, f"{typ} depth {depth}: BIOS {bios:.0f} us vs WildCBS {wild:.0f} us"
        bios, wild = lat["bios"][-1], lat["wild"][-1]
        assert bios <= deepest_ratio * wild, (
            f"{typ} neighbour depth {r.xs[-1]}: BIOS {bios:.0f} us is not <= {deepest_ratio} x WildCBS {wild:.0f} us")
        lo, hi = deepest_band
        assert lo <= 100 * (bios - wild) / wild <= hi, f"{typ}: {100 * (bios - wild) / wild:+.0f} % outside {deepest_band}"


def test_fig18_threads_scale_where_they_are_the_bottleneck_and_buffers_borrow(run):
    """§6.1 Fig. 18 (paper: near-linear scaling from 1 to 2 SA threads for pure 4 KiB and the
    IOPS-intensive mix, limited for BPS-intensive and 128 KiB; the balancer loads threads as evenly
    as a user spreading its own I/Os). Ours: 4 KiB 398k -> 732k (1.84 x, then the shared 3 GB/s
    limit), IOPS-intensive 1.12 x (one thread already moves 2.7 GB/s of it: docs/results.md), BPS
    and 128 KiB 1.00 x; 512 buffers borrowed from the shared pool by the BPS mix; max/min over 4
    threads 1.005 (jsq) and 1.010 (static). Catches the SA threads no longer adding capacity, the
    balancer leaving a thread idle or overloaded, and the two-tier pool never borrowing (the
    simulator not programming it)."""
    r = _measure(run, "fig18")
    s = r.scaling
    assert 1.7 <= s["4k"][2][0] / s["4k"][1][0] <= 2.0
    assert s["4k"][2][1] < 0.7 * s["4k"][1][1], "latency at the same iodepth follows the IOPS"
    assert 1.0 <= s["IOPS-intensive (4k-16k)"][2][0] / s["IOPS-intensive (4k-16k)"][1][0] <= 1.25
    for mix in ("BPS-intensive (4k-128k)", "128k"):
        assert 0.95 <= s[mix][2][0] / s[mix][1][0] <= 1.05, mix
    assert s["BPS-intensive (4k-128k)"][1][2] >= 256, "the deep BPS burst borrows from the shared pool"
    assert sum(per[n][2] for per in s.values() for n in (1, 2)) > 0
    for policy, ratio in r.balance.items():
        assert ratio <= 1.03, f"{policy}: max/min {ratio:.3f} over {r.per_thread[policy]}"
    assert len(r.per_thread["jsq"]) == 4 and min(r.per_thread["jsq"]) > 0


def test_fig19_bios_cuts_victim_latency_vs_wildcbs(fig19):
    """§6.2 Fig. 19 (paper: -68 % to -85 % vs WildCBS). Ours: -85/-86 % at neighbour depth 64, -48/-49 %
    at 32, and within 2 % of WildCBS up to depth 4, where nothing congests yet. Catches BIOS losing its
    protection of the victim (e.g. the pool or reclaim no longer serving it), and the sweep losing
    the depths §6.2 plots (1 to 64)."""
    assert fig19.xs == (1, 2, 4, 8, 16, 32, 64)
    _latency_checks(fig19, 0.4, (-90, -80))
    for typ, lat in fig19.values.items():
        assert 90 <= lat["bios"][-1] <= 125, f"{typ}: BIOS at depth 64 {lat['bios'][-1]:.0f} us (ours: 104-108)"
        # Halfway up the sweep BIOS already helps (ours -48 %), not only at the deepest point.
        assert lat["bios"][5] <= 0.6 * lat["wild"][5], f"{typ}: depth 32"


def test_fig20_bios_cuts_victim_latency_vs_wildcbs(fig20):
    """§6.2 Fig. 20 (paper: -40 % to -66 %, less than Fig. 19 because the CPU congests). Ours: -43/-44 %
    at neighbour depth 128, about -21 % at 64. Catches the IOPS-intensive case regressing, or its
    gap growing past Fig. 19's (the paper's order of the two figures)."""
    assert fig20.xs == (1, 2, 4, 8, 16, 32, 64, 128)
    _latency_checks(fig20, 0.62, (-50, -38))


def test_fig19_gap_is_wider_than_fig20s(fig19, fig20):
    """The paper's ordering: the BPS-intensive neighbour (Fig. 19) leaves more for BIOS to win than the
    IOPS-intensive one (Fig. 20). Catches a CPU profile or scenario change that inverts them."""
    def best(r):
        return min(R.pct(lat["bios"][-1], lat["wild"][-1]) for lat in r.values.values())
    assert best(fig19) < best(fig20) - 20


@pytest.fixture(scope="module")
def fig21(run):
    return _measure(run, "fig21")


@pytest.fixture(scope="module")
def fig22(run):
    return _measure(run, "fig22")


def test_fig21_bios_reaches_base_by_depth_8_wildcbs_does_not(fig21):
    """§6.3 Fig. 21 (paper: BIOS reaches the 20k base by iodepth 8; WildCBS misses it, as low as
    4000). Ours: BIOS 20000 from depth 4, WildCBS 8356-8464 at depth 8 and ~4500 at depth 4.
    Catches BIOS failing to hand a base-level tenant its base next to a BPS-heavy burster."""
    for typ, iops in fig21.values.items():
        assert iops["bios"][fig21.xs.index(8)] >= 0.99 * fig21.base_iops, typ
        assert iops["bios"][fig21.xs.index(4)] >= 0.99 * fig21.base_iops, typ
        wild8 = iops["wild"][fig21.xs.index(8)]
        assert 7000 <= wild8 <= 10000, f"{typ}: WildCBS at depth 8 {wild8:.0f} (ours ~8400)"
        assert iops["bios"][0] >= 5 * iops["wild"][0], f"{typ}: depth 1"


def test_fig22_bios_reaches_base_wildcbs_gap_is_small(fig22):
    """§6.3 Fig. 22 (paper: BIOS reaches 20k by depth 8; the BaseCBS-WildCBS gap is smaller than in
    Fig. 21). Ours: BIOS 20000 from depth 2; WildCBS also reaches 20k by depth 4 (the paper: it
    misses at depth 8; docs/results.md), ~10.2k at depth 1 where BIOS has ~18.2k. Catches BIOS
    regressing on the CPU-bound case and WildCBS moving (either way) from our measured point."""
    for typ, iops in fig22.values.items():
        assert all(x >= 0.99 * fig22.base_iops for x in iops["bios"][1:]), typ
        assert 9000 <= iops["wild"][0] <= 11500, f"{typ}: WildCBS at depth 1 {iops['wild'][0]:.0f}"
        assert iops["bios"][0] >= 1.6 * iops["wild"][0], typ
        assert iops["wild"][fig22.xs.index(8)] >= 0.99 * fig22.base_iops, (
            f"{typ}: WildCBS now misses the base at depth 8 as in the paper: re-measure docs/results.md")


def test_fig23_bios_gives_up_its_reserve_basecbs_half(run):
    """§6.4 Fig. 23 (paper: BIOS loses about 5-8 % vs WildCBS, the 5 % pool; BaseCBS about half; the
    IOPS-intensive mix cannot reach the limit). Ours: -5.1 % to -5.2 %, and -1.4 % for 128 KiB only
    (priced at its contract's envelope, the bursting VM's 128 KiB I/Os leave the pool less to
    hold back), BaseCBS 0.35-0.50. Catches
    the pool growing (or the bursting VM losing its share of unused), and the four rows §6.4
    names going missing."""
    r = _measure(run, "fig23")
    assert list(r.share) == ["BPS-intensive (4k-128k)", "128k only", "IOPS-intensive (4k-16k)",
                             "ProductA/B mix (4k-128k)"]
    for label, share in r.share.items():
        loss = R.pct(share["bios"][0], share["wild"][0])
        assert -9 <= loss <= (-1 if label == "128k only" else -3), f"{label}: BIOS vs WildCBS {loss:+.1f} %"
        assert 0.3 <= share["base"][0] <= 0.55, f"{label}: BaseCBS {share['base'][0]:.3f}"
    assert r.share["IOPS-intensive (4k-16k)"]["wild"][0] < 0.85
    assert r.share["BPS-intensive (4k-128k)"]["bios"][0] >= 0.9


def test_fig24_burstable_tenant_resumes_from_zero_without_throttles(run):
    """§6.5 Fig. 24 (paper: after idling until "its resource allocation drops to zero", no throttled
    I/Os until a 60k IOPS stream makes the VM a burst tenant). Ours: grant 0 in the window before
    every resume, 0 throttles in the five streams below the 45k base (3.3k-37.6k IOPS; 53.1k at
    depth 24 is below base too), reclaim by power of two choices 1 I/O and the pool 105 below
    base (the grant carry pays the rest: 18 and 753 before it kept the base BIOS lends from an
    active tenant), throttles from 70.4k. Catches a floor or clamp leaking into the default (the grant would not be 0),
    a resuming tenant throttled below base, reclaim never paying (the mechanism §5.2 adds),
    and a VM that is not burstable (no stream above base)."""
    r = _measure(run, "fig24")
    assert max(r.alloc_at_resume) == 0, f"grants at resume {r.alloc_at_resume}: line 7 did not decay to zero"
    thr, borrow, pool = R.below_base(r)
    below = [d for d, iops in zip(r.depths, r.iops) if iops < r.base_iops]
    assert len(below) >= 5, below
    assert thr == 0, f"{thr} I/Os throttled below base"
    assert borrow >= 1, f"reclaim paid {borrow} I/Os (ours: 1)"
    assert pool >= 50, f"the pool paid {pool} I/Os (ours: 105)"
    assert r.iops[-1] > r.base_iops and r.throttled_bios[-1] > 0, "the 32-deep stream is no burst"
    assert all(w > 0 for w in r.throttled_wild), "WildCBS throttles every resumed stream"


def test_fig24_without_the_grant_carry_reclaim_and_the_pool_carry_the_resume(run):
    """Fig. 24 on the datapath as BurstCBS prints it (`dpu.grant_carry: false`: per-window grants,
    nothing carried), where the default's carry no longer pays a resuming tenant its lent base:
    Algorithm 1's own mechanisms must. Ours: 0 throttled below base, reclaim by power of two
    choices 16 I/Os and the reserved pool 755 (the default: 1 and 105). Catches reclaim (lines
    18-20) or the pool (lines 21-22) broken while the carry hides it in the default run."""
    r = R.sudden_activation(run, depths=(1, 2, 4, 8, 16, 24), dpu={"grant_carry": False})
    assert max(r.alloc_at_resume) == 0, f"grants at resume {r.alloc_at_resume}"
    thr, borrow, pool = R.below_base(r)
    assert thr == 0, f"{thr} I/Os throttled below base"
    assert borrow >= 8, f"reclaim paid {borrow} I/Os (ours: 16)"
    assert pool >= 400, f"the pool paid {pool} I/Os (ours: 755)"


def test_table3_adjustment_restores_latency(run):
    """§5.3 Table 3 (paper: 1097/869 us WildCBS, 849/750 without adjustment, 249/270 with). Ours:
    965/978, 964/974, 287/290 and a final CPU factor of 1.88 for the 2x misestimate (2.03-2.34
    before the grant carry and the 7-stage estimator). Catches the cost adjustment no longer converging, and BIOS without adjustment moving away from WildCBS (the
    paper has it better; ours is equal: docs/results.md)."""
    r = _measure(run, "table3")
    wild, noadj, adj = (r.ours[k] for k in ("WildCBS", "BurstCBS w/o adjustment", "BurstCBS with adjustment"))
    for i in (0, 1):
        assert adj[i] <= 0.35 * noadj[i]
        assert 240 <= adj[i] <= 340, adj
        assert abs(noadj[i] - wild[i]) <= 0.1 * wild[i], (noadj, wild)
    assert 1.7 <= adj[2] <= 2.8, f"final CPU cost factor {adj[2]}"


def test_variations_have_their_measured_effect(run):
    """Each project variation beside Algorithm 1 as printed (docs/results.md, "BIOS variations").
    Ours: the two-tenant pool costs the bursting VM of Fig. 23 a third of the limit (0.661 vs 0.944
    with the 5 % pool); the floor, clamp and spill each cut what Fig. 24's reclaim and pool pay
    below base (72 printed, 31-47 with them) because the resumer keeps an allocation; the victims of Fig. 19-22 are protected
    by every variant. Catches an option that no longer changes anything (not wired through the
    scenario, the firmware or the engines) and the printed default drifting toward a variation."""
    r = _measure(run, "variations")
    rows = r.rows
    assert set(rows) == set(R.VARIANTS)
    share = r.columns[4]
    assert rows["printed"][share] < 0.75 <= 0.9 <= rows["reserve_share"][share]
    assert rows["project"][share] >= 0.85
    # Every tenant bursting (reproduce.four_bursting(), compare-qemu's case 2): the printed pool, 44 % of that host,
    # sits idle (0.672 of WildCBS's total); capped at the allocations' shortfall it is shared out
    # (0.977). Catches the shortfall cap not applied, or applied to the printed default.
    four = r.columns[8]
    assert rows["printed"][four] < 0.75, rows["printed"][four]
    assert rows["reserve_shortfall"][four] >= 0.95, rows["reserve_shortfall"][four]
    # Line 11's leftover (shares cut at the bursts) handed again (bios.share_refill): with the
    # shortfall pool the whole of WildCBS's total (1.000), without it 0.713 (the printed pool
    # still holds 44 %). Catches the refill rounds not run, or their leftover kept in the pool.
    assert rows["shortfall+refill"][four] >= 0.99 > rows["reserve_shortfall"][four], rows["shortfall+refill"][four]
    assert rows["share_refill"][four] > rows["printed"][four] + 0.02, rows["share_refill"][four]
    # What reclaim and the pool paid below base: the grant carry, since it keeps the base BIOS
    # lends from an active tenant, pays most of what reclaim paid (28 printed before, now 1), so
    # the two together tell the variations apart (printed 72, the variations 22-47).
    paid = {name: row[r.columns[6]] + row[r.columns[7]] for name, row in rows.items()}
    assert paid["printed"] >= 50, paid
    for name in ("floor", "usage_clamp", "spill_base", "project"):
        assert paid[name] < 0.7 * paid["printed"], (name, paid)
    for name, row in rows.items():
        assert row[r.columns[5]] == 0, f"{name}: throttled below base"
        assert row[r.columns[0]] <= 0.4 * r.wild[r.columns[0]], name
        assert row[r.columns[2]] >= 0.99 * 20000, name


@pytest.mark.parametrize("text, where", [
    ("bios:\n  floor_share: 2\n", "bios.floor_share: must be in 0..1"),
    ("bios:\n  reserve: half\n", "bios.reserve: unknown value 'half'"),
    ("bios:\n  usage_clamp: maybe\n", "bios.usage_clamp"),
    ("bios:\n  reserve_shortfall: 1.5\n", "bios.reserve_shortfall"),
    ("bios:\n  floor: 0.1\n", "bios.floor"),
])
def test_bad_bios_keys_exit_2_with_their_line(tmp_path, text, where):
    """The `bios:` section's bad input is a located error and exit 2 (a typo must not silently run
    the default algorithm)."""
    base = (ROOT / "scenarios" / "fig24_sudden_activation.yaml").read_text()
    path = tmp_path / "s.yaml"
    path.write_text(base + "\n" + text)
    line = base.count("\n") + 3
    res = subprocess.run([str(SIM), str(path), "--quiet", "--out", str(tmp_path / "r.json")],
                         capture_output=True, text=True, check=False, timeout=60)
    assert res.returncode == 2, res.stderr
    assert f"{path}:{line}:" in res.stderr and where in res.stderr, res.stderr


@pytest.mark.parametrize("buffers, where", [
    ({"shared": 64}, "dpu.buffers.dedicated: missing"),
    ({"dedicated": 0}, "dpu.buffers.dedicated"),
    ({"dedicated": 16, "shared": 70000}, "dpu.buffers.shared"),
    ({"dedicated": 16, "spare": 1}, "dpu.buffers.spare"),
])
def test_bad_buffer_keys_exit_2_with_their_path(tmp_path, buffers, where):
    """`dpu.buffers` (the two-tier pool Fig. 18 programs): a located error and exit 2 for a missing
    or out-of-range count (the BPOOL registers are 16 bits) and an unknown key."""
    sc = yaml.safe_load((ROOT / "scenarios" / "fig18_load_balancing.yaml").read_text())
    sc["dpu"]["buffers"] = buffers
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(sc, sort_keys=False))
    res = subprocess.run([str(SIM), str(path), "--quiet", "--out", str(tmp_path / "r.json")],
                         capture_output=True, text=True, check=False, timeout=60)
    assert res.returncode == 2, res.stderr
    assert f"{path}:" in res.stderr and where in res.stderr, res.stderr


@pytest.mark.parametrize("bios", [{}, {"floor_share": 0.0625, "usage_clamp": True, "spill_base": True,
                                       "reserve": "share", "reserve_shortfall": True, "share_refill": True}],
                         ids=["printed", "variations"])
def test_bios_options_are_engine_agnostic(tmp_path, bios):
    """The `bios:` options are firmware configuration, so the Verilated kernel and the model give
    byte-identical reports and series under the printed algorithm and under every variation
    (docs/design.md contract 3). Fig. 24 shortened to 40 ms, the resumer idle for 20 of them. Catches
    an option implemented on one engine only, or read from somewhere the firmware does not see."""
    sc = yaml.safe_load((ROOT / "scenarios" / "fig24_sudden_activation.yaml").read_text())
    sc.update(duration_ms=40, warmup_ms=10)
    sc["tenants"][0]["workload"].update(start_ms=20, stop_ms=40)
    if bios:
        sc["bios"] = bios
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(sc, sort_keys=False))
    outs = {}
    for engine in ("model", "verilator"):
        out, series = tmp_path / f"{engine}.json", tmp_path / f"{engine}.csv"
        res = subprocess.run([str(SIM), str(path), "--engine", engine, "--out", str(out), "--csv", str(series),
                              "--quiet"], capture_output=True, text=True, check=False, timeout=300)
        assert res.returncode == 0, res.stderr
        outs[engine] = (json.loads(out.read_text()), series.read_bytes())
    (model, model_csv), (verilator, verilator_csv) = outs["model"], outs["verilator"]
    assert verilator.pop("engine") == "verilator" and model.pop("engine") == "model"
    assert model == verilator
    assert model_csv == verilator_csv
    assert sum(t["admitted_reserved"] + t["admitted_borrow"] for t in model["tenants"]) > 0
