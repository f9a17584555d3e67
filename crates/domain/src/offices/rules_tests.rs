//! The rules by kind (issue 51), with real addresses; each test names its source
//! (`rules.md` and `rules-2026-12.md` are the team's research beside the shared data; the rules
//! and their sources are in `rules.rs` and docs/offices.md).

use super::*;

fn at(zip: &str, city: &str, street: &str, family: LegalFamily) -> TaxOfficeLookup {
    tax_office_at(&TaxOfficeQuery {
        address: OfficeAddress {
            zip,
            city,
            street: Some(street),
        },
        family,
        group: false,
    })
}

/// The determined office and its basis.
fn determined(zip: &str, city: &str, street: &str, family: LegalFamily) -> (&'static str, Basis) {
    match at(zip, city, street, family) {
        TaxOfficeLookup::Determined { office, basis, .. } => (office.number, basis),
        other => panic!("{zip} {city} {street} {family:?}: expected determined, got {other:?}"),
    }
}

/// The reasons and the suggested numbers of a lookup that must need confirmation.
fn suggested(
    zip: &str,
    city: &str,
    street: &str,
    family: LegalFamily,
) -> (Vec<ConfirmationReason>, Vec<&'static str>) {
    match at(zip, city, street, family) {
        TaxOfficeLookup::NeedsConfirmation {
            reasons,
            suggestions,
            ..
        } => (
            reasons,
            suggestions.iter().map(|s| s.office.number).collect(),
        ),
        other => panic!("{zip} {city} {street} {family:?}: expected suggestions, got {other:?}"),
    }
}

const BOTH: [LegalFamily; 2] = [LegalFamily::Corporation, LegalFamily::Partnership];

/// The case: a GmbH in Ottobrunn (Landkreis München) was determined to 9147, the
/// general office; München's corporations (city and Landkreis) are 9143's. Source:
/// rules-2026-12.md § 2.3 (GemFA name, ELSTER history, tax numbers 143/... of GmbHs in
/// Unterschleißheim and Planegg and of an eGbR in München).
#[test]
fn muenchen_and_its_landkreis_go_to_9143() {
    for (zip, city, street) in [
        ("85521", "Ottobrunn", "Rathausplatz 1"),
        ("82152", "Planegg", "Pasinger Straße 8"),
        ("85716", "Unterschleißheim", "Rathausplatz 1"),
        ("80331", "München", "Marienplatz 8"),
        ("81243", "München", "Leienfelsstraße 21b"),
    ] {
        for family in BOTH {
            let (office, basis) = determined(zip, city, street, family);
            assert_eq!(office, "9143", "{city} {family:?}");
            assert_eq!(basis.rule, "muenchen-9143");
            assert_eq!(basis.kind, SourceKind::Evidence);
            assert_eq!(basis.date, "2017-06-28");
        }
    }
    // The Landkreis's register office is the general one: the rule, not the register, decides.
    assert_eq!(
        Municipality::by_key("09184136").and_then(|m| m.register_tax_office_number()),
        Some("9147"),
        "Ottobrunn in the register"
    );
    // Never 9187 (no target for ELSTER filings since 2016).
    assert_ne!(
        determined(
            "80331",
            "München",
            "Marienplatz 8",
            LegalFamily::Corporation
        )
        .0,
        "9187"
    );
}

/// Stuttgart: BW FAZuVO § 1 no. 6 and the office's name (rules.md, rules-2026-12.md § 2.6).
#[test]
fn stuttgart_corporations_go_to_2899() {
    for (zip, street) in [("70173", "Marktplatz 1"), ("70178", "Paulinenstraße 44")] {
        let (office, basis) = determined(zip, "Stuttgart", street, LegalFamily::Corporation);
        assert_eq!(office, "2899");
        assert_eq!(basis.rule, "stuttgart-2899");
        assert!(basis.summary.contains("Komplementär-GmbH"));
    }
}

/// Frankfurt am Main: one office, corporations under 2614 (rules-2026-12.md § 2.4: a recent
/// construction GmbH at Heinrichstraße 9, 60327, files under 014 240 ...). Partnerships: no
/// public rule; the register's 2612 first.
#[test]
fn frankfurt_corporations_go_to_2614() {
    for (zip, city, street) in [
        ("60327", "Frankfurt am Main", "Heinrichstraße 9"),
        ("60311", "Frankfurt a. M.", "Römerberg 23"),
    ] {
        let (office, basis) = determined(zip, city, street, LegalFamily::Corporation);
        assert_eq!(office, "2614", "{street}");
        assert_eq!(
            (basis.rule, basis.kind),
            ("frankfurt-2614", SourceKind::Evidence)
        );
    }
    let (reasons, numbers) = suggested(
        "60311",
        "Frankfurt am Main",
        "Römerberg 23",
        LegalFamily::Partnership,
    );
    assert_eq!(
        reasons[0],
        ConfirmationReason::NoPublicRule {
            city: "Frankfurt am Main"
        }
    );
    assert_eq!(numbers[0], "2612");
    assert!(numbers.contains(&"2614"));
}

/// Bremen: one office for the whole city (Senatspressestelle, 11.07.2013); the register's 2471
/// is the Landeshauptkasse. Vegesack was Bremen-Nord's area (rules-2026-12.md § 2.2).
#[test]
fn bremen_goes_to_2460() {
    for (zip, street) in [
        ("28195", "Am Markt 21"),
        ("28757", "Gerhard-Rohlfs-Straße 62"),
    ] {
        for family in BOTH {
            match at(zip, "Bremen", street, family) {
                TaxOfficeLookup::Determined {
                    office,
                    basis,
                    merged_from,
                    ..
                } => {
                    assert_eq!(office.number, "2460");
                    assert_eq!(merged_from, Some("2471"));
                    assert_eq!(
                        (basis.rule, basis.kind),
                        ("bremen-2460", SourceKind::OfficialPage)
                    );
                }
                other => panic!("{other:?}"),
            }
        }
    }
}

/// Sachsen's ordinance (Anlage Abschnitt II; rules-2026-12.md § 2.1) assigns each Stadtbezirk
/// of Leipzig, Stadtbezirk or Ortschaft of Dresden and Stadtteil of Chemnitz to one office. No
/// data places an address in one, so these are suggestions: the area the city field names
/// first (both sides of each boundary between the two offices' areas), else the likelier.
#[test]
fn sachsen_cities_suggest_by_stadtbezirk() {
    for (zip, city, street, first) in [
        // Leipzig: Südwest (I) | Mitte (II), Alt-West (I) | Mitte (II), Nord (I) | Mitte (II).
        ("04229", "Leipzig-Plagwitz", "Klingenstraße 22", "3232"),
        ("04107", "Leipzig-Zentrum-Süd", "Simsonplatz 1", "3231"),
        ("04179", "Leipzig-Lindenau", "Spinnereistraße 7", "3232"),
        ("04109", "Leipzig-Zentrum", "Martin-Luther-Ring 4", "3231"),
        ("04155", "Leipzig-Gohlis", "Menckestraße 23", "3232"),
        (
            "04105",
            "Leipzig-Zentrum-Nord",
            "Pfaffendorfer Straße 29",
            "3231",
        ),
        // Dresden: Altstadt (Süd) | Neustadt (Nord), across the Elbe.
        ("01067", "Dresden-Altstadt", "Dr.-Külz-Ring 19", "3203"),
        (
            "01099",
            "Dresden-Neustadt",
            "Königsbrücker Straße 96",
            "3202",
        ),
        // Chemnitz: Zentrum (Mitte) | Bernsdorf (Süd).
        ("09111", "Chemnitz-Zentrum", "Markt 1", "3215"),
        (
            "09126",
            "Chemnitz-Bernsdorf",
            "Reichenhainer Straße 70",
            "3214",
        ),
    ] {
        for family in BOTH {
            let (reasons, numbers) = suggested(zip, city, street, family);
            assert!(
                matches!(
                    reasons[0],
                    ConfirmationReason::AreaNotDetermined {
                        rule: CityRule::SachsenStadtbezirk,
                        named_area: Some(_)
                    }
                ),
                "{city}: {reasons:?}"
            );
            assert_eq!(numbers[0], first, "{city} {street}");
            assert_eq!(numbers.len(), 2, "{city}: the city's two offices");
        }
    }
    // Without a named area: the likelier office first (Leipzig I has 68 % of the population;
    // Dresden-Süd 11 of the 19 areas). The research's samples agree: Klingenstraße 22 (GbR,
    // 232/... = Leipzig I), Blasewitzer Straße 41 (GmbH, 203/... = Dresden-Süd).
    let (_, numbers) = suggested(
        "04229",
        "Leipzig",
        "Klingenstraße 22",
        LegalFamily::Partnership,
    );
    assert_eq!(numbers, ["3232", "3231"]);
    let (_, numbers) = suggested(
        "01307",
        "Dresden",
        "Blasewitzer Straße 41",
        LegalFamily::Corporation,
    );
    assert_eq!(numbers, ["3203", "3202"]);
}

/// Sachsen outside its cities of two offices: the ordinance moves no corporation elsewhere, so
/// the register's office is determined for every kind, on the ordinance's text.
#[test]
fn sachsen_elsewhere_is_the_district_office() {
    for family in BOTH {
        let (office, basis) = determined("09599", "Freiberg", "Obermarkt 24", family);
        assert_eq!(office, "3220");
        assert_eq!(
            (basis.rule, basis.kind),
            ("sachsen-district-office", SourceKind::LegalText)
        );
    }
}

/// Hamburg: the regional offices, the Anordnung's known rows first; never the Finanzamt für
/// Großunternehmen, which takes no new company (rules-2026-12.md § 2.7). The research's GmbH in
/// 22763 files with Am Tierpark (42/...), among the first three.
#[test]
fn hamburg_suggests_its_regional_offices_without_the_large_company_office() {
    for (zip, street) in [("20095", "Rathausmarkt 1"), ("22763", "Elbchaussee 96")] {
        for family in BOTH {
            let (reasons, numbers) = suggested(zip, "Hamburg", street, family);
            assert_eq!(
                reasons[0],
                ConfirmationReason::RuleNotVerified {
                    rule: CityRule::HamburgOrtsteil
                }
            );
            assert_eq!(numbers[..3], ["2243", "2241", "2242"]);
            assert!(!numbers.contains(&"2227"), "{numbers:?}");
            assert!(numbers.len() >= 10, "every regional office: {numbers:?}");
        }
    }
}

/// Düsseldorf and Duisburg: FA-ZVO NRW § 2 by Stadtteil (rules.md); suggestions, the named
/// Stadtteil's office first (both sides of Altstadt | Düsseltal, Altstadt | Hamborn).
#[test]
fn duesseldorf_and_duisburg_suggest_by_stadtteil() {
    for (zip, city, street, first) in [
        ("40213", "Düsseldorf-Altstadt", "Marktplatz 2", "5103"),
        (
            "40239",
            "Düsseldorf-Düsseltal",
            "Mülheimer Straße 7",
            "5105",
        ),
        (
            "40595",
            "Düsseldorf-Garath",
            "Fritz-Erler-Straße 21",
            "5106",
        ),
        ("47051", "Duisburg-Altstadt", "Burgplatz 19", "5109"),
        ("47166", "Duisburg-Hamborn", "Duisburger Straße 213", "5107"),
    ] {
        for family in BOTH {
            let (reasons, numbers) = suggested(zip, city, street, family);
            assert!(
                matches!(
                    reasons[0],
                    ConfirmationReason::AreaNotDetermined {
                        rule: CityRule::NrwStadtteil,
                        ..
                    }
                ),
                "{reasons:?}"
            );
            assert_eq!(numbers[0], first, "{city}");
        }
    }
    // No Stadtteil named: Süd, the office of the most Stadtteile, first (the research's UG in
    // 40595 Garath files with Düsseldorf-Süd).
    let (_, numbers) = suggested(
        "40595",
        "Düsseldorf",
        "Fritz-Erler-Straße 21",
        LegalFamily::Corporation,
    );
    assert_eq!(numbers[0], "5106");
}

/// Köln, Essen, Dortmund, Hannover: no public rule found; the city's offices, the register's
/// first (rules-2026-12.md § 2.8-2.9).
#[test]
fn cities_without_a_public_rule_say_so() {
    for (zip, city, street, register, other) in [
        ("50667", "Köln", "Rathausplatz 2", "5214", "5217"),
        ("50733", "Köln", "Wartburgstraße 12", "5214", "5215"),
        ("45127", "Essen", "Porscheplatz 1", "5111", "5112"),
        ("45143", "Essen", "Altendorfer Straße 129", "5111", "5112"),
        ("44135", "Dortmund", "Friedensplatz 1", "5314", "5317"),
        (
            "44263",
            "Dortmund",
            "Niederhofener Straße 3",
            "5314",
            "5315",
        ),
        ("30159", "Hannover", "Trammplatz 2", "2324", "2325"),
        ("30159", "Hannover", "Prinzenstraße 3", "2324", "2326"),
    ] {
        for family in BOTH {
            let (reasons, numbers) = suggested(zip, city, street, family);
            assert_eq!(
                reasons[0],
                ConfirmationReason::NoPublicRule { city },
                "{city}"
            );
            assert!(reasons[0].message().contains("no public rule found"));
            assert_eq!(numbers[0], register, "{city}");
            assert!(numbers.contains(&other), "{city}: {numbers:?}");
        }
    }
}

/// One address per state where the register's general office was taken for a corporation's
/// (issue 51): never again. A partnership there keeps the district office, determined.
#[test]
fn one_address_per_state_where_the_general_office_was_taken() {
    let corporation = LegalFamily::Corporation;
    // Bayern: Landkreis München (above) and a Bavarian town: the state concentrates.
    let (reasons, numbers) = suggested("93047", "Regensburg", "Rathausplatz 1", corporation);
    assert!(matches!(
        &reasons[0],
        ConfirmationReason::StateConcentratesCorporations { basis } if basis.rule == "bayern-corporations"
    ));
    assert_eq!(numbers[0], "9244", "the register's office, suggested");
    // Baden-Württemberg (FAZuVO § 1 no. 6).
    let (reasons, _) = suggested(
        "76133",
        "Karlsruhe",
        "Karl-Friedrich-Straße 10",
        corporation,
    );
    assert!(matches!(
        &reasons[0],
        ConfirmationReason::StateConcentratesCorporations { basis } if basis.rule == "bw-fazuvo-1-6"
    ));
    // Hessen (FÄZustV § 6).
    let (reasons, _) = suggested("65183", "Wiesbaden", "Schloßplatz 6", corporation);
    assert!(reasons.iter().any(|r| matches!(
        r,
        ConfirmationReason::StateConcentratesCorporations { basis } if basis.rule == "hessen-faezustv-6"
    )));
    // Schleswig-Holstein (FÄZustVO Anlage 1).
    let (reasons, numbers) = suggested("24103", "Kiel", "Fleethörn 9", corporation);
    assert!(matches!(
        &reasons[0],
        ConfirmationReason::StateConcentratesCorporations { basis } if basis.rule == "sh-faezustvo-anlage-1"
    ));
    assert_eq!(numbers[0], "2120", "the successor of the register's 2119");
    // Hamburg and NRW and Niedersachsen: several offices, suggested (above).
    assert!(at("20095", "Hamburg", "Rathausmarkt 1", corporation).needs_confirmation());
    assert!(at("40213", "Düsseldorf", "Marktplatz 2", corporation).needs_confirmation());
    assert!(at("30159", "Hannover", "Trammplatz 2", corporation).needs_confirmation());
    // Partnerships in the same places: the district office, determined on the register.
    for (zip, city, street, office) in [
        ("93047", "Regensburg", "Rathausplatz 1", "9244"),
        ("76133", "Karlsruhe", "Karl-Friedrich-Straße 10", "2835"),
        ("24103", "Kiel", "Fleethörn 9", "2120"),
    ] {
        let (number, basis) = determined(zip, city, street, LegalFamily::Partnership);
        assert_eq!(number, office, "{city}");
        assert!(
            basis.rule == "register" || basis.rule == "merged-office",
            "{basis:?}"
        );
    }
    // NRW and Niedersachsen outside their cities of several offices: no concentration of
    // corporations is known (FA-ZVO NRW §§ 2, 21 read), the register decides.
    for (zip, city, street, office) in [
        ("52062", "Aachen", "Markt 1", "5201"),
        ("21335", "Lüneburg", "Am Ochsenmarkt 1", "2333"),
    ] {
        let (number, basis) = determined(zip, city, street, corporation);
        assert_eq!(number, office, "{city}");
        assert_eq!(
            (basis.rule, basis.kind),
            ("register", SourceKind::OfficialData)
        );
    }
}

/// The guarantee: in a state with a corporation office (Berlin, Hamburg, Baden-
/// Württemberg, Bayern) no corporation is determined to a general office, for any postal code
/// and any of its municipalities; in Hessen and Schleswig-Holstein, which concentrate too, only
/// Frankfurt's rule determines.
#[test]
fn no_corporation_is_determined_to_a_general_office_where_the_state_has_corporation_offices() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for zip in postal_codes() {
        let mut cities: Vec<&str> = municipalities_for(&zip, "")
            .candidates()
            .iter()
            .map(|m| m.name)
            .collect();
        cities.push("");
        for city in cities {
            let lookup = tax_office_at(&TaxOfficeQuery {
                address: OfficeAddress {
                    zip: &zip,
                    city,
                    street: None,
                },
                family: LegalFamily::Corporation,
                group: false,
            });
            let TaxOfficeLookup::Determined {
                office,
                municipalities,
                rule,
                ..
            } = &lookup
            else {
                continue;
            };
            let state = municipalities[0].state_key();
            checked += 1;
            let fine = match state {
                "02" | "08" | "09" | "11" => office.purpose == OfficePurpose::Corporations,
                "01" | "06" => *rule == Some(CityRule::FrankfurtCorporations),
                _ => true,
            };
            if !fine {
                wrong.push(format!("{zip} {city}: {}", office.number));
            }
        }
    }
    assert!(checked > 5_000, "{checked}");
    assert!(
        wrong.is_empty(),
        "{} wrong, e.g. {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(5)]
    );
}

/// A merger is one row of `merged-offices.tsv`: the number, whether named by the register or by
/// a rule, goes through it before use (Nürnberg from 2026, once the new number is published).
#[test]
fn a_merger_is_one_row() {
    let table = "# old\tsuccessor\tcertainty\tsince\tkind\tsource\n\
                 9240\t9238\thigh\t2026-01-01\tofficial_page\tStMFH press release 372 of 5.12.2025\n\
                 9241\t9238,9240\tmedium\t2026-01-01\tevidence\tsplit\n";
    let row = tax::merged_in(table, "9240").unwrap();
    assert_eq!(row.replacement(), Some("9238"));
    assert_eq!(row.basis().date, "2026-01-01");
    assert_eq!(row.basis().kind, SourceKind::OfficialPage);
    assert_eq!(tax::merged_in(table, "9241").unwrap().replacement(), None);
    assert!(tax::merged_in(table, "9238").is_none());
    // The shipped table: every successor is in the directory, every row's number is not a
    // registration office any more (or is split), and rules' offices map to themselves.
    for line in include_str!("../../data/offices/merged-offices.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
    {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 6, "{line}");
        for s in f[1].split(',') {
            assert!(is_known_tax_office(s), "{s} of {line}");
        }
    }
    for number in ["9143", "2899", "2614", "2460", "1127"] {
        assert_eq!(tax::current(number), number);
    }
    assert_eq!(tax::current("2119"), "2120");
}
