//! The cities whose offices are split below the municipality, with real addresses: Berlin's
//! districts (trade office, corporation and partnership tax office), München, Stuttgart,
//! Hamburg; merged offices mapped to their successors.

use super::district::{self, DistrictLookup, LocatedBy, Unlocated};
use super::*;

fn query<'a>(
    zip: &'a str,
    city: &'a str,
    street: &'a str,
    family: LegalFamily,
) -> TaxOfficeQuery<'a> {
    TaxOfficeQuery {
        address: OfficeAddress {
            zip,
            city,
            street: Some(street),
        },
        family,
        group: false,
    }
}

fn trade(zip: &str, street: &str) -> TradeOfficeRef {
    match trade_office_at(zip, "Berlin", street) {
        TradeOfficeLookup::Found { office } => office,
        other => panic!("{zip} {street}: expected a trade office, got {other:?}"),
    }
}

fn corporation_office(zip: &str, street: &str) -> &'static str {
    match tax_office_at(&query(zip, "Berlin", street, LegalFamily::Corporation)) {
        TaxOfficeLookup::Determined {
            office,
            rule,
            locality,
            ..
        } => {
            assert_eq!(rule, Some(CityRule::BerlinCorporations));
            assert!(locality.is_some());
            office.number
        }
        other => panic!("{zip} {street}: expected a determined office, got {other:?}"),
    }
}

/// The partnership's suggested offices (it always needs confirmation in Berlin).
fn partnership_offices(zip: &str, street: &str) -> Vec<&'static str> {
    match tax_office_at(&query(zip, "Berlin", street, LegalFamily::Partnership)) {
        TaxOfficeLookup::NeedsConfirmation {
            reasons,
            suggestions,
            ..
        } => {
            assert!(reasons.contains(&ConfirmationReason::RuleNotVerified {
                rule: CityRule::BerlinPartnerships
            }));
            suggestions.iter().map(|s| s.office.number).collect()
        }
        other => panic!("{zip} {street}: a Berlin partnership needs confirmation, got {other:?}"),
    }
}

/// One real address per Berlin district (Geoportal Berlin's register, June 2023): its
/// Bezirksamt, its Finanzamt für Körperschaften, the regional office of its Ortsteil.
/// The reasons and the suggestions of a lookup that must need confirmation.
fn confirmation(lookup: TaxOfficeLookup) -> (Vec<ConfirmationReason>, Vec<Suggestion>) {
    match lookup {
        TaxOfficeLookup::NeedsConfirmation {
            reasons,
            suggestions,
            ..
        } => (reasons, suggestions),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_berlin_district() {
    for (zip, street, bezirk, ortsteil, trade_office, corporation, partnership) in [
        (
            "10179",
            "Parochialstraße 2",
            "01",
            "Mitte",
            "Bezirksamt Mitte von Berlin",
            "1130",
            "1134",
        ),
        (
            "10247",
            "Colbestraße 33",
            "02",
            "Friedrichshain",
            "Bezirksamt Friedrichshain-Kreuzberg von Berlin",
            "1137",
            "1114",
        ),
        (
            "13129",
            "Straße 7 8",
            "03",
            "Blankenburg",
            "Bezirksamt Pankow von Berlin",
            "1137",
            "1135",
        ),
        (
            "10589",
            "Keplerstraße 12",
            "04",
            "Charlottenburg",
            "Bezirksamt Charlottenburg-Wilmersdorf von Berlin",
            "1127",
            "1113",
        ),
        (
            "13583",
            "Seegefelder Straße 64",
            "05",
            "Spandau",
            "Bezirksamt Spandau von Berlin",
            "1129",
            "1119",
        ),
        (
            "12205",
            "Curtiusstraße 111",
            "06",
            "Lichterfelde",
            "Bezirksamt Steglitz-Zehlendorf von Berlin",
            "1129",
            "1120",
        ),
        (
            "12107",
            "Hirzerweg 87",
            "07",
            "Mariendorf",
            "Bezirksamt Tempelhof-Schöneberg von Berlin",
            "1129",
            "1121",
        ),
        (
            "12357",
            "Alt-Rudow 49",
            "08",
            "Rudow",
            "Bezirksamt Neukölln von Berlin",
            "1129",
            "1116",
        ),
        (
            "12439",
            "Hartriegelstraße 8",
            "09",
            "Niederschöneweide",
            "Bezirksamt Treptow-Köpenick von Berlin",
            "1137",
            "1136",
        ),
        (
            "12685",
            "Vierlandenstraße 47",
            "10",
            "Marzahn",
            "Bezirksamt Marzahn-Hellersdorf von Berlin",
            "1137",
            "1133",
        ),
        (
            "13057",
            "Biesenbrower Straße 124",
            "11",
            "Neu-Hohenschönhausen",
            "Bezirksamt Lichtenberg von Berlin",
            "1137",
            "1132",
        ),
        (
            "13435",
            "Schlitzer Straße 90",
            "12",
            "Wittenau",
            "Bezirksamt Reinickendorf von Berlin",
            "1130",
            "1117",
        ),
    ] {
        let located = district::locate(district::BERLIN, zip, street).unwrap();
        let DistrictLookup::Located { locality, by } = located else {
            panic!("{street}: {located:?}");
        };
        assert_eq!(
            (locality.district.number, locality.ortsteil),
            (bezirk, Some(ortsteil)),
            "{street}"
        );
        assert_eq!(by, LocatedBy::Register);
        let office = trade(zip, street);
        assert_eq!(office.name, trade_office, "{street}");
        assert_eq!(office.kind, TradeOfficeKind::District);
        assert_eq!(office.key, format!("11000000{bezirk}"), "{street}");
        assert_eq!(
            office.municipality_key, "11000000",
            "the GewA 1 head's Gemeindekennzahl"
        );
        assert_eq!(corporation_office(zip, street), corporation, "{street}");
        assert_eq!(
            partnership_offices(zip, street).first(),
            Some(&partnership),
            "{street}"
        );
    }
}

/// Postal codes that straddle a district border: the street and house number decide, on both
/// sides of it, and a street that crosses the border within one postal code by its side.
#[test]
fn straddling_postal_codes_on_both_sides() {
    for (zip, street, bezirk) in [
        ("10119", "Linienstraße 221", "01"),
        ("10119", "Schwedter Straße 16", "03"),
        ("10247", "Müggelstraße 32", "02"),
        ("10247", "Richard-Ermisch-Straße 14", "03"),
        ("13353", "Müllerstraße 166", "01"),
        ("13353", "Seestraße 2", "04"),
        ("12157", "Körnerstraße 48", "06"),
        ("12157", "Menzelstraße 23", "07"),
        // One street, one postal code, two districts: the house number decides.
        ("10119", "Choriner Straße 75", "01"),
        ("10119", "Choriner Straße 3", "03"),
        ("10119", "Schwedter Straße 251", "01"),
        ("10119", "Schwedter Straße 262", "03"),
        ("10119", "Gormannstraße 17A", "03"),
        ("10119", "Gormannstraße 17 a", "03"),
    ] {
        let lookup = district::locate(district::BERLIN, zip, street).unwrap();
        assert_eq!(
            lookup.locality().map(|l| l.district.number),
            Some(bezirk),
            "{zip} {street}: {lookup:?}"
        );
        let expected = berlin_corporation_office(bezirk).unwrap();
        assert_eq!(corporation_office(zip, street), expected, "{street}");
    }
}

/// A Berlin address with a postal code the postal code data gives to Brandenburg (Schmöckwitz,
/// 15537): the city and Berlin's register decide, never Erkner's office.
#[test]
fn berlin_addresses_with_a_brandenburg_postal_code() {
    assert_eq!(
        trade("15537", "Am Zwiebusch 52").name,
        "Bezirksamt Treptow-Köpenick von Berlin"
    );
    assert_eq!(corporation_office("15537", "Am Zwiebusch 52"), "1137");
    // The same postal code in Erkner stays Brandenburg's.
    assert!(matches!(
        trade_office_at("15537", "Erkner", "Friedrichstraße 6"),
        TradeOfficeLookup::Found { office } if office.municipality_key == "12067124"
    ));
}

#[test]
fn spelling_of_the_street_does_not_matter() {
    for street in [
        "Karl-Marx-Allee 31",
        "Karl Marx Allee 31",
        "karl-marx-allee 31",
    ] {
        assert_eq!(
            trade("10178", street).name,
            "Bezirksamt Mitte von Berlin",
            "{street}"
        );
    }
    for street in ["Straße des 17. Juni 135", "Str. des 17. Juni 135"] {
        assert_eq!(
            trade("10623", street).name,
            "Bezirksamt Charlottenburg-Wilmersdorf von Berlin",
            "{street}"
        );
    }
}

#[test]
fn undecided_berlin_addresses_need_confirmation_likeliest_first() {
    // 12439 lies mostly in Treptow-Köpenick: an unknown street there is a candidate list led by
    // it, never Charlottenburg (the register's Finanzamtsbezirk for all of Berlin).
    let lookup = district::locate(district::BERLIN, "10119", "Nirgendwostraße 1").unwrap();
    let DistrictLookup::Unlocated { reason, candidates } = &lookup else {
        panic!("{lookup:?}");
    };
    assert_eq!(*reason, Unlocated::StreetNotInRegister);
    assert_eq!(
        candidates[0].locality.district.number, "01",
        "Mitte holds 75 % of 10119"
    );
    assert!(candidates[0].share.unwrap() > 0.7);
    match tax_office_at(&query(
        "10119",
        "Berlin",
        "Nirgendwostraße 1",
        LegalFamily::Corporation,
    )) {
        TaxOfficeLookup::NeedsConfirmation {
            reasons,
            suggestions,
            ..
        } => {
            assert_eq!(
                reasons,
                vec![ConfirmationReason::DistrictNotDetermined {
                    cause: Unlocated::StreetNotInRegister
                }]
            );
            let numbers: Vec<_> = suggestions.iter().map(|s| s.office.number).collect();
            assert_eq!(
                numbers[..2],
                ["1130", "1137"],
                "Mitte's office, then Pankow's"
            );
            assert_eq!(suggestions[0].basis, SuggestionBasis::DistrictCandidate);
        }
        other => panic!("{other:?}"),
    }
    match trade_office_at("10119", "Berlin", "Nirgendwostraße 1") {
        TradeOfficeLookup::DistrictNotDetermined { cause, candidates } => {
            assert_eq!(cause, Unlocated::StreetNotInRegister);
            let names: Vec<_> = candidates.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(
                names,
                [
                    "Bezirksamt Mitte von Berlin",
                    "Bezirksamt Pankow von Berlin"
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    // 12439 Treptow-Köpenick: the postal code alone places an unknown street.
    let lookup = district::locate(district::BERLIN, "12439", "Nirgendwostraße 1").unwrap();
    assert!(
        matches!(
            lookup,
            DistrictLookup::Located {
                by: LocatedBy::PostalCode,
                ..
            }
        ),
        "{lookup:?}"
    );
    assert_eq!(lookup.locality().unwrap().district.name, "Treptow-Köpenick");
    // A border street without a house number, and with one not in the register between
    // stretches of two districts.
    let lookup = district::locate(district::BERLIN, "10119", "Choriner Straße").unwrap();
    assert!(matches!(
        lookup,
        DistrictLookup::Unlocated {
            reason: Unlocated::NoHouseNumber,
            ..
        }
    ));
    let lookup = district::locate(district::BERLIN, "10119", "Choriner Straße 999").unwrap();
    assert!(
        matches!(
            lookup,
            DistrictLookup::Unlocated {
                reason: Unlocated::HouseNumberNotInRegister,
                ..
            }
        ),
        "{lookup:?}"
    );
}

#[test]
fn a_berlin_holding_needs_confirmation() {
    let mut q = query(
        "10179",
        "Berlin",
        "Parochialstraße 2",
        LegalFamily::Corporation,
    );
    q.group = true;
    match tax_office_at(&q) {
        TaxOfficeLookup::NeedsConfirmation {
            reasons,
            suggestions,
            locality,
            ..
        } => {
            assert_eq!(reasons, vec![ConfirmationReason::GroupCompany]);
            let numbers: Vec<_> = suggestions.iter().map(|s| s.office.number).collect();
            assert_eq!(
                numbers,
                ["1130", "1127", "1137", "1129"],
                "the regional office first"
            );
            assert_eq!(locality.unwrap().district.name, "Mitte");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_berlin_address_of_the_register_finds_its_ortsteil() {
    use std::io::Read;
    let gz = include_bytes!("../../data/offices/berlin/adressen-2023-06.csv.gz");
    let mut csv = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut csv)
        .unwrap();
    let mut n = 0;
    let mut wrong = Vec::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (hnr, suffix, street, plz, ortsteil, plr) = (f[0], f[1], f[2], f[3], f[4], f[6]);
        if hnr.is_empty() {
            continue;
        }
        n += 1;
        let address = format!("{street} {hnr}{suffix}");
        match district::locate(district::BERLIN, plz, &address)
            .unwrap()
            .locality()
        {
            Some(l) if l.ortsteil == Some(ortsteil) && l.district.number == &plr[..2] => {}
            other => wrong.push(format!("{plz} {address}: {other:?}, register: {ortsteil}")),
        }
    }
    assert_eq!(n, 400_736);
    assert!(
        wrong.is_empty(),
        "{} of {n} wrong, e.g. {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(5)]
    );
}

#[test]
fn stuttgart_partnerships_have_no_public_rule() {
    // A Stuttgart partnership: the general offices, the register's first, no corporation
    // office (the corporation's 2899 is determined: rules_tests.rs).
    let q = query(
        "70173",
        "Stuttgart",
        "Marktplatz 1",
        LegalFamily::Partnership,
    );
    let (reasons, suggestions) = confirmation(tax_office_at(&q));
    assert_eq!(
        reasons[0],
        ConfirmationReason::NoPublicRule { city: "Stuttgart" }
    );
    assert_eq!(suggestions[0].office.number, "2893");
    assert!(
        suggestions
            .iter()
            .all(|s| s.office.purpose == OfficePurpose::General)
    );
    // Their trade offices are the cities'.
    assert_eq!(
        trade_office_at("80331", "München", "Marienplatz 8"),
        trade_office_for("80331", "München")
    );
    assert!(matches!(
        trade_office_at("70173", "Stuttgart", "Marktplatz 1"),
        TradeOfficeLookup::Found { .. }
    ));
}

#[test]
fn hamburg_is_flagged_with_its_district_offices() {
    match trade_office_at("20095", "Hamburg", "Rathausmarkt 1") {
        TradeOfficeLookup::DistrictNotDetermined { cause, candidates } => {
            assert_eq!(cause, Unlocated::NoDistrictData);
            assert_eq!(candidates.len(), 7);
            assert_eq!(candidates[0].name, "Bezirksamt Hamburg-Mitte");
            assert!(
                candidates.iter().all(
                    |c| c.kind == TradeOfficeKind::District && c.municipality_key == "02000000"
                )
            );
        }
        other => panic!("{other:?}"),
    }
    for family in [LegalFamily::Corporation, LegalFamily::Partnership] {
        let q = query("20095", "Hamburg", "Rathausmarkt 1", family);
        let (reasons, suggestions) = confirmation(tax_office_at(&q));
        assert_eq!(
            reasons[0],
            ConfirmationReason::RuleNotVerified {
                rule: CityRule::HamburgOrtsteil
            }
        );
        assert_eq!(
            reasons[1],
            ConfirmationReason::DistrictNotDetermined {
                cause: Unlocated::NoDistrictData
            }
        );
        assert!(
            suggestions
                .iter()
                .take(5)
                .all(|s| s.office.purpose == OfficePurpose::General)
        );
        assert!(
            suggestions
                .iter()
                .all(|s| s.office.purpose != OfficePurpose::Special)
        );
    }
}

#[test]
fn merged_offices_map_to_their_successors() {
    // Stated by a source: determined.
    for (zip, city, register, successor) in [
        ("24103", "Kiel", "2119", "2120"),
        ("45879", "Gelsenkirchen", "5318", "5319"),
        ("28195", "Bremen", "2471", "2460"),
        ("19370", "Parchim", "4089", "4090"),
    ] {
        match tax_office_for(zip, city) {
            TaxOfficeLookup::Determined {
                office,
                merged_from,
                ..
            } => {
                assert_eq!(
                    (office.number, merged_from),
                    (successor, Some(register)),
                    "{city}"
                );
            }
            other => panic!("{city}: {other:?}"),
        }
    }
    // The research's mappings (rules-2026-12.md § 4-5): Saarbrücken's Außenstellen, Malchin.
    for (zip, city, register, successor) in [
        ("66280", "Sulzbach/Saar", "1070", "1040"),
        ("66333", "Völklingen", "1090", "1040"),
        ("17139", "Malchin", "4071", "4075"),
    ] {
        match tax_office_for(zip, city) {
            TaxOfficeLookup::Determined {
                office,
                merged_from,
                basis,
                ..
            } => {
                assert_eq!((office.number, merged_from), (successor, Some(register)));
                assert_eq!(basis.rule, "merged-office");
            }
            other => panic!("{city}: {other:?}"),
        }
    }
    // Inferred only: suggested, never determined.
    let (reasons, suggestions) = confirmation(tax_office_for("23701", "Eutin"));
    assert!(reasons.contains(&ConfirmationReason::OfficeNotInDirectory { number: "2114" }));
    assert_eq!(suggestions[0].office.number, "2125");
    assert_eq!(suggestions[0].basis, SuggestionBasis::Successor);
    // Hamburg's 2202 is split among the regional offices: every one suggested, none decided.
    let (reasons, suggestions) = confirmation(tax_office_for("20095", "Hamburg"));
    assert!(reasons.contains(&ConfirmationReason::OfficeNotInDirectory { number: "2202" }));
    assert!(
        suggestions
            .iter()
            .any(|s| s.office.number == "2241" && s.basis == SuggestionBasis::Successor)
    );
    // Split between two successors: both suggested.
    let (_, suggestions) = confirmation(tax_office_for("24340", "Eckernförde"));
    let numbers: Vec<_> = suggestions.iter().map(|s| s.office.number).collect();
    assert_eq!(numbers[..2], ["2129", "2128"]);
}

#[test]
fn the_district_offices_data() {
    let ds = district::districts();
    assert_eq!(ds.len(), 19);
    for d in ds {
        assert_eq!(d.key.len(), 10, "{}", d.key);
        assert!(d.key.starts_with(d.city_key));
        assert!(d.office_name.starts_with("Bezirksamt "));
        assert!(!d.source.is_empty());
        if let Some(w) = d.website {
            assert!(w.starts_with("https://"), "{w}");
        }
        if d.email.is_some() || d.phone.is_some() || d.address.is_some() {
            assert!(!d.source.starts_with("not found"), "{}", d.name);
        }
    }
    assert_eq!(
        district::district("1100000004").unwrap().name,
        "Charlottenburg-Wilmersdorf"
    );
}
