#!/usr/bin/env bash
# Runs before the kernel package is configured, so its initramfs is built small:
# only the drivers a QEMU q35 guest with virtio disk needs, zstd-compressed.
set -euo pipefail
root=$1
mkdir -p "$root/etc/initramfs-tools/conf.d"
printf 'MODULES=list\nCOMPRESS=zstd\n' >"$root/etc/initramfs-tools/conf.d/deevnet-lab.conf"
printf '%s\n' virtio_pci virtio_blk virtio_net ext4 >>"$root/etc/initramfs-tools/modules"
