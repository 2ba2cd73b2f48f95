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
 * CONTROL start makes the relay record a local session for the host
 * (named "relay", marked PBTRACE_A_SESSION_RELAY so traced leaves it
 * alone): one buffer of the size the host asked for, with the events this
 * kernel knows by name. The same thread then sends each sealed chunk as a
 * CHUNK frame, flushes about every second, and on CONTROL stop sends
 * what is left and a STOPPED frame with the session's counters. A lost
 * connection or module unload ends the local session with it.
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
#include <linux/fs.h>
#include <crypto/hash.h>
#include <crypto/sha2.h>
#include <crypto/algapi.h>
#include <net/sock.h>

#include "pbtrace.h"
#include "compat.h"
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
MODULE_PARM_DESC(relay_hint, "machine-id hint, 32 hex digits (default: the boot_id)");

/* Shared by relay and endpoint; perm 0: never shown in sysfs. */
static char *relay_key;
module_param(relay_key, charp, 0);
MODULE_PARM_DESC(relay_key, "TCP shared key, 32 to 128 hex digits (relay and endpoint)");

#define LABEL_HOST	"pbtrace-relay-v1 host"
#define LABEL_RELAY	"pbtrace-relay-v1 relay"
#define LABEL_R2H	"pbtrace-relay-v2 relay->host"
#define LABEL_H2R	"pbtrace-relay-v2 host->relay"
#define HELLO_RAW_MAX	400		/* largest HELLO payload is 389 */

static struct pbt_key key;

#define BACKOFF_MIN_MS	100
#define BACKOFF_MAX_MS	30000
#define HOST_TIMEOUT_MS	10000		/* no WELCOME or PONG: host is dead */
/*
 * Ping rounds back to back when a session starts, before its first chunk:
 * the host places the session's events by the window all of them allow
 * (one round under load can take a second), so it needs a good few.
 */
#define PING_BURST	16
#define RX_SIZE		(FRAME_HDR_LEN + 16 + FRAME_EVENTS_MAX + FRAME_TAG_LEN)
/*
 * While a session records, the receive wait is short so sealed chunks go
 * out promptly; a busy drain hands back to the receive loop every few
 * chunks so CONTROL and PONG are never starved.
 */
#define RX_BUSY_TIMEO	(HZ / 20)
#define DRAIN_BUDGET	8
#define FLUSH_PERIOD	HZ
#define EVENT_NAME_MAX	64

/* What relay_stats shows; written by the relay thread only. */
static struct {
	u32 connects, welcomes, pongs, controls, errors;
	u32 machine_id;
	u32 session, local_session;	/* host's id and ours, 0: none */
	u32 sessions, start_failed, stopped_sent, events_skipped;
	u64 chunks_sent, bytes_sent;
	u64 tag_ns;			/* tagging CHUNKs (TCP), in all */
	u32 bad_tags;			/* host frames with a wrong tag */
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

/* ---- TCP's shared key ---- */

/* @n hex digits at @hex (not NUL-terminated) into @k; 0 or -EINVAL. */
int pbt_key_parse(struct pbt_key *k, const char *hex, size_t n)
{
	if (n % 2 || n < 32 || n > 2 * PBT_KEY_MAX ||
	    hex2bin(k->b, hex, n / 2))
		return -EINVAL;
	k->len = n / 2;
	return 0;
}

static int key_parse(void)
{
	size_t n = relay_key ? strlen(relay_key) : 0;

	if (!n)
		return 0;
	if (pbt_key_parse(&key, relay_key, n)) {
		pr_err("pbtrace: relay_key must be 32 to %d hex digits\n",
		       2 * PBT_KEY_MAX);
		return -EINVAL;
	}
	return 0;
}

const struct pbt_key *pbt_shared_key(void)
{
	return key.len ? &key : NULL;
}

bool pbt_have_key(void)
{
	return key.len > 0;
}

int pbt_key_init(void)
{
	return key_parse();
}

/* HMAC-SHA256(key, parts...) into @mac. */
static int hmac_sha256(const struct pbt_key *k, const struct kvec *parts,
		       int n, u8 *mac)
{
	struct crypto_shash *tfm;
	int i, ret;

	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	ret = crypto_shash_setkey(tfm, k->b, k->len);
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

int pbt_proof_host(const struct pbt_key *k, const u8 *relay_nonce,
		   const u8 *host_nonce, u8 *mac)
{
	struct kvec parts[] = {
		{ LABEL_HOST, sizeof(LABEL_HOST) - 1 },
		{ (void *)relay_nonce, FRAME_NONCE_LEN },
		{ (void *)host_nonce, FRAME_NONCE_LEN },
	};

	return hmac_sha256(k, parts, ARRAY_SIZE(parts), mac);
}

int pbt_proof_relay(const struct pbt_key *k, const u8 *host_nonce,
		    const u8 *relay_nonce, const u8 *hello, size_t hello_len,
		    u8 *mac)
{
	struct kvec parts[] = {
		{ LABEL_RELAY, sizeof(LABEL_RELAY) - 1 },
		{ (void *)host_nonce, FRAME_NONCE_LEN },
		{ (void *)relay_nonce, FRAME_NONCE_LEN },
		{ (void *)hello, hello_len },
	};

	return hmac_sha256(k, parts, ARRAY_SIZE(parts), mac);
}

/* ---- TCP: tags on every frame after AUTH ---- */

/* hmac(sha256) keyed with HMAC-SHA256(key, @label || nonces || proof). */
static struct crypto_shash *tag_tfm(const struct pbt_key *k,
				    const char *label, const u8 *host_nonce,
				    const u8 *relay_nonce, const u8 *proof)
{
	struct kvec parts[] = {
		{ (void *)label, strlen(label) },
		{ (void *)host_nonce, FRAME_NONCE_LEN },
		{ (void *)relay_nonce, FRAME_NONCE_LEN },
		{ (void *)proof, FRAME_MAC_LEN },
	};
	u8 dk[SHA256_DIGEST_SIZE];
	struct crypto_shash *tfm;
	int ret;

	ret = hmac_sha256(k, parts, ARRAY_SIZE(parts), dk);
	if (ret)
		return ERR_PTR(ret);
	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (!IS_ERR(tfm)) {
		ret = crypto_shash_setkey(tfm, dk, sizeof(dk));
		if (ret) {
			crypto_free_shash(tfm);
			tfm = ERR_PTR(ret);
		}
	}
	memzero_explicit(dk, sizeof(dk));
	return tfm;
}

int pbt_tags_init(struct pbt_tags *t, const struct pbt_key *k,
		  const u8 *host_nonce, const u8 *relay_nonce,
		  const u8 *relay_proof, bool host)
{
	struct crypto_shash *r2h, *h2r;

	r2h = tag_tfm(k, LABEL_R2H, host_nonce, relay_nonce, relay_proof);
	if (IS_ERR(r2h))
		return PTR_ERR(r2h);
	h2r = tag_tfm(k, LABEL_H2R, host_nonce, relay_nonce, relay_proof);
	if (IS_ERR(h2r)) {
		crypto_free_shash(r2h);
		return PTR_ERR(h2r);
	}
	t->tx = host ? h2r : r2h;
	t->rx = host ? r2h : h2r;
	return 0;
}

void pbt_tags_free(struct pbt_tags *t)
{
	crypto_free_shash(t->tx);	/* NULL-safe */
	crypto_free_shash(t->rx);
	t->tx = NULL;
	t->rx = NULL;
}

int pbt_tag(struct crypto_shash *tfm, const struct kvec *vec, int n, u8 *tag)
{
	u8 mac[SHA256_DIGEST_SIZE];
	int i, ret;
	SHASH_DESC_ON_STACK(desc, tfm);

	desc->tfm = tfm;
	ret = crypto_shash_init(desc);
	for (i = 0; !ret && i < n; i++)
		ret = crypto_shash_update(desc, vec[i].iov_base,
					  vec[i].iov_len);
	if (!ret)
		ret = crypto_shash_final(desc, mac);
	shash_desc_zero(desc);
	memcpy(tag, mac, FRAME_TAG_LEN);
	memzero_explicit(mac, sizeof(mac));
	return ret;
}

size_t pbt_tag_frame(struct crypto_shash *tfm, u8 *tx, size_t n)
{
	struct kvec v = { tx, n };

	frame_set_tagged(tx);
	return pbt_tag(tfm, &v, 1, tx + n) ? 0 : n + FRAME_TAG_LEN;
}

bool pbt_tag_ok(struct crypto_shash *tfm, const u8 *buf, size_t len)
{
	struct kvec v = { (void *)buf, len - FRAME_TAG_LEN };
	u8 tag[FRAME_TAG_LEN];

	return !pbt_tag(tfm, &v, 1, tag) &&
	       !crypto_memneq(tag, buf + len - FRAME_TAG_LEN, FRAME_TAG_LEN);
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
 * The kernel's random boot id, as userspace reads it: the 36-character
 * UUID of /proc/sys/kernel/random/boot_id (random.c makes it on the first
 * read and keeps it), its 32 hex digits in order.
 */
static int relay_boot_id(u8 *hint)
{
	char text[40], hex[2 * FRAME_HINT_LEN];
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	int i, j;

	f = filp_open("/proc/sys/kernel/random/boot_id", O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, text, sizeof(text) - 1, &pos);
	filp_close(f, NULL);
	if (n < 36)
		return n < 0 ? n : -EIO;
	for (i = 0, j = 0; i < 36 && j < 2 * FRAME_HINT_LEN; i++)
		if (text[i] != '-')
			hex[j++] = text[i];
	if (j != 2 * FRAME_HINT_LEN || hex2bin(hint, hex, FRAME_HINT_LEN))
		return -EIO;
	return 0;
}

/*
 * The hint must stay the same across reconnects within one boot, so the
 * host gives the guest the same machine id again: the boot_id, else (no
 * procfs) a hash of the utsname and the boot time to the second.
 */
static int relay_make_hint(void)
{
	struct new_utsname *u = init_utsname();
	u64 boot = ktime_get_real_seconds() - ktime_get_boottime_seconds();
	u64 h = 0xcbf29ce484222325ULL;
	int ret;

	if (relay_hint) {
		if (strlen(relay_hint) != 2 * FRAME_HINT_LEN ||
		    hex2bin(relay_hint_bytes, relay_hint, FRAME_HINT_LEN)) {
			pr_err("pbtrace: relay_hint must be %d hex digits\n",
			       2 * FRAME_HINT_LEN);
			return -EINVAL;
		}
		return 0;
	}
	ret = relay_boot_id(relay_hint_bytes);
	if (!ret)
		return 0;
	pr_info("pbtrace: relay: cannot read the boot_id (%d): the hint is a hash of utsname and boot time\n",
		ret);
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
	/* CHUNK's cpu is checked against this: the highest id, not a count. */
	f->hello.num_cpus = nr_cpu_ids;
	f->hello.ram_bytes = (u64)totalram_pages() << PAGE_SHIFT;
	f->hello.name = fstr(relay_name ? relay_name : u->sysname);
	f->hello.sysname = fstr(u->sysname);
	f->hello.release = fstr(u->release);
	f->hello.version = fstr(u->version);
	f->hello.machine = fstr(u->machine);
}

/* ---- one connection ---- */

/* The local session recording for the host; s is NULL when none runs. */
struct relay_sess {
	struct pbt_session *s;		/* our reference */
	struct pbt_buffer *b;		/* s->buffers[0] */
	u32 id;				/* local session id */
	u32 host_id;			/* the host's, from CONTROL start */
	u32 *cpu_seq;			/* next CHUNK sequence, per CPU */
	u64 chunks;			/* CHUNK frames sent */
	unsigned long next_flush;	/* jiffies */
};

struct relay_conn {
	struct socket *sock;
	struct frame_parser ps;
	u32 tx_seq;
	u32 ping_id;
	u32 ping_period_ms;
	unsigned long next_ping;	/* jiffies */
	u32 burst;			/* pings still to send at once */
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
	struct relay_sess sess;
	u32 failed_id;			/* host session we could not start */
	struct pbt_tags tags;		/* TCP, after AUTH */
	u8 tx[FRAME_HDR_LEN + 512 + FRAME_TAG_LEN];
};

/*
 * Send all of @vec. The socket's 1 s timeout only lets us notice module
 * unload: a host slow to read gets HOST_TIMEOUT_MS before we give up, as
 * for a missing PONG. A frame is never cut short while the link lives.
 */
static int relay_sendv(struct relay_conn *c, struct kvec *vec, size_t nr,
		       size_t len)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(HOST_TIMEOUT_MS);
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
	size_t done;
	int ret;

	while (len) {
		ret = kernel_sendmsg(c->sock, &msg, vec, nr, len);
		if (ret == -EAGAIN || ret == -EINTR) {
			if (kthread_should_stop())
				return -EINTR;
			if (time_after(jiffies, deadline))
				return -ETIMEDOUT;
			continue;
		}
		if (ret <= 0)
			return ret ? ret : -EPIPE;
		len -= ret;
		for (done = ret; nr && done >= vec->iov_len; vec++, nr--)
			done -= vec->iov_len;
		if (nr) {
			vec->iov_base += done;
			vec->iov_len -= done;
		}
	}
	return 0;
}

/*
 * Without a session the thread sleeps in recvmsg() between frames; it must
 * wake for the next ping, whatever period the host asked for.
 */
static long relay_idle_timeo(const struct relay_conn *c)
{
	long t = msecs_to_jiffies(c->ping_period_ms);

	return clamp_t(long, t, 1, HZ);
}

static int relay_send(struct relay_conn *c, struct frame *f)
{
	struct kvec vec;
	size_t n;

	n = pbt_frame_out(&c->ps, &c->tx_seq, c->tx,
			  sizeof(c->tx) - FRAME_TAG_LEN, f);
	if (!n)
		return -EINVAL;
	if (f->type == FRAME_HELLO) {
		c->hello_len = n - FRAME_HDR_LEN;
		memcpy(c->hello, c->tx + FRAME_HDR_LEN, c->hello_len);
	}
	if (c->tags.tx) {
		n = pbt_tag_frame(c->tags.tx, c->tx, n);
		if (!n)
			return -EINVAL;
	}
	vec.iov_base = c->tx;
	vec.iov_len = n;
	return relay_sendv(c, &vec, 1, n);
}

/* ---- the session the host asked for ---- */

/* "group/name,group/name" (charset checked by the parser) to event bits. */
static u64 relay_events(const struct frame_str *list)
{
	const char *p = list->p, *end = list->p + list->len, *comma;
	char name[EVENT_NAME_MAX];
	u64 events = 0;
	size_t n;
	int id;

	for (; p < end; p += n + 1) {
		comma = memchr(p, ',', end - p);
		n = (comma ? comma : end) - p;
		if (!n)
			continue;
		id = -ENOENT;
		if (n < sizeof(name)) {
			memcpy(name, p, n);
			name[n] = '\0';
			id = pbt_event_lookup(name);
		}
		if (id >= 0 && pbt_event_available(id)) {
			events |= BIT_ULL(id);
			continue;
		}
		rst.events_skipped++;
		pr_info_ratelimited("pbtrace: relay: host asked for event '%.*s', which this kernel cannot trace: skipped\n",
				    (int)min_t(size_t, n, EVENT_NAME_MAX), p);
	}
	return events;
}

/*
 * One buffer as the host asked: its per-CPU size (at least two chunks,
 * at most a sixteenth of our RAM in all) and chunk size.
 */
static int relay_params(const struct frame_control *ctl,
			struct pbt_session_params *p)
{
	struct pbt_buffer_params *bp = &p->buffers[0];
	u32 chunk_kb = ctl->chunk_kb ? ctl->chunk_kb : 16;
	u64 ram_kb = ((u64)totalram_pages() << PAGE_SHIFT) / 1024;
	u64 per_cpu_kb = max_t(u64, ctl->size_kb, 2 * chunk_kb);
	u64 max_kb = min_t(u64, ram_kb / 16, 1024 * 1024);

	if (chunk_kb < 4 || chunk_kb > 256 || !is_power_of_2(chunk_kb)) {
		pr_info("pbtrace: relay: host asked for %u KiB chunks: want 4..256, a power of two\n",
			ctl->chunk_kb);
		return -EINVAL;
	}
	per_cpu_kb = min_t(u64, per_cpu_kb, max_kb / num_possible_cpus());
	per_cpu_kb = max_t(u64, per_cpu_kb, 2 * chunk_kb);
	strscpy(p->name, "relay", sizeof(p->name));
	p->relay = true;
	p->nr_buffers = 1;
	bp->size_kb = per_cpu_kb * num_possible_cpus();
	bp->chunk_kb = chunk_kb;
	bp->fill_policy = PBTRACE_FILL_RING_BUFFER;
	bp->events = relay_events(&ctl->events);
	return 0;
}

/* Stop and destroy the local session, if any, without a word to the host. */
static void relay_end(struct relay_conn *c)
{
	struct relay_sess *rs = &c->sess;

	if (!rs->s)
		return;
	pbt_session_destroy(rs->id, NULL);	/* -ENOENT if a user destroyed it */
	pbt_session_put(rs->s);
	kfree(rs->cpu_seq);
	memset(rs, 0, sizeof(*rs));
	rst.session = 0;
	rst.local_session = 0;
	if (c->sock)
		c->sock->sk->sk_rcvtimeo = relay_idle_timeo(c);
}

static int relay_new_session(struct relay_conn *c,
			     const struct frame_control *ctl)
{
	struct relay_sess *rs = &c->sess;
	struct pbt_session_params *p;
	int ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	ret = relay_params(ctl, p);
	if (!ret)
		ret = pbt_session_new(p, &rs->id, NULL);
	kfree(p);
	if (ret)
		return ret;
	rs->s = pbt_session_get(rs->id);
	rs->cpu_seq = kcalloc(nr_cpu_ids, sizeof(*rs->cpu_seq), GFP_KERNEL);
	if (!rs->s || !rs->cpu_seq) {
		ret = -ENOMEM;
		goto err;
	}
	rs->b = rs->s->buffers[0];
	rs->host_id = ctl->session;
	ret = pbt_session_start(rs->id);
	if (ret)
		goto err;
	return 0;

err:
	pbt_session_destroy(rs->id, NULL);
	pbt_session_put(rs->s);
	kfree(rs->cpu_seq);
	memset(rs, 0, sizeof(*rs));
	return ret;
}

static int relay_finish(struct relay_conn *c);

static int relay_start(struct relay_conn *c, const struct frame_control *ctl)
{
	int ret;

	if (c->sess.s) {
		if (c->sess.host_id == ctl->session)
			return 0;		/* told twice */
		ret = relay_finish(c);		/* the host moved on */
		if (ret)
			return ret;
	}
	ret = relay_new_session(c, ctl);
	if (ret) {
		/* Our problem, not the link's: the host sees no chunks. */
		rst.start_failed++;
		c->failed_id = ctl->session;
		pr_info("pbtrace: relay: cannot record session %u for the host: %d\n",
			ctl->session, ret);
		return 0;
	}
	c->sess.next_flush = jiffies + FLUSH_PERIOD;
	c->sock->sk->sk_rcvtimeo = RX_BUSY_TIMEO;
	rst.sessions++;
	rst.session = ctl->session;
	rst.local_session = c->sess.id;
	pr_info("pbtrace: relay: recording host session %u as local session %u\n",
		ctl->session, c->sess.id);
	return 0;
}

/* One sealed chunk as a CHUNK frame, its bytes sent from where they lie. */
static int relay_send_chunk(struct relay_conn *c,
			    const struct pbtrace_chunk_req *req, void *data)
{
	struct relay_sess *rs = &c->sess;
	u8 hdr[FRAME_HDR_LEN + FRAME_CHUNK_HDR], tag[FRAME_TAG_LEN];
	__le32 v[2] = { cpu_to_le32(req->cpu),
			cpu_to_le32(rs->cpu_seq[req->cpu]) };
	struct kvec vec[3] = {
		{ hdr, sizeof(hdr) },
		{ data, req->len },
		{ tag, sizeof(tag) },
	};
	size_t nr = 2;
	u64 t0;
	int ret;

	frame_encode_header(hdr, FRAME_CHUNK, FRAME_CHUNK_HDR + req->len,
			    c->tx_seq);
	memcpy(hdr + FRAME_HDR_LEN, v, sizeof(v));
	if (c->tags.tx) {
		t0 = ktime_get_ns();
		frame_set_tagged(hdr);
		ret = pbt_tag(c->tags.tx, vec, 2, tag);
		if (ret)
			return ret;
		rst.tag_ns += ktime_get_ns() - t0;
		nr = 3;
	}
	ret = relay_sendv(c, vec, nr, sizeof(hdr) + req->len +
			  (nr == 3 ? sizeof(tag) : 0));
	if (ret)
		return ret;
	c->tx_seq++;
	rs->cpu_seq[req->cpu]++;
	rs->chunks++;
	rst.chunks_sent++;
	rst.bytes_sent += req->len;
	return 0;
}

/* Send up to @budget sealed chunks. Returns how many, or -errno. */
static int relay_drain(struct relay_conn *c, int budget)
{
	struct relay_sess *rs = &c->sess;
	struct pbtrace_chunk_req req;
	size_t vsize;
	u8 *vmem = pbt_buffer_vmem(rs->b, &vsize);
	int n = 0, ret;

	while (n < budget && !pbt_buffer_get_chunk(rs->b, &req)) {
		/* A CHUNK carries at least one record; never more than 256 KiB. */
		if (req.len < 2 || req.len > FRAME_CHUNK_MAX ||
		    req.offset + req.len > vsize) {
			pbt_buffer_put_chunk(rs->b, req.index);
			continue;
		}
		ret = relay_send_chunk(c, &req, vmem + req.offset);
		if (ret) {
			pbt_buffer_unget_chunk(rs->b, req.index);
			return ret;
		}
		pbt_buffer_put_chunk(rs->b, req.index);
		n++;
		cond_resched();		/* a busy guest must not starve others */
	}
	return n;
}

/* The guest's own counters over every CPU, for STOPPED. */
static void relay_counters(struct pbt_buffer *b, struct frame_stopped *st)
{
	struct pbtrace_cpu_stats cs;
	int cpu;

	for_each_possible_cpu(cpu) {
		pbt_buffer_stats(b, cpu, &cs);
		st->events_written += cs.events_written;
		st->events_lost += cs.lost_full + cs.lost_overwritten +
				   cs.lost_too_large + cs.lost_nmi;
	}
}

/*
 * CONTROL stop: stop (which seals every chunk), send every chunk, then
 * STOPPED, so the host knows nothing more comes for this session.
 */
static int relay_finish(struct relay_conn *c)
{
	struct relay_sess *rs = &c->sess;
	struct frame f;
	int ret;

	pbt_session_stop(rs->id);	/* -EALREADY if a user stopped it */
	do {
		ret = relay_drain(c, DRAIN_BUDGET);
	} while (ret > 0);
	if (ret < 0)
		return ret;
	memset(&f, 0, sizeof(f));
	f.type = FRAME_STOPPED;
	f.stopped.session_id = rs->host_id;
	relay_counters(rs->b, &f.stopped);
	pr_info("pbtrace: relay: host session %u done: %llu events written, %llu lost, %llu chunks sent\n",
		rs->host_id, f.stopped.events_written, f.stopped.events_lost,
		rs->chunks);
	relay_end(c);
	ret = relay_send(c, &f);
	if (!ret)
		rst.stopped_sent++;
	return ret;
}

static int relay_stop(struct relay_conn *c, const struct frame_control *ctl)
{
	struct frame f;

	if (c->sess.s && c->sess.host_id == ctl->session)
		return relay_finish(c);
	if (c->failed_id != ctl->session || !ctl->session)
		return 0;		/* not ours, or already done */
	/* Nothing recorded, but the host need not wait for us. */
	c->failed_id = 0;
	memset(&f, 0, sizeof(f));
	f.type = FRAME_STOPPED;
	f.stopped.session_id = ctl->session;
	return relay_send(c, &f);
}

static int relay_control(struct relay_conn *c, const struct frame_control *ctl)
{
	rst.controls++;
	switch (ctl->op) {
	case FRAME_CTL_START:
		c->burst = PING_BURST;
		if (!c->ps.ping_out)
			c->next_ping = jiffies;
		return relay_start(c, ctl);
	case FRAME_CTL_STOP:
		return relay_stop(c, ctl);
	case FRAME_CTL_FLUSH:
		if (c->sess.s && c->sess.host_id == ctl->session) {
			pbt_session_flush(c->sess.id);
			c->sess.next_flush = jiffies + FLUSH_PERIOD;
		}
		return 0;
	}
	return -EPROTO;
}

/*
 * Seal what the probes wrote about every second, then send what is sealed.
 * Not during the start burst: the host writes the session's clock sync
 * ahead of its first chunk, from the rounds it has by then. The PING
 * reporting the burst's last round goes before this (relay_run()).
 */
static int relay_stream(struct relay_conn *c)
{
	if (!c->sess.s || c->burst)
		return 0;
	if (time_after_eq(jiffies, c->sess.next_flush)) {
		pbt_session_flush(c->sess.id);
		c->sess.next_flush = jiffies + FLUSH_PERIOD;
	}
	return relay_drain(c, DRAIN_BUDGET);
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

	ret = pbt_proof_host(&key, c->nonce, w->nonce, mac);
	if (ret)
		return ret;
	if (crypto_memneq(mac, w->mac, FRAME_MAC_LEN)) {
		pr_info("pbtrace: relay: host %s failed the key check: its key for us (endpoint_keys for our name, else its relay_key) is not our relay_key\n",
			relay);
		return -EACCES;
	}
	memset(&f, 0, sizeof(f));
	f.type = FRAME_AUTH;
	ret = pbt_proof_relay(&key, w->nonce, c->nonce, c->hello,
			      c->hello_len, f.auth.mac);
	if (ret)
		return ret;
	ret = relay_send(c, &f);
	if (ret)
		return ret;
	/* Every frame after AUTH, either way, is tagged. */
	return pbt_tags_init(&c->tags, &key, w->nonce, c->nonce, f.auth.mac,
			     false);
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
		c->sock->sk->sk_rcvtimeo = relay_idle_timeo(c);
		pr_info("pbtrace: relay: host %s took us as machine %u\n",
			relay, f->welcome.machine_id);
		return relay_ping(c);
	case FRAME_PONG:
		pbt_clocks(now);
		rst.pongs++;
		rst.rtt_ns = now[FRAME_CLK_BOOTTIME] - c->ping_sent;
		c->prev_id = f->pong.id;
		memcpy(c->prev_recv, now, sizeof(now));
		if (c->burst) {
			c->burst--;
			c->next_ping = jiffies;
		}
		return 0;
	case FRAME_CONTROL:
		return relay_control(c, &f->control);
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
		if ((c->rx[6] & FRAME_F_TAG) &&
		    (!c->tags.rx || !pbt_tag_ok(c->tags.rx, c->rx, n))) {
			rst.bad_tags++;
			c->bad = FRAME_E_TAG;
			return -EBADMSG;
		}
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
	int ret, sent;

	frame_parser_init(&c->ps, FRAME_ROLE_RELAY,
			  relay_addr.family == AF_INET);
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
		sent = relay_stream(c);
		if (sent < 0) {
			ret = sent;
			break;
		}
		/* More chunks waiting: only look for frames, do not wait. */
		vec.iov_base = c->rx + c->have;
		vec.iov_len = RX_SIZE - c->have;
		ret = kernel_recvmsg(c->sock, &msg, &vec, 1, vec.iov_len,
				     sent == DRAIN_BUDGET ? MSG_DONTWAIT : 0);
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
	ret = kernel_connect(c->sock, (struct pbt_sockaddr *)&relay_addr.vm,
			     relay_addr.len, 0);
	if (!ret) {
		rst.connects++;
		c->have = 0;
		c->tx_seq = 0;
		c->prev_id = 0;
		c->burst = 0;
		c->bad = 0;
		c->failed_id = 0;
		ret = relay_run(c);
		rst.connected = false;
	}
	/* The host counts the gap; a new CONTROL start begins afresh. */
	relay_end(c);
	pbt_tags_free(&c->tags);
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
			  "connected %d\nmachine_id %u\nconnects %u\nwelcomes %u\npongs %u\nrtt_ns %llu\ncontrols %u\nerrors %u\nlast_error %d\nsession %u\nlocal_session %u\nsessions %u\nstart_failed %u\nevents_skipped %u\nchunks_sent %llu\nbytes_sent %llu\nstopped_sent %u\ntag_ns %llu\nbad_tags %u\n",
			  rst.connected, rst.machine_id, rst.connects,
			  rst.welcomes, rst.pongs, rst.rtt_ns, rst.controls,
			  rst.errors, rst.last_error, rst.session,
			  rst.local_session, rst.sessions, rst.start_failed,
			  rst.events_skipped, rst.chunks_sent, rst.bytes_sent,
			  rst.stopped_sent, rst.tag_ns, rst.bad_tags);
}

static const struct kernel_param_ops relay_stats_ops = {
	.get = relay_stats_get,
};
/* The host it relays to and what it sent: for root only. */
module_param_cb(relay_stats, &relay_stats_ops, NULL, 0400);
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
