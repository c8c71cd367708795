/* Programming the vectorized cost estimator (BurstCBS §5.3, Libra §4.3) through the HAL.
 *
 * The COST block holds one entry per (product, read/write, size class); an entry is a base
 * cost per dimension at the class's lower bound plus a slope per KiB above it, and the
 * datapath multiplies the result by a per-dimension Q4.12 factor (docs/registers.md). These
 * helpers turn the two cost models the papers use into entries:
 *
 *  - a linear profile per (product, read/write), as BurstCBS fits CPU time on 4-16 KB I/Os
 *    and charges link and software-limit bytes exactly;
 *  - a Libra VOP curve: measured (size, cost) points, interpolated piecewise-linearly.
 *
 * Every function validates all of its input before its first register write, so a
 * rejected call leaves the hardware as it was. No heap, no floating point.
 *
 * Return values: 0 on success, else one of the negative codes below. They are negated
 * errno numbers so they read familiarly in logs; they are defined here because a libc for
 * an embedded core need not provide <errno.h>.
 */
#ifndef BURSTGATE_COST_TABLE_H
#define BURSTGATE_COST_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "burstgate/hal.h"
#include "burstgate/regs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_COST_OK 0
/* A NULL pointer, or a product, size class or dimension out of range, or no curve points. */
#define BG_COST_EINVAL (-22)
/* A value does not fit its register: a size or slope of 2^24 or more, a factor of 2^16 or
 * more, or a curve segment steeper than a slope register can hold. */
#define BG_COST_ERANGE (-34)
/* Out of order: size bounds that decrease, curve sizes that are not strictly ascending, or
 * a curve cost that decreases with size (slopes are unsigned). */
#define BG_COST_EDOM (-33)
/* More curve points than there are size classes to hold them. */
#define BG_COST_E2BIG (-7)

/* The size bound that marks a class as unused: only an I/O of exactly this size reaches it. */
#define BG_COST_SIZE_UNUSED BG_COST_SIZE_LO_MASK

/* Index of the table entry for (product, direction, size class); its dimension d lives at
 * TABLE_BASE/TABLE_SLOPE index entry * BG_COST_DIMS + d. The one definition of the layout
 * shared by the firmware and the C++ model. */
static inline unsigned bg_cost_entry(unsigned product, bool write, unsigned size_class)
{
    return (product * 2u + (write ? 1u : 0u)) * BG_SIZE_CLASSES + size_class;
}

/* Program entry (product, write, size_class): base[d] and slope[d] per dimension d. */
int bg_cost_set_entry(const bg_hal *hal, unsigned product, bool write, unsigned size_class,
                      const uint32_t base[BG_COST_DIMS], const uint32_t slope[BG_COST_DIMS]);

/* Set the adjustment factor of dimension dim, Q4.12 (4096 = 1.0). */
int bg_cost_set_factor(const bg_hal *hal, unsigned dim, uint32_t factor_q4_12);

/* Set the lower bounds of size classes 1..7 (lo[j] is the first size of class j + 1; class 0
 * starts at 0). They must not decrease; BG_COST_SIZE_UNUSED marks the unused top classes.
 * Tables built before a change of bounds are stale: set bounds first, then load tables. */
int bg_cost_set_bounds(const bg_hal *hal, const uint32_t lo[BG_COST_SIZE_LO_COUNT]);

/* CPU time of one I/O on one SA thread as BurstCBS fits it: base + per KiB of data. */
typedef struct bg_linear_profile {
    uint32_t cpu_base_ns;    /* intercept: ns of an I/O of 0 bytes */
    uint32_t cpu_per_kib_ns; /* slope: ns per 1024 bytes of data; must be < 2^24 */
} bg_linear_profile;

/* Fill every size class of product `product`, reads from `read` and writes from `write`,
 * for the size bounds currently in the hardware (read back through the HAL).
 *
 * Dimensions, for an I/O of `size` data bytes:
 *   cpu     = cpu_base_ns + cpu_per_kib_ns * size / 1024                    (ns)
 *   egress  (DPU to backend): read: header_bytes;        write: header_bytes + size
 *   ingress (backend to DPU): read: header_bytes + size; write: header_bytes
 *   swlimit = size: the software rate limiter meters data bytes of both directions.
 * Each I/O is a request to the backend and a response from it, so each direction carries
 * one header (request or completion) and the data travels one way only.
 *
 * Each class starts at the profile's value at its lower bound (floored) and climbs with the
 * profile's slope, so the table equals the profile exactly at every class bound and stays
 * within 1 ns of floor(profile) inside a class; the byte dimensions are exact everywhere.
 * Values past 2^32 - 1 saturate, as the datapath's sum would. */
int bg_cost_load_linear(const bg_hal *hal, unsigned product, const bg_linear_profile *read,
                        const bg_linear_profile *write, uint32_t header_bytes);

/* One measured point of a Libra VOP cost curve: the cost of one read and of one write of
 * `size` bytes, in milli-VOPs (1 VOP = one interference-free small IOP, Libra §4.3). */
typedef struct bg_vop_point {
    uint32_t size;       /* bytes, < 2^24 */
    uint32_t read_mvop;
    uint32_t write_mvop;
} bg_vop_point;

/* Libra §4.3's worked example on its Intel 320 SSD: max capacity 40000 VOP/s ("10000 VOP/s,
 * or about one quarter of the max IOP capacity"; §4.2 measures 37.5 kop/s). */
#define BG_VOP_LIBRA_CAPACITY 40000u
#define BG_VOP_LIBRA_POINTS 2u
extern const bg_vop_point bg_vop_libra[BG_VOP_LIBRA_POINTS];

/* 0 when points[0..count) is a curve bg_cost_load_vop accepts, else the code it returns. */
int bg_cost_check_vop(const bg_vop_point *points, unsigned count);

/* Load a VOP curve for every product (a curve describes the device, not a product class):
 * the curve's sizes become the size bounds, milli-VOPs go into dimension `dim` and the other
 * dimensions cost 0. Factors are left as they are: the delay-based adjustment owns them.
 *
 * Why one dimension, and why BG_DIM_CPU: a VOP is one unified resource (Libra §4.3: IOP
 * throughput and bandwidth are correlated and "should be represented by a unified metric"),
 * so the cost is a scalar; putting it in one dimension and 0 in the others makes the vector
 * admission check exactly Libra's scalar check, with the capacity programmed in that one
 * dimension. CPU is its natural home: like CPU ns, a VOP is a share of the time of a serial
 * resource (at 40000 VOP/s one VOP is 25 us of the SSD), the byte dimensions keep their
 * meaning, and the CPU factor's delay-based adjustment then scales VOP cost the way
 * BurstCBS scales CPU cost.
 *
 * Classes: if points[0].size is 0, point i starts class i (up to BG_SIZE_CLASSES points);
 * otherwise class 0 costs points[0] flat (a VOP curve starts at the smallest IOP measured)
 * and point i starts class i + 1 (up to BG_SIZE_CLASSES - 1 points). Between points the
 * cost is interpolated linearly with a floored slope, so it is exact at every point and
 * never exceeds the next point; past the last point the last segment's slope continues. */
int bg_cost_load_vop(const bg_hal *hal, const bg_vop_point *points, unsigned count, unsigned dim);

#ifdef __cplusplus
}
#endif

#endif /* BURSTGATE_COST_TABLE_H */
