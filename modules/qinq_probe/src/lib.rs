//! The logic of `qinq_probe`, the active QinQ pair test, apart from its kernel I/O so that it
//! runs on recorded frames: the options ([`params`]), the probe's frames built, authenticated
//! and recognized ([`frame`]), the receiver's bounded count of what arrived ([`tally`]) and the
//! verdicts per sender and VLAN ([`report`]). The kernel side (the uplink found, the probe port
//! and its frames, the capture on every slave, the fdb) is [`node`].
//!
//! Entry points: [`report::evaluate`] judges what a receiver counted; [`frame`] builds and
//! verifies the frames both sides exchange. Neighbours: [`deevnet_runtime`] and
//! [`deevnet_probe_port`] (the probe port, its namespace, raw sockets and filters).
//!
//! # Threat model
//!
//! The receiver's capture sees whatever reaches its uplink's slaves, so anyone who can put a
//! frame there - a guest in one of the inner VLANs (every probe frame is broadcast in its VLAN,
//! so every guest in it sees them), a host or device on the switch in the outer VLAN - can try
//! to make a broken direction pass, or make the receiver's work explode. They know the run's
//! nonce (in every frame; derived from `run_id`, which is often a start time) and each sender's
//! run MAC (derived from `run_id` and the sender's name). What they must not know is the run's
//! `secret`: the controller makes one per run and passes it to every receiver and sender of it
//! (`no_log`: it is in no log, no result, no message and no frame).
//!
//! - Forgery: every frame carries an HMAC-SHA256, keyed with `secret`, over the run, its source
//!   MAC and its payload (nonce, VLAN, sequence number, count, sender name, its NIC and
//!   driver; no receiver: one broadcast frame serves every receiver of the run, and each
//!   counts a sequence number once). A frame counts for a sender only when it verifies and
//!   comes from that sender's run MAC; any other frame with the run's nonce is counted in
//!   `forged` (with a few examples and a warning), never as an arrival. Frames of another run
//!   fail too (another secret).
//! - Flooding: per frame, constant work (a hash map by sender, a bit per sequence number) and
//!   bounded state (the listed senders, at most 16 unlisted ones, 5 forged examples), and a
//!   bounded `msg`; frames past the capture queue are counted in `dropped`.
//! - Loss: a pair passes only when at most `max_loss_percent` of the frames its sender sent
//!   went missing, so one lucky frame of 20 proves nothing.
//!
//! Not covered: the hosts of one run share its secret, so they trust each other (a compromised
//! host of the run can vouch for another). A genuine frame seen during the run (by a guest in
//! its VLAN) can be replayed within the run: it repeats a sequence number its sender did send
//! (each counts once), but it may reach the receiver by another path than the sender's own.

pub mod frame;
pub mod node;
pub mod params;
pub mod report;
pub mod tally;

// A test reads as one story from setup to verdict: the length limit is production code's.
#[cfg(test)]
#[allow(clippy::too_many_lines)]
mod tests;
