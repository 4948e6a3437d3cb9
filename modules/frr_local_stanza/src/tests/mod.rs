//! The unit tests, one file per module of the crate, each reaching its module's items through
//! `crate::<module>`.

mod edit;
mod grammar;
mod lint;
mod ownership;
mod params;
mod parse;
mod rules;
mod secrets;
mod stanza;
mod validate;
