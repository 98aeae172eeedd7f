//! How long a decided job is kept, with its idempotency key and its history: the rule that
//! bounds what the stores hold over years of sales, decided once for both backends (the
//! embedded backend deletes by it, DynamoDB's TTL by the `expires_at` it gives).

use jiff::{SignedDuration, Timestamp};

use super::{JobStatus, ValidationError};

/// The shortest retention: the dead-letter queue keeps an intent 14 days, and a replay needs
/// its job and its key, so no job whose intent can still come back is deleted. It is also the
/// idempotency window: a key is recognised at least this long after its job was decided.
pub const MIN_RETENTION_DAYS: u32 = 14;
/// The retention unless configured.
pub const DEFAULT_RETENTION_DAYS: u32 = 30;
/// The longest retention accepted (ten years).
pub const MAX_RETENTION_DAYS: u32 = 3_650;

/// How long decided jobs are kept after their decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    days: u32,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            days: DEFAULT_RETENTION_DAYS,
        }
    }
}

impl Retention {
    /// The statuses whose jobs expire. PENDING and HELD can still change; a SOLD job is the
    /// record of a purchase and lives as long as its seat (at most one per seat), so neither
    /// grows without bound. Rejections, the most common decision of a sale, are what does.
    pub const EXPIRING: [JobStatus; 4] = [
        JobStatus::Rejected,
        JobStatus::Failed,
        JobStatus::Expired,
        JobStatus::Cancelled,
    ];

    /// A retention of `days`, which must lie between the idempotency window and ten years.
    pub fn days(days: u32) -> Result<Self, ValidationError> {
        if (MIN_RETENTION_DAYS..=MAX_RETENTION_DAYS).contains(&days) {
            Ok(Self { days })
        } else {
            Err(ValidationError::new(
                "retention",
                format!(
                    "must be {MIN_RETENTION_DAYS} to {MAX_RETENTION_DAYS} days (a dead-lettered \
                     intent is kept {MIN_RETENTION_DAYS} days, and its replay needs its job \
                     and key), not {days}"
                ),
            ))
        }
    }

    /// The retention period.
    #[must_use]
    pub fn period(self) -> SignedDuration {
        SignedDuration::from_hours(i64::from(self.days) * 24)
    }

    /// When a job that moved to `status` at `decided_at` may be deleted; `None` if it is kept.
    #[must_use]
    pub fn expires_at(self, status: JobStatus, decided_at: Timestamp) -> Option<Timestamp> {
        Self::EXPIRING
            .contains(&status)
            .then(|| decided_at.saturating_add(self.period()))
            .and_then(Result::ok)
    }

    /// Jobs decided (and history published) before this instant are deleted at `now`.
    #[must_use]
    pub fn cutoff(self, now: Timestamp) -> Timestamp {
        now.saturating_sub(self.period()).unwrap_or(Timestamp::MIN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_is_at_least_the_idempotency_window() {
        assert!(Retention::days(MIN_RETENTION_DAYS - 1).is_err());
        assert!(Retention::days(MAX_RETENTION_DAYS + 1).is_err());
        assert_eq!(Retention::days(30), Ok(Retention::default()));
        assert_eq!(
            Retention::days(14).unwrap().period(),
            SignedDuration::from_hours(336)
        );
    }

    #[test]
    fn only_final_unsold_jobs_expire_after_the_period() {
        let decided: Timestamp = "2026-12-01T00:00:00Z".parse().unwrap();
        let retention = Retention::default();
        for status in JobStatus::ALL {
            let expires = retention.expires_at(status, decided);
            assert_eq!(expires.is_some(), Retention::EXPIRING.contains(&status));
        }
        let later: Timestamp = "2026-12-31T00:00:00Z".parse().unwrap();
        assert_eq!(
            retention.expires_at(JobStatus::Rejected, decided),
            Some(later)
        );
        assert_eq!(retention.cutoff(later), decided);
        assert_eq!(retention.expires_at(JobStatus::Sold, decided), None);
    }
}
