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
)
C = {c.name: c.value for c in _CONSTANTS}

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
        Register("VERSION", 0x04, 16, access="ro", reset=1,
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

REGMAP = RegisterMap(
    name="burstgate",
    version=1,
    constants=_CONSTANTS,
    blocks=(_INFO, _COST),
)
