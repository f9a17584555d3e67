//! The tax office (Finanzamt) of a company address.

use std::collections::BTreeSet;

use serde::Serialize;

use super::data::{Index, index};
use super::{Municipality, OfficePurpose, Resolution, TaxOffice, municipalities_for};

/// Why a tax office result must be confirmed by a person before use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum ConfirmationReason {
    /// The postal code spans several municipalities with different tax offices and the city name
    /// does not decide.
    AmbiguousMunicipality,
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
}

impl ConfirmationReason {
    /// An English sentence for operators and API clients.
    pub fn message(&self) -> String {
        match self {
            ConfirmationReason::AmbiguousMunicipality => {
                "the postal code spans several municipalities with different tax offices".into()
            }
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
    },
    /// No determination; a person must confirm an office. `suggestions` are proposals only.
    NeedsConfirmation {
        reasons: Vec<ConfirmationReason>,
        municipalities: Vec<Municipality>,
        /// The Finanzamtsbezirk the register gives, when there is exactly one.
        register_number: Option<&'static str>,
        suggestions: Vec<Suggestion>,
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

fn push(suggestions: &mut Vec<Suggestion>, office: &'static TaxOffice, basis: SuggestionBasis) {
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
    let municipalities = match municipalities_for(zip, city) {
        Resolution::NotFound => return TaxOfficeLookup::NotFound,
        resolution => resolution.candidates(),
    };
    let mut reasons = Vec::new();
    let mut suggestions = Vec::new();
    let numbers: BTreeSet<&'static str> = municipalities
        .iter()
        .filter_map(|m| m.register_tax_office_number())
        .collect();
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
    let register_number = (numbers.len() == 1).then(|| *numbers.first().unwrap_or(&""));
    match (
        reasons.is_empty(),
        register_number.and_then(super::tax_office),
    ) {
        (true, Some(office)) => TaxOfficeLookup::Determined {
            office,
            municipalities,
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
            }
        }
    }
}
