//! A module whose body panics: the runtime's panic hook must still end the run with one failed
//! JSON result (tests/it/panic_hook.rs runs it).
use deevnet_runtime::{Context, Failure, Module, Outcome};

static MODULE: Module = Module {
    name: "panicking_module",
    spec: &[],
    supports_check_mode: true,
};

fn main() {
    MODULE.run(
        |_: &mut Context, _: serde_json::Value| -> Result<Outcome, Failure> {
            let empty: Vec<u8> = Vec::new();
            // An out-of-bounds index: the kind of bug the hook exists for.
            let index = std::env::args().count() + 10;
            Ok(Outcome {
                msg: format!("{}", empty[index]),
                ..Outcome::default()
            })
        },
    )
}
