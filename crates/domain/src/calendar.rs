//! The date in Germany. Forms are dated, and "today" for date rules is taken, by the calendar
//! of the offices and founders who read them: at 00:30 in Berlin it is already tomorrow there,
//! while UTC still says today (api.md leaves the zone open; docs/api/trade-registration.md).

use time::{Date, Month, OffsetDateTime};

/// The calendar date in Germany (Europe/Berlin, CET/CEST) at `at`.
pub fn date_in_germany(at: OffsetDateTime) -> Date {
    let berlin = jiff::tz::get!("Europe/Berlin");
    let local =
        jiff::Timestamp::from_second(at.unix_timestamp()).map(|t| t.to_zoned(berlin).date());
    match local {
        Ok(d) => Month::try_from(d.month() as u8)
            .ok()
            .and_then(|m| Date::from_calendar_date(i32::from(d.year()), m, d.day() as u8).ok())
            .unwrap_or(at.date()),
        // Outside jiff's range (years beyond ±9999): the UTC date.
        Err(_) => at.date(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{date, datetime};

    #[test]
    fn german_dates_around_midnight_and_the_clock_changes() {
        for (at, expected) in [
            // Winter (CET, UTC+1).
            (datetime!(2026-11-24 22:59:59 UTC), date!(2026 - 11 - 24)),
            (datetime!(2026-11-24 23:00:00 UTC), date!(2026 - 11 - 25)),
            (datetime!(2026-12-31 23:30 UTC), date!(2027 - 01 - 01)),
            // Summer (CEST, UTC+2).
            (datetime!(2026-07-01 21:59:59 UTC), date!(2026 - 07 - 01)),
            (datetime!(2026-07-01 22:00:00 UTC), date!(2026 - 07 - 02)),
            // Clocks go forward on 2026-03-29 at 01:00 UTC, back on 2026-10-25 at 01:00 UTC.
            (datetime!(2026-03-28 23:00 UTC), date!(2026 - 03 - 29)),
            (datetime!(2026-03-29 22:00 UTC), date!(2026 - 03 - 30)),
            (datetime!(2026-03-29 21:59 UTC), date!(2026 - 03 - 29)),
            (datetime!(2026-10-24 22:00 UTC), date!(2026 - 10 - 25)),
            (datetime!(2026-10-25 22:59 UTC), date!(2026 - 10 - 25)),
            (datetime!(2026-10-25 23:00 UTC), date!(2026 - 10 - 26)),
            // Midday is the same date everywhere.
            (datetime!(2026-02-28 12:00 UTC), date!(2026 - 02 - 28)),
        ] {
            assert_eq!(date_in_germany(at), expected, "{at}");
        }
    }
}
