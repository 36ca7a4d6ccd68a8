#include "fw_netif.h"

#include <string.h>

#include "fw_tcp_track.h"
#include "lwip/etharp.h"

void fw_netif_ethernet_setup(struct netif *netif, char n0, char n1, netif_linkoutput_fn linkoutput,
                             const uint8_t mac[6])
{
    netif->name[0] = n0;
    netif->name[1] = n1;
    netif->output = fw_tcp_track_output; /* etharp_output, its TCP segments counted */
    netif->linkoutput = linkoutput;
    netif->mtu = 1500;
    netif->hwaddr_len = 6;
    memcpy(netif->hwaddr, mac, 6);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
}
