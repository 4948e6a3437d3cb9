//! The routes as `ip -j -4 route show table all` prints them, and the ones into a VPC range.

use crate::ranges::{any_overlap, Range};
use serde::{Deserialize, Serialize};

/// One route of `ip -j -4 route show table all`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct IpRoute {
    /// Absent: a unicast route.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub dst: String,
    /// Absent: `main`.
    pub table: Option<String>,
    pub dev: Option<String>,
    pub gateway: Option<String>,
}

/// A route into a VPC range, as the result shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VpcRoute {
    pub dst: String,
    pub table: String,
    pub dev: Option<String>,
    pub gateway: Option<String>,
}

/// Parses `ip -j route show`.
pub fn parse(json: &str) -> Result<Vec<IpRoute>, String> {
    serde_json::from_str(json).map_err(|e| format!("JSON that does not parse: {e}"))
}

/// The unicast routes (prefix length above 0) whose destination overlaps a VPC range;
/// blackhole, unreachable, prohibit, local and broadcast routes carry nothing there.
pub fn into_vpc(routes: &[IpRoute], vpc_ranges: &[Range]) -> Vec<VpcRoute> {
    routes
        .iter()
        .filter(|r| r.kind.as_deref().is_none_or(|k| k == "unicast"))
        .filter_map(|r| {
            let dst = Range::parse_cidr(&r.dst)?;
            let default = dst.first == 0 && dst.last == u32::MAX;
            (!default && any_overlap(&[dst], vpc_ranges)).then(|| VpcRoute {
                dst: r.dst.clone(),
                table: r.table.clone().unwrap_or_else(|| "main".into()),
                dev: r.dev.clone(),
                gateway: r.gateway.clone(),
            })
        })
        .collect()
}
