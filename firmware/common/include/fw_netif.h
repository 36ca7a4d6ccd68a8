/* fw_netif.h - the Ethernet netif set-up every port's driver shares. */
#ifndef FW_NETIF_H
#define FW_NETIF_H

#include <stdint.h>

#include "lwip/netif.h"

/** Fills in an Ethernet netif: ARP output, the driver's link output, MTU 1500, MAC, flags. */
void fw_netif_ethernet_setup(struct netif *netif, char n0, char n1, netif_linkoutput_fn linkoutput,
                             const uint8_t mac[6]);

#endif /* FW_NETIF_H */
