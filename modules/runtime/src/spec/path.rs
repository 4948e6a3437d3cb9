//! Ansible's `path` type on the target: `~` and `$VAR` in a `path` option expanded with
//! Python's rules, from the environment a [`PathEnv`] gives.

/// Where `~` and `$VAR` in a `path` option come from.
pub trait PathEnv {
    /// The value of the environment variable `name`.
    fn var(&self, name: &str) -> Option<String>;
    /// The home folder of `user` from the user database; of the running user for `None`
    /// (what `~` means when `HOME` is not set).
    fn home_of(&self, user: Option<&str>) -> Option<String>;
}

/// This process's environment and the host's user database: on the target, the same ones
/// Ansible's `path` type expands with when a Python module runs there.
pub struct ProcessEnv;

impl PathEnv for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }
    fn home_of(&self, user: Option<&str>) -> Option<String> {
        use nix::unistd::{getuid, User};
        let user = match user {
            Some(name) => User::from_name(name),
            None => User::from_uid(getuid()),
        };
        user.ok()
            .flatten()
            .map(|u| u.dir.to_string_lossy().into_owned())
    }
}

/// Ansible's `path` type: `os.path.expanduser(os.path.expandvars(value))`, with Python's
/// rules. `$NAME` and `${NAME}` (NAME of ASCII letters, digits and `_`) are replaced by the
/// variable's value, and an undefined one is left as it is; the replaced text is not expanded
/// again. Then a leading `~` (up to the first `/`) becomes `HOME` (or the running user's home
/// folder when `HOME` is not set), and `~user` that user's home folder; an unknown user is
/// left as it is.
pub fn expand_path(value: &str, env: &dyn PathEnv) -> String {
    expand_user(&expand_vars(value, env), env)
}

fn expand_vars(value: &str, env: &dyn PathEnv) -> String {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        // `${NAME}` or `$NAME`: the name and the length of the whole reference.
        let reference = if let Some(braced) = after.strip_prefix('{') {
            braced.find('}').map(|end| (&braced[..end], end + 3))
        } else {
            let end = after.find(|c: char| !is_word(c)).unwrap_or(after.len());
            (end > 0).then(|| (&after[..end], end + 1))
        };
        match reference {
            Some((name, len)) => {
                match env.var(name) {
                    Some(replacement) => out.push_str(&replacement),
                    // Undefined: left as it is, and not searched again (`${A$B}` stays).
                    None => out.push_str(&rest[at..at + len]),
                }
                rest = &rest[at + len..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn expand_user(value: &str, env: &dyn PathEnv) -> String {
    let Some(after) = value.strip_prefix('~') else {
        return value.to_string();
    };
    let end = after.find('/').unwrap_or(after.len());
    let (user, rest) = after.split_at(end);
    let home = if user.is_empty() {
        env.var("HOME").or_else(|| env.home_of(None))
    } else {
        env.home_of(Some(user))
    };
    let Some(home) = home else {
        return value.to_string();
    };
    let joined = format!("{}{rest}", home.trim_end_matches('/'));
    if joined.is_empty() {
        "/".to_string()
    } else {
        joined
    }
}
