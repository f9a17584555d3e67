//! The time the service records: now, at the microsecond precision both databases keep, so a
//! value read back equals the one written.

use time::OffsetDateTime;

/// Now, at the microsecond precision both databases keep.
pub fn now_micros() -> OffsetDateTime {
    let t = OffsetDateTime::now_utc();
    t.replace_nanosecond(t.nanosecond() / 1000 * 1000)
        .unwrap_or(t)
}
