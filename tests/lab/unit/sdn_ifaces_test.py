"""Unit tests of guest/lab-sdn-ifaces (run by 30-sdn-ifaces.sh)."""
import copy
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import tempfile
import unittest

GUEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "guest")
SDN = os.path.join(GUEST, "sdn")
_loader = importlib.machinery.SourceFileLoader("lab_sdn_ifaces", os.path.join(GUEST, "lab-sdn-ifaces"))
_spec = importlib.util.spec_from_loader("lab_sdn_ifaces", _loader)
sdn = importlib.util.module_from_spec(_spec)
_loader.exec_module(sdn)


def read(name):
    with open(os.path.join(SDN, name), encoding="utf-8") as f:
        return f.read()


def route(target):
    # hv02's `ip route get 8.8.8.8`: the node's default via the transit VLAN.
    return ("10.20.50.22", "vmbr0.50") if target == "8.8.8.8" else (None, None)


def running():
    return json.loads(read("running-config"))


def ifaces(text=None):
    return sdn.parse_interfaces(text if text is not None else read("interfaces"))


def vxlan_link(name, vni, local, port=4789):
    key = "local6" if ":" in local else "local"
    return {"ifname": name, "linkinfo": {"info_kind": "vxlan",
                                         "info_data": {"id": vni, key: local, "port": port}}}


class Generation(unittest.TestCase):
    def test_hv02_interfaces_sdn_is_the_expected_file(self):
        text, warnings = sdn.generate(running(), ifaces(), "hv02", route)
        self.assertEqual(warnings, [])
        self.assertEqual(text, read("interfaces.d-sdn.expected"))

    def test_cfg_files_commit_to_the_running_config(self):
        with tempfile.TemporaryDirectory() as d:
            for name in sdn.CFG_FILES:
                with open(os.path.join(d, f"{name}.cfg"), "w") as f:
                    f.write(read(f"{name}.cfg"))
            path = os.path.join(d, ".running-config")
            with open(path, "w") as f:
                json.dump({"version": 0}, f)
            self.assertEqual(sdn.commit(d, path), 1)
            with open(path) as f:
                self.assertEqual(json.load(f), running())

    def test_member_node_gets_the_catch_all_and_no_snat(self):
        # hv01 is a peer (10.20.51.21) but not in exitnodes: a member.
        text, _ = sdn.generate(running(), ifaces(read("interfaces").replace("10.20.51.22", "10.20.51.21")),
                               "hv01", route)
        self.assertIn("\tpost-up ip route add vrf vrf_tdemo unreachable default metric 4278198272\n", text)
        self.assertNotIn("SNAT", text)
        self.assertIn("\tvxlan-local-tunnelip 10.20.51.21\n", text)

    def test_zone_nodes_excludes_other_nodes(self):
        cfg = running()
        cfg["zones"]["ids"]["tdemo"]["nodes"] = {"hv01": 1}
        text, _ = sdn.generate(cfg, ifaces(), "hv02", route)
        self.assertEqual(text, "#version:1\n")

    def test_mtu_from_the_vtep_interface_then_the_zone(self):
        text, _ = sdn.generate(running(), ifaces(read("interfaces").replace(
            "address 10.20.51.22/24", "address 10.20.51.22/24\n\tmtu 9000")), "hv02", route)
        self.assertEqual(text.count("\tmtu 8950\n"), 4)
        cfg = running()
        cfg["zones"]["ids"]["tdemo"]["mtu"] = 1400
        text, _ = sdn.generate(cfg, ifaces(), "hv02", route)
        self.assertEqual(text.count("\tmtu 1400\n"), 4)

    def test_a_second_zone_brings_its_own_devices(self):
        cfg = running()
        cfg["version"] = 2
        cfg["zones"]["ids"]["tdemo2"] = dict(cfg["zones"]["ids"]["tdemo"], **{"vrf-vxlan": 10002})
        cfg["vnets"]["ids"]["tdemo2v0"] = {"type": "vnet", "zone": "tdemo2", "tag": 11002}
        cfg["subnets"]["ids"]["tdemo2-10.20.130.0-24"] = {"type": "subnet", "vnet": "tdemo2v0",
                                                          "gateway": "10.20.130.1", "snat": 1}
        text, _ = sdn.generate(cfg, ifaces(), "hv02", route)
        stanzas = sdn.parse_stanzas(text)
        self.assertTrue(text.startswith("#version:2\n"))
        for dev in ("vrf_tdemo2", "vrfvx_tdemo2", "vrfbr_tdemo2", "tdemo2v0", "vxlan_tdemo2v0"):
            self.assertIn(dev, stanzas)
        self.assertIn("address 10.20.130.1/24", stanzas["tdemo2v0"])
        self.assertIn("vxlan-id 10002", stanzas["vrfvx_tdemo2"])

    def test_ipv6_vtep(self):
        cfg = running()
        cfg["controllers"]["ids"]["evpnctl"]["peers"] = "2001:db8:51::21,2001:db8:51::22"
        text, _ = sdn.generate(cfg, ifaces(read("interfaces").replace(
            "address 10.20.51.22/24", "address 2001:db8:51::22/64")), "hv02", route)
        self.assertEqual(text.count("\tvxlan-local-tunnelip 2001:db8:51::22\n"), 2)


class Apply(unittest.TestCase):
    def stanzas(self):
        return sdn.parse_stanzas(read("interfaces.d-sdn.expected"))

    def up_to_date_kernel(self):
        links = {
            "vrf_tdemo": {"ifname": "vrf_tdemo", "linkinfo": {"info_kind": "vrf", "info_data": {"table": 1001}}},
            "vrfvx_tdemo": vxlan_link("vrfvx_tdemo", 10001, "10.20.51.22"),
            "vxlan_tdemo0": vxlan_link("vxlan_tdemo0", 11001, "10.20.51.22"),
            "vrfbr_tdemo": {"ifname": "vrfbr_tdemo", "linkinfo": {"info_kind": "bridge"}},
            "tdemo0": {"ifname": "tdemo0", "linkinfo": {"info_kind": "bridge"}},
        }
        return links, {"tdemo0": {"10.20.129.1/24"}}

    def test_fresh_node_creates_everything_vrf_table_1001(self):
        batch, sysctls, post_up, nat = sdn.plan(self.stanzas(), {}, {}, {})
        self.assertIn("link add vrf_tdemo type vrf table 1001", batch)
        self.assertIn("link add vrfvx_tdemo type vxlan id 10001 local 10.20.51.22 dstport 4789 nolearning", batch)
        self.assertIn("link add tdemo0 type bridge stp_state 0 forward_delay 0", batch)
        self.assertIn("address add 10.20.129.1/24 dev tdemo0", batch)
        self.assertIn("link set vxlan_tdemo0 master tdemo0", batch)
        self.assertIn("link set dev vxlan_tdemo0 type bridge_slave neigh_suppress on", batch)
        # The VRF exists before anything is enslaved to it.
        self.assertLess(batch.index("link add vrf_tdemo type vrf table 1001"), batch.index("link set tdemo0 master vrf_tdemo"))
        self.assertIn("net.ipv4.conf.tdemo0.forwarding=1", sysctls)
        self.assertIn(["route", "del", "vrf", "vrf_tdemo", "unreachable", "default", "metric", "4278198272"], post_up)
        self.assertEqual(nat, [("10.20.129.0/24", "vmbr0.50", "10.20.50.22")])

    def test_vrf_table_auto_takes_the_next_free_table(self):
        links = {"vrf_other": {"ifname": "vrf_other", "linkinfo": {"info_kind": "vrf", "info_data": {"table": 1001}}}}
        batch, *_ = sdn.plan(self.stanzas(), links, {}, {})
        self.assertIn("link add vrf_tdemo type vrf table 1002", batch)

    def test_up_to_date_kernel_creates_nothing(self):
        links, addrs = self.up_to_date_kernel()
        batch, *_ = sdn.plan(self.stanzas(), links, addrs, self.stanzas())
        self.assertEqual([b for b in batch if b.startswith(("link add", "link del", "address"))], [])

    def test_ipv4_vxlan_after_the_vtep_moved_to_ipv6_is_recreated(self):
        links, addrs = self.up_to_date_kernel()
        stanzas = sdn.parse_stanzas(read("interfaces.d-sdn.expected").replace("10.20.51.22", "2001:db8:51::22"))
        batch, *_ = sdn.plan(stanzas, links, addrs, stanzas)
        for dev, vni in (("vrfvx_tdemo", 10001), ("vxlan_tdemo0", 11001)):
            self.assertLess(batch.index(f"link del {dev}"),
                            batch.index(f"link add {dev} type vxlan id {vni} local 2001:db8:51::22 dstport 4789 nolearning"))

    def test_missing_gateway_address_is_added_and_a_stray_one_removed(self):
        links, _ = self.up_to_date_kernel()
        batch, *_ = sdn.plan(self.stanzas(), links, {"tdemo0": {"10.20.129.99/24"}}, self.stanzas())
        self.assertIn("address add 10.20.129.1/24 dev tdemo0", batch)
        self.assertIn("address del 10.20.129.99/24 dev tdemo0", batch)

    def test_stanzas_that_left_the_file_are_deleted(self):
        links, addrs = self.up_to_date_kernel()
        previous = copy.deepcopy(self.stanzas())
        previous["vrf_gone"] = ["vrf-table auto"]
        links["vrf_gone"] = {"ifname": "vrf_gone", "linkinfo": {"info_kind": "vrf", "info_data": {"table": 1002}}}
        batch, *_ = sdn.plan(self.stanzas(), links, addrs, previous)
        self.assertIn("link del vrf_gone", batch)
        self.assertNotIn("link del tdemo0", batch)


_apply_loader = importlib.machinery.SourceFileLoader("lab_sdn_apply", os.path.join(GUEST, "lab-sdn-apply"))
_apply_spec = importlib.util.spec_from_loader("lab_sdn_apply", _apply_loader)
frr = importlib.util.module_from_spec(_apply_spec)
_apply_loader.exec_module(frr)


class FrrGenerated(unittest.TestCase):
    """lab-sdn-apply renders the generated FRR config's per-zone parts for the SDN's zones."""

    def template(self):
        with open(os.path.join(GUEST, "frr.conf.generated"), encoding="utf-8") as f:
            return f.read()

    def test_the_lab_sdn_renders_the_checked_in_config_unchanged(self):
        self.assertEqual(frr.generated_for_zones(self.template(), frr.evpn_zones(running(), "hv02")), self.template())

    def test_an_added_exit_zone_gets_vrf_vni_import_and_default_originate(self):
        cfg = running()
        cfg["zones"]["ids"]["tdemo2"] = dict(cfg["zones"]["ids"]["tdemo"], **{"vrf-vxlan": 10002})
        text = frr.generated_for_zones(self.template(), frr.evpn_zones(cfg, "hv02"))
        self.assertIn("vrf vrf_tdemo2\n vni 10002\nexit-vrf\n", text)
        self.assertEqual(text.count("  import vrf vrf_tdemo2\n"), 2)
        self.assertIn("router bgp 65020 vrf vrf_tdemo2\n", text)
        self.assertEqual(text.count("  default-originate ipv4\n"), 2)

    def test_a_member_zone_gets_no_import_and_no_default_originate(self):
        cfg = running()
        cfg["zones"]["ids"]["tdemo"]["exitnodes"] = {"hv01": 1}
        text = frr.generated_for_zones(self.template(), frr.evpn_zones(cfg, "hv02"))
        self.assertIn("vrf vrf_tdemo\n vni 10001\nexit-vrf\n", text)
        self.assertNotIn("import vrf", text)
        self.assertNotIn("default-originate", text)


ALL_EXIT = os.path.join(GUEST, "..", "all-exit", "guest")


class AllExit(unittest.TestCase):
    """The all-exit lab's SDN (../all-exit/guest/all-exit-sdn, run with a stand-in podman that writes
    into a folder per node): lab-sdn-ifaces serves its hypervisors as it is, and lab-sdn-apply
    renders FRR's side of every zone from the all-exit template, whose EVPN ASN is not 65020."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = cls.tmp.name
        bin_dir = os.path.join(root, "bin")
        os.makedirs(bin_dir)
        # `podman exec -i NODE sh -c "mkdir -p ... && cat >'PATH'"`: PATH under <root>/<NODE>.
        with open(os.path.join(bin_dir, "podman"), "w", encoding="utf-8") as f:
            f.write('#!/bin/sh\nnode=$3\npath=$(printf %s "$6" | sed -n "s/.*cat >\'\\(.*\\)\'$/\\1/p")\n'
                    f'mkdir -p "{root}/$node$(dirname "$path")" && cat >"{root}/$node$path"\n')
        os.chmod(os.path.join(bin_dir, "podman"), 0o755)
        env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
        subprocess.run(["bash", os.path.join(ALL_EXIT, "all-exit-sdn"), "hv01"], check=True, env=env)
        cls.node = os.path.join(root, "hv01")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def file(self, path):
        with open(self.node + path, encoding="utf-8") as f:
            return f.read()

    def running(self):
        return json.loads(self.file("/etc/pve/sdn/.running-config"))

    def test_its_written_stanzas_are_what_the_generation_makes_of_its_running_config(self):
        text, warnings = sdn.generate(self.running(), sdn.parse_interfaces(self.file("/etc/network/interfaces")), "hv01",
                                      lambda target: (None, None))
        self.assertEqual(warnings, [])
        generated, written = sdn.parse_stanzas(text), sdn.parse_stanzas(self.file("/etc/network/interfaces.d/sdn"))
        self.assertEqual({name: sorted(lines) for name, lines in generated.items()},
                         {name: sorted(lines) for name, lines in written.items()})
        self.assertIn("vxlan-local-tunnelip 198.51.100.131", generated["vrfvx_tdemo"])

    def test_its_cfg_files_commit_to_its_running_config(self):
        with tempfile.TemporaryDirectory() as d:
            for name in sdn.CFG_FILES:
                with open(os.path.join(d, f"{name}.cfg"), "w", encoding="utf-8") as f:
                    f.write(self.file(f"/etc/pve/sdn/{name}.cfg"))
            path = os.path.join(d, ".running-config")
            with open(path, "w", encoding="utf-8") as f:
                f.write(self.file("/etc/pve/sdn/.running-config"))
            self.assertEqual(sdn.commit(d, path), 2)
            with open(path, encoding="utf-8") as f:
                self.assertEqual(dict(json.load(f), version=1), self.running())

    def template(self):
        with open(os.path.join(ALL_EXIT, "frr-hv.conf.generated.in"), encoding="utf-8") as f:
            return f.read()

    def test_every_zone_is_rendered_once_whatever_the_evpn_asn(self):
        cfg = self.running()
        cfg["zones"]["ids"]["tnew"] = dict(cfg["zones"]["ids"]["tother"], **{"vrf-vxlan": 10003})
        text = frr.generated_for_zones(self.template(), frr.evpn_zones(cfg, "hv01"))
        for zone, vni in (("tdemo", 10001), ("tnew", 10003), ("tother", 10002)):
            self.assertEqual(text.count(f"vrf vrf_{zone}\n vni {vni}\nexit-vrf\n"), 1, zone)
            self.assertEqual(text.count(f"router bgp 45689 vrf vrf_{zone}\n"), 1, zone)
            self.assertEqual(text.count(f"  import vrf vrf_{zone}\n"), 2, zone)
        self.assertEqual(text.count("  default-originate ipv4\n"), 3)
        # The zone's frr.conf.local stanza folds into its generated BGP instance.
        merged = frr.merged_config(text, "router bgp 45689 vrf vrf_tnew\n address-family ipv4 unicast\n"
                                         "  import vrf default\n exit-address-family\nexit\n")
        instance = merged.split("router bgp 45689 vrf vrf_tnew\n", 1)[1].split("\nexit\n", 1)[0]
        self.assertIn("  redistribute connected\n  import vrf default\n", instance)
        self.assertEqual(merged.count("router bgp 45689 vrf vrf_tnew"), 1)


if __name__ == "__main__":
    unittest.main()
