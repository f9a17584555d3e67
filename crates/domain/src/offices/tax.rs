//! The tax office (Finanzamt) of a company address.

use std::collections::BTreeSet;

use serde::Serialize;

use super::data::{Index, index};
use super::district::{self, Locality, Unlocated};
use super::rules::{self, Basis, SourceKind};
use super::{Municipality, OfficePurpose, Resolution, TaxOffice, municipalities_for};

const MERGED_OFFICES: &str = include_str!("../../data/offices/merged-offices.tsv");

/// How certain a successor of a merged office is (`merged-offices.tsv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Certainty {
    /// Stated by a source: the successor replaces the number.
    High,
    /// Inferred from the sources: the successor is suggested only.
    Medium,
}

/// One row of `merged-offices.tsv`: a number that no longer receives filings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MergedRow {
    pub successors: Vec<&'static str>,
    pub certainty: Certainty,
    pub since: &'static str,
    pub kind: SourceKind,
    pub source: &'static str,
}

impl MergedRow {
    /// The one successor that replaces the number, when a source states it.
    pub fn replacement(&self) -> Option<&'static str> {
        match (self.certainty, self.successors.as_slice()) {
            (Certainty::High, [one]) => Some(one),
            _ => None,
        }
    }

    /// Why the successor decides: the row's source.
    pub fn basis(&self) -> Basis {
        Basis {
            rule: "merged-office",
            summary: "the register's office no longer receives filings; the successor its source names does",
            source: self.source,
            date: self.since,
            kind: self.kind,
        }
    }
}

/// The row of `number` in `table` (the text of a `merged-offices.tsv`).
pub(crate) fn merged_in(table: &'static str, number: &str) -> Option<MergedRow> {
    table
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .find_map(|l| {
            // The number first: most lines are not it (no split, no allocation).
            if !(l.starts_with(number) && l.as_bytes().get(number.len()) == Some(&b'\t')) {
                return None;
            }
            let f: Vec<&'static str> = l.split('\t').collect();
            if f.len() < 6 {
                return None;
            }
            Some(MergedRow {
                successors: f[1].split(',').collect(),
                certainty: match f[2] {
                    "high" => Certainty::High,
                    _ => Certainty::Medium,
                },
                since: f[3],
                kind: match f[4] {
                    "legal_text" => SourceKind::LegalText,
                    "official_page" => SourceKind::OfficialPage,
                    "official_data" => SourceKind::OfficialData,
                    _ => SourceKind::Evidence,
                },
                source: f[5],
            })
        })
}

/// The row of a number that no longer receives filings, if it has one.
pub(crate) fn merged(number: &str) -> Option<MergedRow> {
    merged_in(MERGED_OFFICES, number)
}

/// The number that receives filings today for `number`: its stated single successor, or itself.
pub(crate) fn current(number: &'static str) -> &'static str {
    merged(number)
        .and_then(|r| r.replacement())
        .unwrap_or(number)
}

/// The legal form's family: the rules of the cities differ between corporations (GmbH, UG),
/// partnerships (GbR, eGbR) and natural persons (a sole proprietor, decided by the residence,
/// § 19 AO).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LegalFamily {
    Corporation,
    Partnership,
    NaturalPerson,
}

/// The address a tax office is decided on: the company's place of management (§ 20 AO) where
/// it is known to differ from the seat, else the seat. The caller chooses; the lookup only
/// reads it.
#[derive(Debug, Clone, Copy)]
pub struct OfficeAddress<'a> {
    pub zip: &'a str,
    pub city: &'a str,
    /// The street line with its house number, when known.
    pub street: Option<&'a str>,
}

/// What [`tax_office_at`] decides on: the address that decides and what the rules ask of the
/// company.
#[derive(Debug, Clone, Copy)]
pub struct TaxOfficeQuery<'a> {
    pub address: OfficeAddress<'a>,
    pub family: LegalFamily,
    /// Whether the company belongs to a group as far as the request shows
    /// ([`crate::tax::TaxRegistration::belongs_to_group`]): Berlin assigns group companies by
    /// the group's industry, not by address.
    pub group: bool,
}

/// A city's rule for the tax office of a company (docs/offices.md, "Rules by kind").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CityRule {
    /// Berlin, GmbH/UG: the Finanzämter für Körperschaften I-IV take the areas of the regional
    /// offices (berlin.de; FÄZustVO of 8.12.2021); those lie within the Bezirke and each
    /// Bezirk's go to one Körperschaften office, so the Bezirk decides (docs/offices.md).
    BerlinCorporations,
    /// Berlin, GbR: the regional office of the Ortsteil (the office names; the FÄZustVO's annex
    /// not read). Not verified: confirm.
    BerlinPartnerships,
    /// Berlin, a natural person: the regional office of the Ortsteil of the residence, as for a
    /// partnership. Not verified: confirm.
    BerlinNaturalPersons,
    /// München, city and Landkreis: the department for Körperschaften/Personengesellschaften
    /// 9143 ([`rules::MUENCHEN`]).
    MuenchenCompanies,
    /// Stuttgart, GmbH/UG: the corporation office 2899 ([`rules::STUTTGART`]).
    StuttgartCorporations,
    /// Frankfurt am Main, GmbH/UG: 2614 of the one Frankfurt office ([`rules::FRANKFURT`]).
    FrankfurtCorporations,
    /// Bremen: the Finanzamt Bremen 2460 for the whole city ([`rules::BREMEN`]).
    Bremen,
    /// Hamburg: the district office of the Ortsteil (Anordnung über die Zuständigkeit der
    /// Finanzämter, section II); no licensed data places an address in its Ortsteil.
    HamburgOrtsteil,
    /// Leipzig, Dresden, Chemnitz: the ordinance's Stadtbezirk, Ortschaft or Stadtteil
    /// ([`rules::SACHSEN_CITIES`]); no data places an address in one.
    SachsenStadtbezirk,
    /// Düsseldorf, Duisburg: FA-ZVO NRW § 2 by Stadtteil ([`rules::NRW_STADTTEILE`]); no data
    /// places an address in one.
    NrwStadtteil,
}

impl CityRule {
    /// An English sentence for operators and API clients.
    pub fn message(self) -> &'static str {
        match self {
            CityRule::BerlinCorporations => {
                "Berlin: the Bezirk of the company's address decides among the Finanzämter für Körperschaften I-IV"
            }
            CityRule::BerlinPartnerships => {
                "Berlin: a partnership goes to the regional office of the Ortsteil where its business is run; the table of the offices' areas is inferred from their names and not verified in the ordinance"
            }
            CityRule::BerlinNaturalPersons => {
                "Berlin: a natural person goes to the regional office of the Ortsteil of the residence; the table of the offices' areas is inferred from their names and not verified in the ordinance"
            }
            CityRule::MuenchenCompanies => rules::MUENCHEN.summary,
            CityRule::StuttgartCorporations => rules::STUTTGART.summary,
            CityRule::FrankfurtCorporations => rules::FRANKFURT.summary,
            CityRule::Bremen => rules::BREMEN.summary,
            CityRule::HamburgOrtsteil => {
                "Hamburg: the office of the company's Ortsteil is responsible (the Anordnung's rows read so far order the suggestions), and no licensed data places an address in its Ortsteil; whether Hamburg concentrates corporations is not known"
            }
            CityRule::SachsenStadtbezirk => rules::SACHSEN_CITIES.summary,
            CityRule::NrwStadtteil => rules::NRW_STADTTEILE.summary,
        }
    }
}

/// Why a tax office result must be confirmed by a person before use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum ConfirmationReason {
    /// The postal code spans several municipalities with different tax offices and the city name
    /// does not decide.
    AmbiguousMunicipality,
    /// The city names municipalities that do not have the postal code (by a name's core or
    /// first words: it may also be an Ortsteil of the same name); nothing is taken from one
    /// half of the address.
    CityNotOfPostalCode { named: Vec<&'static str> },
    /// The municipality is newer than the register edition: no Finanzamtsbezirk known.
    MunicipalityNotInRegister { municipality_key: &'static str },
    /// The register names no tax office for the municipality (uninhabited unincorporated areas).
    NoOfficeInRegister { municipality_key: &'static str },
    /// The register's office number is no longer in the directory (offices merged since the
    /// register edition).
    OfficeNotInDirectory { number: &'static str },
    /// The register's office is not a registration office (e.g. a cash office).
    RegisterOfficeIsSpecial { number: &'static str },
    /// The municipality has special offices for corporations or large companies; a company may
    /// belong there rather than to the general office.
    CorporationOffices { numbers: Vec<&'static str> },
    /// The municipality has several general tax offices; which one is responsible depends on the
    /// street or district, which the register does not resolve.
    SeveralOfficesInMunicipality { numbers: Vec<&'static str> },
    /// The state moves corporations to offices other than the municipality's general one, by
    /// a rule whose offices are not known for this municipality: the register's office is a
    /// suggestion only.
    StateConcentratesCorporations { basis: Basis },
    /// The city's rule decides by district (Bezirk or Ortsteil), and the address does not place
    /// the company in one.
    DistrictNotDetermined { cause: Unlocated },
    /// The city's ordinance assigns its offices by Stadtbezirk or Stadtteil, and no data places
    /// the address in one; the one the city field names, if any, is suggested first.
    AreaNotDetermined {
        rule: CityRule,
        #[serde(skip_serializing_if = "Option::is_none")]
        named_area: Option<&'static str>,
    },
    /// Berlin assigns companies of a group (a holding, or a company whose majority shareholder
    /// is a company) to the corporation office of the group's industry, not by address.
    GroupCompany,
    /// A natural person whose business is run in another office's district than the residence:
    /// the residence's office assesses income tax (§ 19 AO), the business's VAT and the profit
    /// (§§ 18, 21 AO); which receives the questionnaire is confirmed by a person.
    BusinessInAnotherDistrict {
        residence_office: &'static str,
        /// The business's office, when its address determines one.
        #[serde(skip_serializing_if = "Option::is_none")]
        business_office: Option<&'static str>,
    },
    /// The city's rule is known from secondary sources only, or has no data to apply it: the
    /// suggestions follow it, the likeliest first.
    RuleNotVerified { rule: CityRule },
    /// No public rule says which of the city's offices a company belongs to; its offices are
    /// suggested, the register's first.
    NoPublicRule { city: &'static str },
}

impl ConfirmationReason {
    /// An English sentence for operators and API clients.
    pub fn message(&self) -> String {
        match self {
            ConfirmationReason::AmbiguousMunicipality => {
                "the postal code spans several municipalities with different tax offices".into()
            }
            ConfirmationReason::CityNotOfPostalCode { named } => format!(
                "the city names a municipality ({}) that does not have this postal code, or an Ortsteil of the same name: check the address",
                named.join(", ")
            ),
            ConfirmationReason::MunicipalityNotInRegister { municipality_key } => format!(
                "municipality {municipality_key} is newer than the municipality register; its tax office is unknown"
            ),
            ConfirmationReason::NoOfficeInRegister { municipality_key } => {
                format!("the register names no tax office for municipality {municipality_key}")
            }
            ConfirmationReason::OfficeNotInDirectory { number } => format!(
                "the register's tax office {number} is no longer in the directory (offices merged)"
            ),
            ConfirmationReason::RegisterOfficeIsSpecial { number } => {
                format!("the register's tax office {number} is not a registration office")
            }
            ConfirmationReason::CorporationOffices { numbers } => format!(
                "the municipality has special tax offices for corporations ({})",
                numbers.join(", ")
            ),
            ConfirmationReason::SeveralOfficesInMunicipality { numbers } => format!(
                "the municipality has several tax offices ({}); the street decides",
                numbers.join(", ")
            ),
            ConfirmationReason::StateConcentratesCorporations { basis } => basis.summary.into(),
            ConfirmationReason::DistrictNotDetermined { cause } => cause.message().into(),
            ConfirmationReason::AreaNotDetermined { rule, named_area } => match named_area {
                Some(area) => format!(
                    "{}; the city names {area}, whose office is suggested first (a Stadtteil's colloquial borders may differ from the ordinance's)",
                    rule.message()
                ),
                None => rule.message().into(),
            },
            ConfirmationReason::GroupCompany => "Berlin assigns companies of a group (here: a holding, or a company whose majority shareholder is a company) to the Finanzamt für Körperschaften of the group's industry".into(),
            ConfirmationReason::BusinessInAnotherDistrict { residence_office, business_office } => format!(
                "the business is run {}, the residence in that of office {residence_office}: the residence's office assesses income tax (§ 19 AO), the business's VAT and the profit (§§ 18, 21 AO); confirm which receives the questionnaire",
                match business_office {
                    Some(n) => format!("in the district of office {n}"),
                    None => "where the address determines no office".to_string(),
                }
            ),
            ConfirmationReason::RuleNotVerified { rule } => rule.message().into(),
            ConfirmationReason::NoPublicRule { city } => format!(
                "no public rule found for which of {city}'s offices a company belongs to; the city's offices are suggested, the register's first"
            ),
        }
    }
}

/// Why an office is suggested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SuggestionBasis {
    /// The register names this office for the municipality.
    Register,
    /// A special office for corporations or large companies in the municipality.
    CorporationOffice,
    /// Another general office located in the municipality.
    OfficeInMunicipality,
    /// A probable successor of a merged office (located in its district, named after one of its
    /// municipalities, or located in the same Kreis). A heuristic: confirm.
    ProbableSuccessor,
    /// The successor a source names for a merged office (`merged-offices.tsv`).
    Successor,
    /// The office the city's rule gives for the address (see the `rule_not_verified` reason).
    CityRule,
    /// The office of a district the address may lie in, the likeliest district first.
    DistrictCandidate,
    /// The office of the district where a natural person's business is run (§§ 18, 21 AO).
    BusinessOffice,
}

/// A tax office proposed for confirmation, never a determination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Suggestion {
    pub office: &'static TaxOffice,
    pub basis: SuggestionBasis,
}

/// The result of [`tax_office_for`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TaxOfficeLookup {
    /// The office is determined: one municipality (or several sharing one office), a general
    /// office of the directory, and no other office in the municipality that could apply.
    Determined {
        office: &'static TaxOffice,
        /// The municipality, or the candidates sharing this office.
        municipalities: Vec<Municipality>,
        /// The register's office number when the office has merged into `office` since the
        /// register's edition (`merged-offices.tsv`).
        #[serde(skip_serializing_if = "Option::is_none")]
        merged_from: Option<&'static str>,
        /// The city's rule that decided, if a city's.
        #[serde(skip_serializing_if = "Option::is_none")]
        rule: Option<CityRule>,
        /// Where the address lies below the municipality, when a city's rule looked.
        #[serde(skip_serializing_if = "Option::is_none")]
        locality: Option<Locality>,
        /// Why: the rule, its source, the source's date and kind.
        basis: Basis,
    },
    /// No determination; a person must confirm an office. `suggestions` are proposals only.
    NeedsConfirmation {
        reasons: Vec<ConfirmationReason>,
        municipalities: Vec<Municipality>,
        /// The Finanzamtsbezirk the register gives, when there is exactly one.
        register_number: Option<&'static str>,
        /// Proposals only, the likeliest first.
        suggestions: Vec<Suggestion>,
        /// Where the address lies below the municipality, when a city's rule looked and found it.
        #[serde(skip_serializing_if = "Option::is_none")]
        locality: Option<Locality>,
    },
    /// The postal code is unknown.
    NotFound,
}

impl TaxOfficeLookup {
    /// Whether a person must confirm the office.
    pub fn needs_confirmation(&self) -> bool {
        matches!(self, TaxOfficeLookup::NeedsConfirmation { .. })
    }

    /// The determined office, if any (never a suggestion).
    pub fn office(&self) -> Option<&'static TaxOffice> {
        match self {
            TaxOfficeLookup::Determined { office, .. } => Some(office),
            _ => None,
        }
    }
}

pub(crate) fn push(
    suggestions: &mut Vec<Suggestion>,
    office: &'static TaxOffice,
    basis: SuggestionBasis,
) {
    if !suggestions.iter().any(|s| s.office.number == office.number) {
        suggestions.push(Suggestion { office, basis });
    }
}

/// Offices of `purpose` located in one of the municipalities.
fn located_in(
    index: &'static Index,
    municipalities: &[Municipality],
    purpose: OfficePurpose,
) -> Vec<&'static TaxOffice> {
    index
        .offices
        .iter()
        .zip(&index.office_location)
        .filter(|(o, loc)| {
            o.purpose == purpose && loc.is_some_and(|l| municipalities.iter().any(|m| m.index == l))
        })
        .map(|(o, _)| o)
        .collect()
}

/// The tax office for a company at this postal code and city.
///
/// postal code -> municipality ([`municipalities_for`]) -> the register's Finanzamtsbezirk ->
/// the directory entry. The result is [`TaxOfficeLookup::NeedsConfirmation`] (with every
/// applicable [`ConfirmationReason`]) when the municipality is ambiguous with different offices,
/// unknown to the register, when the register's number is no longer in the directory or not a
/// registration office, when the municipality has special offices for corporations (Berlin,
/// Hamburg, München, Stuttgart) or several general offices (Köln, Frankfurt am Main, ...).
pub fn tax_office_for(zip: &str, city: &str) -> TaxOfficeLookup {
    let index = index();
    let resolution = municipalities_for(zip, city);
    let mut reasons = Vec::new();
    let mut suggestions = Vec::new();
    // A city that names another municipality: nothing from one half of the address.
    if let Resolution::Contradicted { named, .. } = &resolution {
        reasons.push(ConfirmationReason::CityNotOfPostalCode {
            named: named.iter().map(|m| m.name).collect(),
        });
    }
    let municipalities = match resolution {
        Resolution::NotFound => return TaxOfficeLookup::NotFound,
        resolution => resolution.candidates(),
    };
    let register: BTreeSet<&'static str> = municipalities
        .iter()
        .filter_map(|m| m.register_tax_office_number())
        .collect();
    // A register number whose office has merged since (or is now a cash office) stands for its
    // successor when a source names exactly one; otherwise the successors are suggestions.
    let mut merged_from = None;
    let mut basis = rules::REGISTER_CORPORATION;
    let mut numbers: BTreeSet<&'static str> = BTreeSet::new();
    for number in &register {
        match merged(number) {
            Some(row) if row.replacement().is_some() => {
                merged_from = Some(*number);
                basis = row.basis();
                numbers.extend(row.replacement());
            }
            Some(row) => {
                reasons.push(ConfirmationReason::OfficeNotInDirectory { number });
                for successor in row.successors {
                    if let Some(office) = super::tax_office(successor) {
                        push(&mut suggestions, office, SuggestionBasis::Successor);
                    }
                }
            }
            None => {
                numbers.insert(number);
            }
        }
    }
    for m in &municipalities {
        if !m.in_register {
            reasons.push(ConfirmationReason::MunicipalityNotInRegister {
                municipality_key: m.key,
            });
        } else if m.register_tax_office_number().is_none() {
            reasons.push(ConfirmationReason::NoOfficeInRegister {
                municipality_key: m.key,
            });
        }
    }
    if numbers.len() > 1 {
        reasons.push(ConfirmationReason::AmbiguousMunicipality);
    }
    for number in &numbers {
        match super::tax_office(number) {
            Some(office) => {
                if matches!(
                    office.purpose,
                    OfficePurpose::Special | OfficePurpose::Corporations
                ) {
                    reasons.push(ConfirmationReason::RegisterOfficeIsSpecial { number });
                }
                push(&mut suggestions, office, SuggestionBasis::Register);
            }
            None => {
                reasons.push(ConfirmationReason::OfficeNotInDirectory { number });
                for &i in index.successors.get(number).into_iter().flatten() {
                    let office = &index.offices[i as usize];
                    push(&mut suggestions, office, SuggestionBasis::ProbableSuccessor);
                }
            }
        }
    }
    let corporations = located_in(index, &municipalities, OfficePurpose::Corporations);
    if !corporations.is_empty() {
        reasons.push(ConfirmationReason::CorporationOffices {
            numbers: corporations.iter().map(|o| o.number).collect(),
        });
        for office in corporations {
            push(&mut suggestions, office, SuggestionBasis::CorporationOffice);
        }
    }
    // General offices in the municipality that the register assigns to no municipality serve
    // parts of it (Köln-Nord, Frankfurt am Main II ...). Offices the register does assign serve
    // their own districts (Aachen-Kreis in Aachen serves the surrounding municipalities).
    let others: Vec<&'static TaxOffice> =
        located_in(index, &municipalities, OfficePurpose::General)
            .into_iter()
            .filter(|o| !numbers.contains(o.number) && !index.assigned_numbers.contains(o.number))
            .collect();
    if !others.is_empty() {
        let mut all: Vec<&'static str> = numbers.iter().copied().collect();
        all.extend(others.iter().map(|o| o.number));
        reasons.push(ConfirmationReason::SeveralOfficesInMunicipality { numbers: all });
        for office in others {
            push(
                &mut suggestions,
                office,
                SuggestionBasis::OfficeInMunicipality,
            );
        }
    }
    let register_number = (register.len() == 1).then(|| *register.first().unwrap_or(&""));
    let effective = (numbers.len() == 1).then(|| *numbers.first().unwrap_or(&""));
    match (reasons.is_empty(), effective.and_then(super::tax_office)) {
        (true, Some(office)) => TaxOfficeLookup::Determined {
            office,
            municipalities,
            merged_from,
            rule: None,
            locality: None,
            basis,
        },
        _ => {
            if reasons.is_empty() {
                // Unreachable by construction (no number means a reason above); stay safe.
                reasons.push(ConfirmationReason::AmbiguousMunicipality);
            }
            TaxOfficeLookup::NeedsConfirmation {
                reasons,
                municipalities,
                register_number,
                suggestions,
                locality: None,
            }
        }
    }
}

/// The Finanzamt für Körperschaften of a Berlin Bezirk (berlin.de, "Zuständigkeiten der
/// Finanzämter für Körperschaften", regional split since 1.1.2016): I 1127 Charlottenburg-
/// Wilmersdorf; II 1137 Friedrichshain-Kreuzberg, Lichtenberg, Marzahn-Hellersdorf, Pankow,
/// Treptow-Köpenick; III 1129 Neukölln, Tempelhof-Schöneberg, Spandau, Steglitz-Zehlendorf;
/// IV 1130 Mitte, Reinickendorf.
pub fn berlin_corporation_office(bezirk: &str) -> Option<&'static str> {
    Some(match bezirk {
        "04" => "1127",
        "02" | "03" | "09" | "10" | "11" => "1137",
        "05" | "06" | "07" | "08" => "1129",
        "01" | "12" => "1130",
        _ => return None,
    })
}

/// The regional Finanzamt of a Berlin Ortsteil (for partnerships): the offices' names and the
/// Bezirke they cover (docs/offices.md; the FÄZustVO's annex was not read).
pub fn berlin_regional_office(bezirk: &str, ortsteil: &str) -> Option<&'static str> {
    Some(match (bezirk, ortsteil) {
        ("01", "Wedding" | "Gesundbrunnen") => "1123",
        ("01", _) => "1134",
        ("02", _) => "1114",
        ("03", "Prenzlauer Berg") => "1131",
        ("03", _) => "1135",
        ("04", "Charlottenburg" | "Charlottenburg-Nord" | "Westend") => "1113",
        ("04", _) => "1124",
        ("05", _) => "1119",
        ("06", "Steglitz" | "Lichterfelde" | "Lankwitz") => "1120",
        ("06", _) => "1125",
        ("07", "Schöneberg" | "Friedenau") => "1118",
        ("07", _) => "1121",
        ("08", _) => "1116",
        ("09", _) => "1136",
        ("10", _) => "1133",
        ("11", _) => "1132",
        ("12", _) => "1117",
        _ => return None,
    })
}

pub(crate) fn berlin(
    query: &TaxOfficeQuery,
    municipality: Municipality,
    family: LegalFamily,
) -> TaxOfficeLookup {
    let address = &query.address;
    let lookup = district::locate(district::BERLIN, address.zip, address.street.unwrap_or(""))
        .expect("Berlin has districts");
    let office_of = |locality: &Locality| -> Option<&'static TaxOffice> {
        let number = match family {
            LegalFamily::Corporation => berlin_corporation_office(locality.district.number)?,
            LegalFamily::Partnership | LegalFamily::NaturalPerson => {
                berlin_regional_office(locality.district.number, locality.ortsteil?)?
            }
        };
        super::tax_office(number)
    };
    let located = lookup.locality();
    if let (LegalFamily::Corporation, false, Some(locality)) = (family, query.group, located)
        && let Some(office) = office_of(&locality)
    {
        return TaxOfficeLookup::Determined {
            office,
            municipalities: vec![municipality],
            merged_from: None,
            rule: Some(CityRule::BerlinCorporations),
            locality: Some(locality),
            basis: rules::BERLIN_CORPORATIONS,
        };
    }
    let mut reasons = Vec::new();
    let mut suggestions = Vec::new();
    if let super::district::DistrictLookup::Unlocated { reason, .. } = &lookup {
        reasons.push(ConfirmationReason::DistrictNotDetermined { cause: *reason });
    }
    match family {
        LegalFamily::Corporation => {
            if query.group {
                reasons.push(ConfirmationReason::GroupCompany);
            }
            for (district, _) in lookup.districts() {
                if let Some(office) =
                    berlin_corporation_office(district.number).and_then(super::tax_office)
                {
                    let basis = if located.is_some() {
                        SuggestionBasis::CityRule
                    } else {
                        SuggestionBasis::DistrictCandidate
                    };
                    push(&mut suggestions, office, basis);
                }
            }
            // A group's office may be any of the four.
            for number in ["1127", "1137", "1129", "1130"] {
                if let Some(office) = super::tax_office(number) {
                    push(&mut suggestions, office, SuggestionBasis::CorporationOffice);
                }
            }
        }
        LegalFamily::Partnership | LegalFamily::NaturalPerson => {
            reasons.push(ConfirmationReason::RuleNotVerified {
                rule: if family == LegalFamily::NaturalPerson {
                    CityRule::BerlinNaturalPersons
                } else {
                    CityRule::BerlinPartnerships
                },
            });
            let candidates: Vec<Locality> = match &lookup {
                super::district::DistrictLookup::Located { locality, .. }
                    if locality.ortsteil.is_some() =>
                {
                    vec![*locality]
                }
                // Located by a postal code of one Bezirk and several Ortsteile: its Ortsteile
                // there, the one with the most addresses first.
                super::district::DistrictLookup::Located { locality, .. } => {
                    let mut ortsteile: Vec<Locality> =
                        district::berlin_postal_code_ortsteile(address.zip)
                            .into_iter()
                            .map(|c| c.locality)
                            .filter(|l| l.district.key == locality.district.key)
                            .collect();
                    if ortsteile.is_empty() {
                        ortsteile.push(*locality);
                    }
                    ortsteile
                }
                super::district::DistrictLookup::Unlocated { candidates, .. } => {
                    candidates.iter().map(|c| c.locality).collect()
                }
            };
            for locality in &candidates {
                let basis = if located.is_some() {
                    SuggestionBasis::CityRule
                } else {
                    SuggestionBasis::DistrictCandidate
                };
                match locality.ortsteil {
                    Some(_) => {
                        if let Some(office) = office_of(locality) {
                            push(&mut suggestions, office, basis);
                        }
                    }
                    // Located by postal code in a Bezirk of two regional offices.
                    None => {
                        for number in berlin_regional_offices_of(locality.district.number) {
                            if let Some(office) = super::tax_office(number) {
                                push(&mut suggestions, office, basis);
                            }
                        }
                    }
                }
            }
        }
    }
    TaxOfficeLookup::NeedsConfirmation {
        reasons,
        municipalities: vec![municipality],
        register_number: municipality.register_tax_office_number(),
        suggestions,
        locality: located,
    }
}

/// The regional offices of a Berlin Bezirk.
fn berlin_regional_offices_of(bezirk: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    for ortsteil in [
        "Wedding",
        "Prenzlauer Berg",
        "Charlottenburg",
        "Steglitz",
        "Schöneberg",
        "",
    ] {
        if let Some(n) = berlin_regional_office(bezirk, ortsteil)
            && !out.contains(&n)
        {
            out.push(n);
        }
    }
    out
}
