"""The burstgate register map: the one place every register and shared constant is defined.

Edit this file, then run ``make regs`` to regenerate ``fw/include/burstgate/regs.h`` and
``docs/registers.md``; ``tests/unit/test_regmap.py`` fails while either is stale. The CSR
blocks in the gateware are built from these objects at elaboration time.
"""

from .model import Block, Constant, Register, RegisterMap

__all__ = ["REGMAP", "C"]

# Shared constants. The gateware reads them from here, the C side from the generated header.
_CONSTANTS = (
    Constant("COST_DIMS", 4, "dimensions of a cost vector: cpu, ingress, egress, swlimit"),
    Constant("DIM_CPU", 0, "cost dimension: SA CPU time, in ns"),
    Constant("DIM_INGRESS", 1, "cost dimension: backend-to-DPU link bytes"),
    Constant("DIM_EGRESS", 2, "cost dimension: DPU-to-backend link bytes"),
    Constant("DIM_SWLIMIT", 3, "cost dimension: bytes charged to the software rate limiter"),
    Constant("PRODUCTS", 4, "product classes (A, B, ...) the cost table distinguishes"),
    Constant("SIZE_CLASSES", 8, "size classes per (product, op); linear cost within a class"),
    Constant("SIZE_BITS", 24, "bits of an I/O's size in bytes (largest I/O: 16 MiB - 1)"),
    Constant("COST_BITS", 32, "bits of one cost-vector dimension (saturating)"),
    Constant("TABLE_BASE_BITS", 32, "bits of a cost-table base"),
    Constant("TABLE_SLOPE_BITS", 24, "bits of a cost-table slope (cost units per KiB)"),
    Constant("SLOPE_SHIFT", 10, "slope applies per 2**SLOPE_SHIFT bytes (per KiB)"),
    Constant("FACTOR_BITS", 16, "bits of an adjustment factor"),
    Constant("FACTOR_FRAC_BITS", 12, "fractional bits of an adjustment factor (Q4.12; 4096 = 1.0)"),
    Constant("TAG_BITS", 16, "bits of a descriptor's tag (echoed on completion)"),
    Constant("TENANT_BITS", 10, "bits of a tenant id (up to 1024 tenants)"),
    Constant("QUEUE_BITS", 4, "bits of an ingress queue id"),
    Constant("SEGMENT_BITS", 16, "bits of a segment id (up to 64K segments)"),
    Constant("MAP_MAGIC", 0x42475354, "value of INFO.MAGIC: 'BGST'"),
    Constant("TENANTS_MAX", 1 << 10, "tenants the register space has room for (2**TENANT_BITS)"),
    Constant("QUEUES_MAX", 1 << 4, "ingress queues, and egress queues (SA threads), at most"),
    Constant("HIST_BUCKETS", 32, "buckets of an SA-delay histogram (fw latency_hist.h format)"),
    Constant("HIST_FLOOR_BITS", 10, "SA-delay histogram: bucket 0 holds [0, 2**HIST_FLOOR_BITS) ns"),
    Constant("HIST_SUB_BITS", 1, "SA-delay histogram: 2**HIST_SUB_BITS buckets per octave above the floor"),
    Constant("LFSR_TAPS", 0x80200003,
             "Galois feedback mask of the project's one 32-bit LFSR (x^32 + x^22 + x^2 + x + 1, "
             "shifting right; fw lfsr.h)"),
    Constant("LFSR_ZERO_SEED", 0xACE1, "what a zero LFSR seed is replaced with (a zero state would lock it)"),
    Constant("LB_DEPTH_BITS", 12, "bits of the egress depth register: 1..4095 outstanding I/Os"),
    Constant("LB_CHARGE_BITS", 20, "bits of the load balancer's per-I/O CPU-ns charge (clamped)"),
    Constant("LB_STATIC", 0, "LB.POLICY: the lowest eligible member of the set (one-hot sets: the 1:1 baseline)"),
    Constant("LB_ROUND_ROBIN", 1, "LB.POLICY: a per-ingress pointer over the set"),
    Constant("LB_JSQ", 2, "LB.POLICY: join the shortest queue by outstanding CPU ns"),
    Constant("LB_P2C", 3, "LB.POLICY: two LFSR draws over the eligible members, the less loaded"),
    Constant("LB_LEAST_IOS", 4, "LB.POLICY: the fewest outstanding I/Os (lowest index on ties)"),
    Constant("LB_POLICIES", 5, "LB.POLICY values in use; the rest of the field is reserved"),
    Constant("SEGMON_STEADY_MAX", 254, "largest SEGMON.STEADY_WINDOWS (N): N + 1 must fit the 8-bit hold count"),
    Constant("SEGMON_UNIT_REQUESTS", 0, "SEGMON.UNIT: R counts requests per window (Still Water §4.2's I/O request rate)"),
    Constant("SEGMON_UNIT_SECTORS", 1, "SEGMON.UNIT: R counts 512-byte sectors per window, a partial sector whole (the volume in bytes)"),
    Constant("SEGMON_SECTOR_SHIFT", 9, "log2 of the bytes in one SEGMON_UNIT_SECTORS count"),
    Constant("SRC_BITS", 3, "bits of a decision's source (SRC_*)"),
    Constant("BP_COUNT_BITS", 16, "bits of every buffer-pool count"),
    Constant("BP_QUIET_BITS", 4, "bits of the buffer pool's quiet-window count"),
    Constant("SCHED_BIOS", 0, "CTRL.SCHEDULER: BurstCBS BIOS (own, borrow, reserved pool)"),
    Constant("SCHED_BASE", 1, "CTRL.SCHEDULER: BaseCBS, static per-tenant admission"),
    Constant("SCHED_WILD", 2, "CTRL.SCHEDULER: WildCBS, per-tenant limiter and a global budget"),
    Constant("SCHED_DUALBUCKET", 3, "CTRL.SCHEDULER: Still Water main bucket + cheque bucket"),
    Constant("SRC_OWN", 0, "decision: paid by the tenant's own grant (dual-bucket: the main bucket)"),
    Constant("SRC_BORROW", 1, "decision: paid by a bursting tenant's lendable surplus"),
    Constant("SRC_RESERVED", 2, "decision: paid by the reserved pool / cheque bucket"),
    Constant("SRC_DEFER", 4, "decision: deferred by admission (counted in THROTTLE_N)"),
    Constant("SRC_DEFER_EGRESS", 5, "decision: deferred, no egress queue of its set had room"),
    Constant("SRC_DEFER_BUFFER", 6, "decision: deferred, no I/O buffer was free to its queue"),
    Constant("WINDOW_TICK", 1, "CTRL.WINDOW command: end the window and hold admission"),
    Constant("WINDOW_COMMIT", 2, "CTRL.WINDOW command: apply grants, open the next window"),
    Constant("RING_LOG2_MIN", 4, "KERNEL.*_LOG2: smallest ring, 2**4 entries"),
    Constant("RING_LOG2_MAX", 20, "KERNEL.*_LOG2: largest ring, 2**20 entries"),
    Constant("RING_ALIGN", 256, "KERNEL.*_BASE_LO: ring bases are aligned to this many bytes"),
)
C = {c.name: c.value for c in _CONSTANTS}

#: Bump on any incompatible change; INFO.VERSION reads it.
_VERSION = 2

_ENTRIES = C["PRODUCTS"] * 2 * C["SIZE_CLASSES"]
_DIMS = C["COST_DIMS"]

# Default size-class lower bounds (class 0 starts at 0): 4K, 8K, 16K, 32K, 64K, 128K, 256K.
_SIZE_LO_RESET = tuple(4096 << i for i in range(C["SIZE_CLASSES"] - 1))

_INFO = Block(
    "INFO", base=0x0100, size=0x100,
    doc="Identification of the kernel and of the register map it implements.",
    registers=(
        Register("MAGIC", 0x00, 32, access="ro", reset=C["MAP_MAGIC"],
                 doc="Reads 0x42475354 ('BGST'); anything else means this is not a burstgate kernel."),
        Register("VERSION", 0x04, 16, access="ro", reset=_VERSION,
                 doc="Register-map version; bumped on any incompatible change."),
    ))

_COST = Block(
    "COST", base=0x4000, size=0x2000,
    doc=("Vectorized I/O cost estimator (BurstCBS §5.3, Libra §4.3). For an I/O of `size` bytes, "
         "product `p` and direction `w` (0 read, 1 write): its size class `k` is the largest "
         "k ≥ 1 with `SIZE_LO[k-1] ≤ size`, else 0; `lo` is that bound (0 for class 0); entry "
         "`e = (p*2 + w)*SIZE_CLASSES + k`; for each dimension `d`: "
         "`raw = sat32(TABLE_BASE[e*4+d] + ((size - lo) * TABLE_SLOPE[e*4+d] >> 10))`, "
         "`cost[d] = sat32(raw * FACTOR[d] >> 12)`. A descriptor is costed with the registers "
         "as they were in the cycle it was accepted; a write in that same cycle applies to "
         "later descriptors only."),
    registers=(
        Register("FACTOR", 0x000, C["FACTOR_BITS"], count=_DIMS, reset=1 << C["FACTOR_FRAC_BITS"],
                 doc="Adjustment factor of dimension d (index), Q4.12: 4096 = 1.0. Firmware's "
                     "delay-based cost adjustment raises it while SA delay is above target."),
        Register("SIZE_LO", 0x020, C["SIZE_BITS"], count=C["SIZE_CLASSES"] - 1, reset=_SIZE_LO_RESET,
                 doc="SIZE_LO[j] is the lowest size in bytes of size class j+1 (class 0 starts "
                     "at 0). Keep them ascending; a class whose bound is 0xFFFFFF is unused."),
        Register("TABLE_BASE", 0x1000, C["TABLE_BASE_BITS"], count=_ENTRIES * _DIMS, storage="external",
                 doc="Cost of dimension d at the lower bound of the entry's size class, "
                     "index e*4 + d. Units: ns (cpu), bytes (ingress, egress, swlimit), or any "
                     "unit a table is fitted in (e.g. milli-VOPs for a Libra curve)."),
        Register("TABLE_SLOPE", 0x1400, C["TABLE_SLOPE_BITS"], count=_ENTRIES * _DIMS, storage="external",
                 doc="Cost added per KiB above the class's lower bound, index e*4 + d "
                     "(floor of (size - lo) * slope / 1024). TABLE_BASE and TABLE_SLOPE are block "
                     "RAM: zero at configuration, not cleared by reset."),
    ))

_T = C["TENANTS_MAX"]
_Q = C["QUEUES_MAX"]
_H = C["HIST_BUCKETS"]

_INFO = Block(
    "INFO", base=0x0100, size=0x100,
    doc="Identification of the kernel, the register map it implements, and its size.",
    registers=_INFO.registers + (
        Register("TENANTS", 0x08, 11, access="ro", reset=_T,
                 doc="Tenants this build implements (tenant ids 0..TENANTS-1)."),
        Register("INGRESS", 0x0C, 5, access="ro", reset=_Q, doc="Ingress (VM) queues implemented."),
        Register("EGRESS", 0x10, 5, access="ro", reset=_Q,
                 doc="Egress queues (SA threads) implemented."),
        Register("SEGMENT_BITS", 0x14, 5, access="ro", reset=C["SEGMENT_BITS"],
                 doc="log2 of the segments the segment monitor tracks (segment ids are taken "
                     "modulo 2**SEGMENT_BITS)."),
    ))

_CTRL = Block(
    "CTRL", base=0x1000, size=0x1000,
    doc=("Window control, scheduler selection and the shared pools. One window: the firmware "
         "writes WINDOW = TICK, which holds admission (descriptors wait; none is decided) so the "
         "window's counters stand still; it reads the counters, runs its scheduler and writes "
         "the grants, the burst list and the pools; then WINDOW = COMMIT refills every tenant's "
         "remaining allocation from GRANT and its lendable surplus from LEND_GRANT, clears the "
         "window's counters, histograms and active bits, advances the segment monitor's and the "
         "buffer pool's interval, and releases admission. Grants and pools persist: a tenant the "
         "firmware does not rewrite is refilled to the same grant every window."),
    registers=(
        Register("SCHEDULER", 0x000, 2, reset=C["SCHED_BIOS"],
                 doc="Admission rule: SCHED_BIOS, SCHED_BASE, SCHED_WILD or SCHED_DUALBUCKET "
                     "(see burstgate/model/agent.hpp for each rule)."),
        Register("WINDOW", 0x004, 2, storage="external",
                 doc="Write WINDOW_TICK or WINDOW_COMMIT (other values are ignored), once "
                     "each per window. Reads bit 0: admission held (between TICK and COMMIT); "
                     "bit 1: the pipeline is busy (descriptors or a COMMIT still in flight). "
                     "After TICK, wait for bit 1 = 0 before writing CTRL, LB, BPOOL, SEGMON or "
                     "TENANT registers (the model is never busy)."),
        Register("WINDOW_INDEX", 0x008, 32, access="ro",
                 doc="Windows committed since reset (wraps)."),
        Register("SEED", 0x00C, 32, storage="external",
                 doc="Admission LFSR (fw/include/burstgate/lfsr.h). A write sets the state to "
                     "bg_lfsr_seed(value); a read returns the current state."),
        Register("POOL", 0x010, 32, count=C["COST_DIMS"], storage="external",
                 doc="Live level of the reserved pool (BIOS) or cheque bucket (dual-bucket), per "
                     "dimension. Admission draws it down; the firmware rewrites it while held."),
        Register("GLOBAL", 0x020, 32, count=C["COST_DIMS"], storage="external",
                 doc="Live level of the global budget (WildCBS) or main bucket (dual-bucket)."),
        Register("BURST_N", 0x030, 11, doc="Entries of TENANT.BURST_LIST in use (BIOS lenders)."),
        Register("POOL_DRAWN", 0x034, 1, access="ro",
                 doc="1 when any I/O was paid from POOL in this window (dual-bucket refill rule)."),
        Register("IOS", 0x040, 32, access="ro", doc="Descriptors decided since reset (wraps)."),
        Register("DEFERRED", 0x044, 32, access="ro",
                 doc="Admission deferrals since reset (SRC_DEFER; wraps)."),
        Register("DEFERRED_EGRESS", 0x048, 32, access="ro",
                 doc="SRC_DEFER_EGRESS decisions since reset (wraps)."),
        Register("DEFERRED_BUFFER", 0x04C, 32, access="ro",
                 doc="SRC_DEFER_BUFFER decisions since reset (wraps)."),
        Register("COMPLETIONS", 0x050, 32, access="ro", doc="Completions accepted since reset (wraps)."),
        Register("BAD_COMPLETIONS", 0x054, 32, access="ro",
                 doc="Completions ignored because they named an egress or queue with nothing "
                     "outstanding, or a tenant out of range (wraps)."),
        Register("ACTIVE", 0x100, 32, count=_T // 32, access="ro", storage="external",
                 doc="Bit t%32 of word t/32: tenant t offered a descriptor in this window."),
        Register("HIST_ALL", 0x200, 32, count=_H, access="ro", storage="external",
                 doc="This window's SA-delay histogram over all tenants (fw latency_hist.h "
                     "buckets; saturating counts)."),
    ))

_LB = Block(
    "LB", base=0x2000, size=0x1000,
    doc=("Queue-scaling load balancer (BurstCBS §5.1): each admitted I/O goes to one egress "
         "queue (SA thread) of its ingress queue's set; see burstgate/model/load_balancer.hpp."),
    registers=(
        Register("POLICY", 0x000, 3, doc="LB_STATIC, LB_ROUND_ROBIN, LB_JSQ, LB_P2C or LB_LEAST_IOS. "
                 "LB_POLICIES..7 are reserved: the gateware decides as LB_STATIC, the model rejects "
                 "the write."),
        Register("DEPTH", 0x004, C["LB_DEPTH_BITS"], reset=64,
                 doc="Outstanding I/Os an egress queue takes before it is full (1..4095)."),
        Register("SEED", 0x008, 32, storage="external",
                 doc="Load balancer LFSR: a write sets bg_lfsr_seed(value); reads the state."),
        Register("MAP", 0x040, _Q, count=_Q, storage="external",
                 doc="Egress set of ingress queue i, a bitmask (bits at or above EGRESS are "
                     "dropped). Reset: ingress i maps to egress i mod EGRESS (1:1)."),
        Register("OUT_IOS", 0x080, C["LB_DEPTH_BITS"], count=_Q, access="ro", storage="external",
                 doc="Outstanding I/Os of egress queue e."),
        Register("OUT_NS", 0x0C0, 32, count=_Q, access="ro", storage="external",
                 doc="Outstanding CPU ns (clamped charges) of egress queue e."),
    ))

_BPOOL = Block(
    "BPOOL", base=0x3000, size=0x1000,
    doc=("Two-tier I/O buffer pool (BurstCBS §5.1, Fig. 12), per ingress queue; see "
         "burstgate/model/buffer_pool.hpp. Write the configuration only while no I/O is "
         "outstanding: a write rebuilds the pool."),
    registers=(
        Register("DEDICATED", 0x000, C["BP_COUNT_BITS"], count=_Q, reset=4095, storage="external",
                 doc="Buffers queue q owns."),
        Register("SHARED", 0x040, C["BP_COUNT_BITS"], storage="external",
                 doc="Buffers in the shared pool."),
        Register("BORROW_CAP", 0x044, C["BP_COUNT_BITS"], reset=(1 << C["BP_COUNT_BITS"]) - 1,
                 storage="external", doc="Most shared buffers one queue may hold."),
        Register("QUIET", 0x048, C["BP_QUIET_BITS"], reset=1, storage="external",
                 doc="Windows a queue's in-flight count must stay within its dedicated buffers "
                     "before its borrowed buffers go back (0: back on release)."),
        Register("HELD", 0x080, C["BP_COUNT_BITS"], count=_Q, access="ro", storage="external",
                 doc="Shared buffers queue q holds now."),
    ))

_SEGMON = Block(
    "SEGMON", base=0x8000, size=0x1000,
    doc=("Segment-level rate monitor (Still Water §4.2): a segment is hot once its count in "
         "a window (requests, or 512-byte sectors: UNIT) exceeds R and stays hot until N windows "
         "pass at or below R; hot segments cannot draw the reserved pool / cheque. See "
         "burstgate/model/segment_monitor.hpp."),
    registers=(
        Register("HOT_THRESHOLD", 0x000, 16, reset=0xFFFF,
                 doc="R, in UNIT per window (65535: no segment is ever hot)."),
        Register("STEADY_WINDOWS", 0x004, 8, reset=5, doc="N, 0..SEGMON_STEADY_MAX (254)."),
        Register("UNIT", 0x008, 1, reset=0,
                 doc="What an I/O adds to its segment's count: SEGMON_UNIT_REQUESTS (1) or "
                     "SEGMON_UNIT_SECTORS (ceil(size / 512)). Sampled per I/O."),
    ))

_TENANT = Block(
    "TENANT", base=0x40000, size=0x40000,
    doc=("Per-tenant state in block RAM, index t*4 + d for vectors (d = BG_DIM_*) and t for "
         "scalars. Window counters read 0 after COMMIT."),
    registers=(
        Register("RES_BASE", 0x00000, 32, count=_T * _DIMS, storage="external",
                 doc="Base provisioning per window: BIOS borrows and draws the pool only while "
                     "the window's usage plus the I/O stays within it."),
        Register("GRANT", 0x04000, 32, count=_T * _DIMS, storage="external",
                 doc="Allocation REMAINING is refilled to at every COMMIT."),
        Register("LEND_GRANT", 0x08000, 32, count=_T * _DIMS, storage="external",
                 doc="Surplus others may borrow, LENDABLE's refill at every COMMIT."),
        Register("REMAINING", 0x0C000, 32, count=_T * _DIMS, access="ro", storage="external",
                 doc="What is left of the tenant's allocation in this window."),
        Register("LENDABLE", 0x10000, 32, count=_T * _DIMS, access="ro", storage="external",
                 doc="What others may still borrow from it in this window."),
        Register("USAGE", 0x14000, 32, count=_T * _DIMS, access="ro", storage="external",
                 doc="Cost admitted for the tenant in this window, any source (saturating)."),
        Register("THROTTLE", 0x18000, 32, count=_T * _DIMS, access="ro", storage="external",
                 doc="Summed cost of its admission deferrals in this window (saturating)."),
        Register("THROTTLE_N", 0x1C000, 32, count=_T, access="ro", storage="external",
                 doc="Admission deferrals (SRC_DEFER) in this window."),
        Register("SPILL_N", 0x1D000, 32, count=_T, access="ro", storage="external",
                 doc="I/Os paid by SRC_BORROW or SRC_RESERVED in this window."),
        Register("BURST_LIST", 0x1E000, C["TENANT_BITS"], count=_T, storage="external",
                 doc="Tenants that may lend (BIOS burst list); entries 0..CTRL.BURST_N-1."),
        Register("COUNT_GRANT", 0x1F000, 32, count=_T, reset=0xFFFFFFFF, storage="external",
                 doc="I/Os the tenant may be admitted per window, any source (the exact IOPS cap): "
                     "an I/O that the scheduler would admit while the window's admitted count is "
                     "not below it is deferred (SRC_DEFER, counted in THROTTLE_N). Read live, "
                     "not refilled at COMMIT; 0xFFFFFFFF (reset) is no cap in practice."),
        Register("HIST", 0x20000, 32, count=_T * _H, access="ro", storage="external",
                 doc="This window's SA-delay histogram of tenant t, index t*32 + bucket."),
    ))

# Ring sizes are powers of two; a burst never crosses a RING_ALIGN-byte boundary, which is why
# bases are aligned to it and a ring has at least 2**RING_LOG2_MIN entries.
_RING_LOG2_MIN, _RING_LOG2_MAX = C["RING_LOG2_MIN"], C["RING_LOG2_MAX"]
_RING_DOC = (f"log2 of the ring's entries, {_RING_LOG2_MIN}..{_RING_LOG2_MAX} (values outside "
             "are clamped). Write while CTRL.AP_START is 0 and the ring is empty.")

_KERNEL = Block(
    "KERNEL", base=0x0000, size=0x100,
    doc=("Vitis RTL-kernel control (XRT register conventions: control at 0x00, GIER 0x04, IER "
         "0x08, ISR 0x0C, arguments from 0x10) and the three rings in device memory, whose "
         "record formats are the `BG_REC_*` layouts below. Indices are free-running 32-bit "
         "counters from reset; entry i of a ring of 2**LOG2 entries is at BASE + (i mod "
         "2**LOG2) * record size. Descriptor and completion rings: the host fills entries and "
         "writes the TAIL doorbell (its producer index); the kernel reads them and advances "
         "HEAD, after which the host may reuse the slots. Decision ring: the kernel writes one "
         "decision per descriptor, in order, and advances TAIL once the memory write is "
         "acknowledged; the host consumes entries and writes the HEAD doorbell. The kernel "
         "never writes more than 2**LOG2 decisions past HEAD: a full decision ring stalls the "
         "datapath, and descriptors wait in their ring; none is dropped. A TAIL more than "
         "2**LOG2 entries ahead of HEAD is a host error."),
    registers=(
        Register("CTRL", 0x00, 8, storage="external",
                 doc="Bit 0 AP_START (rw): the ring engines fetch descriptors and completions "
                     "while 1; 0 stops new fetches (data in flight still completes). Bit 2 "
                     "AP_IDLE (ro): no memory access outstanding and nothing buffered. Other "
                     "bits read 0."),
        Register("GIER", 0x04, 1, doc="Global interrupt enable."),
        Register("IER", 0x08, 2, doc="Interrupt enable, per ISR bit."),
        Register("ISR", 0x0C, 2, storage="external",
                 doc="Interrupt status (toggle on write, the Vitis convention): bit 0 "
                     "decisions were published (DECISION_TAIL advanced), bit 1 an AXI error "
                     "(STATUS). `interrupt` = GIER and any (IER and ISR)."),
        Register("DESC_BASE_LO", 0x10, 32,
                 doc="Descriptor ring base, bits 31..0 (bits 7..0 ignored: 256-byte aligned)."),
        Register("DESC_BASE_HI", 0x14, 32, doc="Descriptor ring base, bits 63..32."),
        Register("DECISION_BASE_LO", 0x18, 32,
                 doc="Decision ring base, bits 31..0 (bits 7..0 ignored)."),
        Register("DECISION_BASE_HI", 0x1C, 32, doc="Decision ring base, bits 63..32."),
        Register("COMPLETION_BASE_LO", 0x20, 32,
                 doc="Completion ring base, bits 31..0 (bits 7..0 ignored)."),
        Register("COMPLETION_BASE_HI", 0x24, 32, doc="Completion ring base, bits 63..32."),
        Register("DESC_LOG2", 0x28, 5, reset=10, doc=_RING_DOC),
        Register("DECISION_LOG2", 0x2C, 5, reset=10, doc=_RING_DOC),
        Register("COMPLETION_LOG2", 0x30, 5, reset=10, doc=_RING_DOC),
        Register("DESC_TAIL", 0x40, 32,
                 doc="Doorbell: descriptors the host has written since reset (producer index)."),
        Register("DESC_HEAD", 0x44, 32, access="ro",
                 doc="Descriptors the kernel has read from the ring since reset."),
        Register("DECISION_HEAD", 0x48, 32,
                 doc="Doorbell: decisions the host has consumed since reset."),
        Register("DECISION_TAIL", 0x4C, 32, access="ro",
                 doc="Decisions written to the ring and acknowledged by memory since reset."),
        Register("COMPLETION_TAIL", 0x50, 32,
                 doc="Doorbell: completions the host has written since reset."),
        Register("COMPLETION_HEAD", 0x54, 32, access="ro",
                 doc="Completions the kernel has read from the ring since reset."),
        Register("STATUS", 0x60, 2, access="ro",
                 doc="Sticky until reset: bit 0 a read response was not OKAY, bit 1 a write "
                     "response was not OKAY (the data was used or lost; the run is invalid)."),
    ))

REGMAP = RegisterMap(
    name="burstgate",
    version=_VERSION,
    constants=_CONSTANTS,
    blocks=(_KERNEL, _INFO, _CTRL, _LB, _BPOOL, _COST, _SEGMON, _TENANT),
)
