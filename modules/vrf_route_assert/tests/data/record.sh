#!/bin/sh
# Records the rulesets the unit tests of the NAT prediction read (src/tests/snat.rs), as nft
# 1.0.6 prints them. Run as root from this folder; each ruleset is loaded in a network
# namespace of its own (unshare -n), so the host's ruleset never changes.
set -eu
for name in snat-jump return-then-snat ct-mark wildcards-sets fanout-41; do
	unshare -n sh -euc "nft -f $name.nft; nft -j list ruleset" > "nft-1.0.6/$name.json"
done
unshare -n nft -j list ruleset > nft-1.0.6/empty.json
