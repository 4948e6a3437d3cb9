//! deevnet.net.frr_local_stanza — FRR stanzas in `/etc/frr/frr.conf.local`, the file Proxmox
//! VE merges into the `frr.conf` it generates on every SDN apply.
//!
//! Flow: check the arguments (`params`) → lock and read the file → with `owner`, take back
//! what the owner wrote and no longer declares (`ownership`) → apply the stanzas, the rest of
//! the file kept byte for byte (`edit`) → lint the whole result against Proxmox's merge
//! (`lint`) → validate the staged file → replace it atomically, the owner record's writes
//! around it in their crash-safe order (`node`) → report, every secret masked (`secrets`). Any
//! refusal happens before the file is touched. With no `stanzas`, the task is a health check.

use deevnet_runtime::{Context, Failure, Module, Outcome};
use frr_local_stanza::node;
use frr_local_stanza::params::{Params, Request, SPEC};
use frr_local_stanza::secrets::Secrets;

static MODULE: Module = Module {
    name: "frr_local_stanza",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(run)
}

/// The run, with every secret the task, the file or the record holds masked in what it
/// returns: messages, lint findings, warnings, diffs, result keys, and the echoed arguments.
fn run(ctx: &mut Context, params: Params) -> Result<Outcome, Failure> {
    let mut secrets = Secrets::default();
    secrets.learn_stanzas(params.stanzas.as_deref().unwrap_or_default());
    let mut warnings = Vec::new();
    let result = Request::from_params(params)
        .and_then(|request| node::apply(&request, ctx.check_mode, &mut secrets, &mut warnings));
    for warning in warnings {
        ctx.warn(secrets.mask(&warning));
    }
    for value in secrets.values() {
        ctx.hide_in_invocation(value.as_str());
    }
    secrets.mask_result(result)
}
