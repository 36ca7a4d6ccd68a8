/*
 * Unit tests: the link delay line (link_delay.c) in front of a netif's input, inside the whole
 * application with the test clock: frames reach the stack exactly the delay after they arrived,
 * in order; the application's poll deadline is the next frame's; delay 0 passes straight through
 * and flushes waiting frames; a full line drops and counts; the console command checks its
 * argument.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "link_delay.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "test_platform.h"

static unsigned delivered;
static uint8_t order[FW_LINK_DELAY_SLOTS * 2];

/* the "stack": records which frame (its first byte) arrived, and when */
static err_t recording_input(struct pbuf *p, struct netif *netif)
{
    (void)netif;
    if (delivered < sizeof order) {
        order[delivered] = ((const uint8_t *)p->payload)[0];
    }
    delivered++;
    pbuf_free(p);
    return ERR_OK;
}

/* a driver's receive: a pool pbuf handed to netif->input, freed by the driver when refused */
static void receive(struct netif *netif, uint8_t tag)
{
    struct pbuf *p = pbuf_alloc(PBUF_RAW, 60, PBUF_POOL);
    CHECK(p != NULL);
    if (p == NULL) {
        return;
    }
    memset(p->payload, 0, 60);
    ((uint8_t *)p->payload)[0] = tag;
    if (netif->input(p, netif) != ERR_OK) {
        pbuf_free(p);
    }
}

static void feed(const char *s)
{
    fw_app_console_input(s, strlen(s));
}

static void advance_to(uint64_t t)
{
    test_now_us = t;
    fw_app_poll();
}

int main(void)
{
    lwip_init();
    static struct netif netif;
    test_netif_add(&netif, 0x0a4d0002u, 0xffffff00u);
    netif.input = recording_input;
    CHECK(link_delay_install(&netif));
    CHECK(!link_delay_install(&netif)); /* one line per firmware */
    fw_app_init(&netif);

    /* delay 0: straight through, no deadline */
    receive(&netif, 1);
    CHECK(delivered == 1 && order[0] == 1);
    CHECK(fw_app_poll_delay_us() == UINT64_MAX);

    /* 20 ms: held until its time, then in order */
    test_output_reset();
    feed("linkdelay 20\r\n");
    CHECK(strstr(test_output, "RESULT linkdelay delay_ms=20 held=0 ") != NULL);
    uint64_t t0 = test_now_us;
    receive(&netif, 2);
    test_now_us = t0 + 5000u;
    receive(&netif, 3);
    CHECK(delivered == 1);
    CHECK(fw_app_poll_delay_us() == 15000u); /* frame 2 is due 20 ms after t0 */
    advance_to(t0 + 19999u);
    CHECK(delivered == 1);
    advance_to(t0 + 20000u);
    CHECK(delivered == 2 && order[1] == 2);
    CHECK(fw_app_poll_delay_us() == 5000u);
    advance_to(t0 + 25000u);
    CHECK(delivered == 3 && order[2] == 3);
    CHECK(fw_app_poll_delay_us() == UINT64_MAX);

    /* a full line drops the frame that does not fit and counts it; none is lost silently */
    uint64_t t1 = test_now_us;
    for (unsigned i = 0; i < FW_LINK_DELAY_SLOTS + 3u; i++) {
        receive(&netif, (uint8_t)(10u + (i & 0x7fu)));
    }
    test_output_reset();
    feed("linkdelay\r\n");
    CHECK(strstr(test_output, "held=32 max_held=32 delayed=34 dropped=3\r\n") != NULL);
    advance_to(t1 + 20000u);
    CHECK(delivered == 3u + FW_LINK_DELAY_SLOTS);

    /* delay 0 while frames wait: they go to the stack at once, oldest first */
    receive(&netif, 200);
    receive(&netif, 201);
    test_output_reset();
    feed("linkdelay 0\r\n");
    CHECK(strstr(test_output, "RESULT linkdelay delay_ms=0 held=0 ") != NULL);
    CHECK(delivered == 5u + FW_LINK_DELAY_SLOTS);
    CHECK(order[delivered - 2] == 200 && order[delivered - 1] == 201);

    /* bad arguments: one ERR line, the delay unchanged */
    const char *bad[] = {"linkdelay -1\r\n", "linkdelay 1001\r\n", "linkdelay 5ms\r\n", "linkdelay 1 2\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        test_output_reset();
        feed(bad[i]);
        CHECK(strncmp(test_output, "ERR linkdelay usage: linkdelay [MS] (0-1000)\r\n", 45) == 0);
    }
    test_output_reset();
    feed("linkdelay\r\n");
    CHECK(strstr(test_output, "delay_ms=0 ") != NULL);
    CHECK(!link_delay_set_ms(FW_LINK_DELAY_MAX_MS + 1u));
    return check_summary("test_link_delay");
}
