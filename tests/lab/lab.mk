# The lab: a Proxmox-like exit node in a QEMU VM (tests/lab/README.md).
# Included by the root Makefile; ROOT is the repository root.
LAB := $(ROOT)/tests/lab/lab

.PHONY: lab-up lab-down lab-ssh lab-test lab-provision lab-status lab-reset-faults lab-deps
## lab-deps: the host packages the lab needs (apt-get, as root)
lab-deps:
	@$(LAB) deps

## lab-up: build or reuse the image, boot the VM, provision hv02 with both faults
lab-up:
	@$(LAB) up
	@$(LAB) provision

## lab-down: power the VM off and stop QEMU by its recorded PID
lab-down:
	@$(LAB) down

## lab-ssh: a shell in the VM, or one command: make lab-ssh CMD='vtysh -c "show vrf"'
# CMD is read from the environment (make exports command-line variables) so that its quoting
# reaches the VM's shell untouched.
lab-ssh:
	@if [ -n "$$CMD" ]; then $(LAB) ssh "$$CMD"; else $(LAB) ssh; fi

## lab-test: host tests, boot, provision, every lab test, stop; fails on any failure
lab-test:
	@$(LAB) test

lab-provision:
	@$(LAB) provision

lab-status:
	@$(LAB) status

lab-reset-faults:
	@$(LAB) reset-faults
