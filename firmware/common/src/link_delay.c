#include "link_delay.h"

#include "fw_inttypes.h"
#include <string.h>

#include "fw_app.h"
#include "fw_config.h"
#include "fw_console.h"
#include "fw_out.h"
#include "fw_parse.h"
#include "fw_platform.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"

struct held_frame {
    struct pbuf *p;
    uint64_t due_us;
};

static struct {
    struct netif *netif;
    netif_input_fn input; /* the stack's input the line sits in front of */
    uint32_t delay_ms;
    struct held_frame ring[FW_LINK_DELAY_SLOTS];
    unsigned head;  /* oldest frame */
    unsigned count; /* frames waiting */
    unsigned max_held;
    uint32_t delayed;
    uint32_t dropped;
} line;

_Static_assert((FW_LINK_DELAY_SLOTS & (FW_LINK_DELAY_SLOTS - 1)) == 0, "FW_LINK_DELAY_SLOTS must be a power of two");

static void deliver(struct pbuf *p)
{
    if (line.input(p, line.netif) != ERR_OK) {
        pbuf_free(p);
    }
}

static err_t delayed_input(struct pbuf *p, struct netif *netif)
{
    (void)netif;
    if (line.delay_ms == 0 && line.count == 0) {
        return line.input(p, line.netif);
    }
    if (line.count == FW_LINK_DELAY_SLOTS) {
        line.dropped++;
        LINK_STATS_INC(link.drop);
        return ERR_MEM; /* the driver frees the frame, as when the stack refuses one */
    }
    unsigned tail = (line.head + line.count) & (FW_LINK_DELAY_SLOTS - 1u);
    line.ring[tail].p = p;
    line.ring[tail].due_us = fw_platform_time_us() + (uint64_t)line.delay_ms * 1000u;
    line.count++;
    line.delayed++;
    if (line.count > line.max_held) {
        line.max_held = line.count;
    }
    return ERR_OK;
}

void link_delay_poll(uint64_t now_us)
{
    while (line.count > 0 && (line.delay_ms == 0 || line.ring[line.head].due_us <= now_us)) {
        struct pbuf *p = line.ring[line.head].p;
        line.ring[line.head].p = NULL;
        line.head = (line.head + 1u) & (FW_LINK_DELAY_SLOTS - 1u);
        line.count--;
        deliver(p);
    }
}

uint64_t link_delay_next_deadline_us(void)
{
    if (line.count == 0) {
        return UINT64_MAX;
    }
    return line.delay_ms == 0 ? 0 : line.ring[line.head].due_us;
}

bool link_delay_set_ms(uint32_t ms)
{
    if (ms > FW_LINK_DELAY_MAX_MS) {
        return false;
    }
    line.delay_ms = ms;
    if (ms == 0) {
        link_delay_poll(fw_platform_time_us());
    }
    return true;
}

static void cmd_linkdelay(int argc, char **argv)
{
    uint32_t ms = 0;
    if (argc > 2 || (argc == 2 && !fw_parse_u32(argv[1], 0, FW_LINK_DELAY_MAX_MS, &ms))) {
        fw_err("linkdelay", "usage: linkdelay [MS] (0-%u)", (unsigned)FW_LINK_DELAY_MAX_MS);
        return;
    }
    if (argc == 2) {
        (void)link_delay_set_ms(ms);
        line.max_held = line.count;
        line.delayed = 0;
        line.dropped = 0;
    }
    fw_printf("RESULT linkdelay delay_ms=%" PRIu32 " held=%u max_held=%u delayed=%" PRIu32 " dropped=%" PRIu32 "\r\n",
              line.delay_ms, line.count, line.max_held, line.delayed, line.dropped);
}

static const struct fw_cmd link_delay_commands[] = {
    {"linkdelay", "[MS]", "hold every received frame MS ms before the stack sees it (0: off); no MS: show", cmd_linkdelay},
};

static const struct fw_module link_delay_module = {link_delay_commands, sizeof link_delay_commands / sizeof link_delay_commands[0], link_delay_poll, link_delay_next_deadline_us};

bool link_delay_install(struct netif *netif)
{
    if (line.netif != NULL || netif == NULL || netif->input == NULL) {
        return false;
    }
    if (!fw_app_add_module(&link_delay_module)) {
        return false;
    }
    memset(&line, 0, sizeof line);
    line.netif = netif;
    line.input = netif->input;
    netif->input = delayed_input;
    return true;
}
