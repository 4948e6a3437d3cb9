#!/usr/bin/env bash
# Builds the fabric flavour of the lab image into OUT_DIR (vmlinuz, initrd.img, root.raw):
# the lab's own recipe (tests/lab/image, used as it is, from a copy), plus podman in the VM and
# the node containers' root filesystem under /var/lib/deevnet-fabric/node.
# Usage: build-fabric-image.sh OUT_DIR SUITE MIRROR SSH_PUBKEY_FILE
set -euo pipefail

out_dir=$1 suite=$2 mirror=$3 pubkey_file=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lab_image=$(cd "$here/../../image" && pwd)
security_mirror=${mirror%/debian}/debian-security
mkdir -p "$out_dir"

# ---- the node containers' root filesystem
node_rootfs=$out_dir/node-rootfs
node_packages=$(grep -v -e '^#' -e '^[[:space:]]*$' "$here/node-packages.txt" | paste -sd, -)
export FABRIC_SSH_PUBKEY_FILE=$pubkey_file
mmdebstrap --variant=minbase --components=main \
  --include="$node_packages" \
  --aptopt='Acquire::Languages "none"' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook="$here/customize-node.sh" \
  "$suite" "$node_rootfs" \
  "deb $mirror $suite main" \
  "deb $mirror $suite-updates main" \
  "deb $security_mirror $suite-security main"

# ---- the VM: the lab's recipe from a copy, with podman added and the node rootfs put in
recipe=$out_dir/recipe
rm -rf "$recipe" && mkdir -p "$recipe"
cp "$lab_image"/* "$recipe/"
grep -v -e '^#' -e '^[[:space:]]*$' "$here/packages.txt" >>"$recipe/packages.txt"
mv "$recipe/customize-rootfs.sh" "$recipe/customize-lab.sh"
cat >"$recipe/customize-rootfs.sh" <<HOOK
#!/usr/bin/env bash
set -euo pipefail
"$recipe/customize-lab.sh" "\$@"
"$here/customize-vm.sh" "\$@"
HOOK
chmod +x "$recipe"/*.sh
export FABRIC_NODE_ROOTFS=$node_rootfs
"$recipe/build-image.sh" "$out_dir" "$suite" "$mirror" "$pubkey_file"
rm -rf "$node_rootfs" "$recipe"
