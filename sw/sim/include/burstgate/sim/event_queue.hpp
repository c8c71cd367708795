// burstgate-sim's pending events: a binary heap of 16-byte events, earliest first. Kept apart
// from the parts that push them so the one rule that makes a run deterministic lives in one
// place: equal times are ordered by (kind, id), a total order fixed by the inputs, whatever
// order the events were pushed in.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace bg::sim {

// The order here is the order of events due at the same time: it is part of a run's bytes.
enum class EventKind : std::uint32_t { kStart, kArrival, kCpuDone, kSwlDone, kBackendDone, kComplete, kWindow, kSaLoop, kMeter };

// Time, then kind and I/O id packed so that the heap compares two words. The id is the
// tenant's index for kStart and kArrival, the SA thread's for kSaLoop (dpu.sa_loop), the slice's
// for kMeter (dualbucket.main_slices; never at a window's time, so its place in the order is
// only against the I/O events), an I/O
// record's (io_table.hpp) otherwise.
struct Event {
    std::uint64_t t;
    std::uint64_t key;  // kind << 32 | id
    EventKind kind() const { return static_cast<EventKind>(key >> 32); }
    std::uint32_t id() const { return static_cast<std::uint32_t>(key); }
};

class EventQueue {
public:
    void push(std::uint64_t t, EventKind k, std::uint32_t id)
    {
        heap_.push_back({t, std::uint64_t{static_cast<std::uint32_t>(k)} << 32 | id});
        std::push_heap(heap_.begin(), heap_.end(), Later{});
    }
    bool empty() const { return heap_.empty(); }
    // The earliest event's time; the queue must not be empty.
    std::uint64_t next_time() const { return heap_.front().t; }
    Event pop()
    {
        std::pop_heap(heap_.begin(), heap_.end(), Later{});
        const Event e = heap_.back();
        heap_.pop_back();
        return e;
    }

private:
    struct Later {
        bool operator()(const Event &a, const Event &b) const { return a.t != b.t ? a.t > b.t : a.key > b.key; }
    };
    std::vector<Event> heap_;
};

}  // namespace bg::sim
