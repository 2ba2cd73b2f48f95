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
 * (relay_session.c). A lost connection or module unload ends the local
 * session with it.
 */
#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/utsname.h>
#include <linux/mm.h>
#include <linux/timekeeping.h>
#include <linux/random.h>
#include <linux/fs.h>
#include <crypto/algapi.h>
#include <net/sock.h>

#include "compat.h"
#include "relay_conn.h"

static char *relay;
module_param(relay, charp, 0400);
MODULE_PARM_DESC(relay, "stream to a host endpoint: vsock:CID:PORT or tcp:ADDR:PORT");
static char *relay_name;
module_param(relay_name, charp, 0400);
MODULE_PARM_DESC(relay_name, "machine name sent to the host (default: utsname sysname)");
static char *relay_hint;
module_param(relay_hint, charp, 0400);
MODULE_PARM_DESC(relay_hint, "machine-id hint, 32 hex digits (default: the boot_id)");

struct relay_counters rst;
static struct task_struct *relay_task;
static struct pbt_addr relay_addr;
static u8 relay_hint_bytes[FRAME_HINT_LEN];
static struct relay_conn *relay_conn;
/*
 * The thread owns its socket (relay_conn->sock): it opens, publishes,
 * takes back and releases it. Unload shuts it down first, so a send or
 * receive in progress returns at once, and only then stops the thread.
 * relay_sock_lock keeps the two apart: the thread publishes a socket and
 * takes it back under it, so the socket unload shuts down is never one
 * being released; and once relay_stop is set no new one is published.
 * Nothing sleeps on the socket with the lock held.
 */
static DEFINE_MUTEX(relay_sock_lock);
static bool relay_stop;

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

/*
 * Without a session the thread sleeps in recvmsg() between frames; it must
 * wake for the next ping, whatever period the host asked for.
 */
long relay_idle_timeo(const struct relay_conn *c)
{
	long t = msecs_to_jiffies(c->ping_period_ms);

	return clamp_t(long, t, 1, HZ);
}

/* The relay thread's own question: module unload has begun. */
bool relay_stopping(void)
{
	return READ_ONCE(relay_stop) || kthread_should_stop();
}

/* Backoff: the wait ends early for unload, and never misses its wakeup. */
static void relay_sleep(unsigned int ms)
{
	set_current_state(TASK_INTERRUPTIBLE);
	if (!relay_stopping())
		schedule_timeout(msecs_to_jiffies(ms));
	__set_current_state(TASK_RUNNING);
}

/* After relay_stop: the thread may not return before kthread_stop(). */
static void relay_wait_stop(void)
{
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
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

	ret = pbt_proof_host(pbt_shared_key(), c->nonce, w->nonce, mac);
	if (ret)
		return ret;
	if (crypto_memneq(mac, w->mac, FRAME_MAC_LEN)) {
		pr_info("pbtrace: relay: host %s failed the key check: its key for us (endpoint_keys for our name, else its relay_key) is not our relay_key\n",
			relay);
		return -EACCES;
	}
	memset(&f, 0, sizeof(f));
	f.type = FRAME_AUTH;
	ret = pbt_proof_relay(pbt_shared_key(), w->nonce, c->nonce, c->hello,
			      c->hello_len, f.auth.mac);
	if (ret)
		return ret;
	ret = relay_send(c, &f);
	if (ret)
		return ret;
	/* Every frame after AUTH, either way, is tagged. */
	return pbt_tags_init(&c->tags, pbt_shared_key(), w->nonce, c->nonce,
			     f.auth.mac,
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
	while (!ret && !relay_stopping()) {
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

/* Publish @sock as the thread's, unless unload has begun. */
static bool relay_publish(struct relay_conn *c, struct socket *sock)
{
	mutex_lock(&relay_sock_lock);
	if (!relay_stop)
		c->sock = sock;
	mutex_unlock(&relay_sock_lock);
	return c->sock;
}

static int relay_connect_once(struct relay_conn *c)
{
	struct socket *sock;
	int ret;

	c->welcomed = false;
	ret = pbt_sock_open(&relay_addr, &sock);
	if (ret)
		return ret;
	if (!relay_publish(c, sock)) {
		sock_release(sock);
		return -ESHUTDOWN;
	}
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
	mutex_lock(&relay_sock_lock);
	c->sock = NULL;
	mutex_unlock(&relay_sock_lock);
	sock_release(sock);
	return ret;
}

static int relay_thread(void *arg)
{
	struct relay_conn *c = arg;
	unsigned int backoff = BACKOFF_MIN_MS;
	int ret;

	while (!relay_stopping()) {
		ret = relay_connect_once(c);
		if (relay_stopping())
			break;
		rst.errors++;
		rst.last_error = ret;
		/* A connection that got as far as WELCOME was a good host. */
		if (c->welcomed) {
			pr_info("pbtrace: relay: lost host %s (%d), reconnecting\n",
				relay, ret);
			backoff = BACKOFF_MIN_MS;
		}
		rst.backoff_ms = backoff;
		/*
		 * Half of it, and a random part of the other half: the guests
		 * of one host lose it together, and would come back together.
		 */
		relay_sleep(backoff / 2 + get_random_u32() % (backoff / 2 + 1));
		backoff = min(backoff * 2, BACKOFF_MAX_MS);
	}
	relay_wait_stop();
	return 0;
}

static int relay_stats_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf,
			  "connected %d\nmachine_id %u\nconnects %u\nwelcomes %u\npongs %u\nrtt_ns %llu\ncontrols %u\nerrors %u\nlast_error %d\nsession %u\nlocal_session %u\nsessions %u\nstart_failed %u\nevents_skipped %u\nchunks_sent %llu\nbytes_sent %llu\nstopped_sent %u\ntag_ns %llu\nbad_tags %u\nsend_timeout %u\nbackoff_ms %u\n",
			  rst.connected, rst.machine_id, rst.connects,
			  rst.welcomes, rst.pongs, rst.rtt_ns, rst.controls,
			  rst.errors, rst.last_error, rst.session,
			  rst.local_session, rst.sessions, rst.start_failed,
			  rst.events_skipped, rst.chunks_sent, rst.bytes_sent,
			  rst.stopped_sent, rst.tag_ns, rst.bad_tags,
			  rst.send_timeout, rst.backoff_ms);
}

static const struct kernel_param_ops relay_stats_ops = {
	.get = relay_stats_get,
};
/* The host it relays to and what it sent: for root only. */
module_param_cb(relay_stats, &relay_stats_ops, NULL, 0400);
MODULE_PARM_DESC(relay_stats, "relay state and counters (read only)");

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
	relay_stop = false;
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
	/*
	 * Never wait on the host: a host that takes a byte at a time would
	 * hold a send for its whole deadline. Shut the socket down, which
	 * ends the send or receive in progress, then stop the thread.
	 */
	mutex_lock(&relay_sock_lock);
	WRITE_ONCE(relay_stop, true);
	if (relay_conn->sock)
		kernel_sock_shutdown(relay_conn->sock, SHUT_RDWR);
	mutex_unlock(&relay_sock_lock);
	kthread_stop(relay_task);
	relay_task = NULL;
	kfree(relay_conn->rx);
	kfree(relay_conn);
}
