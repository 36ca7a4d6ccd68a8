/*
 * test_same70_gmac.c - the SAME70 Xplained board's gmac.c and ksz8081.c (unchanged, compiled for
 * the host with SAME70_REGISTER_MODEL) on lwIP, against the register model of gmac_model.c:
 * link-up at each speed and duplex, frames in and out at full ring load, a receive ring that
 * overflows and must recover, a receive overrun, a link flap, transmit errors, the statistics
 * registers, and the priority queues of rev. A and rev. B parts.
 *
 * Every call of fw_platform_time_us() is one microsecond, during which the model's hardware runs
 * (the driver's busy-waits see the transmitter drain).
 */
#include <stdio.h>
#include <string.h>

#include "board.h"
#include "check.h"
#include "fw_platform.h"
#include "gmac.h"
#include "gmac_model.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"

#define RX_DESCS FW_GMAC_RX_DESCS
#define TX_DESCS FW_GMAC_TX_DESCS

static uint64_t now_us = 1000000u;

uint64_t fw_platform_time_us(void)
{
    now_us++;
    model_advance(1);
    return now_us;
}

void fw_platform_console_write(const char *data, size_t len)
{
    (void)fwrite(data, 1, len, stdout);
}

void fw_platform_restart(void)
{
}

unsigned int fw_platform_random(void)
{
    return 7;
}

uint64_t fw_platform_busy_us(void)
{
    return FW_PLATFORM_BUSY_UNKNOWN;
}

const char *fw_platform_target(void)
{
    return "same70-model";
}

static unsigned pin_inits;

void board_eth_pins_init(void)
{
    pin_inits++;
}

static void wait_us(uint64_t us)
{
    now_us += us;
    model_advance(us);
}

/* ---- frames ---------------------------------------------------------------------------------- */

static const uint8_t board_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
static const uint8_t peer_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x99};

#define RX_LOG 512
static struct {
    uint16_t len;
    uint8_t data[MODEL_FRAME_MAX];
} rx_log[RX_LOG];
static size_t rx_count;

static err_t test_input(struct pbuf *p, struct netif *n)
{
    (void)n;
    if (rx_count < RX_LOG) {
        rx_log[rx_count].len = (uint16_t)pbuf_copy_partial(p, rx_log[rx_count].data, MODEL_FRAME_MAX, 0);
    }
    rx_count++;
    pbuf_free(p);
    return ERR_OK;
}

/* An Ethernet frame numbered seq: len bytes, local experimental EtherType 0x88B5, a pattern. */
static size_t make_frame(uint8_t *buf, size_t len, uint32_t seq, const uint8_t dst[6], const uint8_t src[6])
{
    memcpy(buf, dst, 6);
    memcpy(buf + 6, src, 6);
    buf[12] = 0x88;
    buf[13] = 0xB5;
    buf[14] = (uint8_t)(seq >> 24);
    buf[15] = (uint8_t)(seq >> 16);
    buf[16] = (uint8_t)(seq >> 8);
    buf[17] = (uint8_t)seq;
    for (size_t i = 18; i < len; i++) {
        buf[i] = (uint8_t)(seq * 7u + i);
    }
    return len;
}

static size_t frame_len(uint32_t seq)
{
    return 60u + (seq * 97u) % (1514u - 60u + 1u); /* 60..1514 bytes */
}

static bool frame_is(const uint8_t *data, size_t len, uint32_t seq, const uint8_t dst[6], const uint8_t src[6])
{
    uint8_t want[MODEL_FRAME_MAX];
    size_t n = make_frame(want, frame_len(seq), seq, dst, src);
    return len == n && memcmp(data, want, n) == 0;
}

/* Frame seq from the wire into the model's receiver. */
static enum model_rx_result wire_in(uint32_t seq)
{
    uint8_t buf[MODEL_FRAME_MAX];
    size_t n = make_frame(buf, frame_len(seq), seq, board_mac, peer_mac);
    return model_rx_frame(buf, n);
}

static bool received_is(size_t i, uint32_t seq)
{
    return i < rx_count && i < RX_LOG && frame_is(rx_log[i].data, rx_log[i].len, seq, board_mac, peer_mac);
}

/* Frame seq out through the driver's linkoutput. */
static err_t send(struct netif *netif, uint32_t seq)
{
    uint8_t buf[MODEL_FRAME_MAX];
    size_t n = make_frame(buf, frame_len(seq), seq, peer_mac, board_mac);
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)n, PBUF_RAM);
    if (p == NULL) {
        return ERR_MEM;
    }
    (void)pbuf_take(p, buf, (u16_t)n);
    err_t e = netif->linkoutput(netif, p);
    pbuf_free(p);
    return e;
}

static bool sent_is(size_t i, uint32_t seq)
{
    return i < gm.tx_count && i < MODEL_TX_FRAMES && frame_is(gm.tx[i].data, gm.tx[i].len, seq, peer_mac, board_mac);
}

static int poll_all(struct netif *netif)
{
    int total = 0;
    for (int i = 0; i < 64; i++) {
        total += gmac_poll(netif, 8);
    }
    return total;
}

/* ---- the board ------------------------------------------------------------------------------- */

static struct netif netif;
static bool netif_added;

/* Power-on: a part with this CHIPID, a link partner with these abilities (0: none), the netif
 * added (gmac_netif_init), and, with a partner, the link up after auto-negotiation. */
static struct ksz8081_link board_up(uint32_t cidr, uint16_t partner)
{
    struct ksz8081_link link = {false, false, false};
    if (netif_added) {
        /* the driver's link state from the previous test goes down first */
        model_phy_partner(false, 0);
        (void)gmac_link_check(&netif, NULL);
        netif_remove(&netif);
    }
    model_reset(cidr, MODEL_EXID_Q);
    rx_count = 0;
    memset(&lwip_stats.link, 0, sizeof lwip_stats.link);
    if (partner != 0u) {
        model_phy_partner(true, partner);
    }
    ip4_addr_t ip, mask, gw;
    IP4_ADDR(&ip, 10, 77, 0, 2);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 0, 0, 0, 0);
    CHECK(netif_add(&netif, &ip, &mask, &gw, (void *)board_mac, gmac_netif_init, test_input) != NULL);
    netif_added = true;
    netif_set_up(&netif);
    if (partner != 0u) {
        wait_us(MODEL_AN_US + 1000u);
        CHECK(gmac_link_check(&netif, &link));
        CHECK(netif_is_link_up(&netif));
    }
    gm.tx_count = 0; /* lwIP's gratuitous ARP at link-up is not part of the tests */
    return link;
}

static void check_clean(void)
{
    CHECK(gm.bad_accesses == 0u);
    CHECK(gm.ignored_writes == 0u);
    if (gm.bad_accesses != 0u) {
        fprintf(stderr, "  bad access at 0x%08x\n", (unsigned)gm.last_bad_addr);
    }
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void test_link_up_each_mode(void)
{
    static const struct {
        uint16_t partner;
        bool speed_100;
        bool full_duplex;
    } modes[] = {
        {MODEL_100FD, true, true},
        {MODEL_100HD, true, false},
        {MODEL_10FD, false, true},
        {MODEL_10HD, false, false},
        {MODEL_10HD | MODEL_10FD | MODEL_100HD | MODEL_100FD, true, true},
        {MODEL_10HD | MODEL_100HD, true, false},
    };
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        struct ksz8081_link link = board_up(MODEL_CIDR_SAME70Q21B, modes[m].partner);
        CHECK(pin_inits > 0u);
        CHECK(phy.resets == 1u);           /* ksz8081_start's soft reset */
        CHECK(phy.anar == 0x01E1u);        /* 10/100 half/full advertised */
        CHECK(link.up);
        CHECK(link.speed_100 == modes[m].speed_100);
        CHECK(link.full_duplex == modes[m].full_duplex);
        CHECK(((gm.ncfgr & 1u) != 0u) == modes[m].speed_100); /* NCFGR.SPD */
        CHECK(((gm.ncfgr & 2u) != 0u) == modes[m].full_duplex); /* NCFGR.FD */
        CHECK((gm.ncr & 0x1Cu) == 0x1Cu);  /* RXEN, TXEN, MPE */
        uint16_t id2 = 0;
        CHECK(gmac_phy_address(&id2) == (int)MODEL_PHY_ADDR);
        CHECK(id2 == 0x1561u);
        /* one frame each way */
        CHECK(wire_in(m) == MODEL_RX_STORED);
        CHECK(poll_all(&netif) == 1);
        CHECK(received_is(0, (uint32_t)m));
        CHECK(send(&netif, 100u + (uint32_t)m) == ERR_OK);
        CHECK(gm.tx_count == 1u && sent_is(0, 100u + (uint32_t)m));
        check_clean();
    }
    /* no common mode: auto-negotiation ends without a link */
    board_up(MODEL_CIDR_SAME70Q21B, 0);
    phy.anar = MODEL_100FD | 1u; /* as if the PHY advertised 100FD only... */
    model_phy_partner(true, MODEL_10HD);
    wait_us(MODEL_AN_US + 1000u);
    struct ksz8081_link link;
    CHECK(!gmac_link_check(&netif, &link));
    CHECK(!netif_is_link_up(&netif));
}

static void test_full_ring_load(void)
{
    board_up(MODEL_CIDR_SAME70Q21B, MODEL_100FD);
    /* receive: the whole ring filled before each poll, ten times round */
    uint32_t seq = 0;
    size_t expect = 0;
    for (int round = 0; round < 10; round++) {
        for (unsigned i = 0; i < RX_DESCS; i++) {
            CHECK(wire_in(seq++) == MODEL_RX_STORED);
        }
        expect += RX_DESCS;
        CHECK(poll_all(&netif) == (int)RX_DESCS);
        CHECK(rx_count == expect);
    }
    bool in_order = true;
    for (size_t i = 0; i < rx_count; i++) {
        in_order = in_order && received_is(i, (uint32_t)i);
    }
    CHECK(in_order);
    CHECK(gm.rsr == 0u || gm.rsr == 2u); /* at most REC pending: no BNA, no overrun */

    /* transmit: the transmitter paused until the ring is full; the next frame waits the driver's
     * bounded time and is dropped, then everything queued goes out in order */
    gm.tx_hold = true;
    for (uint32_t i = 0; i < TX_DESCS; i++) {
        CHECK(send(&netif, 1000u + i) == ERR_OK);
    }
    CHECK(gm.tx_count == 0u);
    uint32_t drops = lwip_stats.link.drop;
    CHECK(send(&netif, 1999u) == ERR_OK); /* waits TX_WAIT_US, then drops */
    CHECK(lwip_stats.link.drop == drops + 1u);
    gm.tx_hold = false;
    wait_us(1);
    (void)poll_all(&netif);
    CHECK(gm.tx_count == TX_DESCS);
    bool tx_in_order = true;
    for (uint32_t i = 0; i < TX_DESCS; i++) {
        tx_in_order = tx_in_order && sent_is(i, 1000u + i);
    }
    CHECK(tx_in_order);
    /* a full ring that drains while the driver waits: nothing lost */
    gm.tx_count = 0;
    for (uint32_t i = 0; i < 200u; i++) {
        if (i % TX_DESCS == 0u) {
            gm.tx_hold = true; /* the ring fills up ... */
        }
        if (i % TX_DESCS == TX_DESCS - 1u) {
            gm.tx_hold = false; /* ... and drains while the next send busy-waits */
        }
        CHECK(send(&netif, 2000u + i) == ERR_OK);
    }
    gm.tx_hold = false;
    wait_us(1);
    (void)poll_all(&netif);
    CHECK(gm.tx_count == 200u);
    tx_in_order = true;
    for (uint32_t i = 0; i < 200u && i < gm.tx_count; i++) {
        tx_in_order = tx_in_order && sent_is(i, 2000u + i);
    }
    CHECK(tx_in_order);
    CHECK(lwip_stats.link.drop == drops + 1u);
    check_clean();
}

/* The ring overflows (the main loop was busy: a console write, the boot wait, ...): the frames
 * that found no descriptor are lost, those in the ring are delivered, and reception goes on. */
static void test_rx_overflow_recovery(void)
{
    board_up(MODEL_CIDR_SAME70Q21B, MODEL_100FD);
    uint32_t seq = 0;
    for (unsigned i = 0; i < 3u; i++) { /* the ring does not start at descriptor 0 */
        CHECK(wire_in(seq++) == MODEL_RX_STORED);
    }
    CHECK(poll_all(&netif) == 3);
    for (unsigned i = 0; i < RX_DESCS; i++) {
        CHECK(wire_in(seq++) == MODEL_RX_STORED);
    }
    unsigned lost = 0;
    for (unsigned i = 0; i < 8u; i++) {
        if (wire_in(seq++) == MODEL_RX_NO_BUFFER) {
            lost++;
        }
    }
    CHECK(lost == 8u);
    CHECK((gm.rsr & 1u) != 0u); /* RSR.BNA */
    (void)poll_all(&netif);
    CHECK(rx_count == 3u + RX_DESCS);
    bool in_order = true;
    for (size_t i = 0; i < rx_count; i++) {
        in_order = in_order && received_is(i, (uint32_t)i);
    }
    CHECK(in_order);

    /* after the overflow: new frames must arrive, at once and in order */
    size_t before = rx_count;
    uint32_t first_new = seq;
    unsigned stored = 0;
    for (unsigned i = 0; i < 5u; i++) {
        if (wire_in(seq++) == MODEL_RX_STORED) {
            stored++;
        }
    }
    (void)poll_all(&netif);
    CHECK(stored == 5u);
    CHECK(rx_count == before + 5u);
    for (unsigned i = 0; i < 5u; i++) {
        CHECK(received_is(before + i, first_new + i));
    }
    printf("overflow recovery: %u frames lost to the full ring, %u of 5 later frames stored, %zu delivered "
           "after the overflow\n", lost, stored, rx_count - before);
    /* and at full ring load again */
    before = rx_count;
    for (unsigned i = 0; i < RX_DESCS; i++) {
        CHECK(wire_in(seq++) == MODEL_RX_STORED);
    }
    (void)poll_all(&netif);
    CHECK(rx_count == before + RX_DESCS);
    /* the lost frames are counted (RRE -> link.drop) when the link is checked */
    uint32_t drops = lwip_stats.link.drop;
    (void)gmac_link_check(&netif, NULL);
    CHECK(lwip_stats.link.drop >= drops + 8u);
    check_clean();
}

static void test_rx_overrun(void)
{
    board_up(MODEL_CIDR_SAME70Q21B, MODEL_100FD);
    CHECK(wire_in(0) == MODEL_RX_STORED);
    CHECK(wire_in(1) == MODEL_RX_STORED);
    gm.overrun_next = true;
    CHECK(wire_in(2) == MODEL_RX_OVERRUN);
    CHECK(wire_in(3) == MODEL_RX_STORED);
    (void)poll_all(&netif);
    CHECK(rx_count == 3u);
    CHECK(received_is(0, 0) && received_is(1, 1) && received_is(2, 3));
    for (uint32_t i = 4; i < 4u + 3u * RX_DESCS; i++) {
        CHECK(wire_in(i) == MODEL_RX_STORED);
        if (i % 16u == 0u) {
            (void)poll_all(&netif);
        }
    }
    (void)poll_all(&netif);
    CHECK(rx_count == 3u + 3u * RX_DESCS);
    uint32_t drops = lwip_stats.link.drop;
    (void)gmac_link_check(&netif, NULL);
    CHECK(lwip_stats.link.drop == drops + 1u); /* ROE */
    check_clean();
}

static void test_link_flap(void)
{
    board_up(MODEL_CIDR_SAME70Q21B, MODEL_100FD);
    CHECK(wire_in(0) == MODEL_RX_STORED);
    CHECK(wire_in(1) == MODEL_RX_STORED);
    (void)poll_all(&netif);
    CHECK(send(&netif, 10) == ERR_OK);
    /* cable out */
    model_phy_partner(false, 0);
    struct ksz8081_link link;
    CHECK(!gmac_link_check(&netif, &link));
    CHECK(!netif_is_link_up(&netif));
    CHECK(wire_in(2) == MODEL_RX_OFF);
    /* cable in, to a 10 Mbit/s half-duplex partner */
    model_phy_partner(true, MODEL_10HD);
    CHECK(!gmac_link_check(&netif, &link)); /* still negotiating */
    wait_us(MODEL_AN_US + 1000u);
    CHECK(gmac_link_check(&netif, &link));
    CHECK(link.up && !link.speed_100 && !link.full_duplex);
    CHECK(netif_is_link_up(&netif));
    CHECK((gm.ncfgr & 3u) == 0u);
    for (uint32_t i = 3; i < 3u + RX_DESCS + 5u; i++) {
        CHECK(wire_in(i) == MODEL_RX_STORED);
        if (i % 8u == 0u) {
            (void)poll_all(&netif);
        }
    }
    (void)poll_all(&netif);
    CHECK(rx_count == 2u + RX_DESCS + 5u);
    CHECK(received_is(2, 3) && received_is(rx_count - 1u, 3u + RX_DESCS + 4u));
    size_t sent = gm.tx_count;
    CHECK(send(&netif, 11) == ERR_OK);
    CHECK(gm.tx_count == sent + 1u && sent_is(sent, 11));
    /* a short flap between two checks, to a 100 Mbit/s full-duplex partner: the driver reads the
     * current state (BMSR twice: its link bit is latched low) and follows the new mode */
    model_phy_partner(false, 0);
    model_phy_partner(true, MODEL_100FD);
    wait_us(MODEL_AN_US + 1000u);
    CHECK(gmac_link_check(&netif, &link));
    CHECK(link.speed_100 && link.full_duplex && (gm.ncfgr & 3u) == 3u);
    CHECK(wire_in(100) == MODEL_RX_STORED);
    size_t before = rx_count;
    (void)poll_all(&netif);
    CHECK(rx_count == before + 1u && received_is(before, 100));
    check_clean();
}

static void test_tx_errors(void)
{
    static const struct {
        enum model_tx_error error;
        const char *name;
    } errors[] = {
        {MODEL_TX_RETRY_LIMIT, "retry limit"},
        {MODEL_TX_AHB_ERROR, "AHB error"},
        {MODEL_TX_UNDERRUN, "underrun"},
    };
    for (size_t e = 0; e < sizeof errors / sizeof errors[0]; e++) {
        board_up(MODEL_CIDR_SAME70Q21B, MODEL_100FD);
        for (uint32_t i = 0; i < 3u; i++) {
            CHECK(send(&netif, i) == ERR_OK);
        }
        CHECK(gm.tx_count == 3u);
        uint32_t errs = lwip_stats.link.err;
        gm.tx_fail_next = errors[e].error;
        CHECK(send(&netif, 3) == ERR_OK); /* lost on the wire */
        CHECK(gm.tx_count == 3u);
        (void)poll_all(&netif);           /* the driver notices and restarts the transmitter */
        CHECK(lwip_stats.link.err > errs);
        for (uint32_t i = 4; i < 4u + 3u * TX_DESCS; i++) {
            CHECK(send(&netif, i) == ERR_OK);
        }
        (void)poll_all(&netif);
        bool ok = gm.tx_count == 3u + 3u * TX_DESCS;
        for (uint32_t i = 0; ok && i < 3u * TX_DESCS; i++) {
            ok = sent_is(3u + i, 4u + i);
        }
        CHECK(ok);
        printf("transmit %s: %zu of %u frames after it sent\n", errors[e].name, gm.tx_count - 3u, 3u * TX_DESCS);
        check_clean();
    }
}

static void test_statistics(void)
{
    board_up(MODEL_CIDR_SAME70Q21B, MODEL_100FD);
    (void)gmac_link_check(&netif, NULL); /* statistics read (and cleared) */
    struct stats_proto before = lwip_stats.link;
    model_rx_bad_fcs();
    model_rx_bad_fcs();
    model_rx_bad_fcs();
    (void)gmac_link_check(&netif, NULL);
    CHECK(lwip_stats.link.chkerr == before.chkerr + 3u);
    (void)gmac_link_check(&netif, NULL); /* cleared by the read: not counted twice */
    CHECK(lwip_stats.link.chkerr == before.chkerr + 3u);
    check_clean();
}

static void test_priority_queues(void)
{
    board_up(MODEL_CIDR_SAME70Q21B, MODEL_100FD);
    CHECK(gm.pq_written == 0x3Eu); /* queues 1..5 parked */
    for (unsigned q = 0; q < 5u; q++) {
        CHECK(gm.pq_tbq[q] != 0u && gm.pq_rbq[q] != 0u && gm.pq_idr[q] == 0xFFFFFFFFu);
    }
    check_clean();
    board_up(MODEL_CIDR_SAME70Q21A, MODEL_100FD);
    CHECK(gm.pq_written == 0x06u); /* rev. A: queues 1..2 only */
    check_clean();
    CHECK(wire_in(0) == MODEL_RX_STORED);
    CHECK(poll_all(&netif) == 1 && received_is(0, 0));
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } tests[] = {
        {"link", test_link_up_each_mode},
        {"load", test_full_ring_load},
        {"overflow", test_rx_overflow_recovery},
        {"overrun", test_rx_overrun},
        {"flap", test_link_flap},
        {"txerror", test_tx_errors},
        {"statistics", test_statistics},
        {"queues", test_priority_queues},
    };
    lwip_init();
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (argc < 2 || strcmp(argv[1], tests[i].name) == 0) { /* an argument: that test only */
            int failures = check_failures;
            tests[i].run();
            printf("%s: %s\n", tests[i].name, check_failures == failures ? "passed" : "FAILED");
        }
    }
    return check_summary("test_same70_gmac");
}
