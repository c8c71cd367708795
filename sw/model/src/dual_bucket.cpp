// Dual-bucket admission; per-I/O rule and tick order in dual_bucket.hpp.
#include "burstgate/model/dual_bucket.hpp"

#include <stdexcept>
#include <string>

namespace bg {

namespace {

const DualBucket::Config& checked(const DualBucket::Config& cfg)
{
    if (const char* bad = bg_db_config_error(&cfg.fw))
        throw std::invalid_argument(std::string("dualbucket.") + bad + ": invalid value");
    return cfg;
}

void add_sat(std::uint64_t& n) { n += n != UINT64_MAX; }

}  // namespace

DualBucket::DualBucket(const Config& cfg)
    : cfg_(checked(cfg)), monitor_(cfg.hot_threshold, cfg.steady_intervals)
{
    bg_db_init(&st_, &cfg_.fw);
}

void DualBucket::count(DbSource src, bool hot, const bg_vec& cost)
{
    for (DbCounters* c : {&cur_, &total_}) {
        switch (src) {
        case DbSource::Main: add_sat(c->main); break;
        case DbSource::Cheque: add_sat(c->cheque); break;
        case DbSource::Deferred:
            add_sat(c->deferred);
            if (hot)
                add_sat(c->deferred_hot);
            break;
        }
        if (src != DbSource::Deferred)
            bg_vec_add_sat(&c->spent, &cost);
    }
}

bool DualBucket::draw_cheque(bool hot, const bg_vec& cost)
{
    if (hot || !bg_vec_covers(&st_.cheque, &cost))
        return false;
    bg_vec_sub(&st_.cheque, &cost);
    drawn_ = true;
    return true;
}

DbDecision DualBucket::admit(std::uint16_t segment, const bg_vec& cost)
{
    const bool hot = monitor_.on_io(segment);
    DbSource src = DbSource::Deferred;
    if (bg_vec_covers(&st_.main, &cost)) {
        bg_vec_sub(&st_.main, &cost);
        src = DbSource::Main;
    } else if (draw_cheque(hot, cost)) {
        src = DbSource::Cheque;
    }
    count(src, hot, cost);
    return {src, hot};
}

void DualBucket::tick(const bg_lhist& window)
{
    bg_db_refill(&st_, &cfg_.fw, drawn_);
    drawn_ = false;
    bg_db_update(&st_, &cfg_.fw, &window);
    monitor_.tick();
    last_ = cur_;
    cur_ = DbCounters{};
}

}  // namespace bg
