// burstgate-lsm --json: the reports of the figure commands, hand-written so the bytes are fixed
// by the runs alone (fixed key order, "%.6g" numbers, null for a non-finite one).
#pragma once

#include <string>
#include <vector>

#include "burstgate/lsm/cloud_volume.hpp"
#include "burstgate/lsm/figures.hpp"
#include "burstgate/lsm/replay.hpp"

namespace bg::lsm {

// {"command", "seed", "runs": [every run's spec and result]} of a figure of whole runs.
std::string runs_json(const std::string& command, std::uint64_t seed, const std::vector<LabelledRun>& runs);

// fig3 / fig4: the printed table's rows as numbers, {"figure", "volume", "paid_iops",
// "columns", "rows"}.
std::string table_json(const std::string& figure, const VolumeSpec& spec, const std::vector<std::string>& columns,
                       const std::vector<std::vector<double>>& rows);

// replay: the trace's I/Os through the volume, latency per recorded source.
std::string replay_json(const std::string& trace, std::size_t ios, const ReplaySpec& spec, const ReplayResult& r);

}  // namespace bg::lsm
