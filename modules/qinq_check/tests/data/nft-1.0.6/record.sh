#!/bin/sh
# Records nft's two listings of each state below, each in a network namespace of its own
# (`unshare -n`, as root): NAME.json (`nft -j list ruleset`) and NAME.txt (`nft -t list ruleset`).
# Run with the nft the fixtures name (Debian bookworm's 1.0.6): sh record.sh
set -eu
cd "$(dirname "$0")"
nft=${NFT:-/usr/sbin/nft}
# The guard as the module writes it (fix::GUEST_VLAN_RULE).
guard=$(sed -n 's/^pub const GUEST_VLAN_RULE: &str = "\(.*\)";$/\1/p' ../../../src/fix.rs | sed 's/\\"/"/g')
[ -n "$guard" ] || { echo "GUEST_VLAN_RULE not found in src/fix.rs" >&2; exit 1; }
"$nft" --version | grep -q 'v1\.0\.6' || echo "warning: $($nft --version), the fixtures are nft 1.0.6's" >&2
# The guard's table with its guest patterns in one set, as nft 1.0.6 lists it for both the
# wildcards (`"tap*"`) and the literal names (`"tap\*"`).
set_guard() {
  printf 'table bridge deevnet_guest_vlan { chain prerouting { type filter hook prerouting priority -300; iifname { "%s", "%s", "%s", "%s" } ether type { 8021q, 8021ad } drop; }; }\n' "$@"
}

record() { # NAME, then the nft script on stdin
  unshare -n sh -c "'$nft' -f - && '$nft' -j list ruleset > '$1.json' && '$nft' -t list ruleset > '$1.txt'"
}

echo "$guard" | record guard
printf '%s\nadd table bridge deevnet_guest_vlan { flags dormant; }\n' "$guard" | record guard-dormant
echo "$guard" | sed 's/^table bridge deevnet_guest_vlan {/table bridge owner { flags dormant;/' \
  | { cat; echo 'table bridge persist { }'; } | record dormant-rule-flag-misprinted
set_guard 'tap*' 'veth*' 'fwpr*' 'fwln*' | record set-guard-wildcards
set_guard 'tap\*' 'veth\*' 'fwpr\*' 'fwln\*' | record set-guard-literals
