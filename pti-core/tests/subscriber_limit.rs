//! The subscriber limit, in a process of its own so that no other test holds slots.

use pti_core::callback::MAX_SUBSCRIBERS;
use pti_core::{ResultCode, Subscriber};

#[test]
fn subscribing_past_the_limit_fails_cleanly_and_a_freed_slot_is_reused() {
    let mut subs: Vec<_> = (0..MAX_SUBSCRIBERS)
        .map(|_| Subscriber::new(|_| {}).unwrap())
        .collect();
    let err = Subscriber::new(|_| {}).unwrap_err();
    assert_eq!(err.code(), ResultCode::ErrorTooManySubscribers);
    let old = subs.pop().unwrap().id();
    let new = Subscriber::new(|_| {}).unwrap();
    assert_ne!(new.id(), old, "a reused slot gets a new handle");
    assert!(
        pti_core::session::unsubscribe(old).is_err(),
        "the old handle stays stale"
    );
}
