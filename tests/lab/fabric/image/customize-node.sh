#!/usr/bin/env bash
# Makes the bootstrapped tree a node container's root filesystem (mmdebstrap customize hook).
set -euo pipefail
root=$1

# FRR as on a Proxmox SDN node: bgpd on (zebra and staticd always run), started by frrinit.sh.
sed -i 's/^bgpd=no/bgpd=yes/' "$root/etc/frr/daemons"

# Ansible comes in as root with the lab's key, through `sshd -i` on podman exec's stdio.
install -d -m 700 "$root/root/.ssh"
install -m 600 "$FABRIC_SSH_PUBKEY_FILE" "$root/root/.ssh/authorized_keys"
chroot "$root" ssh-keygen -A >/dev/null
printf 'UseDNS no\nPermitRootLogin prohibit-password\nLogLevel ERROR\n' \
  >"$root/etc/ssh/sshd_config.d/deevnet-fabric.conf"

# No init system in the containers: `systemctl restart frr` (lab-sdn-apply's fallback when a
# reload fails) restarts FRR through its own init script.
cat >"$root/usr/local/bin/systemctl" <<'SH'
#!/bin/sh
# The fabric's node containers have no systemd: FRR is the only service. A container booted with
# systemd as PID 1 (the QinQ lab's transit router) gets the real systemctl.
[ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] && exec /usr/bin/systemctl "$@"
case "$1 $2" in
  "restart frr" | "reload frr" | "start frr" | "stop frr") exec /usr/lib/frr/frrinit.sh "$1" ;;
  "is-active frr") /usr/lib/frr/frrinit.sh status >/dev/null 2>&1 && echo active || { echo inactive; exit 3; } ;;
  *) echo "systemctl (fabric node): not supported: $*" >&2; exit 1 ;;
esac
SH
chmod 755 "$root/usr/local/bin/systemctl"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
