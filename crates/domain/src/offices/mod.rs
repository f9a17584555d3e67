//! Trade office and tax office determination from a German address.
//!
//! Three public data sets are compiled into the crate (see `crates/domain/data/offices/` and
//! `docs/offices.md` for sources, licences and how to refresh them):
//!
//! - postal code -> municipality (OpenStreetMap via suche-postleitzahl.org, ODbL);
//! - the Destatis municipality register GV100AD: municipality key (AGS), name, Gemeindeverband
//!   and Finanzamtsbezirk (© Statistisches Bundesamt);
//! - the BZSt tax office directory (number, name, address, contact).
//!
//! They are parsed on first use into compact sorted vectors (a few hundred kilobytes, built in a
//! few milliseconds) that borrow their strings from the compiled-in text. Nothing here performs
//! I/O.
//!
//! The lookups are:
//!
//! - [`municipalities_for`]: postal code + city -> the municipality, or the candidates when the
//!   postal code spans several municipalities and the city name does not decide;
//! - [`trade_office_for`] / [`trade_office`]: the office receiving a trade notice (Gewerbeanzeige)
//!   for an establishment: the municipality, or the Gemeindeverband where the state assigns trade
//!   matters to it (the per-state rule is documented on [`VerbandType::handles_trade_matters`]);
//! - [`tax_office_for`]: the tax office of a company address; never guessed: merged office
//!   numbers, cities with several offices or special offices for corporations make the result
//!   [`TaxOfficeLookup::NeedsConfirmation`] with reasons and clearly marked suggestions;
//! - [`tax_office`] / [`is_known_tax_office`]: the directory by office number.

mod check;
mod cities;
mod data;
pub mod district;
mod normalize;
mod rules;
mod tax;
mod trade;

#[cfg(test)]
mod city_tests;
#[cfg(test)]
mod rules_tests;
#[cfg(test)]
mod tests;

use serde::Serialize;

pub(crate) use check::check_request_address;
pub use check::{AddressCheck, check_address};
pub use cities::{natural_person_office, tax_office_at};
pub use normalize::normalize_city;
pub use rules::{Basis, SourceKind};
pub use tax::{
    CityRule, ConfirmationReason, LegalFamily, OfficeAddress, Suggestion, SuggestionBasis,
    TaxOfficeLookup, TaxOfficeQuery, berlin_corporation_office, berlin_regional_office,
    tax_office_for,
};
pub use trade::{
    TradeOfficeKind, TradeOfficeLookup, TradeOfficeRef, VerbandType, district_office, trade_office,
    trade_office_at, trade_office_for,
};

use data::{MunicipalityRec, Resolved, index};

/// A German municipality (Gemeinde), identified by its 8-digit Amtlicher Gemeindeschlüssel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Municipality {
    /// The 8-digit Amtlicher Gemeindeschlüssel (AGS), e.g. `07235001`.
    pub key: &'static str,
    /// The register's name, e.g. "Flensburg, Stadt" or "Aach" (OpenStreetMap's name for
    /// municipalities newer than the register edition).
    pub name: &'static str,
    /// Whether the municipality is in the compiled-in register edition. Municipalities formed
    /// after it are known only from the postal code data, without Verband or tax office.
    pub in_register: bool,
    #[serde(skip)]
    pub(crate) index: u32,
}

impl Municipality {
    fn from_index(index: u32) -> Self {
        let rec = &data::index().municipalities[index as usize];
        Municipality {
            key: rec.ags,
            name: rec.name,
            in_register: rec.in_register,
            index,
        }
    }

    fn rec(&self) -> &'static MunicipalityRec {
        &data::index().municipalities[self.index as usize]
    }

    /// The municipality with this AGS, if known.
    pub fn by_key(ags: &str) -> Option<Self> {
        index().municipality_index(ags).map(Self::from_index)
    }

    /// The name in reading order with its kind, as an authority would write it: "Stadt
    /// Flensburg", "Landeshauptstadt Kiel", "Gemeinde Aach", "Markt Indersdorf".
    pub fn display_name(&self) -> String {
        display_municipality(self.name, self.rec().code)
    }

    /// The state (Land) as its two-digit key: `01` Schleswig-Holstein ... `16` Thüringen.
    pub fn state_key(&self) -> &'static str {
        &self.key[..2]
    }

    /// The Finanzamtsbezirk the register assigns (4-digit office number), if any. It may be
    /// missing from today's directory; [`tax_office_for`] handles that.
    pub fn register_tax_office_number(&self) -> Option<&'static str> {
        let n = self.rec().tax_office;
        (!n.is_empty()).then_some(n)
    }
}

/// Berlin, when the city says "Berlin" and Berlin's address register has the street under the
/// postal code, whatever municipality the postal code data gives (a few Berlin addresses at the
/// city's edge carry a Brandenburg postal code).
pub(crate) fn berlin_by_register(zip: &str, city: &str, street: &str) -> Option<Municipality> {
    (normalize_city(city) == "berlin" && district::in_berlin_register(zip, street))
        .then(|| Municipality::by_key(district::BERLIN))
        .flatten()
}

/// Writes a register name "X, Stadt" as "Stadt X"; names without a title get one from the
/// register's Textkennzeichen (60 Markt, 61/62/63/67 Stadt, 64 Gemeinde).
fn display_municipality(name: &str, code: u8) -> String {
    let (base, suffix) = match name.split_once(',') {
        Some((b, s)) => (b.trim(), s.trim()),
        None => (name.trim(), ""),
    };
    let title = match suffix {
        "Stadt" | "St" | "GKSt" | "Kreisstadt" => "Stadt",
        "M" | "Marktgemeinde" => "Markt",
        "Flecken"
        | "Hansestadt"
        | "Landeshauptstadt"
        | "Universitätsstadt"
        | "Lutherstadt"
        | "Freie und Hansestadt"
        | "Wissenschaftsstadt" => suffix,
        _ => match code {
            60 => "Markt",
            61..=63 | 67 => "Stadt",
            64 => "Gemeinde",
            _ => "",
        },
    };
    if title.is_empty() || base.starts_with(title) {
        base.to_owned()
    } else {
        format!("{title} {base}")
    }
}

/// The result of [`municipalities_for`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Resolution {
    /// Exactly one municipality.
    Unique {
        municipality: Municipality,
        /// Whether the given city name matches the municipality (after normalisation). False
        /// for a postal code with a single municipality when the city was empty, a district name
        /// ("Ortsteil") or misspelt: the postal code decides then, but a caller may warn.
        city_matches: bool,
    },
    /// The postal code spans several municipalities and the city name does not single one out:
    /// these are the candidates (all of the postal code's, or those sharing the given name).
    Ambiguous { candidates: Vec<Municipality> },
    /// The city names municipalities (`named`) that do not have the postal code, whose own
    /// municipalities are `candidates`: nothing is determined from one half of the address.
    /// `certain` when the city is another municipality's full name ("Berlin" with 80331);
    /// otherwise by a name's core or first words only ("Frankfurt" or "Berlin-Mitte" with
    /// 80331), which may also be an Ortsteil of the same name ("Mülheim" in Köln).
    Contradicted {
        candidates: Vec<Municipality>,
        named: Vec<Municipality>,
        certain: bool,
    },
    /// The postal code is not a known German postal code.
    NotFound,
}

impl Resolution {
    /// The municipality when determined.
    pub fn municipality(&self) -> Option<Municipality> {
        match self {
            Resolution::Unique { municipality, .. } => Some(*municipality),
            _ => None,
        }
    }

    /// The determined municipality or all candidates of the postal code (empty when not
    /// found).
    pub fn candidates(&self) -> Vec<Municipality> {
        match self {
            Resolution::Unique { municipality, .. } => vec![*municipality],
            Resolution::Ambiguous { candidates } | Resolution::Contradicted { candidates, .. } => {
                candidates.clone()
            }
            Resolution::NotFound => Vec::new(),
        }
    }
}

/// The municipality of a German address from its postal code and city.
///
/// The postal code gives the candidates. When it spans several municipalities the city name
/// decides, compared after [`normalize_city`] against the register name and OpenStreetMap's name,
/// then by the name's core ("Halle" for "Halle (Saale)"). When still ambiguous, all remaining
/// candidates are returned and nothing is determined.
pub fn municipalities_for(zip: &str, city: &str) -> Resolution {
    match index().resolve(zip, city) {
        Resolved::One(m, city_matches) => Resolution::Unique {
            municipality: Municipality::from_index(m),
            city_matches,
        },
        Resolved::Several(ms) => Resolution::Ambiguous {
            candidates: ms.into_iter().map(Municipality::from_index).collect(),
        },
        Resolved::Contradicted {
            candidates,
            named,
            certain,
        } => Resolution::Contradicted {
            candidates: candidates
                .into_iter()
                .map(Municipality::from_index)
                .collect(),
            named: named.into_iter().map(Municipality::from_index).collect(),
            certain,
        },
        Resolved::NotFound => Resolution::NotFound,
    }
}

/// All postal codes of the compiled-in data, ascending, each once.
pub fn postal_codes() -> impl Iterator<Item = String> {
    let postcodes = &index().postcodes;
    postcodes
        .iter()
        .enumerate()
        .filter(|(i, p)| *i == 0 || postcodes[i - 1].plz != p.plz)
        .map(|(_, p)| format!("{:05}", p.plz))
}

/// What a tax office of the directory is for, read from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OfficePurpose {
    /// A general tax office (Finanzamt) taking registrations of its district.
    General,
    /// A special office for corporations ("für Körperschaften", "Körpersch.") or large companies
    /// ("für Großunternehmen").
    Corporations,
    /// A branch (Außenstelle, Verwaltungsstelle) of a general office; it takes registrations of
    /// its district like a general office ("Biberach Außenstelle Riedlingen").
    Branch,
    /// Not a registration office: audits, investigations, valuation, cash, central services.
    Special,
}

impl OfficePurpose {
    /// Classifies a directory name (case-insensitive keywords).
    pub fn classify(name: &str) -> Self {
        const CORPORATIONS: &[&str] = &["körperschaft", "körpersch.", "großunternehmen"];
        const SPECIAL: &[&str] = &[
            "bewertung",
            "grundsteuer",
            "grundbesitz",
            "fahndung",
            "strafsachen",
            "betriebsprüfung",
            "konzernprüfung",
            "außenprüfung",
            "prüfungsd",
            "erhebung",
            "landeshauptkasse",
            "landesfinanzkasse",
            "technisches finanzamt",
            "bundeszentralamt",
            "landesamt",
            " - rab",
            " - ria",
            "grunderwerbsteuer",
            "erb/schenk",
            "arbeitnehmerbereich",
            "überschusseinkünfte",
            "international",
        ];
        const BRANCH: &[&str] = &["außenstelle ", "außenst.", "verwaltungsstelle"];
        let name = name.to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
        if has(CORPORATIONS) {
            OfficePurpose::Corporations
        } else if has(SPECIAL) {
            OfficePurpose::Special
        } else if has(BRANCH) {
            OfficePurpose::Branch
        } else {
            OfficePurpose::General
        }
    }
}

/// A tax office (Finanzamt) of the BZSt directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaxOffice {
    /// The 4-digit office number (Bundesfinanzamtsnummer), e.g. `2115`.
    pub number: &'static str,
    /// The directory's short name, e.g. "Flensburg", "für Körperschaften I".
    pub name: &'static str,
    pub street: Option<&'static str>,
    pub house_number: Option<&'static str>,
    pub postal_code: Option<&'static str>,
    pub city: Option<&'static str>,
    pub phone: Option<&'static str>,
    pub fax: Option<&'static str>,
    pub email: Option<&'static str>,
    pub website: Option<&'static str>,
    pub purpose: OfficePurpose,
}

impl TaxOffice {
    /// The full name: "Finanzamt Flensburg", "Finanzamt für Körperschaften I"; names that are
    /// already an authority's ("Bundeszentralamt für Steuern") stay as they are.
    pub fn display_name(&self) -> String {
        let lower = self.name.to_lowercase();
        if lower.contains("amt") || lower.contains("kasse") {
            self.name.to_owned()
        } else {
            format!("Finanzamt {}", self.name)
        }
    }
}

/// The directory entry of a tax office number, e.g. `tax_office("2115")` (Flensburg).
pub fn tax_office(number: &str) -> Option<&'static TaxOffice> {
    let index = index();
    index.office_index(number.trim()).map(|i| &index.offices[i])
}

/// Whether the number is a tax office of the current directory.
pub fn is_known_tax_office(number: &str) -> bool {
    tax_office(number).is_some()
}

/// Sizes of the compiled-in data, for diagnostics and the `offices_stats` example.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IndexStats {
    pub municipalities: usize,
    pub verbaende: usize,
    pub postcode_rows: usize,
    pub postal_codes: usize,
    pub tax_offices: usize,
    /// Estimated heap bytes of the indexes (from capacities and element sizes).
    pub heap_bytes: usize,
    /// The same for the index of municipality names (the address checks), built here too.
    pub names_heap_bytes: usize,
}

/// Builds the indexes if not yet done and returns their sizes. Call at start-up to move the
/// (few milliseconds of) parsing out of the first request.
pub fn index_stats() -> IndexStats {
    let index = index();
    IndexStats {
        municipalities: index.municipalities.len(),
        verbaende: index.verbaende.len(),
        postcode_rows: index.postcodes.len(),
        postal_codes: postal_codes().count(),
        tax_offices: index.offices.len(),
        heap_bytes: index.heap_bytes(),
        names_heap_bytes: data::name_index().heap_bytes(),
    }
}
