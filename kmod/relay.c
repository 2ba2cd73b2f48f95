// SPDX-License-Identifier: GPL-2.0
/*
 * The relay: a guest's pbtrace.ko connects to its host's endpoint and
 * introduces itself (docs/relay-protocol.md). Loaded with
 * relay=vsock:CID:PORT, one kthread connects, sends HELLO, waits for
 * WELCOME, then pings the host every ping period; on any error it closes
 * the socket and connects again with exponential backoff.
 *
 * relay=tcp:ADDR:PORT does the same over TCP, after the shared-key
 * handshake (relay_key): the relay checks the host's proof in WELCOME
 * before it sends its own in AUTH.
 *
 * Not done yet (issue 5): acting on CONTROL (start/stop/flush of a guest
 * session) and streaming its chunks.
 */
#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/utsname.h>
#include <linux/mm.h>
#include <linux/timekeeping.h>
#include <linux/inet.h>
#include <linux/random.h>
#include <crypto/hash.h>
#include <crypto/algapi.h>
#include <net/sock.h>

#include "relay.h"
#include "core/frame.h"

static char *relay;
module_param(relay, charp, 0444);
MODULE_PARM_DESC(relay, "stream to a host endpoint: vsock:CID:PORT or tcp:ADDR:PORT");
static char *relay_name;
module_param(relay_name, charp, 0444);
MODULE_PARM_DESC(relay_name, "machine name sent to the host (default: utsname sysname)");
static char *relay_hint;
module_param(relay_hint, charp, 0444);
MODULE_PARM_DESC(relay_hint, "machine-id hint, 32 hex digits (default: from utsname and boot time)");

/* Shared by relay and endpoint; perm 0: never shown in sysfs. */
static char *relay_key;
module_param(relay_key, charp, 0);
MODULE_PARM_DESC(relay_key, "TCP shared key, 32 to 128 hex digits (relay and endpoint)");

#define KEY_MAX		64
#define LABEL_HOST	"pbtrace-relay-v1 host"
#define LABEL_RELAY	"pbtrace-relay-v1 relay"
#define HELLO_RAW_MAX	400		/* largest HELLO payload is 389 */

static u8 key[KEY_MAX];
static size_t key_len;

#define BACKOFF_MIN_MS	100
#define BACKOFF_MAX_MS	30000
#define HOST_TIMEOUT_MS	10000		/* no WELCOME or PONG: host is dead */
#define RX_SIZE		(FRAME_HDR_LEN + 16 + FRAME_EVENTS_MAX)

/* What relay_stats shows; written by the relay thread only. */
static struct {
	u32 connects, welcomes, pongs, controls, errors;
	u32 machine_id;
	u64 rtt_ns;			/* last ping round trip */
	int last_error;			/* -errno or -FRAME_E_x */
	bool connected;
} rst;

static struct task_struct *relay_task;
static struct pbt_addr relay_addr;
static u8 relay_hint_bytes[FRAME_HINT_LEN];

/* ---- helpers shared with endpoint.c ---- */

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
	/* Blocking calls wake up every second to check for module exit. */
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

int pbt_send_all(struct socket *sock, const void *buf, size_t len)
{
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
	struct kvec vec;
	int ret;

	while (len) {
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

/* ---- TCP's shared key ---- */

static int key_parse(void)
{
	size_t n = relay_key ? strlen(relay_key) : 0;

	if (!n)
		return 0;
	if (n % 2 || n < 32 || n > 2 * KEY_MAX ||
	    hex2bin(key, relay_key, n / 2)) {
		pr_err("pbtrace: relay_key must be 32 to %d hex digits\n",
		       2 * KEY_MAX);
		return -EINVAL;
	}
	key_len = n / 2;
	return 0;
}

bool pbt_have_key(void)
{
	return key_len > 0;
}

int pbt_key_init(void)
{
	return key_parse();
}

/* HMAC-SHA256(key, parts...) into @mac. */
static int hmac_sha256(const struct kvec *parts, int n, u8 *mac)
{
	struct crypto_shash *tfm;
	int i, ret;

	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	ret = crypto_shash_setkey(tfm, key, key_len);
	if (!ret) {
		SHASH_DESC_ON_STACK(desc, tfm);

		desc->tfm = tfm;
		ret = crypto_shash_init(desc);
		for (i = 0; !ret && i < n; i++)
			ret = crypto_shash_update(desc, parts[i].iov_base,
						  parts[i].iov_len);
		if (!ret)
			ret = crypto_shash_final(desc, mac);
		shash_desc_zero(desc);
	}
	crypto_free_shash(tfm);
	return ret;
}

int pbt_proof_host(const u8 *relay_nonce, const u8 *host_nonce, u8 *mac)
{
	struct kvec parts[] = {
		{ LABEL_HOST, sizeof(LABEL_HOST) - 1 },
		{ (void *)relay_nonce, FRAME_NONCE_LEN },
		{ (void *)host_nonce, FRAME_NONCE_LEN },
	};

	return hmac_sha256(parts, ARRAY_SIZE(parts), mac);
}

int pbt_proof_relay(const u8 *host_nonce, const u8 *relay_nonce,
		    const u8 *hello, size_t hello_len, u8 *mac)
{
	struct kvec parts[] = {
		{ LABEL_RELAY, sizeof(LABEL_RELAY) - 1 },
		{ (void *)host_nonce, FRAME_NONCE_LEN },
		{ (void *)relay_nonce, FRAME_NONCE_LEN },
		{ (void *)hello, hello_len },
	};

	return hmac_sha256(parts, ARRAY_SIZE(parts), mac);
}

/* ---- identity ---- */

static u64 fnv1a(u64 h, const char *s)
{
	while (*s) {
		h ^= (u8)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * The hint must stay the same across reconnects within one boot, so the
 * host gives the guest the same machine id again: a hash of the utsname
 * and the boot time to the second.
 */
static int relay_make_hint(void)
{
	struct new_utsname *u = init_utsname();
	u64 boot = ktime_get_real_seconds() - ktime_get_boottime_seconds();
	u64 h = 0xcbf29ce484222325ULL;

	if (relay_hint) {
		if (strlen(relay_hint) != 2 * FRAME_HINT_LEN ||
		    hex2bin(relay_hint_bytes, relay_hint, FRAME_HINT_LEN)) {
			pr_err("pbtrace: relay_hint must be %d hex digits\n",
			       2 * FRAME_HINT_LEN);
			return -EINVAL;
		}
		return 0;
	}
	h = fnv1a(fnv1a(fnv1a(h, u->nodename), u->release), u->version);
	memcpy(relay_hint_bytes, &h, 8);
	memcpy(relay_hint_bytes + 8, &boot, 8);
	return 0;
}

static struct frame_str fstr(const char *s)
{
	struct frame_str r = { s, min_t(u32, strlen(s), FRAME_STR_MAX) };

	return r;
}

static void relay_hello(struct frame *f)
{
	struct new_utsname *u = init_utsname();

	memset(f, 0, sizeof(*f));
	f->type = FRAME_HELLO;
	memcpy(f->hello.hint, relay_hint_bytes, FRAME_HINT_LEN);
	f->hello.num_cpus = num_online_cpus();
	f->hello.ram_bytes = (u64)totalram_pages() << PAGE_SHIFT;
	f->hello.name = fstr(relay_name ? relay_name : u->sysname);
	f->hello.sysname = fstr(u->sysname);
	f->hello.release = fstr(u->release);
	f->hello.version = fstr(u->version);
	f->hello.machine = fstr(u->machine);
}

/* ---- one connection ---- */

struct relay_conn {
	struct socket *sock;
	struct frame_parser ps;
	u32 tx_seq;
	u32 ping_id;
	u32 ping_period_ms;
	unsigned long next_ping;	/* jiffies */
	unsigned long deadline;		/* jiffies: WELCOME or PONG by then */
	u64 ping_sent;			/* BOOTTIME of the outstanding PING */
	u32 prev_id;			/* last PONG, reported in the next PING */
	u64 prev_recv[FRAME_NR_CLOCKS];
	bool welcomed;			/* this connection got WELCOME */
	int bad;			/* FRAME_E_x the parser refused with */
	u8 nonce[FRAME_NONCE_LEN];	/* ours, in HELLO */
	u8 hello[HELLO_RAW_MAX];	/* HELLO payload, for AUTH */
	size_t hello_len;
	u8 *rx;
	size_t have;
	u8 tx[FRAME_HDR_LEN + 512];
};

static int relay_send(struct relay_conn *c, struct frame *f)
{
	size_t n;

	n = pbt_frame_out(&c->ps, &c->tx_seq, c->tx, sizeof(c->tx), f);
	if (!n)
		return -EINVAL;
	if (f->type == FRAME_HELLO) {
		c->hello_len = n - FRAME_HDR_LEN;
		memcpy(c->hello, c->tx + FRAME_HDR_LEN, c->hello_len);
	}
	return pbt_send_all(c->sock, c->tx, n);
}

static int relay_ping(struct relay_conn *c)
{
	struct frame f;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_PING;
	if (!++c->ping_id)
		c->ping_id = 1;
	f.ping.id = c->ping_id;
	f.ping.prev_id = c->prev_id;
	memcpy(f.ping.prev_recv, c->prev_recv, sizeof(c->prev_recv));
	pbt_clocks(f.ping.send);
	c->ping_sent = f.ping.send[FRAME_CLK_BOOTTIME];
	c->next_ping = jiffies + msecs_to_jiffies(c->ping_period_ms);
	c->deadline = jiffies + msecs_to_jiffies(HOST_TIMEOUT_MS);
	return relay_send(c, &f);
}

/*
 * TCP: the host proves it holds the key before we prove it, so a trace is
 * never streamed to an impostor.
 */
static int relay_auth(struct relay_conn *c, const struct frame_welcome *w)
{
	u8 mac[FRAME_MAC_LEN];
	struct frame f;
	int ret;

	ret = pbt_proof_host(c->nonce, w->nonce, mac);
	if (ret)
		return ret;
	if (crypto_memneq(mac, w->mac, FRAME_MAC_LEN)) {
		pr_info("pbtrace: relay: host %s failed the shared-key check\n",
			relay);
		return -EACCES;
	}
	memset(&f, 0, sizeof(f));
	f.type = FRAME_AUTH;
	ret = pbt_proof_relay(w->nonce, c->nonce, c->hello, c->hello_len,
			      f.auth.mac);
	if (ret)
		return ret;
	return relay_send(c, &f);
}

static int relay_handle(struct relay_conn *c, const struct frame *f)
{
	u64 now[FRAME_NR_CLOCKS];
	int ret;

	switch (f->type) {
	case FRAME_WELCOME:
		if (relay_addr.family == AF_INET) {
			ret = relay_auth(c, &f->welcome);
			if (ret)
				return ret;
		}
		rst.welcomes++;
		rst.machine_id = f->welcome.machine_id;
		rst.connected = true;
		c->welcomed = true;
		c->ping_period_ms = clamp_t(u32, f->welcome.ping_period_ms,
					    100, 60000);
		pr_info("pbtrace: relay: host %s took us as machine %u\n",
			relay, f->welcome.machine_id);
		return relay_ping(c);
	case FRAME_PONG:
		pbt_clocks(now);
		rst.pongs++;
		rst.rtt_ns = now[FRAME_CLK_BOOTTIME] - c->ping_sent;
		c->prev_id = f->pong.id;
		memcpy(c->prev_recv, now, sizeof(now));
		return 0;
	case FRAME_CONTROL:
		/* Guest sessions started by the host: not implemented yet. */
		rst.controls++;
		return 0;
	case FRAME_GOODBYE:
		return -ECONNRESET;
	}
	return -EPROTO;
}

/* Parse every whole frame in c->rx; keep the rest for the next read. */
static int relay_parse(struct relay_conn *c)
{
	struct frame f;
	int n, ret;

	for (;;) {
		n = frame_parse(&c->ps, c->rx, c->have, &f);
		if (n < 0) {
			c->bad = -n;
			return -EBADMSG;
		}
		if (n == 0)
			return 0;
		ret = relay_handle(c, &f);
		if (ret)
			return ret;
		c->have -= n;
		memmove(c->rx, c->rx + n, c->have);
	}
}

static int relay_run(struct relay_conn *c)
{
	struct msghdr msg = {};
	struct frame f;
	struct kvec vec;
	int ret;

	frame_parser_init(&c->ps, FRAME_ROLE_RELAY, false);
	c->deadline = jiffies + msecs_to_jiffies(HOST_TIMEOUT_MS);
	relay_hello(&f);
	memset(c->nonce, 0, sizeof(c->nonce));
	if (relay_addr.family == AF_INET)
		get_random_bytes(c->nonce, sizeof(c->nonce));
	memcpy(f.hello.nonce, c->nonce, sizeof(c->nonce));
	ret = relay_send(c, &f);
	while (!ret && !kthread_should_stop()) {
		if (c->welcomed && !c->ps.ping_out &&
		    time_after_eq(jiffies, c->next_ping)) {
			ret = relay_ping(c);
			if (ret)
				break;
		}
		vec.iov_base = c->rx + c->have;
		vec.iov_len = RX_SIZE - c->have;
		ret = kernel_recvmsg(c->sock, &msg, &vec, 1, vec.iov_len, 0);
		if (ret == -EAGAIN || ret == -EINTR) {
			/* A host that owes us WELCOME or PONG too long is dead. */
			if ((!c->welcomed || c->ps.ping_out) &&
			    time_after(jiffies, c->deadline))
				ret = -ETIMEDOUT;
			else
				ret = 0;
			continue;
		}
		if (ret <= 0)
			return ret ? ret : -ECONNRESET;
		c->have += ret;
		ret = relay_parse(c);
	}
	if (c->bad) {
		pr_info("pbtrace: relay: host %s: %s\n", relay,
			frame_strerror(c->bad));
		memset(&f, 0, sizeof(f));
		f.type = FRAME_GOODBYE;
		f.goodbye.reason = c->bad;
		relay_send(c, &f);
	}
	return ret;
}

static int relay_connect_once(struct relay_conn *c)
{
	int ret;

	c->welcomed = false;
	ret = pbt_sock_open(&relay_addr, &c->sock);
	if (ret)
		return ret;
	ret = kernel_connect(c->sock, (struct sockaddr *)&relay_addr.vm,
			     relay_addr.len, 0);
	if (!ret) {
		rst.connects++;
		c->have = 0;
		c->tx_seq = 0;
		c->prev_id = 0;
		c->bad = 0;
		ret = relay_run(c);
		rst.connected = false;
	}
	sock_release(c->sock);
	c->sock = NULL;
	return ret;
}

static int relay_thread(void *arg)
{
	struct relay_conn *c = arg;
	unsigned int backoff = BACKOFF_MIN_MS;
	int ret;

	while (!kthread_should_stop()) {
		ret = relay_connect_once(c);
		if (kthread_should_stop())
			break;
		rst.errors++;
		rst.last_error = ret;
		/* A connection that got as far as WELCOME was a good host. */
		if (c->welcomed) {
			pr_info("pbtrace: relay: lost host %s (%d), reconnecting\n",
				relay, ret);
			backoff = BACKOFF_MIN_MS;
		}
		schedule_timeout_interruptible(msecs_to_jiffies(backoff));
		backoff = min(backoff * 2, BACKOFF_MAX_MS);
	}
	return 0;
}

static int relay_stats_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf,
			  "connected %d\nmachine_id %u\nconnects %u\nwelcomes %u\npongs %u\nrtt_ns %llu\ncontrols %u\nerrors %u\nlast_error %d\n",
			  rst.connected, rst.machine_id, rst.connects,
			  rst.welcomes, rst.pongs, rst.rtt_ns, rst.controls,
			  rst.errors, rst.last_error);
}

static const struct kernel_param_ops relay_stats_ops = {
	.get = relay_stats_get,
};
module_param_cb(relay_stats, &relay_stats_ops, NULL, 0444);
MODULE_PARM_DESC(relay_stats, "relay state and counters (read only)");

static struct relay_conn *relay_conn;

int pbt_relay_init(void)
{
	int ret;

	if (!relay || !*relay)
		return 0;
	ret = pbt_key_init();
	if (ret)
		return ret;
	if (pbt_addr_parse(relay, &relay_addr) ||
	    (relay_addr.family == AF_VSOCK &&
	     relay_addr.vm.svm_cid == VMADDR_CID_ANY)) {
		pr_err("pbtrace: relay=%s: want vsock:CID:PORT or tcp:ADDR:PORT\n",
		       relay);
		return -EINVAL;
	}
	if (relay_addr.family == AF_INET && !pbt_have_key()) {
		pr_err("pbtrace: relay=%s: TCP needs relay_key=HEX, the key the host's endpoint has\n",
		       relay);
		return -EINVAL;
	}
	ret = relay_make_hint();
	if (ret)
		return ret;
	relay_conn = kzalloc(sizeof(*relay_conn), GFP_KERNEL);
	if (!relay_conn)
		return -ENOMEM;
	relay_conn->rx = kmalloc(RX_SIZE, GFP_KERNEL);
	if (!relay_conn->rx) {
		kfree(relay_conn);
		return -ENOMEM;
	}
	relay_task = kthread_run(relay_thread, relay_conn, "pbtrace-relay");
	if (IS_ERR(relay_task)) {
		ret = PTR_ERR(relay_task);
		relay_task = NULL;
		kfree(relay_conn->rx);
		kfree(relay_conn);
		return ret;
	}
	return 0;
}

void pbt_relay_exit(void)
{
	if (!relay_task)
		return;
	kthread_stop(relay_task);
	relay_task = NULL;
	kfree(relay_conn->rx);
	kfree(relay_conn);
}
