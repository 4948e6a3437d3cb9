//! Linux interface names, checked by the kernel's own rules (`dev_valid_name`) before a name is
//! ever joined into a path such as `/proc/sys/net/ipv4/conf/<name>/forwarding`.

/// `IFNAMSIZ` minus the terminating NUL.
pub const MAX_LEN: usize = 15;

/// Checks `name` as the kernel would; the error says what is wrong and names the parameter.
pub fn validate(parameter: &str, name: &str) -> Result<(), String> {
    let problem = if name.is_empty() {
        Some("is empty")
    } else if name.len() > MAX_LEN {
        Some("is longer than 15 bytes (the kernel's IFNAMSIZ limit)")
    } else if name == "." || name == ".." {
        Some("is . or .., which the kernel refuses")
    } else if name.contains('/') {
        Some("contains '/', which the kernel refuses")
    } else if name.contains(':') {
        Some("contains ':', which the kernel refuses (an alias label is not an interface)")
    } else if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Some("contains whitespace or a control character")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(format!(
            "{parameter}: '{name}' is not a valid interface name: it {problem}; give the name as `ip link` shows it, e.g. vmbr0.50"
        )),
        None => Ok(()),
    }
}
