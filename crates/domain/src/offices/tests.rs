//! Lookups with real addresses against the compiled-in data.

use super::*;

fn unique(zip: &str, city: &str) -> (Municipality, bool) {
    match municipalities_for(zip, city) {
        Resolution::Unique {
            municipality,
            city_matches,
        } => (municipality, city_matches),
        other => panic!("{zip} {city}: expected one municipality, got {other:?}"),
    }
}

fn keys(ms: &[Municipality]) -> Vec<&'static str> {
    ms.iter().map(|m| m.key).collect()
}

fn found(zip: &str, city: &str) -> TradeOfficeRef {
    match trade_office_for(zip, city) {
        TradeOfficeLookup::Found { office } => office,
        other => panic!("{zip} {city}: expected a trade office, got {other:?}"),
    }
}

/// The trade office for `zip` and `city` is found, with this key, kind and name.
fn found_as(zip: &str, city: &str, key: &str, kind: TradeOfficeKind, name: &str) {
    let o = found(zip, city);
    assert_eq!(
        (o.key, o.kind, o.name.as_str()),
        (key, kind, name),
        "{zip} {city}"
    );
}

fn confirmation(
    zip: &str,
    city: &str,
) -> (
    Vec<ConfirmationReason>,
    Option<&'static str>,
    Vec<Suggestion>,
) {
    match tax_office_for(zip, city) {
        TaxOfficeLookup::NeedsConfirmation {
            reasons,
            register_number,
            suggestions,
            ..
        } => (reasons, register_number, suggestions),
        other => panic!("{zip} {city}: expected needs_confirmation, got {other:?}"),
    }
}

#[test]
fn a_postal_code_of_one_municipality_decides_alone() {
    let (m, matches) = unique("24937", "Flensburg");
    assert_eq!(
        (m.key, m.name, matches),
        ("01001000", "Flensburg, Stadt", true)
    );
    assert_eq!(m.display_name(), "Stadt Flensburg");
    // The postal code decides even when the city is missing or a district name, but says so.
    let (m, matches) = unique("24937", "Mürwik");
    assert_eq!((m.key, matches), ("01001000", false));
    let (m, matches) = unique(" 24937 ", "");
    assert_eq!((m.key, matches), ("01001000", false));
}

#[test]
fn a_shared_postal_code_is_resolved_by_the_city() {
    // 54298 spans seven municipalities (Aach, Eisenach, Gilzem, Igel, Niederweis, ...).
    let Resolution::Ambiguous { candidates } = municipalities_for("54298", "") else {
        panic!("54298 alone must be ambiguous");
    };
    assert_eq!(candidates.len(), 7);
    assert!(keys(&candidates).contains(&"07235001"));
    assert_eq!(unique("54298", "Aach").0.key, "07235001");
    assert_eq!(unique("54298", "aach").0.key, "07235001");
    assert_eq!(unique("54298", "Gemeinde Aach").0.key, "07235001");
    assert_eq!(unique("54298", "Igel").0.key, "07235051");
    // An unknown place keeps all candidates and determines nothing.
    let resolution = municipalities_for("54298", "Trier");
    assert_eq!(resolution.municipality(), None);
    assert_eq!(resolution.candidates().len(), 7);
}

#[test]
fn city_names_are_normalised_before_matching() {
    // Shared postal codes, each resolved through a differently written name.
    assert_eq!(unique("24943", "Flensburg, Stadt").0.key, "01001000");
    assert_eq!(unique("24943", "FLENSBURG").0.key, "01001000");
    assert_eq!(unique("18182", "HANSESTADT Rostock").0.key, "13003000");
    assert_eq!(unique("18182", "Hansestadt  Rostock").0.key, "13003000");
    assert_eq!(unique("15236", "Frankfurt (Oder)").0.key, "12053000");
    assert_eq!(unique("15236", "Frankfurt/Oder").0.key, "12053000");
    assert_eq!(unique("15236", "Frankfurt").0.key, "12053000");
    // 24975 Maasbüll (umlaut; the municipality is newer than the register edition).
    assert_eq!(unique("24975", "Maasbuell").0.key, "01059141");
    assert_eq!(unique("24975", "MAASBÜLL").0.key, "01059141");
    // Unique postal codes: the name matches despite brackets, titles, umlauts and ß.
    assert!(unique("06108", "Halle (Saale)").1);
    assert!(unique("06108", "Halle/Saale").1);
    assert!(unique("06108", "Halle").1);
    assert!(unique("60311", "Frankfurt am Main").1);
    assert!(unique("60311", "Frankfurt a. M.").1);
    assert!(unique("80331", "Landeshauptstadt München").1);
    assert!(unique("80331", "Muenchen").1);
    assert!(unique("35390", "Gießen").1);
    assert!(unique("35390", "Giessen").1);
    assert!(unique("20095", "Freie und Hansestadt Hamburg").1);
    // The municipality followed by an Ortsteil.
    assert!(unique("81243", "München-Pasing").1);
    assert!(unique("04229", "Leipzig OT Plagwitz").1);
    // An Ortsteil alone (no municipality has the name): the postal code decides, and says so.
    assert!(!unique("81241", "Pasing").1);
}

/// "80331 Berlin" got München's offices until 2026-12: one half of a contradictory address
/// decides nothing now.
#[test]
fn a_city_of_another_postal_code_decides_nothing() {
    match municipalities_for("80331", "Berlin") {
        Resolution::Contradicted {
            candidates,
            named,
            certain,
        } => {
            assert_eq!(keys(&candidates), ["09162000"]);
            assert_eq!(keys(&named), ["11000000"]);
            assert!(certain);
        }
        other => panic!("{other:?}"),
    }
    let (reasons, _, suggestions) = confirmation("80331", "Berlin");
    assert_eq!(
        reasons[0],
        ConfirmationReason::CityNotOfPostalCode {
            named: vec!["Berlin, Stadt"]
        }
    );
    assert_eq!(
        suggestions[0].office.number, "9147",
        "the postal code's office, suggested"
    );
    assert!(matches!(
        trade_office_for("80331", "Berlin"),
        TradeOfficeLookup::Ambiguous { .. }
    ));
    // A qualified name that matches only by its core, and another municipality in full.
    assert!(matches!(
        municipalities_for("60311", "Frankfurt (Oder)"),
        Resolution::Contradicted { certain: true, .. }
    ));
    // Another municipality's core only: perhaps an Ortsteil of that name; not certain.
    assert!(matches!(
        municipalities_for("80331", "Frankfurt"),
        Resolution::Contradicted { certain: false, .. }
    ));
    for family in [LegalFamily::Corporation, LegalFamily::Partnership] {
        let q = TaxOfficeQuery {
            address: OfficeAddress {
                zip: "80331",
                city: "Frankfurt",
                street: Some("Marienplatz 8"),
            },
            family,
            group: false,
        };
        assert!(tax_office_at(&q).needs_confirmation(), "{family:?}");
    }
}

#[test]
fn unknown_and_malformed_postal_codes_are_not_found() {
    for zip in ["00000", "99999", "1234", "123456", "ABCDE", ""] {
        assert_eq!(
            municipalities_for(zip, "Berlin"),
            Resolution::NotFound,
            "{zip}"
        );
        assert_eq!(
            trade_office_for(zip, "Berlin"),
            TradeOfficeLookup::NotFound,
            "{zip}"
        );
        assert_eq!(
            tax_office_for(zip, "Berlin"),
            TaxOfficeLookup::NotFound,
            "{zip}"
        );
    }
}

#[test]
fn a_verbandsgemeinde_receives_the_trade_notice_in_rhineland_palatinate() {
    let office = found("54298", "Aach");
    assert_eq!(office.key, "072355007");
    assert_eq!(office.kind, TradeOfficeKind::Verband);
    assert_eq!(office.verband_type, Some(VerbandType::Verbandsgemeinde));
    assert_eq!(office.name, "Verbandsgemeinde Trier-Land");
    assert_eq!(office.seat, Some("Trier"));
    assert_eq!(office.municipality_key, "07235001");
    assert_eq!(office.municipality_name, "Gemeinde Aach");
}

#[test]
fn verband_rule_per_state() {
    // Schleswig-Holstein: the Amt.
    found_as(
        "25767",
        "Albersdorf",
        "010515175",
        TradeOfficeKind::Verband,
        "Amt Mitteldithmarschen",
    );
    // Niedersachsen: the Samtgemeinde.
    let o = found("38528", "Adenbüttel");
    assert_eq!(
        (o.key, o.name.as_str()),
        ("031515406", "Samtgemeinde Papenteich")
    );
    // Bayern: the Verwaltungsgemeinschaft, without the register's "(VGem)".
    let o = found("84547", "Emmerting");
    assert_eq!(
        (o.key, o.name.as_str()),
        ("091715101", "Verwaltungsgemeinschaft Emmerting")
    );
    // Brandenburg and Mecklenburg-Vorpommern: the Amt.
    assert_eq!(
        found("16247", "Althüttendorf").name,
        "Amt Joachimsthal (Schorfheide)"
    );
    assert_eq!(found("17214", "Alt Schwerin").name, "Amt Malchow");
    // Sachsen-Anhalt: the Verbandsgemeinde.
    assert_eq!(
        found("38486", "Apenburg-Winterfeld").name,
        "Verbandsgemeinde Beetzendorf-Diesdorf"
    );
    // A Samtgemeinde named like its town ("Rethem (Aller), Stadt") stays the Samtgemeinde.
    let o = found("27336", "Rethem (Aller)");
    assert_eq!(
        (o.kind, o.name.as_str()),
        (TradeOfficeKind::Verband, "Samtgemeinde Rethem (Aller)")
    );
    // Baden-Württemberg: the municipality, although it belongs to a Gemeindeverwaltungsverband.
    found_as(
        "71134",
        "Aidlingen",
        "08115001",
        TradeOfficeKind::Municipality,
        "Gemeinde Aidlingen",
    );
    // Thüringen: the erfüllende Gemeinde is a municipality acting for the others.
    let o = found("99765", "Görsbach");
    assert_eq!(o.kind, TradeOfficeKind::Municipality);
    assert_eq!(o.verband_type, Some(VerbandType::ErfuellendeGemeinde));
    assert_eq!(o.name, "Stadt Heringen/Helme");
    assert_eq!(o.municipality_key, "16062008");
    assert!(o.note.is_some());
    // Verbandsfreie municipality in Hessen / NRW: itself.
    found_as(
        "45879",
        "Gelsenkirchen",
        "05513000",
        TradeOfficeKind::Municipality,
        "Stadt Gelsenkirchen",
    );
    // Berlin: the municipality key, with the Bezirksamt caveat.
    let o = found("10115", "Berlin");
    assert_eq!(o.municipality_key, "11000000");
    assert!(o.note.is_some_and(|n| n.contains("Bezirksamt")));
}

#[test]
fn an_ambiguous_postal_code_lists_a_trade_office_per_candidate() {
    let TradeOfficeLookup::Ambiguous { candidates } = trade_office_for("54298", "") else {
        panic!("expected ambiguity");
    };
    assert_eq!(candidates.len(), 7);
    assert!(
        candidates
            .iter()
            .any(|c| c.name == "Verbandsgemeinde Trier-Land")
    );
}

#[test]
fn a_plain_municipality_gets_its_general_tax_office() {
    let lookup = tax_office_for("54298", "Aach");
    let office = lookup.office().expect("Aach: determined");
    assert!(!lookup.needs_confirmation());
    assert_eq!(
        (office.number, office.display_name().as_str()),
        ("2742", "Finanzamt Trier")
    );
    assert_eq!(office.city, Some("Trier"));
    let office = tax_office_for("24937", "Flensburg")
        .office()
        .expect("Flensburg: determined");
    assert_eq!(office.number, "2115");
}

#[test]
fn berlin_needs_confirmation_because_of_its_corporation_offices() {
    let (reasons, register, suggestions) = confirmation("10115", "Berlin");
    assert_eq!(register, Some("1113"));
    let Some(ConfirmationReason::CorporationOffices { numbers }) = reasons
        .iter()
        .find(|r| matches!(r, ConfirmationReason::CorporationOffices { .. }))
    else {
        panic!("Berlin: corporation offices expected, got {reasons:?}");
    };
    assert_eq!(numbers, &["1127", "1129", "1130", "1137"]);
    assert!(
        reasons
            .iter()
            .any(|r| matches!(r, ConfirmationReason::SeveralOfficesInMunicipality { .. }))
    );
    let corporation = suggestions
        .iter()
        .find(|s| s.office.number == "1127")
        .expect("Finanzamt für Körperschaften I suggested");
    assert_eq!(corporation.basis, SuggestionBasis::CorporationOffice);
    assert_eq!(
        corporation.office.display_name(),
        "Finanzamt für Körperschaften I"
    );
    assert_eq!(corporation.office.purpose, OfficePurpose::Corporations);
}

#[test]
fn hamburg_needs_confirmation_merged_number_and_large_company_office() {
    let (reasons, register, suggestions) = confirmation("20095", "Hamburg");
    assert_eq!(register, Some("2202"));
    assert!(reasons.contains(&ConfirmationReason::OfficeNotInDirectory { number: "2202" }));
    assert!(reasons.iter().any(
        |r| matches!(r, ConfirmationReason::CorporationOffices { numbers } if numbers == &["2227"])
    ));
    // Suggestions are general Hamburg offices and the large company office, never the
    // valuation, collection or audit offices.
    assert!(suggestions.iter().any(|s| s.office.number == "2227"));
    assert!(suggestions.iter().any(|s| s.office.name == "Hamburg-Mitte"));
    assert!(
        suggestions
            .iter()
            .all(|s| s.office.purpose != OfficePurpose::Special)
    );
}

#[test]
fn munich_needs_confirmation_because_of_its_corporation_offices() {
    let (reasons, register, suggestions) = confirmation("80331", "München");
    assert_eq!(register, Some("9147"));
    assert!(reasons.iter().any(|r| matches!(
        r,
        ConfirmationReason::CorporationOffices { numbers } if numbers == &["9143", "9187"]
    )));
    assert_eq!(suggestions[0].basis, SuggestionBasis::Register);
    assert_eq!(suggestions[0].office.number, "9147");
}

#[test]
fn a_merged_office_number_is_never_replaced_by_a_guess() {
    // Only a successor a source names replaces the register's number (`city_tests.rs`); the
    // heuristic successors of numbers not in that table stay suggestions. Gelsenkirchen's 5318
    // is in the table.
    let lookup = tax_office_for("45879", "Gelsenkirchen");
    assert_eq!(lookup.office().map(|o| o.number), Some("5319"));
    // Meldorf (2123 -> 2116, stated) is determined; Eckernförde (2112) splits between two.
    assert_eq!(
        tax_office_for("25704", "Meldorf")
            .office()
            .map(|o| o.number),
        Some("2116")
    );
    let (reasons, register, suggestions) = confirmation("24340", "Eckernförde");
    assert_eq!(register, Some("2112"));
    assert_eq!(
        reasons,
        vec![ConfirmationReason::OfficeNotInDirectory { number: "2112" }]
    );
    let numbers: Vec<&str> = suggestions.iter().map(|s| s.office.number).collect();
    assert_eq!(
        numbers,
        ["2129", "2128"],
        "Eckernförde-Schleswig, Rendsburg"
    );
    assert!(
        suggestions
            .iter()
            .all(|s| s.basis == SuggestionBasis::Successor)
    );
}

#[test]
fn cities_with_several_general_offices_need_confirmation() {
    let (reasons, register, _) = confirmation("50667", "Köln");
    assert_eq!(register, Some("5214"));
    let Some(ConfirmationReason::SeveralOfficesInMunicipality { numbers }) = reasons.first() else {
        panic!("Köln: several offices expected, got {reasons:?}");
    };
    assert!(numbers.contains(&"5217"), "Köln-Nord");
    assert!(
        !numbers.contains(&"5270"),
        "the audit office is not a registration office"
    );
    // Aachen's second office (Aachen-Kreis) serves the surrounding municipalities: no doubt.
    assert_eq!(
        tax_office_for("52062", "Aachen").office().map(|o| o.number),
        Some("5201")
    );
}

#[test]
fn bremen_register_office_is_now_a_cash_office_and_maps_to_finanzamt_bremen() {
    match tax_office_for("28195", "Bremen") {
        TaxOfficeLookup::Determined {
            office,
            merged_from,
            ..
        } => assert_eq!((office.number, merged_from), ("2460", Some("2471"))),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_municipality_newer_than_the_register_needs_confirmation() {
    let lookup = tax_office_for("24975", "Maasbüll");
    assert!(lookup.needs_confirmation());
    let TaxOfficeLookup::NeedsConfirmation { reasons, .. } = lookup else {
        unreachable!()
    };
    assert_eq!(
        reasons,
        vec![ConfirmationReason::MunicipalityNotInRegister {
            municipality_key: "01059141"
        }]
    );
    let office = found("24975", "Maasbüll");
    assert_eq!(office.kind, TradeOfficeKind::Municipality);
    assert!(office.note.is_some());
}

#[test]
fn directory_lookups() {
    let flensburg = tax_office("2115").expect("2115");
    assert_eq!(flensburg.name, "Flensburg");
    assert_eq!(flensburg.display_name(), "Finanzamt Flensburg");
    assert_eq!(flensburg.purpose, OfficePurpose::General);
    assert!(flensburg.street.is_some() && flensburg.postal_code.is_some());
    assert_eq!(tax_office(" 2742 ").map(|o| o.name), Some("Trier"));
    assert_eq!(
        tax_office("9116").map(TaxOffice::display_name).as_deref(),
        Some("Bundeszentralamt für Steuern")
    );
    assert_eq!(
        tax_office("2899").map(|o| o.purpose),
        Some(OfficePurpose::Corporations)
    );
    assert_eq!(
        tax_office("5270").map(|o| o.purpose),
        Some(OfficePurpose::Special)
    );
    assert_eq!(
        tax_office("2879").map(|o| o.purpose),
        Some(OfficePurpose::Branch)
    );
    assert!(is_known_tax_office("2120"));
    for merged in [
        "1070", "1090", "2112", "2114", "2119", "2121", "2123", "2202", "4071", "4074", "4083",
        "4085", "4089", "5318",
    ] {
        assert!(!is_known_tax_office(merged), "{merged}");
    }
    assert!(!is_known_tax_office("0000"));
    assert!(!is_known_tax_office(""));
}

#[test]
fn index_sizes_and_municipality_keys() {
    let stats = index_stats();
    assert_eq!(stats.tax_offices, 601);
    assert_eq!(stats.postcode_rows, 12_871);
    assert_eq!(stats.postal_codes, 8_170);
    assert!(stats.municipalities >= 10_981);
    assert!(stats.heap_bytes < 10 * 1024 * 1024, "{stats:?}");
    let aach = Municipality::by_key("07235001").expect("Aach");
    assert_eq!(
        (
            aach.name,
            aach.state_key(),
            aach.register_tax_office_number()
        ),
        ("Aach", "07", Some("2742"))
    );
    assert_eq!(
        Municipality::by_key("09162000")
            .map(|m| m.display_name())
            .as_deref(),
        Some("Landeshauptstadt München")
    );
    assert_eq!(Municipality::by_key("12345678"), None);
    assert_eq!(postal_codes().next().as_deref(), Some("01067"));
}

#[test]
fn results_serialise_with_a_status_tag() {
    let json = serde_json::to_value(tax_office_for("23701", "Eutin")).expect("json");
    assert_eq!(json["status"], "needs_confirmation");
    assert_eq!(json["reasons"][0]["reason"], "office_not_in_directory");
    assert_eq!(json["suggestions"][0]["basis"], "successor");
    let json = serde_json::to_value(tax_office_for("24103", "Kiel")).expect("json");
    assert_eq!(json["status"], "determined");
    assert_eq!(json["merged_from"], "2119");
    assert_eq!(json["office"]["number"], "2120");
    assert_eq!(json["basis"]["rule"], "merged-office");
    assert_eq!(json["basis"]["kind"], "evidence");
    assert_eq!(json["basis"]["date"], "2017-08-10");
    let json = serde_json::to_value(trade_office_for("54298", "Aach")).expect("json");
    assert_eq!(json["status"], "found");
    assert_eq!(json["office"]["kind"], "verband");
    assert_eq!(json["office"]["key"], "072355007");
}
