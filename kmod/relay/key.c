// SPDX-License-Identifier: GPL-2.0
/*
 * TCP's keys and proofs (docs/relay-protocol.md): relay_key, the shared
 * key of relay and endpoint; HMAC-SHA256 proofs of both sides in the
 * handshake; and, after AUTH, a tag on every frame under a key per
 * direction.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/uio.h>
#include <crypto/hash.h>
#include <crypto/sha2.h>
#include <crypto/algapi.h>

#include "relay.h"
#include "core/frame.h"

/* Shared by relay and endpoint; perm 0: never shown in sysfs. */
static char *relay_key;
module_param(relay_key, charp, 0);
MODULE_PARM_DESC(relay_key, "TCP shared key, 32 to 128 hex digits (relay and endpoint)");

#define LABEL_HOST	"pbtrace-relay-v1 host"
#define LABEL_RELAY	"pbtrace-relay-v1 relay"
#define LABEL_R2H	"pbtrace-relay-v2 relay->host"
#define LABEL_H2R	"pbtrace-relay-v2 host->relay"

static struct pbt_key key;

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
