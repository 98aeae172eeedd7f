//! Which of Stripe's events are this deployment's. A webhook endpoint's secret proves an event
//! came from Stripe, not that it is a payment for these seats: Stripe signs test-mode events
//! (`livemode: false`) and the events of Connect accounts (`account`) too, and a secret copied
//! to the wrong endpoint would let them through. An event of another mode, or of an account not
//! configured, pays for nothing: it is answered 200 and published as unmatched.

use serde_json::Value;

use super::WebhookSecret;

/// The events a deployment takes payments from: its mode and its Connect accounts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StripeScope {
    /// Whether payments are live (`SEATCLAIM_PAYMENTS_STRIPE_LIVEMODE`; false: Stripe's test
    /// mode). An event must say the same in its `livemode`.
    pub livemode: bool,
    /// The Connect accounts (`acct_...`) whose events pay (`SEATCLAIM_PAYMENTS_STRIPE_ACCOUNTS`);
    /// empty, only the platform's own events, which name no `account`.
    pub accounts: Vec<String>,
}

impl StripeScope {
    /// The scope as configured; refuses an account that is not a Connect account id, so a typo
    /// is found at start rather than as every payment going unmatched.
    pub fn new(livemode: bool, accounts: &[String]) -> Result<Self, String> {
        let accounts: Vec<String> = accounts
            .iter()
            .map(|account| account.trim().to_owned())
            .filter(|account| !account.is_empty())
            .collect();
        if let Some(bad) = accounts.iter().find(|a| !is_account_id(a)) {
            return Err(format!(
                "SEATCLAIM_PAYMENTS_STRIPE_ACCOUNTS: {bad:?} is not a Stripe account id (acct_...)"
            ));
        }
        Ok(Self { livemode, accounts })
    }

    /// Why `event` is not this deployment's, or `None` if it is.
    #[must_use]
    pub fn refusal(&self, event: &Value) -> Option<String> {
        match event["livemode"].as_bool() {
            None => return Some("the event does not say whether it is live".to_owned()),
            Some(live) if live != self.livemode => {
                let (its, ours) = if live {
                    ("live", "test")
                } else {
                    ("test", "live")
                };
                return Some(format!(
                    "the event is a {its}-mode event; this deployment takes {ours}-mode payments"
                ));
            }
            Some(_) => {}
        }
        match &event["account"] {
            Value::Null => None,
            Value::String(account) if self.accounts.contains(account) => None,
            Value::String(account) => Some(format!(
                "the event is of Connect account {account}, which this deployment does not take \
                 payments for"
            )),
            _ => Some("the event's account is not an account id".to_owned()),
        }
    }
}

/// `acct_` and letters or digits, as Stripe writes account ids.
fn is_account_id(text: &str) -> bool {
    text.strip_prefix("acct_")
        .is_some_and(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// The webhook endpoint: the secret its events are signed with and the events it pays for.
#[derive(Debug, Clone)]
pub struct StripeEndpoint {
    /// `SEATCLAIM_PAYMENTS_STRIPE_WEBHOOK_SECRET`.
    pub secret: WebhookSecret,
    /// Its mode and accounts.
    pub scope: StripeScope,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_events_of_the_configured_mode_and_accounts_pay() {
        let test_mode = StripeScope::default();
        assert_eq!(test_mode.refusal(&json!({"livemode": false})), None);
        let live = test_mode.refusal(&json!({"livemode": true})).unwrap();
        assert!(live.contains("live-mode event"), "{live}");
        assert!(test_mode.refusal(&json!({})).is_some(), "no livemode");
        assert!(test_mode.refusal(&json!({"livemode": "false"})).is_some());
        let connect = test_mode
            .refusal(&json!({"livemode": false, "account": "acct_1"}))
            .unwrap();
        assert!(connect.contains("acct_1"), "{connect}");

        let scoped = StripeScope::new(true, &["acct_1".into(), " acct_2 ".into()]).unwrap();
        for account in [json!(null), json!("acct_1"), json!("acct_2")] {
            let event = json!({"livemode": true, "account": account});
            assert_eq!(scoped.refusal(&event), None, "{event}");
        }
        assert!(
            scoped
                .refusal(&json!({"livemode": true, "account": "acct_3"}))
                .is_some()
        );
        assert!(
            scoped
                .refusal(&json!({"livemode": true, "account": 1}))
                .is_some()
        );
        assert!(scoped.refusal(&json!({"livemode": false})).is_some());
    }

    #[test]
    fn a_configured_account_must_be_an_account_id() {
        assert!(StripeScope::new(false, &["acct_1Abc".into(), String::new()]).is_ok());
        for bad in ["1Abc", "acct_", "acct_1,acct_2", "cus_1"] {
            assert!(StripeScope::new(false, &[bad.into()]).is_err(), "{bad}");
        }
    }
}
