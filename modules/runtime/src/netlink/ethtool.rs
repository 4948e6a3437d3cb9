//! ethtool over generic netlink (feature `ethtool`): a link's offload features, read and
//! switched (`ethtool -k` / `ethtool -K`), and its driver's name (`ethtool -i`).
//!
//! The messages go over a plain synchronous netlink socket, framed by netlink-packet-core
//! (nlmsghdr, attributes) and netlink-packet-generic (genlmsghdr, the controller's
//! CTRL_CMD_GETFAMILY that resolves the ethtool family). Only the ethtool feature bit set of a
//! SET is encoded here by hand: the `ethtool` crate has no features SET (its bit-set encoder is
//! a `todo!()` that panics), and its GET would pull a second netlink-proto into every binary.
//! Replies are read through netlink-packet-core's checked buffers, so a short or malformed
//! answer is an error, never a panic.
//!
//! Like every netlink socket, this one belongs to the network namespace current when
//! [`Ethtool::connect`] runs.

use super::NetlinkError;
use netlink_packet_core::{
    DecodeError, Emitable, NetlinkBuffer, NetlinkMessage, NetlinkPayload, Nla, NlaBuffer,
    NlasIterator, Parseable, ParseableParametrized, NLA_F_NESTED, NLMSG_ERROR, NLM_F_ACK,
    NLM_F_REQUEST,
};
use netlink_packet_generic::ctrl::nlas::GenlCtrlAttrs;
use netlink_packet_generic::ctrl::{GenlCtrl, GenlCtrlCmd};
use netlink_packet_generic::{GenlFamily, GenlHeader, GenlMessage};
use netlink_sys::{protocols::NETLINK_GENERIC, Socket, SocketAddr};
use std::fmt::Debug;
use std::os::fd::AsRawFd;

const ETHTOOL_GENL_VERSION: u8 = 1;
pub(crate) const ETHTOOL_MSG_FEATURES_GET: u8 = 11;
pub(crate) const ETHTOOL_MSG_FEATURES_SET: u8 = 12;
const ETHTOOL_A_HEADER_DEV_NAME: u16 = 2;
const ETHTOOL_A_HEADER_FLAGS: u16 = 3;
pub(crate) const ETHTOOL_FLAG_OMIT_REPLY: u32 = 1 << 1;
pub(crate) const ETHTOOL_A_FEATURES_HEADER: u16 = 1;
pub(crate) const ETHTOOL_A_FEATURES_HW: u16 = 2;
pub(crate) const ETHTOOL_A_FEATURES_WANTED: u16 = 3;
pub(crate) const ETHTOOL_A_FEATURES_ACTIVE: u16 = 4;
pub(crate) const ETHTOOL_A_FEATURES_NOCHANGE: u16 = 5;
pub(crate) const ETHTOOL_A_BITSET_NOMASK: u16 = 1;
pub(crate) const ETHTOOL_A_BITSET_BITS: u16 = 3;
pub(crate) const ETHTOOL_A_BITSET_BITS_BIT: u16 = 1;
pub(crate) const ETHTOOL_A_BITSET_BIT_NAME: u16 = 2;
pub(crate) const ETHTOOL_A_BITSET_BIT_VALUE: u16 = 3;

/// The kernel's name of the 802.1Q VLAN tag insertion offload (`ethtool -k` prints it as
/// `tx-vlan-offload`).
pub const TX_VLAN_HW_INSERT: &str = "tx-vlan-hw-insert";
/// The same for 802.1ad service tags.
pub const TX_VLAN_STAG_HW_INSERT: &str = "tx-vlan-stag-hw-insert";

/// One feature of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    /// On now.
    pub active: bool,
    /// `ethtool -K` can switch it (it is in the driver's changeable set and not one the kernel
    /// never changes); `ethtool -k` prints `[fixed]` otherwise.
    pub changeable: bool,
}

/// A link's features by the kernel's names (`tx-vlan-hw-insert`, `rx-gro`, …). A name the
/// kernel did not list in any set is a feature the link does not have: off and fixed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Features {
    active: Vec<String>,
    changeable: Vec<String>,
    never_change: Vec<String>,
}

impl Features {
    pub fn get(&self, name: &str) -> Feature {
        let has = |set: &[String]| set.iter().any(|n| n == name);
        Feature {
            active: has(&self.active),
            changeable: has(&self.changeable) && !has(&self.never_change),
        }
    }

    /// The features that are on, sorted.
    pub fn active(&self) -> &[String] {
        &self.active
    }
}

/// Reads the attributes of an ETHTOOL_MSG_FEATURES_GET_REPLY (after the genetlink header).
pub fn features_from_reply(attributes: &[u8]) -> Result<Features, String> {
    let mut features = Features::default();
    let mut seen_active = false;
    for attribute in nlas(attributes)? {
        let target = match attribute.kind() {
            ETHTOOL_A_FEATURES_HW => &mut features.changeable,
            ETHTOOL_A_FEATURES_ACTIVE => {
                seen_active = true;
                &mut features.active
            }
            ETHTOOL_A_FEATURES_NOCHANGE => &mut features.never_change,
            _ => continue,
        };
        *target = bits_set(attribute.value())?;
    }
    if !seen_active {
        return Err("the reply has no active feature set".into());
    }
    for set in [
        &mut features.active,
        &mut features.changeable,
        &mut features.never_change,
    ] {
        set.sort();
        set.dedup();
    }
    Ok(features)
}

/// The names of the bits set in a verbose (named) bit set.
pub(crate) fn bits_set(bitset: &[u8]) -> Result<Vec<String>, String> {
    let mut nomask = false;
    let mut bits = None;
    for attribute in nlas(bitset)? {
        match attribute.kind() {
            ETHTOOL_A_BITSET_NOMASK => nomask = true,
            ETHTOOL_A_BITSET_BITS => bits = Some(attribute.value()),
            _ => {}
        }
    }
    let mut names = Vec::new();
    // A set with no bit on has no BITS at all.
    for bit in nlas(bits.unwrap_or_default())? {
        if bit.kind() != ETHTOOL_A_BITSET_BITS_BIT {
            continue;
        }
        let mut name = None;
        let mut value = false;
        for field in nlas(bit.value())? {
            match field.kind() {
                ETHTOOL_A_BITSET_BIT_NAME => name = Some(c_string(field.value())?),
                ETHTOOL_A_BITSET_BIT_VALUE => value = true,
                _ => {}
            }
        }
        let name = name.ok_or("a feature bit without a name")?;
        // Without a mask the list holds the bits that are set; with one, VALUE says which.
        if nomask || value {
            names.push(name);
        }
    }
    Ok(names)
}

/// One attribute of a reply, borrowing its value from the reply.
pub(crate) struct ReplyAttr<'a> {
    kind: u16,
    value: &'a [u8],
}

impl<'a> ReplyAttr<'a> {
    pub(crate) fn kind(&self) -> u16 {
        self.kind
    }
    pub(crate) fn value(&self) -> &'a [u8] {
        self.value
    }
}

/// The attributes in `bytes`, each checked to lie within it.
pub(crate) fn nlas(bytes: &[u8]) -> Result<Vec<ReplyAttr<'_>>, String> {
    let malformed = |e: &dyn std::fmt::Display| format!("malformed attribute: {e}");
    let mut out = Vec::new();
    for nla in NlasIterator::new(bytes) {
        let nla: NlaBuffer<&[u8]> = nla.map_err(|e| malformed(&e))?;
        let (kind, length) = (nla.kind(), nla.length() as usize);
        let value = nla
            .into_inner()
            .get(4..length)
            .ok_or_else(|| malformed(&"length out of range"))?;
        out.push(ReplyAttr { kind, value });
    }
    Ok(out)
}

pub(crate) fn c_string(bytes: &[u8]) -> Result<String, String> {
    let text = bytes.split(|&b| b == 0).next().unwrap_or_default();
    String::from_utf8(text.to_vec()).map_err(|_| "a name that is not UTF-8".to_string())
}

/// One attribute of a request; netlink-packet-core's [`Nla`] frames it (length, type, nested
/// flag, padding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attr {
    /// A NUL-terminated string.
    Str(u16, String),
    U32(u16, u32),
    /// A flag: present, with no value.
    Flag(u16),
    Nested(u16, Vec<Attr>),
}

impl Nla for Attr {
    fn value_len(&self) -> usize {
        match self {
            Attr::Str(_, value) => value.len() + 1,
            Attr::U32(..) => 4,
            Attr::Flag(_) => 0,
            Attr::Nested(_, inner) => inner.as_slice().buffer_len(),
        }
    }

    fn kind(&self) -> u16 {
        match self {
            Attr::Str(kind, _) | Attr::U32(kind, _) | Attr::Flag(kind) => *kind,
            Attr::Nested(kind, _) => kind | NLA_F_NESTED,
        }
    }

    fn emit_value(&self, buffer: &mut [u8]) {
        match self {
            Attr::Str(_, value) => {
                buffer[..value.len()].copy_from_slice(value.as_bytes());
                buffer[value.len()] = 0;
            }
            Attr::U32(_, value) => buffer.copy_from_slice(&value.to_ne_bytes()),
            Attr::Flag(_) => {}
            Attr::Nested(_, inner) => inner.as_slice().emit(buffer),
        }
    }
}

/// The bytes of a list of attributes.
pub(crate) fn emitted(attributes: &[Attr]) -> Vec<u8> {
    let mut bytes = vec![0; attributes.buffer_len()];
    attributes.emit(&mut bytes);
    bytes
}

/// The header attribute every ethtool request starts with.
pub(crate) fn request_header(device: &str, flags: u32) -> Attr {
    let mut header = vec![Attr::Str(ETHTOOL_A_HEADER_DEV_NAME, device.into())];
    if flags != 0 {
        header.push(Attr::U32(ETHTOOL_A_HEADER_FLAGS, flags));
    }
    Attr::Nested(ETHTOOL_A_FEATURES_HEADER, header)
}

/// The attributes of an ETHTOOL_MSG_FEATURES_SET that switches one feature on or off and
/// leaves every other one as it is.
///
/// The ethtool bit set is encoded here by hand, on purpose: no crate offers it (the `ethtool`
/// crate's encoder is a `todo!()`). A verbose (named) set without NOMASK: the one bit
/// listed is the mask, and VALUE is present only to switch it on.
pub(crate) fn features_set_attributes(device: &str, feature: &str, on: bool) -> Vec<Attr> {
    let mut bit = vec![Attr::Str(ETHTOOL_A_BITSET_BIT_NAME, feature.into())];
    if on {
        bit.push(Attr::Flag(ETHTOOL_A_BITSET_BIT_VALUE));
    }
    let bits = vec![Attr::Nested(ETHTOOL_A_BITSET_BITS_BIT, bit)];
    let wanted = vec![Attr::Nested(ETHTOOL_A_BITSET_BITS, bits)];
    vec![
        request_header(device, ETHTOOL_FLAG_OMIT_REPLY),
        Attr::Nested(ETHTOOL_A_FEATURES_WANTED, wanted),
    ]
}

/// `features_set_attributes` as the bytes that follow the genetlink header.
pub fn features_set_request(device: &str, feature: &str, on: bool) -> Vec<u8> {
    emitted(&features_set_attributes(device, feature, on))
}

/// A request of the ethtool family: its command and attributes; netlink-packet-generic puts the
/// genetlink header (command, version) in front.
#[derive(Debug)]
pub(crate) struct EthtoolRequest {
    pub(crate) command: u8,
    pub(crate) attributes: Vec<Attr>,
}

impl GenlFamily for EthtoolRequest {
    fn family_name() -> &'static str {
        "ethtool"
    }

    fn command(&self) -> u8 {
        self.command
    }

    fn version(&self) -> u8 {
        ETHTOOL_GENL_VERSION
    }
}

impl Emitable for EthtoolRequest {
    fn buffer_len(&self) -> usize {
        self.attributes.as_slice().buffer_len()
    }

    fn emit(&self, buffer: &mut [u8]) {
        self.attributes.as_slice().emit(buffer)
    }
}

/// A reply's attributes (after the genetlink header), not decoded yet: each caller reads what
/// it needs, and a malformed attribute is reported where it is read.
#[derive(Debug)]
struct Reply(Vec<u8>);

impl ParseableParametrized<[u8], GenlHeader> for Reply {
    fn parse_with_param(buf: &[u8], _: GenlHeader) -> Result<Self, DecodeError> {
        Ok(Reply(buf.to_vec()))
    }
}

/// An open generic-netlink socket with the ethtool family resolved.
pub struct Ethtool {
    socket: Socket,
    family: u16,
    sequence: u32,
}

impl Ethtool {
    /// Opens the socket in the calling thread's network namespace and looks up the ethtool
    /// family.
    pub fn connect() -> Result<Self, NetlinkError> {
        const OPERATION: &str = "opening the ethtool netlink socket";
        let mut socket =
            Socket::new(NETLINK_GENERIC).map_err(|e| NetlinkError::from_io(OPERATION, e))?;
        socket
            .bind_auto()
            .map_err(|e| NetlinkError::from_io(OPERATION, e))?;
        socket
            .connect(&SocketAddr::new(0, 0))
            .map_err(|e| NetlinkError::from_io(OPERATION, e))?;
        let mut ethtool = Ethtool {
            socket,
            family: 0,
            sequence: 0,
        };
        let request = GenlCtrl {
            cmd: GenlCtrlCmd::GetFamily,
            nlas: vec![GenlCtrlAttrs::FamilyName(
                EthtoolRequest::family_name().into(),
            )],
        };
        let operation = "looking up the ethtool netlink family";
        let replies = match ethtool.request(operation, request, 0) {
            Err(error) if error.errno() == Some(libc::ENOENT) => {
                return Err(NetlinkError::other(
                    operation,
                    "this kernel has no ethtool netlink interface (it needs Linux 5.6 or later with CONFIG_ETHTOOL_NETLINK)",
                ))
            }
            other => other?,
        };
        let family = replies
            .iter()
            .filter_map(|reply| {
                NlasIterator::new(&reply.0)
                    .collect::<Result<Vec<_>, _>>()
                    .ok()
            })
            .flatten()
            .find_map(|nla| match GenlCtrlAttrs::parse(&nla) {
                Ok(GenlCtrlAttrs::FamilyId(id)) => Some(id),
                _ => None,
            })
            .ok_or_else(|| {
                NetlinkError::other(operation, "the kernel's answer has no family id")
            })?;
        ethtool.family = family;
        Ok(ethtool)
    }

    /// A link's features (`ethtool -k DEVICE`).
    pub fn features(&mut self, device: &str) -> Result<Features, NetlinkError> {
        let operation = format!("reading the offload features of {device}");
        let request = EthtoolRequest {
            command: ETHTOOL_MSG_FEATURES_GET,
            attributes: vec![request_header(device, 0)],
        };
        let replies = self.request(&operation, request, 0)?;
        let reply = replies
            .first()
            .ok_or_else(|| NetlinkError::other(&operation, "the kernel sent no answer"))?;
        features_from_reply(&reply.0).map_err(|detail| NetlinkError::other(&operation, detail))
    }

    /// Switches one feature on or off (`ethtool -K DEVICE FEATURE on|off`). The kernel may
    /// accept the request and still keep the feature as it was (a driver that cannot change
    /// it): read the features again to know.
    pub fn set_feature(
        &mut self,
        device: &str,
        feature: &str,
        on: bool,
    ) -> Result<(), NetlinkError> {
        let operation = format!(
            "switching {feature} {} on {device}",
            if on { "on" } else { "off" }
        );
        let request = EthtoolRequest {
            command: ETHTOOL_MSG_FEATURES_SET,
            attributes: features_set_attributes(device, feature, on),
        };
        let result = self.request(&operation, request, NLM_F_ACK);
        result.map_err(|error| match error.errno() {
            Some(libc::EINVAL) => NetlinkError::other(
                &operation,
                format!("the kernel refused (EINVAL): {feature} is fixed on this device's driver"),
            ),
            Some(libc::EOPNOTSUPP) => NetlinkError::other(
                &operation,
                format!(
                    "the kernel refused (EOPNOTSUPP): this kernel has no feature named {feature}"
                ),
            ),
            _ => error,
        })?;
        Ok(())
    }

    /// The name of the link's driver (`ethtool -i DEVICE`: `mlx4_en`, `ixgbe`, `veth`, …), or
    /// `None` when the device has no driver information.
    pub fn driver(&self, device: &str) -> Result<Option<String>, NetlinkError> {
        driver_name(self.socket.as_raw_fd(), device)
    }

    /// Sends one request (to the controller's static family, or to the resolved ethtool
    /// family) and collects the attributes of its answers, up to the ACK or the end of the dump.
    fn request<F>(
        &mut self,
        operation: &str,
        payload: F,
        extra_flags: u16,
    ) -> Result<Vec<Reply>, NetlinkError>
    where
        F: GenlFamily + Emitable + Debug,
    {
        self.sequence = self.sequence.wrapping_add(1);
        let sequence = self.sequence;
        let bytes = frame(self.family, sequence, payload, NLM_F_REQUEST | extra_flags);
        self.socket
            .send(&bytes, 0)
            .map_err(|e| NetlinkError::from_io(operation, e))?;

        let malformed = |e: &dyn std::fmt::Display| {
            NetlinkError::other(operation, format!("malformed answer: {e}"))
        };
        let mut replies = Vec::new();
        loop {
            let (datagram, _) = self
                .socket
                .recv_from_full()
                .map_err(|e| NetlinkError::from_io(operation, e))?;
            let mut offset = 0;
            while offset < datagram.len() {
                let rest = &datagram[offset..];
                let buffer = NetlinkBuffer::new_checked(&rest).map_err(|e| malformed(&e))?;
                offset += (buffer.length() as usize).next_multiple_of(4);
                if buffer.sequence_number() != sequence {
                    continue;
                }
                if buffer.message_type() == NLMSG_ERROR && buffer.payload().len() < 4 {
                    return Err(NetlinkError::other(operation, "a truncated error"));
                }
                let answer = NetlinkMessage::<GenlMessage<Reply>>::parse(&buffer)
                    .map_err(|e| malformed(&e))?;
                match answer.payload {
                    NetlinkPayload::Error(error) => {
                        return match error.code {
                            None => Ok(replies),
                            Some(code) => Err(NetlinkError::from_errno(
                                operation,
                                code.get().saturating_abs(),
                            )),
                        };
                    }
                    NetlinkPayload::Done(_) => return Ok(replies),
                    NetlinkPayload::InnerMessage(reply) => {
                        replies.push(reply.payload);
                        // Without NLM_F_ACK a non-dump request has exactly one answer.
                        if extra_flags & NLM_F_ACK == 0 {
                            return Ok(replies);
                        }
                    }
                    // NLMSG_NOOP and NLMSG_OVERRUN never answer a request.
                    _ => {}
                }
            }
        }
    }
}

/// One request as it goes on the wire: nlmsghdr, genlmsghdr, attributes. A family with a static
/// id (the controller's) keeps it; the ethtool family's is `family`, the resolved one.
pub(crate) fn frame<F>(family: u16, sequence: u32, payload: F, flags: u16) -> Vec<u8>
where
    F: GenlFamily + Emitable + Debug,
{
    let mut genl = GenlMessage::from_payload(payload);
    genl.set_resolved_family_id(family);
    let mut message = NetlinkMessage::from(genl);
    message.header.flags = flags;
    message.header.sequence_number = sequence;
    message.finalize();
    let mut bytes = vec![0; message.buffer_len()];
    message.serialize(&mut bytes);
    bytes
}

/// `ETHTOOL_GDRVINFO` through the `SIOCETHTOOL` ioctl on any socket of the namespace: generic
/// netlink has no message for the driver's name.
fn driver_name(socket: i32, device: &str) -> Result<Option<String>, NetlinkError> {
    const ETHTOOL_GDRVINFO: u32 = 0x0000_0003;
    #[repr(C)]
    struct DriverInfo {
        cmd: u32,
        driver: [u8; 32],
        version: [u8; 32],
        fw_version: [u8; 32],
        bus_info: [u8; 32],
        erom_version: [u8; 32],
        reserved2: [u8; 12],
        n_priv_flags: u32,
        n_stats: u32,
        testinfo_len: u32,
        eedump_len: u32,
        regdump_len: u32,
    }
    let operation = format!("reading the driver of {device}");
    let name = device.as_bytes();
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(&0) {
        return Err(NetlinkError::other(operation, "not a valid interface name"));
    }
    let mut info = DriverInfo {
        cmd: ETHTOOL_GDRVINFO,
        driver: [0; 32],
        version: [0; 32],
        fw_version: [0; 32],
        bus_info: [0; 32],
        erom_version: [0; 32],
        reserved2: [0; 12],
        n_priv_flags: 0,
        n_stats: 0,
        testinfo_len: 0,
        eedump_len: 0,
        regdump_len: 0,
    };
    // SAFETY: `ifreq` is plain old data, valid when zeroed; the name is copied within its
    // IFNAMSIZ bytes (checked above, NUL-terminated by the zeroing); `ifru_data` points at
    // `info`, which outlives the call and has the layout of `struct ethtool_drvinfo` that the
    // kernel writes into; `socket` is an open descriptor owned by the caller.
    let result = unsafe {
        let mut request: libc::ifreq = std::mem::zeroed();
        for (slot, byte) in request.ifr_name.iter_mut().zip(name) {
            *slot = *byte as libc::c_char;
        }
        request.ifr_ifru.ifru_data = (&mut info as *mut DriverInfo).cast();
        libc::ioctl(socket, libc::SIOCETHTOOL, &mut request)
    };
    if result < 0 {
        let error = std::io::Error::last_os_error();
        return match error.raw_os_error() {
            Some(libc::EOPNOTSUPP) => Ok(None),
            _ => Err(NetlinkError::from_io(operation, error)),
        };
    }
    let driver = c_string(&info.driver).unwrap_or_default();
    Ok(Some(driver).filter(|d| !d.is_empty()))
}
