#!/usr/bin/env bash
# The lab's SDN generation and apply (guest/lab-sdn-ifaces) on the lab's own SDN files in
# Proxmox's formats (guest/sdn/): interfaces.d/sdn byte for byte as pve-network's generator writes
# it, the .cfg files and .running-config in step, and what the apply does to the kernel for each
# drift case. Runs on the host, no VM needed.
set -euo pipefail
LAB_DIR=${LAB_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
exec python3 -m unittest -v "$LAB_DIR/unit/sdn_ifaces_test.py" 2>&1
