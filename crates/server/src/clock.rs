//! The time the service records: now, at the microsecond precision both databases keep, so a
//! value read back equals the one written.

use time::OffsetDateTime;

/// Now, at the microsecond precision both databases keep.
pub fn now_micros() -> OffsetDateTime {
    let t = OffsetDateTime::now_utc();
    t.replace_nanosecond(t.nanosecond() / 1000 * 1000)
        .unwrap_or(t)
}

/// Now in microseconds since the epoch (the leases, heartbeats and console sessions).
pub fn epoch_micros() -> i64 {
    i64::try_from(OffsetDateTime::now_utc().unix_timestamp_nanos() / 1000).unwrap_or(i64::MAX)
}

/// A duration in microseconds (saturating).
pub fn micros(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}
