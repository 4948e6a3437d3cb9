//! The unit tests, one file per module of the crate, each reaching its module's items through
//! `crate::<module>`.

mod boot;
mod managed_file;
mod sysctl_d;
