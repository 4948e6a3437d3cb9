"""Offline stand-in for ansible-test's pip bootstrap script (get-pip-<version>.py).

ansible-test downloads that script from a host this machine cannot reach; it only needs pip
in a fresh venv. ensurepip provides one, and pip then installs the pinned version from PyPI.
"""
import subprocess
import sys

args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"], stdout=subprocess.DEVNULL)
subprocess.check_call([sys.executable, "-m", "pip", "install", *args])
