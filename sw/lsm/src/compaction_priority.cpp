#include "burstgate/lsm/compaction_priority.hpp"

namespace bg::lsm {

Priority priority_of(const IoRequest& io)
{
    switch (io.source) {
    case IoSource::user:
    case IoSource::wal:
    case IoSource::flush:
        return Priority::high;
    case IoSource::compaction:
        if (io.level == 0) return Priority::high;
        if (io.level <= 2) return Priority::medium;
        return Priority::low;
    case IoSource::prefetch:
        return Priority::low;
    }
    return Priority::low;
}

const char* to_string(Priority p)
{
    switch (p) {
    case Priority::high: return "high";
    case Priority::medium: return "medium";
    case Priority::low: return "low";
    }
    return "?";
}

}  // namespace bg::lsm
