#include <stdio.h>
#include <string.h>
#include <nftables/libnftables.h>

#include "log.h"
#include "netns.h"
#include "nslock.h"

static const char lock_rules[] =
	"add table inet " NSLOCK_TABLE "\n"
	"add chain inet " NSLOCK_TABLE " in "
	"{ type filter hook input priority -400; policy drop; }\n"
	"add chain inet " NSLOCK_TABLE " out "
	"{ type filter hook output priority -400; policy drop; }\n"
	"add rule inet " NSLOCK_TABLE " in iif lo accept\n"
	"add rule inet " NSLOCK_TABLE " out oif lo accept\n"
	/* ARP is a family of its own: a locked source that answered an
	 * ARP request would teach the LAN's switches its old port again */
	"add table arp " NSLOCK_TABLE "\n"
	"add chain arp " NSLOCK_TABLE " in "
	"{ type filter hook input priority -400; policy drop; }\n"
	"add chain arp " NSLOCK_TABLE " out "
	"{ type filter hook output priority -400; policy drop; }\n";

/* Run an nft script inside ns; the error text nft gives goes to the log. */
static int
nft_in_ns(const char *ns, const char *script, char *out, size_t outlen)
{
	struct nft_ctx *nft;
	int saved, rc = -1;

	saved = netns_enter(ns);
	if (saved < 0)
		return -1;
	/* the context's netlink socket must be made inside the namespace */
	nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (nft == NULL) {
		log_warnx("%s: nft_ctx_new failed", __func__);
		goto out_leave;
	}
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	if (nft_run_cmd_from_buffer(nft, script) != 0) {
		const char *err = nft_ctx_get_error_buffer(nft);

		log_warnx("%s: %s: nft: %s", __func__, ns,
		    err && *err ? err : "failed");
	} else {
		if (out != NULL)
			snprintf(out, outlen, "%s", nft_ctx_get_output_buffer(nft));
		rc = 0;
	}
	nft_ctx_free(nft);
out_leave:
	if (netns_leave(saved) < 0)
		rc = -1;
	return rc;
}

int
nslock_take(const char *ns)
{
	/* one transaction: the table appears whole or not at all */
	if (nft_in_ns(ns, lock_rules, NULL, 0) < 0)
		return -1;
	log_debug("%s: %s locked", __func__, ns);
	return 0;
}

int
nslock_release(const char *ns)
{
	int held = nslock_held(ns);

	if (held < 0)
		return -1;
	if (held == 0)
		return 0;
	if (nft_in_ns(ns, "delete table inet " NSLOCK_TABLE "\n"
	    "delete table arp " NSLOCK_TABLE "\n", NULL, 0) < 0)
		return -1;
	log_debug("%s: %s unlocked", __func__, ns);
	return 0;
}

int
nslock_held(const char *ns)
{
	char out[4096] = "";

	if (nft_in_ns(ns, "list tables inet\n", out, sizeof(out)) < 0)
		return -1;
	return strstr(out, "table inet " NSLOCK_TABLE "\n") != NULL;
}
