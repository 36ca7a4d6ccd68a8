#include "wifi_air.h"

#include <math.h>

const struct wifi_air_mcs wifi_air_mcs_table[WIFI_AIR_MCS_COUNT] = {
    {26, 6500, -82},  {52, 13000, -79},  {78, 19500, -77},  {104, 26000, -74},
    {156, 39000, -70}, {208, 52000, -66}, {234, 58500, -65}, {260, 65000, -64},
};

static struct {
    double atten_db;
    double ap_dbm;
    int notch_db;
    uint64_t free_ns; /* when the air is free, host clock in ns */
    uint32_t rand;
    struct wifi_air_counts up, down;
} air;

int wifi_air_rssi_for(double atten_db, double ap_dbm)
{
    return (int)lround(ap_dbm - WIFI_AIR_FIXED_LOSS_DB - atten_db);
}

unsigned wifi_air_mcs_for(int rssi_dbm)
{
    unsigned mcs = 0;
    for (unsigned i = 0; i < WIFI_AIR_MCS_COUNT; i++) {
        if (rssi_dbm >= wifi_air_mcs_table[i].sensitivity_dbm) {
            mcs = i;
        }
    }
    return mcs;
}

uint32_t wifi_air_per_ppm(int rssi_dbm, unsigned mcs)
{
    double margin = rssi_dbm - wifi_air_mcs_table[mcs].sensitivity_dbm;
    double per = 0.1 * pow(10.0, -margin / 2.0);
    return per >= 1.0 ? 1000000u : (uint32_t)lround(per * 1e6);
}

bool wifi_air_alive_at(int rssi_dbm)
{
    return rssi_dbm >= wifi_air_mcs_table[0].sensitivity_dbm - WIFI_AIR_ASSOC_MARGIN_DB;
}

uint64_t wifi_air_attempt_ns(size_t eth_len, unsigned mcs, unsigned attempt)
{
    uint32_t cw = (WIFI_AIR_CW_MIN + 1u) << (attempt < 6 ? attempt : 6);
    cw = (cw > WIFI_AIR_CW_MAX + 1u ? WIFI_AIR_CW_MAX + 1u : cw) - 1u;
    uint64_t backoff_ns = (uint64_t)cw * WIFI_AIR_SLOT_NS / 2u; /* the mean of 0 .. cw slots */
    uint64_t bits = 16u + 6u + 8u * (eth_len + WIFI_AIR_MAC_EXTRA_BYTES); /* SERVICE + tail + PSDU */
    uint64_t per_symbol = wifi_air_mcs_table[mcs].bits_per_symbol;
    uint64_t symbols = (bits + per_symbol - 1u) / per_symbol;
    return WIFI_AIR_DIFS_NS + backoff_ns + WIFI_AIR_PREAMBLE_NS + symbols * WIFI_AIR_SYMBOL_NS + WIFI_AIR_SIFS_NS +
           WIFI_AIR_ACK_NS;
}

void wifi_air_reset(void)
{
    air.atten_db = 0.0;
    air.ap_dbm = WIFI_AIR_AP_DBM_DEFAULT;
    air.notch_db = WIFI_AIR_NOTCH_OFF;
    air.free_ns = 0;
    air.rand = 0x2545f491u;
    air.up = (struct wifi_air_counts){0, 0, 0};
    air.down = (struct wifi_air_counts){0, 0, 0};
}

void wifi_air_set(double atten_db, double ap_dbm)
{
    air.atten_db = atten_db;
    air.ap_dbm = ap_dbm;
}

void wifi_air_set_notch(int atten_db)
{
    air.notch_db = atten_db;
}

int wifi_air_rssi(void)
{
    return wifi_air_rssi_for(air.atten_db, air.ap_dbm);
}

unsigned wifi_air_mcs(void)
{
    return wifi_air_mcs_for(wifi_air_rssi());
}

bool wifi_air_alive(void)
{
    return wifi_air_alive_at(wifi_air_rssi());
}

double wifi_air_atten_db(void)
{
    return air.atten_db;
}

void wifi_air_counts(struct wifi_air_counts *up, struct wifi_air_counts *down)
{
    *up = air.up;
    *down = air.down;
}

uint64_t wifi_air_free_at_us(void)
{
    return (air.free_ns + 999u) / 1000u;
}

/* xorshift32: a fixed sequence, so that the same frames meet the same failures */
static uint32_t next_rand(void)
{
    uint32_t x = air.rand;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    air.rand = x;
    return x;
}

bool wifi_air_carry(size_t eth_len, enum wifi_air_dir dir, uint64_t now_us)
{
    struct wifi_air_counts *c = dir == WIFI_AIR_UP ? &air.up : &air.down;
    uint64_t now_ns = now_us * 1000u;
    uint64_t credit_ns = (uint64_t)WIFI_AIR_CREDIT_US * 1000u;
    if (air.free_ns + credit_ns < now_ns) {
        air.free_ns = now_ns - credit_ns; /* idle air is not banked beyond the credit */
    }
    int rssi = wifi_air_rssi();
    unsigned mcs = wifi_air_mcs_for(rssi);
    uint32_t per = wifi_air_alive_at(rssi) ? wifi_air_per_ppm(rssi, mcs) : 1000000u;
    bool doubled = air.notch_db != WIFI_AIR_NOTCH_OFF && lround(air.atten_db) == air.notch_db;
    c->frames++;
    for (unsigned attempt = 0; attempt < WIFI_AIR_RETRY_LIMIT; attempt++) {
        uint64_t t = wifi_air_attempt_ns(eth_len, mcs, attempt);
        air.free_ns += doubled ? 2u * t : t;
        if (attempt > 0) {
            c->retries++;
        }
        if (next_rand() % 1000000u >= per) {
            return true;
        }
    }
    c->failed++;
    return false;
}
