# deevnet.net: one entry point for building, testing and demonstrating the collection.
SHELL := /bin/bash
.DEFAULT_GOAL := help
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

include mk/python.mk
include mk/collection.mk
-include tests/lab/lab.mk

.PHONY: help
help:
	@echo "make test        everything CI runs: cargo tests, collection build, Ansible tests, lab tests"
	@echo "make demo        boot the lab node and show both faults fixed by the collection"
	@echo "make collection  build dist/deevnet-net-<version>.tar.gz"
	@echo "make lab-up | lab-ssh | lab-down | lab-test"
