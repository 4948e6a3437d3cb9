#!/usr/bin/env bash
# Makes the bootstrapped tree a bootable, reachable, quiet lab node.
set -euo pipefail
root=$1

echo hv02 >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 hv02\n' >"$root/etc/hosts"
printf '/dev/vda / ext4 rw,noatime 0 1\n' >"$root/etc/fstab"

# Root logs in with the lab's key only.
chroot "$root" passwd -l root >/dev/null
install -d -m 700 "$root/root/.ssh"
install -m 600 "$LAB_SSH_PUBKEY_FILE" "$root/root/.ssh/authorized_keys"
chroot "$root" ssh-keygen -A >/dev/null
printf 'UseDNS no\nPermitRootLogin prohibit-password\n' >"$root/etc/ssh/sshd_config.d/deevnet-lab.conf"

# The QEMU NIC (MAC fixed by the lab script) carries SSH only: a static address and no
# gateway, so the node's default route is the one the topology sets (via the transit router).
cat >"$root/etc/systemd/network/10-lab-ssh.network" <<'NET'
[Match]
MACAddress=52:54:00:de:e0:01
[Network]
Address=10.0.2.15/24
LinkLocalAddressing=no
IPv6AcceptRA=no
NET
# networkd must leave alone the routes and rules that FRR and the tests add.
mkdir -p "$root/etc/systemd/networkd.conf.d"
printf '[Network]\nManageForeignRoutes=no\nManageForeignRoutingPolicyRules=no\n' \
  >"$root/etc/systemd/networkd.conf.d/deevnet-lab.conf"
chroot "$root" systemctl enable systemd-networkd >/dev/null 2>&1

# Boot time under TCG: ifupdown2's networking.service alone costs ~1 min and the lab declares
# no interfaces in /etc/network/interfaces; timers only add noise.
for unit in networking.service systemd-networkd-wait-online.service apt-daily.timer \
    apt-daily-upgrade.timer man-db.timer e2scrub_all.timer fstrim.timer dpkg-db-backup.timer; do
  chroot "$root" systemctl mask "$unit" >/dev/null 2>&1
done
mkdir -p "$root/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' >"$root/etc/systemd/journald.conf.d/deevnet-lab.conf"

# FRR as on a Proxmox SDN node: bgpd on (zebra and staticd always run).
sed -i 's/^bgpd=no/bgpd=yes/' "$root/etc/frr/daemons"

# Keep the image lean: apt lists are not needed at run time.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
