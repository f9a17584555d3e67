//! The rules that decide a company's tax office beyond the municipality register, by the kind
//! of company, each with its public source (docs/offices.md, "Rules by kind"; ADR
//! 0028-office-rules-by-kind):
//!
//! - the register's general office (GV100AD) decides for a partnership, and for a corporation
//!   only where the state is not known to concentrate corporations in other offices;
//! - where a state does (Baden-Württemberg, Bayern, Hessen, Schleswig-Holstein; Berlin and
//!   Hamburg by their own rules), a corporation's office is determined only by a rule for
//!   corporations of its city (München with the Landkreis, Stuttgart, Frankfurt am Main,
//!   Berlin) and otherwise suggested;
//! - Bremen and Sachsen: the whole ordinance or an official page was read;
//! - Sachsen's three cities, Düsseldorf and Duisburg split by district, which no data of the
//!   service places an address in: suggestions, the district the city field names first.

use serde::Serialize;

use super::normalize_city;

/// What kind of source a rule rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// The text of a law or ordinance (or a verbatim mirror of it).
    LegalText,
    /// An authority's own page or press release.
    OfficialPage,
    /// An official data set: the municipality register (GV100AD), the BZSt office directory.
    OfficialData,
    /// Inferred: office names, ELSTER's office history, tax numbers of real companies.
    Evidence,
}

/// Why an office was determined: the rule, its source, the source's date and kind. Carried by
/// every determination, in the API's answer and on the case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Basis {
    /// A stable id: `register`, `muenchen-9143`, `merged-office`, ...
    #[cfg_attr(feature = "openapi", schema(example = "muenchen-9143"))]
    pub rule: &'static str,
    /// The rule in one English sentence.
    #[cfg_attr(
        feature = "openapi",
        schema(
            example = "München (city and Landkreis): corporations and partnerships go to the Finanzamt München's department for Körperschaften/Personengesellschaften, 9143"
        )
    )]
    pub summary: &'static str,
    /// Where the rule comes from.
    #[cfg_attr(
        feature = "openapi",
        schema(
            example = "BZSt GemFA directory: 9143 'München Körperschaften/PersonenGesellschaften' (2025-04-23); ELSTER's office history"
        )
    )]
    pub source: &'static str,
    /// The source's date (its version, publication, or the change it records), ISO 8601.
    #[cfg_attr(feature = "openapi", schema(example = "2017-06-28"))]
    pub date: &'static str,
    /// `legal_text`, `official_page`, `official_data` or `evidence`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "evidence"))]
    pub kind: SourceKind,
}

/// A partnership: the office of the district where it is managed and its business is run,
/// which is the municipality's general office of the register.
pub const REGISTER_PARTNERSHIP: Basis = Basis {
    rule: "register",
    summary: "a partnership goes to the general office of the district where it is managed and its business is run (§ 18 (1) no. 2, § 21 AO): the municipality's office in the register",
    source: "Destatis GV100AD, Finanzamtsbezirk of the municipality (30.11.2023); BZSt GemFA office directory (2025-04-23)",
    date: "2023-11-30",
    kind: SourceKind::OfficialData,
};

/// A natural person (a sole proprietor) by the residence.
pub const REGISTER_NATURAL_PERSON: Basis = Basis {
    rule: "register",
    summary: "a natural person goes to the office of the residence (§ 19 (1) AO), where the business is also run in its district: the municipality's office in the register",
    source: "Abgabenordnung § 19 (1), § 21 (1); Destatis GV100AD, Finanzamtsbezirk of the municipality (30.11.2023); BZSt GemFA office directory (2025-04-23)",
    date: "2023-11-30",
    kind: SourceKind::OfficialData,
};

/// A corporation where the state is not known to move corporations to other offices.
pub const REGISTER_CORPORATION: Basis = Basis {
    rule: "register",
    summary: "a corporation goes to the office of its place of management (§ 20 AO): the municipality's general office in the register; no rule of the state moving corporations to another office is known (docs/offices.md, 'States')",
    source: "Destatis GV100AD, Finanzamtsbezirk of the municipality (30.11.2023); BZSt GemFA office directory (2025-04-23); for the states, the team's research rules.md and rules-2026-12.md",
    date: "2023-11-30",
    kind: SourceKind::OfficialData,
};

/// Sachsen, outside its cities of several offices: the ordinance read in full.
pub const SACHSEN: Basis = Basis {
    rule: "sachsen-district-office",
    summary: "Sachsen: each Finanzamt administers the taxes of its district (§ 1 (2) of the ordinance); its annex moves no corporation's assessment elsewhere, so the municipality's office of the register decides",
    source: "Sächsische Finanzamts-Zuständigkeitsverordnung (Neufassung), § 1 (2) and Anlage Abschnitt I, REVOSax text as mirrored in oliverguhr/revosax-embeddings (commit of 2025-05-13)",
    date: "2025-05-13",
    kind: SourceKind::LegalText,
};

/// Berlin: corporations by Bezirk.
pub const BERLIN_CORPORATIONS: Basis = Basis {
    rule: "berlin-corporations-by-bezirk",
    summary: "Berlin: the Bezirk of the company's address decides among the Finanzämter für Körperschaften I-IV (the regional split since 1.1.2016)",
    source: "berlin.de, 'FAQ Zuständigkeiten der Finanzämter für Körperschaften' and 'Finanzämter für Körperschaften'; FÄZustVO of 8.12.2021 (its annex not read); Geoportal Berlin 'Adressen Berlin' (2023-06) for the Bezirk",
    date: "2016-01-01",
    kind: SourceKind::OfficialPage,
};

/// München, city and Landkreis.
pub const MUENCHEN: Basis = Basis {
    rule: "muenchen-9143",
    summary: "München (city and Landkreis): corporations and partnerships go to the Finanzamt München's department for Körperschaften/Personengesellschaften, 9143 (9187 has been no target for ELSTER wage-tax filings since 2016)",
    source: "BZSt GemFA directory: 9143 'München Körperschaften/PersonenGesellschaften' (2025-04-23); ELSTER's office history (Dataline StaticTaxOfficeData.cs: 9187 no LStA target from 2016-01-01, names of 2017-06-28); public tax numbers 143/... of München and Landkreis München GmbHs and an eGbR (rules-2026-12.md § 2.3)",
    date: "2017-06-28",
    kind: SourceKind::Evidence,
};

/// Stuttgart, corporations.
pub const STUTTGART: Basis = Basis {
    rule: "stuttgart-2899",
    summary: "Stuttgart: corporations go to Finanzamt Stuttgart-Körperschaften (2899); a Komplementär-GmbH stays with its KG's office (then assign that office)",
    source: "BW FAZuVO of 30.11.2004 § 1 no. 6 (corporations to designated offices, except the Komplementär-GmbH; its table not read); the office's name in the BZSt directory; public tax numbers 99xxx/... of Stuttgart corporations",
    date: "2004-11-30",
    kind: SourceKind::Evidence,
};

/// Frankfurt am Main, corporations.
pub const FRANKFURT: Basis = Basis {
    rule: "frankfurt-2614",
    summary: "Frankfurt am Main: the five offices are one Finanzamt Frankfurt am Main; corporations are filed under 2614 (the former Frankfurt am Main IV)",
    source: "BZSt GemFA directory (all Frankfurt numbers one office since 2024-03-15, kontist/finanzamt history); tax numbers 014 ... (= 2614) of Frankfurt GmbHs, one recent (HRB 134293) (rules-2026-12.md § 2.4)",
    date: "2024-03-15",
    kind: SourceKind::Evidence,
};

/// Bremen, the city.
pub const BREMEN: Basis = Basis {
    rule: "bremen-2460",
    summary: "Bremen: the Finanzamt Bremen (2460) takes every company of the city, whatever its Stadtteil; the register's 2471 is now the Landeshauptkasse",
    source: "Senatspressestelle Bremen, 11.07.2013, 'Finanzsenatorin Karoline Linnert besucht das Finanzamt Bremen'; ELSTER's office history (2471 Landeshauptkasse since 2016-09-22, 2484 to 2460 on 2017-10-09)",
    date: "2013-07-11",
    kind: SourceKind::OfficialPage,
};

/// Sachsen's cities of two offices.
pub const SACHSEN_CITIES: Basis = Basis {
    rule: "sachsen-stadtbezirk",
    summary: "Leipzig, Dresden and Chemnitz: the ordinance's annex assigns each Stadtbezirk, Ortschaft or Stadtteil to one of the city's two offices, for corporations and partnerships alike; no data of the service places an address in one",
    source: "Sächsische Finanzamts-Zuständigkeitsverordnung (Neufassung), Anlage Abschnitt II, REVOSax text as mirrored in oliverguhr/revosax-embeddings (commit of 2025-05-13); Leipzig's Ortsteile by Stadtbezirk and their population: Stadt Leipzig, Kommunale Gliederung of 18.3.1992 (as listed by leipzig-lexikon.de and Wikipedia, Stand 31.12.2023)",
    date: "2025-05-13",
    kind: SourceKind::LegalText,
};

/// Düsseldorf and Duisburg.
pub const NRW_STADTTEILE: Basis = Basis {
    rule: "nrw-fa-zvo-2",
    summary: "Düsseldorf and Duisburg: FA-ZVO NRW § 2 assigns each Stadtteil (Stadtbezirk) to one of the city's offices; no data of the service places an address in one, and for corporations the rule is inferred",
    source: "FA-ZVO NRW § 2 'Bezeichnung, Sitz und Bezirk der Finanzämter', SGV. NRW., Stand 17.4.2024 (recht.nrw.de); Duisburg-West's list cut off",
    date: "2024-04-17",
    kind: SourceKind::LegalText,
};

/// A state that moves corporations to offices other than the municipality's general one, so
/// the register decides no corporation's office there.
pub fn state_concentration(state_key: &str) -> Option<Basis> {
    Some(match state_key {
        "01" => Basis {
            rule: "sh-faezustvo-anlage-1",
            summary: "Schleswig-Holstein moves the Körperschaftsteuer of some offices' districts to another office (FÄZustVO Anlage 1, e.g. Dithmarschen to Itzehoe); not every row was read, so the register's general office may not be the corporation's",
            source: "SH FÄZustVO of 6.6.2016 (Fassung 3.9.2019), Anlage 1, column 'Körperschaftsteuer' (gesetze-rechtsprechung.sh.juris.de)",
            date: "2019-09-03",
            kind: SourceKind::LegalText,
        },
        "06" => Basis {
            rule: "hessen-faezustv-6",
            summary: "Hessen's ordinance has a section on the 'Verwaltung der Steuern von Körperschaften' (§ 6), whose content was not read, so the register's general office may not be the corporation's",
            source: "Hessen FÄZustV of 16.9.2019, § 6 (valid from 1.1.2023; lexaris 1327683, heading read)",
            date: "2023-01-01",
            kind: SourceKind::LegalText,
        },
        "08" => Basis {
            rule: "bw-fazuvo-1-6",
            summary: "Baden-Württemberg transfers the taxation of corporations to designated offices (FAZuVO § 1 no. 6), whose table was not read, so the register's general office may not be the corporation's",
            source: "BW FAZuVO of 30.11.2004, § 1 no. 6 (lexaris 1125678; the table of offices unreadable)",
            date: "2004-11-30",
            kind: SourceKind::LegalText,
        },
        "09" => Basis {
            rule: "bayern-corporations",
            summary: "Bayern concentrates corporations (München's and the Landkreis München's in one department, 9143); where else it does is in the ZustVSt's annex, which was not read, so the register's general office may not be the corporation's",
            source: "Bayern ZustVSt (valid from 1.1.2024, read to § 3); MUENCHEN's evidence (rules-2026-12.md § 2.3)",
            date: "2024-01-01",
            kind: SourceKind::Evidence,
        },
        _ => return None,
    })
}

/// The offices of a city split by district, each with the areas its ordinance names.
pub struct CityAreas {
    /// The municipality's AGS.
    pub city: &'static str,
    pub basis: Basis,
    /// (office, weight for the ranking without a named area, the areas' names).
    pub offices: &'static [(&'static str, u32, &'static [&'static str])],
}

/// Leipzig: Leipzig I 3232 the Stadtbezirke Alt-West, Nord, Nordost, Nordwest, Ost, Südwest,
/// West; Leipzig II 3231 Mitte, Süd, Südost; with their Ortsteile (Kommunale Gliederung) and
/// population of 31.12.2023 as the weight (I 425,936, II 202,782).
const LEIPZIG: CityAreas = CityAreas {
    city: "14713000",
    basis: SACHSEN_CITIES,
    offices: &[
        (
            "3232",
            425_936,
            &[
                "Nordost",
                "Schönefeld-Abtnaundorf",
                "Schönefeld-Ost",
                "Mockau-Süd",
                "Mockau-Nord",
                "Thekla",
                "Plaußig-Portitz",
                "Ost",
                "Neustadt-Neuschönefeld",
                "Volkmarsdorf",
                "Anger-Crottendorf",
                "Sellerhausen-Stünz",
                "Paunsdorf",
                "Heiterblick",
                "Mölkau",
                "Engelsdorf",
                "Baalsdorf",
                "Althen-Kleinpösna",
                "Südwest",
                "Schleußig",
                "Plagwitz",
                "Kleinzschocher",
                "Großzschocher",
                "Knautkleeberg-Knauthain",
                "Hartmannsdorf-Knautnaundorf",
                "West",
                "Schönau",
                "Grünau-Ost",
                "Grünau-Mitte",
                "Grünau-Siedlung",
                "Lausen-Grünau",
                "Grünau-Nord",
                "Miltitz",
                "Alt-West",
                "Lindenau",
                "Altlindenau",
                "Neulindenau",
                "Leutzsch",
                "Böhlitz-Ehrenberg",
                "Burghausen-Rückmarsdorf",
                "Nordwest",
                "Möckern",
                "Wahren",
                "Lützschena-Stahmeln",
                "Lindenthal",
                "Nord",
                "Gohlis-Süd",
                "Gohlis-Mitte",
                "Gohlis-Nord",
                "Eutritzsch",
                "Seehausen",
                "Wiederitzsch",
            ],
        ),
        (
            "3231",
            202_782,
            &[
                "Mitte",
                "Zentrum",
                "Zentrum-Ost",
                "Zentrum-Südost",
                "Zentrum-Süd",
                "Zentrum-West",
                "Zentrum-Nordwest",
                "Zentrum-Nord",
                "Südost",
                "Reudnitz-Thonberg",
                "Stötteritz",
                "Probstheida",
                "Meusdorf",
                "Liebertwolkwitz",
                "Holzhausen",
                "Süd",
                "Südvorstadt",
                "Connewitz",
                "Marienbrunn",
                "Lößnig",
                "Dölitz-Dösen",
            ],
        ),
    ],
};

/// Dresden: the ordinance's Stadtbezirke and Ortschaften (no population weights: ranked by how
/// many of them each office has, Süd 11, Nord 8).
const DRESDEN: CityAreas = CityAreas {
    city: "14612000",
    basis: SACHSEN_CITIES,
    offices: &[
        (
            "3202",
            0,
            &[
                "Neustadt",
                "Pieschen",
                "Klotzsche",
                "Loschwitz",
                "Weixdorf",
                "Langebrück",
                "Schönborn",
                "Schönfeld-Weißig",
            ],
        ),
        (
            "3203",
            0,
            &[
                "Altstadt",
                "Blasewitz",
                "Leuben",
                "Prohlis",
                "Plauen",
                "Cotta",
                "Altfranken",
                "Cossebaude",
                "Oberwartha",
                "Mobschatz",
                "Gompitz",
            ],
        ),
    ],
};

/// Chemnitz: the ordinance's Stadtteile.
const CHEMNITZ: CityAreas = CityAreas {
    city: "14511000",
    basis: SACHSEN_CITIES,
    offices: &[
        (
            "3214",
            0,
            &[
                "Adelsberg",
                "Altchemnitz",
                "Bernsdorf",
                "Einsiedel",
                "Erfenschlag",
                "Gablenz",
                "Harthau",
                "Helbersdorf",
                "Hutholz",
                "Klaffenbach",
                "Kleinolbersdorf-Altenhain",
                "Lutherviertel",
                "Markersdorf",
                "Morgenleite",
                "Reichenhain",
            ],
        ),
        (
            "3215",
            0,
            &[
                "Altendorf",
                "Borna-Heinersdorf",
                "Ebersdorf",
                "Euba",
                "Furth",
                "Glösa-Draisdorf",
                "Grüna",
                "Hilbersdorf",
                "Kapellenberg",
                "Kappel",
                "Kaßberg",
                "Mittelbach",
                "Rabenstein",
                "Reichenbrand",
                "Röhrsdorf",
                "Rottluff",
                "Schloßchemnitz",
                "Schönau",
                "Siegmar",
                "Sonnenberg",
                "Stelzendorf",
                "Wittgensdorf",
                "Yorckgebiet",
                "Zentrum",
            ],
        ),
    ],
};

/// Düsseldorf: FA-ZVO NRW § 2 by Stadtteil (5147 Düsseldorf-Mettmann serves Erkrath, Mettmann
/// and Ratingen, not the city).
const DUESSELDORF: CityAreas = CityAreas {
    city: "05111000",
    basis: NRW_STADTTEILE,
    offices: &[
        (
            "5103",
            0,
            &[
                "Altstadt",
                "Heerdt",
                "Karlstadt",
                "Lörick",
                "Niederkassel",
                "Oberkassel",
                "Pempelfort",
            ],
        ),
        (
            "5133",
            0,
            &[
                "Eller",
                "Flingern-Nord",
                "Flingern-Süd",
                "Flingern",
                "Gerresheim",
                "Grafenberg",
                "Hubbelrath",
                "Lierenfeld",
                "Ludenberg",
                "Oberbilk",
                "Stadtmitte",
            ],
        ),
        (
            "5105",
            0,
            &[
                "Angermund",
                "Derendorf",
                "Düsseltal",
                "Golzheim",
                "Kaiserswerth",
                "Kalkum",
                "Lichtenbroich",
                "Lohausen",
                "Mörsenbroich",
                "Rath",
                "Stockum",
                "Unterrath",
                "Wittlaer",
            ],
        ),
        (
            "5106",
            0,
            &[
                "Benrath",
                "Bilk",
                "Flehe",
                "Friedrichstadt",
                "Garath",
                "Hafen",
                "Hamm",
                "Hassels",
                "Hellerhof",
                "Himmelgeist",
                "Holthausen",
                "Itter",
                "Reisholz",
                "Unterbach",
                "Unterbilk",
                "Urdenbach",
                "Vennhausen",
                "Volmerswerth",
                "Wersten",
            ],
        ),
    ],
};

/// Duisburg: FA-ZVO NRW § 2 by Stadtbezirk and Stadtteil (West's list cut off).
const DUISBURG: CityAreas = CityAreas {
    city: "05112000",
    basis: NRW_STADTTEILE,
    offices: &[
        (
            "5107",
            0,
            &["Hamborn", "Meiderich-Beeck", "Meiderich", "Beeck", "Walsum"],
        ),
        (
            "5109",
            0,
            &[
                "Süd",
                "Altstadt",
                "Dellviertel",
                "Duissern",
                "Neudorf-Nord",
                "Neudorf-Süd",
                "Neudorf",
            ],
        ),
        (
            "5134",
            0,
            &[
                "Homberg-Ruhrort-Baerl",
                "Homberg",
                "Ruhrort",
                "Baerl",
                "Rheinhausen",
            ],
        ),
    ],
};

/// The cities whose offices split by district, as far as an ordinance says.
pub fn city_areas(city: &str) -> Option<&'static CityAreas> {
    [&LEIPZIG, &DRESDEN, &CHEMNITZ, &DUESSELDORF, &DUISBURG]
        .into_iter()
        .find(|c| c.city == city)
}

/// Cities of several offices for which no public rule says which one a company belongs to.
pub fn no_public_rule(city: &str) -> Option<&'static str> {
    Some(match city {
        "05315000" => "Köln",
        "05113000" => "Essen",
        "05913000" => "Dortmund",
        "03241001" => "Hannover",
        "09564000" => "Nürnberg",
        "08111000" => "Stuttgart",
        "06412000" => "Frankfurt am Main",
        _ => return None,
    })
}

/// Hamburg's regional offices ordered by how many statistical Ortsteile the readable rows of the
/// Anordnung give them (section II: Barmbek-Uhlenhorst 28, Altona 17, Am Tierpark 17), then the
/// others; the Finanzamt für Großunternehmen (2227) takes no new companies.
pub const HAMBURG_ORDER: &[&str] = &["2243", "2241", "2242"];
/// Hamburg's office for large companies (over 500 million euros of turnover, banks, insurers,
/// public bodies): never a new company's (hamburg.de, "Zuständigkeiten Großunternehmen").
pub const HAMBURG_LARGE_COMPANIES: &str = "2227";

impl CityAreas {
    /// The office of the area the city field names after the municipality's name ("Leipzig-
    /// Plagwitz", "Düsseldorf OT Bilk", "Dresden, Klotzsche", or the area alone: "Weixdorf"),
    /// by its full name or a part of it that only one office's areas have ("Gohlis").
    pub fn named(
        &self,
        municipality_name: &str,
        city: &str,
    ) -> Option<(&'static str, &'static str)> {
        let own = normalize_city(municipality_name);
        let wanted = normalize_city(&city.replace(',', " "));
        let mut rest = wanted
            .strip_prefix(&own)
            .map(str::trim_start)
            .unwrap_or(&wanted);
        for filler in [
            "ot ",
            "ortsteil ",
            "stadtteil ",
            "stadtbezirk ",
            "ortschaft ",
        ] {
            rest = rest.strip_prefix(filler).unwrap_or(rest);
        }
        if rest.is_empty() {
            return None;
        }
        let areas = self.normalised();
        if let Some((_, office, area)) = areas.iter().find(|(n, _, _)| n == rest) {
            return Some((office, area));
        }
        // A part of a double name ("Gohlis" of Gohlis-Süd), when every area with it is one
        // office's.
        let mut found: Option<(&'static str, &'static str)> = None;
        for (name, office, area) in areas {
            if name.split(' ').any(|part| part == rest) {
                match found {
                    Some((o, _)) if o != *office => return None,
                    _ => found = Some((office, area)),
                }
            }
        }
        found
    }

    /// The areas' normalised names with their office, built once.
    fn normalised(&self) -> &'static [(String, &'static str, &'static str)] {
        use std::sync::OnceLock;
        type Names = Vec<(String, &'static str, &'static str)>;
        static CITIES: OnceLock<Vec<(&'static str, Names)>> = OnceLock::new();
        let all = CITIES.get_or_init(|| {
            [&LEIPZIG, &DRESDEN, &CHEMNITZ, &DUESSELDORF, &DUISBURG]
                .into_iter()
                .map(|c| {
                    let names = c
                        .offices
                        .iter()
                        .flat_map(|(o, _, areas)| {
                            areas.iter().map(move |a| (normalize_city(a), *o, *a))
                        })
                        .collect();
                    (c.city, names)
                })
                .collect()
        });
        all.iter()
            .find(|(city, _)| *city == self.city)
            .map_or(&[], |(_, names)| names.as_slice())
    }

    /// The offices without a named area, likeliest first: by population where known (Leipzig),
    /// else by how many of the ordinance's areas each has; the register's office first among
    /// equals.
    pub fn ranked(&self, register: Option<&str>) -> Vec<&'static str> {
        let mut offices: Vec<(&'static str, u32)> = self
            .offices
            .iter()
            .map(|(o, w, areas)| (*o, if *w > 0 { *w } else { areas.len() as u32 }))
            .collect();
        offices.sort_by_key(|(o, w)| (std::cmp::Reverse(*w), Some(*o) != register));
        offices.into_iter().map(|(o, _)| o).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leipzig_has_its_63_ortsteile_and_ten_stadtbezirke() {
        let names: usize = LEIPZIG.offices.iter().map(|(_, _, a)| a.len()).sum();
        assert_eq!(names, 63 + 10);
    }

    #[test]
    fn areas_named_in_the_city_field() {
        let named = |c: &CityAreas, m: &str, city: &str| c.named(m, city).map(|(o, _)| o);
        assert_eq!(
            named(&LEIPZIG, "Leipzig, Stadt", "Leipzig-Plagwitz"),
            Some("3232")
        );
        assert_eq!(
            named(&LEIPZIG, "Leipzig, Stadt", "Leipzig OT Connewitz"),
            Some("3231")
        );
        assert_eq!(
            named(&LEIPZIG, "Leipzig, Stadt", "Leipzig-Gohlis"),
            Some("3232")
        );
        assert_eq!(named(&LEIPZIG, "Leipzig, Stadt", "Leipzig"), None);
        // "Zentrum-Süd" (Mitte) and "Süd" (a Stadtbezirk of the same office): whole names.
        assert_eq!(
            named(&LEIPZIG, "Leipzig, Stadt", "Leipzig-Süd"),
            Some("3231")
        );
        assert_eq!(named(&DRESDEN, "Dresden, Stadt", "Weixdorf"), Some("3202"));
        assert_eq!(
            named(&DRESDEN, "Dresden, Stadt", "Dresden, Blasewitz"),
            Some("3203")
        );
        assert_eq!(
            named(&CHEMNITZ, "Chemnitz, Stadt", "Chemnitz-Kaßberg"),
            Some("3215")
        );
        assert_eq!(
            named(&DUESSELDORF, "Düsseldorf, Stadt", "Düsseldorf-Bilk"),
            Some("5106")
        );
        // Flingern is both Flingern-Nord and -Süd, both Mitte.
        assert_eq!(
            named(&DUESSELDORF, "Düsseldorf, Stadt", "Düsseldorf-Flingern"),
            Some("5133")
        );
        assert_eq!(
            named(&DUISBURG, "Duisburg, Stadt", "Duisburg-Rheinhausen"),
            Some("5134")
        );
        // Unknown names decide nothing.
        assert_eq!(
            named(&DUISBURG, "Duisburg, Stadt", "Duisburg-Hochfeld"),
            None
        );
    }

    #[test]
    fn ranking_without_a_named_area() {
        assert_eq!(LEIPZIG.ranked(Some("3231")), ["3232", "3231"], "population");
        assert_eq!(
            DRESDEN.ranked(Some("3202")),
            ["3203", "3202"],
            "Süd has 11 areas"
        );
        assert_eq!(
            CHEMNITZ.ranked(Some("3214")),
            ["3215", "3214"],
            "Mitte has 24"
        );
        assert_eq!(DUESSELDORF.ranked(Some("5103"))[0], "5106", "Süd has 19");
    }

    #[test]
    fn every_rule_office_is_in_the_directory() {
        for c in [&LEIPZIG, &DRESDEN, &CHEMNITZ, &DUESSELDORF, &DUISBURG] {
            for (o, _, _) in c.offices {
                assert!(super::super::is_known_tax_office(o), "{o}");
            }
        }
        for o in ["9143", "2899", "2614", "2460", HAMBURG_LARGE_COMPANIES] {
            assert!(super::super::is_known_tax_office(o), "{o}");
        }
        for o in HAMBURG_ORDER {
            assert!(super::super::is_known_tax_office(o), "{o}");
        }
    }
}
