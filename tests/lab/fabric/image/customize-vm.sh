#!/usr/bin/env bash
# The fabric flavour's additions to the lab VM (after the lab's own customize-rootfs.sh).
set -euo pipefail
root=$1

install -d "$root/var/lib/deevnet-fabric"
cp -a "$FABRIC_NODE_ROOTFS" "$root/var/lib/deevnet-fabric/node"
echo fabric >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 fabric\n' >"$root/etc/hosts"
# The VM is the data centre, not a node: its own FRR stays off.
chroot "$root" systemctl disable frr >/dev/null 2>&1 || true
chroot "$root" systemctl mask podman-auto-update.timer podman-clean-transient.timer >/dev/null 2>&1 || true
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
