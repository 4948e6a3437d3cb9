use super::*;
use crate::checks::our_table;
use crate::persisted::compare;

#[test]
fn the_table_listed_alone_equals_the_running_one_in_the_whole_ruleset() {
    let difference = compare(
        &ruleset(ENFORCED_TABLE),
        &ruleset(ENFORCED),
        &our_table(&request()),
    );
    assert!(difference.is_empty(), "{difference:?}");
}

#[test]
fn an_extra_running_rule_and_a_missing_one_are_named() {
    let owner = our_table(&request());
    let difference = compare(&ruleset(ENFORCED_TABLE), &ruleset(ACCEPT_AHEAD), &owner);
    assert!(difference.missing.is_empty());
    assert_eq!(difference.extra.len(), 1);
    assert!(
        difference.extra[0].starts_with("rule {\"chain\":\"from_transit\""),
        "{:?}",
        difference.extra
    );
    let difference = compare(&ruleset(ACCEPT_AHEAD), &ruleset(ENFORCED), &owner);
    assert_eq!(difference.missing.len(), 1);
}

#[test]
fn counters_and_handles_do_not_count_as_differences() {
    let counted = ENFORCED.replace(
        "\"packets\": 0, \"bytes\": 0",
        "\"packets\": 7, \"bytes\": 900",
    );
    assert_ne!(counted, ENFORCED);
    let difference = compare(
        &ruleset(ENFORCED_TABLE),
        &ruleset(&counted),
        &our_table(&request()),
    );
    assert!(difference.is_empty(), "{difference:?}");
}
