//! `deevnet.net.change_guard`: one guarded change on one node: the collection's lock, the
//! snapshot of the files the change may touch, and the dead-man's switch that restores it and
//! reloads what the restore touched unless the controller confirms in time. The same binary is
//! the switch (`--expire STATE_DIR RUN_ID`) and the boot's restore (`--boot STATE_DIR`).
//!
//! Flow: validate the options → check `state_dir` → lock it for this run → the state asked for
//! → result.

use change_guard::{expire, guard, Params, Request, SPEC};
use deevnet_runtime::Module;

static MODULE: Module = Module {
    name: "change_guard",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(status) = expire::dispatch(&args) {
        std::process::exit(status);
    }
    MODULE.run(|ctx, params: Params| guard::run(ctx, &Request::from_params(params)?))
}
