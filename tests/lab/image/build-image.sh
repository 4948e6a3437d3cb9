#!/usr/bin/env bash
# Builds the lab's Debian image into OUT_DIR: vmlinuz, initrd.img, root.raw (sparse ext4).
# No loop mounts: mmdebstrap fills a directory, `mkfs.ext4 -d` turns it into a filesystem image.
# Usage: build-image.sh OUT_DIR SUITE MIRROR SSH_PUBKEY_FILE
set -euo pipefail

out_dir=$1 suite=$2 mirror=$3 pubkey_file=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The security archive sits beside the main one on Debian's mirrors.
security_mirror=${mirror%/debian}/debian-security
packages=$(grep -v -e '^#' -e '^[[:space:]]*$' "$here/packages.txt" | paste -sd, -)
rootfs=$out_dir/rootfs

mkdir -p "$out_dir"
export LAB_SSH_PUBKEY_FILE=$pubkey_file
mmdebstrap --variant=apt --components=main \
  --include="$packages" \
  --aptopt='Acquire::Languages "none"' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --essential-hook="$here/essential-hook.sh" \
  --customize-hook="$here/customize-rootfs.sh" \
  "$suite" "$rootfs" \
  "deb $mirror $suite main" \
  "deb $mirror $suite-updates main" \
  "deb $security_mirror $suite-security main"

# Direct kernel boot: QEMU loads these, so the image needs no boot loader.
cp -L "$rootfs"/boot/vmlinuz-* "$out_dir/vmlinuz"
cp -L "$rootfs"/boot/initrd.img-* "$out_dir/initrd.img"

# 1 GiB of headroom over the content, for logs, captures and binaries the tests copy in.
size_mb=$(( $(du -sm "$rootfs" | cut -f1) + 1024 ))
mkfs.ext4 -q -F -L labroot -E root_owner=0:0 -d "$rootfs" "$out_dir/root.raw" "${size_mb}M"
rm -rf "$rootfs"
