use crate::vlan_set::*;
use deevnet_runtime::netlink::PortVlans;
use deevnet_runtime::netlink::VlanEntry;

/// A VLAN (or range) of a bridge port, as the kernel reports it.
pub(super) fn entry(start: u16, end: u16, pvid: bool, untagged: bool) -> VlanEntry {
    VlanEntry {
        start,
        end,
        pvid,
        untagged,
    }
}

fn parse(items: &[&str]) -> Result<VlanSet, String> {
    let items: Vec<String> = items.iter().map(|s| s.to_string()).collect();
    VlanSet::parse("vlans", &items)
}

#[test]
fn ranges_lists_and_bridge_vids_spelling() {
    assert_eq!(parse(&["199-299"]).unwrap().to_string(), "199-299");
    assert_eq!(parse(&["199-299"]).unwrap().len(), 101);
    assert_eq!(
        parse(&["260", "199-249", "250"]).unwrap().to_string(),
        "199-250,260"
    );
    assert_eq!(parse(&["10 20-30,40"]).unwrap().to_string(), "10,20-30,40");
    assert_eq!(parse(&["1-4094"]).unwrap().len(), 4094);
    let set = parse(&["199-299"]).unwrap();
    assert!(set.contains(199) && set.contains(299) && !set.contains(300));
}

#[test]
fn bad_vlans_say_what_to_write() {
    let err = parse(&["299-199"]).unwrap_err();
    assert!(err.contains("'299-199' is written backwards"), "{err}");
    assert!(err.contains("199-299"), "{err}");
    for bad in ["0", "4095", "199-5000", "70000"] {
        let err = parse(&[bad]).unwrap_err();
        assert!(err.contains("outside 1-4094"), "{bad}: {err}");
    }
    for bad in ["abc", "199-", "-5", "1-2-3"] {
        let err = parse(&[bad]).unwrap_err();
        assert!(err.starts_with("vlans: "), "{bad}: {err}");
    }
    assert!(parse(&[]).unwrap_err().contains("no VLAN given"));
    assert!(parse(&[" , "]).unwrap_err().contains("no VLAN given"));
}

#[test]
fn missing_and_untagged_on_a_port() {
    let zone = parse(&["199-299"]).unwrap();
    let port = PortVlans {
        index: 9,
        name: "bond0.40".into(),
        controller: Some(11),
        vlans: vec![
            entry(1, 1, true, true),
            entry(199, 249, false, false),
            entry(250, 250, false, true),
            entry(252, 299, false, false),
        ],
    };
    assert_eq!(zone.missing_on(&port).to_string(), "251");
    assert_eq!(zone.untagged_on(&port).to_string(), "250");
    assert!(zone.missing_on(&PortVlans::default()).len() == 101);
}
