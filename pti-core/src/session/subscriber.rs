//! The Callback API as tools use it: subscribing, enabling, and the Rust [`Subscriber`].
//!
//! The subscriber table and delivery are the engine's (`crate::callback`); an enable here also
//! tells the backends of the enabled functions (see the session's table).

use super::{activate, process};
use crate::api::{ApiGroup, ApiId, Domain};
use crate::backend::contract::Activation;
use crate::callback::{self, Event, Handler, SubscriberId};
use crate::result::Error;

/// Adds a subscriber with nothing enabled. See `crate::callback` for what is guaranteed.
pub fn subscribe(handler: Handler) -> Result<SubscriberId, Error> {
    process::prepare();
    callback::subscribe(handler)
}

/// Removes a subscriber: when it returns, no callback of it starts again (see `crate::callback`).
pub fn unsubscribe(id: SubscriberId) -> Result<(), Error> {
    callback::unsubscribe(id)
}

/// Enables or disables the callback of one function for one subscriber.
///
/// Checks, in this order: the subscriber, then that `api_id` names a function of `group`. An
/// enable then tells `group`'s backend, which may answer that it cannot trace (the enable stands).
pub fn enable_callback(
    id: SubscriberId,
    group: ApiGroup,
    api_id: ApiId,
    on: bool,
) -> Result<(), Error> {
    callback::enable(id, group, api_id, on)?;
    if !on {
        return Ok(());
    }
    activate(&[group], Activation::Named)
}

/// Enables or disables every function of `domain`'s groups, or critical events.
pub fn enable_domain(id: SubscriberId, domain: Domain, on: bool) -> Result<(), Error> {
    callback::enable_domain(id, domain, on)?;
    if !on {
        return Ok(());
    }
    activate(domain.groups(), Activation::Implied)
}

/// A subscription owned by Rust code: unsubscribes when dropped.
#[derive(Debug)]
pub struct Subscriber {
    id: SubscriberId,
}

impl Subscriber {
    /// Subscribes `callback`. Nothing is delivered until something is enabled.
    pub fn new<F>(callback: F) -> Result<Self, Error>
    where
        F: Fn(Event<'_>) + Send + Sync + 'static,
    {
        Ok(Subscriber {
            id: subscribe(Box::new(callback))?,
        })
    }

    /// The subscription's ID.
    pub fn id(&self) -> SubscriberId {
        self.id
    }

    /// Enables or disables every function of `domain`'s groups, or critical events.
    pub fn enable_domain(&self, domain: Domain, on: bool) -> Result<(), Error> {
        enable_domain(self.id, domain, on)
    }

    /// Enables or disables one function.
    pub fn enable(&self, group: ApiGroup, api_id: ApiId, on: bool) -> Result<(), Error> {
        enable_callback(self.id, group, api_id, on)
    }

    /// Unsubscribes now, reporting errors that `drop` would ignore.
    pub fn unsubscribe(self) -> Result<(), Error> {
        let id = self.id;
        core::mem::forget(self);
        unsubscribe(id)
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        // The only error is "already unsubscribed", which cannot happen to an owned Subscriber.
        let _ = unsubscribe(self.id);
    }
}
