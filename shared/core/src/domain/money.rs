//! Prices and payments: what a hold costs, and whether a payment pays for it. A price is set
//! per section when the event is created; a hold's amount due is fixed when it is claimed (the
//! sum of its seats' prices), so a payment can be checked against the job alone.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Section, ValidationError};

/// The highest price of one seat, in minor units.
pub const MAX_PRICE: u64 = 1_000_000_000;

/// An ISO 4217 currency code: three capital letters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Currency([u8; 3]);

impl Currency {
    /// Checks an organiser's code: exactly three capital ASCII letters ("EUR").
    pub fn parse(code: &str) -> Result<Self, ValidationError> {
        match code.as_bytes() {
            &[a, b, c] if [a, b, c].iter().all(u8::is_ascii_uppercase) => Ok(Self([a, b, c])),
            _ => Err(ValidationError::new(
                "currency",
                "must be an ISO 4217 code of three capital letters",
            )),
        }
    }

    /// A code as payment providers send it, in either case (Stripe writes "eur").
    pub fn parse_any_case(code: &str) -> Result<Self, ValidationError> {
        Self::parse(&code.to_ascii_uppercase())
    }

    /// The code's text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        // Only ASCII capitals are ever stored.
        std::str::from_utf8(&self.0).unwrap_or("XXX")
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Currency {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// An amount of money in a currency's minor units (cents for EUR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Money {
    /// Minor units.
    pub amount: u64,
    /// The currency.
    pub currency: Currency,
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.amount, self.currency)
    }
}

/// An event's price list: each section's seat price and the currency they are in. Sections it
/// does not name are free.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prices {
    /// The currency, required as soon as any price is above 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<Currency>,
    /// Each priced section's price per seat, in minor units.
    #[serde(default)]
    pub sections: BTreeMap<Section, u64>,
}

impl Prices {
    /// Checks the organiser's prices: each from 0 to [`MAX_PRICE`], and a currency if any is
    /// above 0. Free sections are not kept.
    pub fn parse(
        currency: Option<&str>,
        sections: impl IntoIterator<Item = (Section, u64)>,
    ) -> Result<Self, ValidationError> {
        let currency = currency.map(Currency::parse).transpose()?;
        let mut priced = BTreeMap::new();
        for (section, price) in sections {
            if price > MAX_PRICE {
                return Err(ValidationError::new(
                    "price",
                    format!("must be between 0 and {MAX_PRICE} (minor units)"),
                ));
            }
            if price > 0 {
                priced.insert(section, price);
            }
        }
        if currency.is_none() && !priced.is_empty() {
            return Err(ValidationError::new(
                "currency",
                "is required when any price is above 0",
            ));
        }
        Ok(Self {
            currency,
            sections: priced,
        })
    }

    /// Whether every seat is free.
    #[must_use]
    pub fn is_free(&self) -> bool {
        self.sections.is_empty()
    }

    /// What seats of these sections cost together; `None` when nothing is due.
    #[must_use]
    pub fn due<'a>(&self, sections: impl IntoIterator<Item = &'a Section>) -> Option<Money> {
        let amount: u64 = sections
            .into_iter()
            .filter_map(|section| self.sections.get(section))
            .sum();
        let currency = self.currency?;
        (amount > 0).then_some(Money { amount, currency })
    }
}

/// A payment reported for a job: what was paid and the provider's reference to it, recorded
/// on the job it sells so that the same payment reported again changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Payment {
    /// What was paid.
    pub paid: Money,
    /// The provider's reference (Stripe's payment intent, another provider's `payment_ref`).
    pub reference: String,
}

/// What a confirm brings toward a hold's price. The domain sells a priced hold only for its
/// payment, decided on the job as the settlement's atomic step reads it; the caller says only
/// what it was handed and whether this deployment takes payments at all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "tender", content = "payment", rename_all = "snake_case")]
pub enum Tender {
    /// No payment: a hold with an amount due is not sold (`JobConflict::PaymentRequired`).
    /// The default, so a caller that forgets to say is refused rather than given seats.
    #[default]
    Nothing,
    /// No payment, and none is taken: payments are off in this deployment (no authentication
    /// and no provider, or `SEATCLAIM_PAYMENTS=off` for development). A priced hold is sold free.
    Waived,
    /// A provider's payment: it sells the hold only if it is exactly the amount due.
    Paid(Payment),
}

impl Tender {
    /// The payment, if one is brought.
    #[must_use]
    pub const fn payment(&self) -> Option<&Payment> {
        match self {
            Self::Paid(payment) => Some(payment),
            Self::Nothing | Self::Waived => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(name: &str) -> Section {
        Section::parse(name).unwrap()
    }

    #[test]
    fn currency_codes_are_three_capital_letters() {
        assert_eq!(Currency::parse("EUR").unwrap().as_str(), "EUR");
        for bad in ["eur", "EU", "EURO", "E1R", "", "ÉUR"] {
            assert!(Currency::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Currency::parse_any_case("eur").unwrap(),
            Currency::parse("EUR").unwrap()
        );
    }

    #[test]
    fn a_priced_section_needs_a_currency_and_a_bounded_price() {
        let err = Prices::parse(None, [(section("A"), 1)]).unwrap_err();
        assert_eq!(err.field, "currency");
        let err = Prices::parse(Some("EUR"), [(section("A"), MAX_PRICE + 1)]).unwrap_err();
        assert_eq!(err.field, "price");
        let free = Prices::parse(None, [(section("A"), 0)]).unwrap();
        assert!(free.is_free());
        assert!(Prices::parse(Some("EUR"), [(section("A"), MAX_PRICE)]).is_ok());
    }

    #[test]
    fn the_amount_due_is_the_sum_of_the_seats_prices() {
        let prices = Prices::parse(Some("EUR"), [(section("A"), 2500), (section("B"), 0)]).unwrap();
        let (a, b) = (section("A"), section("B"));
        let due = prices.due([&a, &a, &b]).unwrap();
        assert_eq!(due.amount, 5000);
        assert_eq!(due.currency.as_str(), "EUR");
        assert_eq!(prices.due([&b]), None, "free seats owe nothing");
    }
}
