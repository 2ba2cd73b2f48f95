/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What relay.c (a guest streaming to its host) and endpoint.c (the host
 * accepting guests) share: addresses and whole-buffer socket I/O.
 * The wire protocol itself is core/frame.[ch].
 */
#ifndef _PBTRACE_RELAY_H
#define _PBTRACE_RELAY_H

#include <linux/types.h>
#include <linux/socket.h>
#include <linux/in.h>
#include <linux/vm_sockets.h>

struct socket;

struct pbt_addr {
	int family;				/* AF_VSOCK or AF_INET */
	int len;
	union {
		struct sockaddr_vm vm;
		struct sockaddr_in in;
	};
};

/*
 * "vsock:CID:PORT", "vsock:PORT" (CID any: an endpoint) or
 * "tcp:ADDR:PORT". Returns 0 or -EINVAL.
 */
int pbt_addr_parse(const char *s, struct pbt_addr *a);
int pbt_sock_open(const struct pbt_addr *a, struct socket **res);
int pbt_send_all(struct socket *sock, const void *buf, size_t len);
void pbt_clocks(u64 *c);			/* FRAME_NR_CLOCKS values */

int pbt_relay_init(void);
void pbt_relay_exit(void);
int pbt_endpoint_init(void);
void pbt_endpoint_exit(void);

#endif /* _PBTRACE_RELAY_H */
