//! `deevnet.net.sysctl_forwarding`: IPv4 forwarding for a tenant fabric's exit node, persisted
//! in a sysctl.d file this module owns and applied now, with the transit interfaces forwarding
//! at once and the boot-time winner of every key checked.
//!
//! The first fault of the mission: the node-owned transit interface `vmbr0.50` came up with
//! `forwarding=0` (created after boot, it did not inherit `all`), so replies were dropped while
//! the SNAT counter climbed.
//!
//! Flow: validate the options → lock → read the file → plan (the new file, which file wins at
//! boot, the runtime values to set: [`node::plan`]) → check every write is possible → write
//! the file → apply → read back → result.

use deevnet_runtime::atomic_file;
use deevnet_runtime::file_policy::{self, FileLock};
use deevnet_runtime::{FileDiff, Module, Outcome};
use sysctl_forwarding::report::{self, Report};
use sysctl_forwarding::{node, Params, Request, SPEC};

static MODULE: Module = Module {
    name: "sysctl_forwarding",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|ctx, params: Params| {
        let Request {
            options,
            lock_timeout,
        } = Request::from_params(params)?;
        // The file policy first (check mode too): a masked, untrusted or non-regular file fails
        // here, before any runtime value is read or set.
        let target = file_policy::resolve("path", &options.path, options.follow_untrusted_links)?;
        let _lock = FileLock::acquire(&target, lock_timeout)?;

        let before_file = file_policy::read_text(&target)?;
        let plan = node::plan(ctx, &options)?;
        let file_changes = before_file != plan.after_file;
        if !ctx.check_mode {
            for target in plan.to_apply() {
                target.key.check_writable()?;
            }
        }
        let applied = plan.to_apply().count();

        let mut outcome = Outcome {
            changed: file_changes || applied > 0,
            ..Outcome::default()
        };
        let mut backup_file = None;
        if file_changes {
            outcome.diff.push(FileDiff::of_file(
                &options.path,
                before_file.as_deref().unwrap_or(""),
                plan.after_file.as_deref().unwrap_or(""),
            ));
            if !ctx.check_mode {
                backup_file = match &plan.after_file {
                    Some(text) => atomic_file::replace(
                        &target,
                        text.as_bytes(),
                        options.backup,
                        atomic_file::PUBLIC_FILE,
                    )?,
                    None => atomic_file::remove(&target, options.backup)?,
                };
            }
        }
        if !ctx.check_mode {
            for target in plan.to_apply() {
                target.key.write(&target.desired)?;
            }
        }

        let runtime = node::runtime_report(ctx, &options, &plan.targets)?;
        outcome.set_report(&Report {
            interfaces: report::interfaces_report(&options, &runtime),
            runtime,
            boot: plan.boot,
            path: options.path.clone(),
            backup_file,
        });
        outcome.msg = report::summary(&options, file_changes, applied, ctx.check_mode);
        Ok(outcome)
    })
}
