//! The render contexts of the examples and of the benchmark: a Berlin trade office and the
//! sample operator, at `timestamp`.

use forms::{Gewa1Context, Operator, PowerOfAttorneyContext};
use time::OffsetDateTime;

pub fn gewa1(timestamp: OffsetDateTime) -> Gewa1Context {
    Gewa1Context {
        trade_office_name: Some("Bezirksamt Mitte von Berlin, Gewerbeamt".into()),
        municipality_key: Some("11000000".into()),
        main_office: None,
        created_on: timestamp.date(),
        timestamp,
    }
}

pub fn power_of_attorney(timestamp: OffsetDateTime) -> PowerOfAttorneyContext {
    PowerOfAttorneyContext {
        operator: Some(Operator {
            name: "Muster Filing Services GmbH".into(),
            address: "Beispielweg 5, 10117 Berlin".into(),
        }),
        place: None,
        created_on: timestamp.date(),
        timestamp,
    }
}
