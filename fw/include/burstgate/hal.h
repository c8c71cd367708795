/* Register HAL: the firmware reaches the datapath only through 32-bit register reads and
 * writes at the byte addresses of regs.h. The host supplies an implementation for each
 * engine (C++ model, Verilator kernel, XRT board); an embedded core would supply MMIO. */
#ifndef BURSTGATE_HAL_H
#define BURSTGATE_HAL_H

#include <stdint.h>

typedef struct bg_hal {
    void *ctx;
    void (*write32)(void *ctx, uint32_t addr, uint32_t value);
    uint32_t (*read32)(void *ctx, uint32_t addr);
} bg_hal;

static inline void bg_hal_write(const bg_hal *hal, uint32_t addr, uint32_t value)
{
    hal->write32(hal->ctx, addr, value);
}

static inline uint32_t bg_hal_read(const bg_hal *hal, uint32_t addr)
{
    return hal->read32(hal->ctx, addr);
}

#endif /* BURSTGATE_HAL_H */
