// Helpers for tests that drive the agent through its registers, as the firmware does.
#pragma once

#include <cstdint>

#include "burstgate/cost_table.h"
#include "burstgate/model/agent.hpp"
#include "burstgate/regs.h"

namespace bg::test {

// Every I/O of product 0 costs `io`, whatever its size or direction: class 0's base with zero
// slopes and the reset factors, so budgets read directly as I/O counts.
inline bool flat_cost(bg_hal hal, const bg_vec &io)
{
    const std::uint32_t hi[BG_COST_SIZE_LO_COUNT] = {0xFFFFFF, 0xFFFFFF, 0xFFFFFF, 0xFFFFFF,
                                                     0xFFFFFF, 0xFFFFFF, 0xFFFFFF};
    const std::uint32_t zero[BG_COST_DIMS] = {0, 0, 0, 0};
    return bg_cost_set_bounds(&hal, hi) == 0 && bg_cost_set_entry(&hal, 0, false, 0, io.d, zero) == 0 &&
           bg_cost_set_entry(&hal, 0, true, 0, io.d, zero) == 0;
}

inline void write_vec(Agent &a, std::uint32_t first, std::uint32_t t, const bg_vec &v)
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        a.write(first + 4u * (t * BG_COST_DIMS + d), v.d[d]);
}

inline bg_vec read_vec(const Agent &a, std::uint32_t first, std::uint32_t t)
{
    bg_vec v;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        v.d[d] = a.read(first + 4u * (t * BG_COST_DIMS + d));
    return v;
}

inline void write_pool(Agent &a, std::uint32_t first, const bg_vec &v)
{
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        a.write(first + 4u * d, v.d[d]);
}

inline bg_vec read_pool(const Agent &a, std::uint32_t first)
{
    bg_vec v;
    for (unsigned d = 0; d < BG_COST_DIMS; d++)
        v.d[d] = a.read(first + 4u * d);
    return v;
}

inline void commit(Agent &a)
{
    a.write(BG_CTRL_WINDOW, BG_WINDOW_TICK);
    a.write(BG_CTRL_WINDOW, BG_WINDOW_COMMIT);
}

}  // namespace bg::test
