use crate::ownership;
use crate::params::*;
use crate::stanza::{Mode, Stanza};
use std::time::Duration;

fn params(stanzas: Vec<Stanza>) -> Params {
    Params {
        path: "/etc/frr/frr.conf.local".into(),
        stanzas: Some(stanzas),
        lint: LintLevel::Warn,
        asn: None,
        validate: None,
        owner: None,
        owner_record: ownership::DEFAULT_RECORD.into(),
        backup: false,
        lock_timeout: 30,
        follow_untrusted_links: false,
    }
}

fn refusal(params: Params) -> String {
    match Request::from_params(params) {
        Ok(_) => panic!("accepted"),
        Err(failure) => failure.msg,
    }
}

#[test]
fn a_request_is_checked_before_any_file_is_read() {
    let vrf = Stanza::present("vrf  v", &["x"], Mode::Exact);
    let request =
        Request::from_params(params(vec![vrf.clone()])).unwrap_or_else(|f| panic!("{}", f.msg));
    assert_eq!(request.stanzas[0].header, "vrf v");
    assert_eq!(request.lock_timeout, Duration::from_secs(30));
    assert!(request.owner.is_none());

    let asn = Params {
        asn: Some(0),
        ..params(vec![])
    };
    assert!(refusal(asn).starts_with("asn=0 is not a BGP AS number"));
    let timeout = Params {
        lock_timeout: 0,
        ..params(vec![])
    };
    assert!(refusal(timeout).starts_with("lock_timeout=0 is out of range"));
    let owner = Params {
        owner: Some(" ".into()),
        ..params(vec![])
    };
    assert!(refusal(owner).starts_with("owner=\" \" is not a name"));
    // lint=warn lets `ip nht …` through, an owner does not (issue 29 item 5).
    let nht = Stanza::present("ip nht resolve-via-default", &[], Mode::Exact);
    assert!(Request::from_params(params(vec![nht.clone()])).is_ok());
    let owned = Params {
        owner: Some("role".into()),
        ..params(vec![nht])
    };
    assert!(refusal(owned).contains("is not a stanza Proxmox's merge recognises"));
    let owned = Params {
        owner: Some("role".into()),
        ..params(vec![vrf])
    };
    let request = Request::from_params(owned).unwrap_or_else(|f| panic!("{}", f.msg));
    assert_eq!(request.owner.map(|o| o.name), Some("role".into()));
}
