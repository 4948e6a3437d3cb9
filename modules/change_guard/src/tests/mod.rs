//! The unit tests, one file per module of the crate, each reaching its module's items through
//! `crate::<module>`.

mod params;
mod records;
mod restore;
mod snapshot;
mod switch;
