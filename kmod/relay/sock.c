// SPDX-License-Identifier: GPL-2.0
/*
 * What the relay and the endpoint share on the wire: addresses, sockets,
 * numbered frames, whole sends, the clocks a ping carries.
 */
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/inet.h>
#include <linux/timekeeping.h>
#include <net/sock.h>

#include "relay.h"
#include "core/frame.h"

int pbt_addr_parse(const char *s, struct pbt_addr *a)
{
	unsigned int cid, port;
	const char *rest;
	u8 ip4[4];
	char end;

	memset(a, 0, sizeof(*a));
	if (sscanf(s, "vsock:%u:%u%c", &cid, &port, &end) != 2) {
		cid = VMADDR_CID_ANY;
		if (sscanf(s, "vsock:%u%c", &port, &end) != 1)
			port = VMADDR_PORT_ANY;
	}
	if (port != VMADDR_PORT_ANY) {
		a->family = AF_VSOCK;
		a->len = sizeof(a->vm);
		a->vm.svm_family = AF_VSOCK;
		a->vm.svm_cid = cid;
		a->vm.svm_port = port;
		return 0;
	}
	/* "tcp:PORT" listens on loopback only: a key alone is no firewall. */
	if (sscanf(s, "tcp:%u%c", &port, &end) == 1) {
		ip4[0] = 127;
		ip4[1] = ip4[2] = 0;
		ip4[3] = 1;
	} else if (strncmp(s, "tcp:", 4) ||
		   !in4_pton(s + 4, -1, ip4, ':', &rest) ||
		   sscanf(rest, ":%u%c", &port, &end) != 1) {
		return -EINVAL;
	}
	if (port <= 65535) {
		a->family = AF_INET;
		a->len = sizeof(a->in);
		a->in.sin_family = AF_INET;
		memcpy(&a->in.sin_addr.s_addr, ip4, 4);
		a->in.sin_port = htons(port);
		return 0;
	}
	return -EINVAL;
}

int pbt_sock_open(const struct pbt_addr *a, struct socket **res)
{
	int ret;

	ret = sock_create_kern(&init_net, a->family, SOCK_STREAM, 0, res);
	if (ret)
		return ret;
	/* Blocking calls wake up every second: deadlines, module exit. */
	(*res)->sk->sk_rcvtimeo = HZ;
	(*res)->sk->sk_sndtimeo = HZ;
	return 0;
}

size_t pbt_frame_out(struct frame_parser *ps, u32 *seq, u8 *tx, size_t size,
		     struct frame *f)
{
	size_t n;

	f->seq = *seq;
	n = frame_encode(tx, size, f);
	if (!n)
		return 0;
	(*seq)++;
	frame_sent(ps, f);
	return n;
}

/*
 * All of @buf, or an error. Each kernel_sendmsg() waits at most the
 * socket's sk_sndtimeo, but a peer that grants a byte of credit at a time
 * would keep this loop going for ever: so PBT_SEND_SECS in all, and not a
 * round more once the (kthread) caller is told to stop.
 */
int pbt_send_all(struct socket *sock, const void *buf, size_t len)
{
	unsigned long end = jiffies + PBT_SEND_SECS * HZ;
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
	struct kvec vec;
	int ret;

	while (len) {
		if (kthread_should_stop())
			return -ESHUTDOWN;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		vec.iov_base = (void *)buf;
		vec.iov_len = len;
		ret = kernel_sendmsg(sock, &msg, &vec, 1, len);
		if (ret <= 0)
			return ret ? ret : -EPIPE;
		buf += ret;
		len -= ret;
	}
	return 0;
}

void pbt_clocks(u64 *c)
{
	c[FRAME_CLK_BOOTTIME] = ktime_get_boottime_ns();
	c[FRAME_CLK_MONOTONIC] = ktime_get_ns();
	c[FRAME_CLK_REALTIME] = ktime_get_real_ns();
}
