//! The logic of `qinq_probe`, the active QinQ pair test, apart from its kernel I/O so that it
//! runs on recorded frames: the options ([`params`]), the probe's frames built and recognized
//! ([`frame`]) and the verdicts per sender and VLAN ([`report`]). The kernel side (the uplink
//! found, the probe port and its frames, the capture on every slave, the fdb) is [`node`].

pub mod frame;
pub mod node;
pub mod params;
pub mod report;

#[cfg(test)]
mod tests;
