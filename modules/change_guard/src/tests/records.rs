use crate::records::{utc, SwitchState};

#[test]
fn utc_is_the_calendar_date_and_time() {
    assert_eq!(utc(0), "1970-01-01T00:00:00Z");
    assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(utc(1_796_652_900), "2026-12-07T14:15:00Z");
}

#[test]
fn only_the_rollback_states_count_as_rolled_back() {
    assert!(SwitchState::Restored.rolled_back());
    assert!(SwitchState::Expired.rolled_back());
    assert!(SwitchState::Booted.rolled_back());
    assert!(!SwitchState::Armed.rolled_back());
    assert!(!SwitchState::Confirmed.rolled_back());
}
