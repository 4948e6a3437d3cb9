//! The logic of `egress_probe`: what the operator asked for ([`params`]: the options and the
//! validated request), checked against the node ([`tenant`]), the probe's packets recognized in
//! captured frames ([`frame`]) and the result ([`report`]); all pure, tested on recorded data.
//! The kernel side: the node's facts ([`node`]), the captures ([`capture`]), the probes'
//! packets ([`probe`]), every target probed at once from inside ([`all_targets`]), the ARP
//! check for a free address ([`arp`]), and one probe session on the node from lock to teardown
//! ([`session`]). Entry points: [`tenant::resolve`] checks a request against the node,
//! [`session::probe`] runs every probe, [`report::build_on_node`] judges what was seen.
//!
//! Invariants: the module changes no configuration (the workloads exist only during the run,
//! removed on any way out by `deevnet_probe_port`'s namespace and marked veth); an ICMP error
//! counts only when its quote holds the run's nonce. A target in the VNet's own subnet is
//! refused but for a peer (another node's workload of a fabric proof), whose requests must be
//! seen leaving by its `via`. Bounded: a run waits at most count × timeout (600 s) for answers;
//! with `start_at` (at most 300 s ahead, checked first) its probing starts then and its
//! workloads stay until `start_at` + count × timeout, for the peers probing them meanwhile.
//! Neighbours: [`deevnet_runtime`] and [`deevnet_probe_port`].

pub mod all_targets;
pub mod arp;
pub mod capture;
pub mod frame;
pub mod node;
pub mod params;
pub mod probe;
// The recorded run's fixture: for this crate's tests and, by the feature, the fuzz invariants.
#[cfg(any(test, feature = "test-support"))]
pub mod recorded_run;
pub mod report;
pub mod session;
pub mod tenant;

// A test reads as one story from setup to verdict: the length limit is production code's.
#[cfg(test)]
#[allow(clippy::too_many_lines)]
mod tests;
