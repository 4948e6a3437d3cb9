#!/bin/sh
# Records the rulesets the unit tests of the NAT prediction read (src/tests/snat.rs), as nft
# 1.0.6 prints them. Run as root from this folder; each ruleset is loaded in a network
# namespace of its own (unshare -n), so the host's ruleset never changes.
set -eu
for name in snat-jump return-then-snat ct-mark wildcards-sets fanout-41 dormant; do
	unshare -n sh -euc "nft -f $name.nft; nft -j list ruleset" > "nft-1.0.6/$name.json"
done
# The text listing too, whose table flags the reader trusts (nft 1.0.6 misprints them in JSON).
unshare -n sh -euc "nft -f dormant.nft; nft -t list ruleset" > nft-1.0.6/dormant.txt
unshare -n nft -j list ruleset > nft-1.0.6/empty.json
