//! A value that is one of a few words, as an enum: [`choices!`](crate::choices) declares the
//! enum, its words (`CHOICES`, which an option's spec gives to
//! [`OptionSpec::choices`](crate::OptionSpec::choices)), its deserializer from the same list
//! (a word the spec accepts always reads back, and a typo can never fall into a catch-all
//! arm), and `Serialize`/`Display` as the word (for a closed set in a module's result).
//!
//! ```
//! deevnet_runtime::choices! {
//!     /// What to do about a finding.
//!     pub enum Policy { Fail = "fail", Warn = "warn", Ignore = "ignore" }
//! }
//! assert_eq!(Policy::CHOICES, ["fail", "warn", "ignore"]);
//! assert_eq!(Policy::Warn.as_str(), "warn");
//! let policy: Policy = serde_json::from_str("\"ignore\"").unwrap();
//! assert_eq!(policy, Policy::Ignore);
//! assert!(serde_json::from_str::<Policy>("\"ignroe\"").is_err());
//! assert_eq!(serde_json::to_string(&Policy::Fail).unwrap(), "\"fail\"");
//! assert_eq!(Policy::Warn.to_string(), "warn");
//! ```

/// Declares a choice enum: variants with their words, `CHOICES`, `as_str`, `Deserialize`,
/// `Serialize` and `Display`.
#[macro_export]
macro_rules! choices {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $word:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$variant_meta])* $variant),+
        }

        impl $name {
            /// The words the option accepts, in the order the spec documents them.
            pub const CHOICES: &'static [&'static str] = &[$($word),+];

            /// The word of this choice, as the operator writes it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }
        }

        impl<'de> $crate::__serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                let word =
                    <::std::string::String as $crate::__serde::Deserialize>::deserialize(deserializer)?;
                match word.as_str() {
                    $($word => Ok($name::$variant),)+
                    other => Err(<D::Error as $crate::__serde::de::Error>::unknown_variant(
                        other,
                        Self::CHOICES,
                    )),
                }
            }
        }

        impl $crate::__serde::Serialize for $name {
            fn serialize<S: $crate::__serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
