// SPDX-License-Identifier: GPL-2.0
/*
 * HELLO and AUTH. Over vsock the CID is the relay's proof and HELLO is
 * enough: its machine is taken there. On TCP a relay must prove it holds
 * its key (AUTH) before it is given a machine: until then it holds
 * nothing, so a replayed HELLO cannot take another's.
 */
#include <linux/module.h>
#include <linux/random.h>
#include <crypto/algapi.h>

#include "endpoint.h"

unsigned int endpoint_ping_ms = 1000;
module_param(endpoint_ping_ms, uint, 0444);
MODULE_PARM_DESC(endpoint_ping_ms, "clock ping period asked of relays, 100..10000 ms (default 1000)");

int ep_hello(struct ep_conn *c, const struct frame_hello *h,
		    const u8 *raw, size_t raw_len)
{
	struct frame f;
	int ret;

	ep_copy_str(c->id.name, h->name.len ? &h->name : &h->sysname);
	ep_copy_str(c->id.sysname, &h->sysname);
	ep_copy_str(c->id.release, &h->release);
	ep_copy_str(c->id.version, &h->version);
	ep_copy_str(c->id.machine, &h->machine);
	c->id.num_cpus = h->num_cpus;
	c->id.ram_bytes = h->ram_bytes;
	ret = ep_identify(c);
	if (ret)
		return ret;
	memset(&f, 0, sizeof(f));
	f.type = FRAME_WELCOME;
	f.welcome.ping_period_ms = endpoint_ping_ms;
	if (c->tcp) {
		/* Nothing is reserved until AUTH: a HELLO is easily replayed. */
		memcpy(c->hint, h->hint, FRAME_HINT_LEN);
		f.welcome.machine_id = ep_machine_peek(c);
		memcpy(c->relay_nonce, h->nonce, FRAME_NONCE_LEN);
		get_random_bytes(c->host_nonce, FRAME_NONCE_LEN);
		memcpy(f.welcome.nonce, c->host_nonce, FRAME_NONCE_LEN);
		ret = pbt_proof_host(&c->key, c->relay_nonce, c->host_nonce,
				     f.welcome.mac);
		if (ret)
			return ret;
		c->hello_len = min_t(size_t, raw_len, EP_HELLO_MAX);
		memcpy(c->hello, raw, c->hello_len);
		ret = ep_send(c, &f);
		/* Strangers that stay silent go before it now (pending.c). */
		if (!ret)
			WRITE_ONCE(c->welcomed, true);
		return ret;
	}
	/* An allowed CID (admit.c) with a HELLO: it proved itself. */
	ret = ep_pending_admit(c);
	if (!ret)
		ret = ep_machine_reserve(c, h->hint);
	if (ret)
		return ret;
	f.welcome.machine_id = c->m->id;
	ep_machine_commit(c);
	return ep_send(c, &f);
}

/* TCP: the relay's proof binds the key, both nonces and its HELLO. */
int ep_auth(struct ep_conn *c, const struct frame_auth *a)
{
	u8 mac[FRAME_MAC_LEN];
	int ret;

	ret = pbt_proof_relay(&c->key, c->host_nonce, c->relay_nonce, c->hello,
			      c->hello_len, mac);
	if (ret)
		return ret;
	if (crypto_memneq(mac, a->mac, FRAME_MAC_LEN)) {
		atomic_inc(&ep_stats.auth_failed);
		pr_info_ratelimited("pbtrace: endpoint: %s (\"%s\") failed the key check (%s), closing\n",
				    c->who, c->claimed,
				    c->own_key ? "its key in the names table" :
				    "relay_key");
		return -EACCES;
	}
	/* It holds the key: into the admitted set, then its machine. */
	ret = ep_pending_admit(c);
	if (ret)
		return ret;
	/* From here on every frame, either way, is tagged. */
	ret = pbt_tags_init(&c->tags, &c->key, c->host_nonce, c->relay_nonce,
			    a->mac, true);
	if (!ret)
		ret = ep_machine_reserve(c, c->hint);
	if (ret)
		return ret;
	ep_machine_commit(c);
	return 0;
}
