/*
 * wifi_air.h - the simulated station's radio: a path-loss model driven by an attenuator, and the
 * air both directions share, so that throughput on the virtual bench follows the signal with
 * answers computable from the model (hil/radio_model.py computes the same figures for the suite).
 *
 * The model (802.11n, 2.4 GHz, HT20, one spatial stream, long guard interval, no aggregation):
 *   - RSSI = AP transmit power - WIFI_AIR_FIXED_LOSS_DB - attenuation (rounded to whole dBm);
 *     the noise floor is WIFI_AIR_NOISE_DBM.
 *   - Rate control takes the highest MCS whose receiver sensitivity (IEEE 802.11-2020, table
 *     19-23: the minimum a receiver must meet, at 10 % frame error) the RSSI reaches; below MCS 0's
 *     sensitivity it stays at MCS 0.
 *   - Each attempt of a frame fails with PER = 10 % x 10^(-(RSSI - sensitivity) / 2 dB), at most 1:
 *     10 % at the MCS's sensitivity, 1 % two dB above it, certain loss two dB below MCS 0's.
 *   - A frame is tried WIFI_AIR_RETRY_LIMIT times at most; each attempt occupies the air for
 *     DIFS + the mean backoff of its contention window + the HT-mixed preamble + the data symbols
 *     + SIFS + the legacy ACK (or its timeout, as long). The 802.11 frame is the Ethernet frame
 *     plus WIFI_AIR_MAC_EXTRA_BYTES (QoS data header + LLC/SNAP + FCS - Ethernet header).
 *   - The station keeps its association while RSSI >= MCS 0's sensitivity - WIFI_AIR_ASSOC_MARGIN_DB.
 * Both directions share one air: a frame starts when the air is free. The air's clock may run up
 * to WIFI_AIR_CREDIT_US behind the host's (time the host process was late is made up), so that the
 * rate is the model's, not the host scheduler's. A planted bad point (`--wifi-air-notch-db`)
 * doubles every attempt's air time at that attenuation: the rate halves there.
 * Attempts fail by a fixed-seed pseudo-random draw: the same frames give the same retries.
 */
#ifndef WIFI_AIR_H
#define WIFI_AIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIFI_AIR_AP_DBM_DEFAULT 20    /* the AP's (and the station's) transmit power, dBm */
#define WIFI_AIR_FIXED_LOSS_DB 60     /* antennas, cables and distance: RSSI -40 dBm at 0 dB */
#define WIFI_AIR_NOISE_DBM (-95)
#define WIFI_AIR_ASSOC_MARGIN_DB 1    /* association held down to MCS 0's sensitivity - this */
#define WIFI_AIR_MCS_COUNT 8
#define WIFI_AIR_RETRY_LIMIT 7        /* attempts of one frame (dot11ShortRetryLimit) */
#define WIFI_AIR_SLOT_NS 9000u        /* ERP short slot */
#define WIFI_AIR_SIFS_NS 10000u
#define WIFI_AIR_DIFS_NS (WIFI_AIR_SIFS_NS + 2u * WIFI_AIR_SLOT_NS)
#define WIFI_AIR_CW_MIN 15u
#define WIFI_AIR_CW_MAX 1023u
#define WIFI_AIR_PREAMBLE_NS 36000u   /* HT-mixed: L-STF, L-LTF, L-SIG, HT-SIG, HT-STF, one HT-LTF */
#define WIFI_AIR_SYMBOL_NS 4000u      /* long guard interval */
#define WIFI_AIR_ACK_NS 28000u        /* legacy OFDM 24 Mbit/s: 20 us preamble + 2 symbols */
#define WIFI_AIR_MAC_EXTRA_BYTES 24u  /* 26 QoS header + 8 LLC/SNAP + 4 FCS - 14 Ethernet header */
#define WIFI_AIR_CREDIT_US 4000u
#define WIFI_AIR_NOTCH_OFF (-1)

/** 802.11n HT20 one stream: data bits per OFDM symbol, PHY rate (long GI), sensitivity. */
struct wifi_air_mcs {
    uint16_t bits_per_symbol;
    uint32_t phy_kbps;
    int8_t sensitivity_dbm;
};
extern const struct wifi_air_mcs wifi_air_mcs_table[WIFI_AIR_MCS_COUNT];

/** Frames, retries and frames lost after the last attempt, one direction. */
struct wifi_air_counts {
    uint32_t frames;
    uint32_t retries;
    uint32_t failed;
};

enum wifi_air_dir { WIFI_AIR_UP, WIFI_AIR_DOWN }; /* station -> AP, AP -> station */

/* ---- the model (pure) ---- */
int wifi_air_rssi_for(double atten_db, double ap_dbm);
unsigned wifi_air_mcs_for(int rssi_dbm);
/** One attempt's failure probability at this RSSI and MCS, in parts per million. */
uint32_t wifi_air_per_ppm(int rssi_dbm, unsigned mcs);
bool wifi_air_alive_at(int rssi_dbm);
/** Air time of attempt `attempt` (0: the first) of an Ethernet frame of `eth_len` bytes. */
uint64_t wifi_air_attempt_ns(size_t eth_len, unsigned mcs, unsigned attempt);

/* ---- the air the station is on ---- */
/** Back to 0 dB, the default AP power, no notch, counters zero, the air free. */
void wifi_air_reset(void);
/** What the attenuator (and the AP's power knob) say now. */
void wifi_air_set(double atten_db, double ap_dbm);
/** The planted bad point: at this attenuation (whole dB) every attempt takes twice the air. */
void wifi_air_set_notch(int atten_db);
int wifi_air_rssi(void);
unsigned wifi_air_mcs(void);
bool wifi_air_alive(void);
double wifi_air_atten_db(void);
void wifi_air_counts(struct wifi_air_counts *up, struct wifi_air_counts *down);
/** When the air is free for the next frame (host clock, microseconds). */
uint64_t wifi_air_free_at_us(void);
/** Carries one frame over the air now (its attempts occupy it); true when it got through. */
bool wifi_air_carry(size_t eth_len, enum wifi_air_dir dir, uint64_t now_us);

#endif /* WIFI_AIR_H */
