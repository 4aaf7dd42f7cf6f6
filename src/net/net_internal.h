/*
 * net_internal.h - what net.c (the factory and the analytic backend) and flow_net.c (the flow
 * backend behind orr_net) share. Not a public header.
 */
#ifndef ORRERY_NET_INTERNAL_H
#define ORRERY_NET_INTERNAL_H

#include "orrery/net.h"

/* d with nodes and per_node filled from the members (ascending global ranks) where d left them
 * 0. */
orr_coll_desc orr_net_coll_shape(const orr_net *n, const orr_coll_desc *d, const uint32_t *members);
/* Makes n (kind ORR_NET_FLOW, engine and hardware set) the flow backend for cfg. */
int orr_flow_net_init(orr_net *n, const orr_net_config *cfg, orr_err *err);

#endif
