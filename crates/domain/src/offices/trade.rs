//! The office receiving a trade notice (Gewerbeanzeige, § 14 GewO).

use serde::Serialize;

use super::data::{VerbandRec, index};
use super::district::{self, District, DistrictLookup, Unlocated};
use super::{Municipality, Resolution, display_municipality, municipalities_for};

/// The kind of a Gemeindeverband, from the register's Textkennzeichen of its Satzart 50 record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VerbandType {
    /// 51: Amt (Schleswig-Holstein, Brandenburg, Mecklenburg-Vorpommern).
    Amt,
    /// 52: Samtgemeinde (Niedersachsen).
    Samtgemeinde,
    /// 53: Verbandsgemeinde (Rheinland-Pfalz, Sachsen-Anhalt, Brandenburg).
    Verbandsgemeinde,
    /// 54: Verwaltungsgemeinschaft (Bayern, Sachsen, Thüringen) or vereinbarte
    /// Verwaltungsgemeinschaft (Baden-Württemberg).
    Verwaltungsgemeinschaft,
    /// 55: Kirchspielslandgemeinde (Schleswig-Holstein, Dithmarschen; an Amt-like body).
    Kirchspielslandgemeinde,
    /// 56: Verwaltungsverband (Sachsen) or Gemeindeverwaltungsverband (Baden-Württemberg).
    Verwaltungsverband,
    /// 57: Verwaltungsgemeinschaft in the Trägermodell.
    VerwaltungsgemeinschaftTraegermodell,
    /// 58: erfüllende Gemeinde (Thüringen): one member municipality administers the others.
    ErfuellendeGemeinde,
}

impl VerbandType {
    fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            51 => VerbandType::Amt,
            52 => VerbandType::Samtgemeinde,
            53 => VerbandType::Verbandsgemeinde,
            54 => VerbandType::Verwaltungsgemeinschaft,
            55 => VerbandType::Kirchspielslandgemeinde,
            56 => VerbandType::Verwaltungsverband,
            57 => VerbandType::VerwaltungsgemeinschaftTraegermodell,
            58 => VerbandType::ErfuellendeGemeinde,
            _ => return None,
        })
    }

    /// The German word used in display names ("Amt Trave-Land", "Verbandsgemeinde Trier-Land").
    pub fn title(self) -> &'static str {
        match self {
            VerbandType::Amt => "Amt",
            VerbandType::Samtgemeinde => "Samtgemeinde",
            VerbandType::Verbandsgemeinde => "Verbandsgemeinde",
            VerbandType::Verwaltungsgemeinschaft
            | VerbandType::VerwaltungsgemeinschaftTraegermodell => "Verwaltungsgemeinschaft",
            VerbandType::Kirchspielslandgemeinde => "Kirchspielslandgemeinde",
            VerbandType::Verwaltungsverband => "Verwaltungsverband",
            VerbandType::ErfuellendeGemeinde => "erfüllende Gemeinde",
        }
    }

    /// Whether, in the state with this two-digit key, a Verband of this type receives the trade
    /// notices of its member municipalities.
    ///
    /// The rule follows who performs the member municipalities' delegated tasks (übertragener
    /// Wirkungskreis / Pflichtaufgaben nach Weisung / Auftragsangelegenheiten), to which the
    /// Gewerbeanzeige belongs:
    ///
    /// | state | Verband | trade notices go to |
    /// |---|---|---|
    /// | 01 Schleswig-Holstein | Amt, Kirchspielslandgemeinde | the Amt (§ 4 Amtsordnung) |
    /// | 03 Niedersachsen | Samtgemeinde | the Samtgemeinde (§ 98 NKomVG) |
    /// | 07 Rheinland-Pfalz | Verbandsgemeinde | the Verbandsgemeinde (§ 68 GemO) |
    /// | 08 Baden-Württemberg | GVV, vereinbarte VG | the municipality: the Verband only does Bauleitplanung and similar tasks (§ 61 GemO) |
    /// | 09 Bayern | Verwaltungsgemeinschaft | the VGem (Art. 4 VGemO: all tasks of the übertragener Wirkungskreis) |
    /// | 12 Brandenburg | Amt, Verbandsgemeinde | the Amt (§ 135 BbgKVerf) / Verbandsgemeinde |
    /// | 13 Mecklenburg-Vorpommern | Amt | the Amt (§ 127 KV M-V) |
    /// | 14 Sachsen | Verwaltungsgemeinschaft, Verwaltungsverband | the VG's erfüllende Gemeinde / the Verband (Weisungsaufgaben, §§ 7, 36 SächsKomZG) |
    /// | 15 Sachsen-Anhalt | Verbandsgemeinde | the Verbandsgemeinde (§ 91 KVG LSA) |
    /// | 16 Thüringen | Verwaltungsgemeinschaft, erfüllende Gemeinde | the VG (§ 47 ThürKO) / the erfüllende Gemeinde (§ 51 ThürKO) |
    ///
    /// Other states (Hessen, Nordrhein-Westfalen, Saarland, the city states) have no
    /// Gemeindeverbände in the register: the municipality receives the notice.
    pub fn handles_trade_matters(self, state_key: &str) -> bool {
        use VerbandType as V;
        match (state_key, self) {
            ("08", _) => false,
            ("01", V::Amt | V::Kirchspielslandgemeinde)
            | ("03", V::Samtgemeinde)
            | ("07", V::Verbandsgemeinde)
            | ("09", V::Verwaltungsgemeinschaft | V::VerwaltungsgemeinschaftTraegermodell)
            | ("12", V::Amt | V::Verbandsgemeinde)
            | ("13", V::Amt)
            | ("14", V::Verwaltungsgemeinschaft | V::Verwaltungsverband)
            | ("15", V::Verbandsgemeinde)
            | ("16", V::Verwaltungsgemeinschaft | V::ErfuellendeGemeinde) => true,
            _ => false,
        }
    }
}

/// Whether the receiving office is a municipality or a Gemeindeverband.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TradeOfficeKind {
    Municipality,
    Verband,
    /// A district office (Bezirksamt) of Berlin or Hamburg.
    District,
}

/// The office receiving a trade notice for an establishment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TradeOfficeRef {
    /// The office's key: the 8-digit AGS of a municipality, the 9-digit Gemeindeverband key
    /// (Land, Regierungsbezirk, Kreis and Verband number, e.g. `072355007`), or for a district
    /// office the city's AGS and the district's number (`1100000001`, Bezirksamt Mitte von
    /// Berlin; [`district::District::key`]).
    pub key: &'static str,
    pub kind: TradeOfficeKind,
    /// The Verband's type when `kind` is `Verband` (or the municipality acts as erfüllende
    /// Gemeinde / mitverwaltende Gemeinde for the establishment's municipality).
    pub verband_type: Option<VerbandType>,
    /// Display name: "Gemeinde Aach", "Stadt Flensburg", "Verbandsgemeinde Trier-Land",
    /// "Amt Burg-St. Michaelisdonn", "Verwaltungsgemeinschaft Emmerting".
    pub name: String,
    /// Seat of the Verband's administration, from the register (for Verbände).
    pub seat: Option<&'static str>,
    /// The establishment's municipality (AGS): the GewA 1 head's "Gemeindekennzahl".
    pub municipality_key: &'static str,
    /// The establishment's municipality, display name.
    pub municipality_name: String,
    /// A caveat for the operator, e.g. that Berlin's and Hamburg's district offices
    /// (Bezirksämter) receive the notices.
    pub note: Option<&'static str>,
}

/// The result of [`trade_office_for`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TradeOfficeLookup {
    Found {
        office: TradeOfficeRef,
    },
    /// The municipality is not determined; one office per candidate municipality (they may
    /// coincide when all candidates belong to the same Verband).
    Ambiguous {
        candidates: Vec<TradeOfficeRef>,
    },
    /// Berlin, Hamburg: the district office of the establishment's address receives the notice,
    /// and the address does not decide which (`cause`); the candidates, the likeliest first.
    DistrictNotDetermined {
        cause: Unlocated,
        candidates: Vec<TradeOfficeRef>,
    },
    NotFound,
}

/// The trade office for an establishment at this address: [`trade_office_for`], and in Berlin
/// and Hamburg the district office (Bezirksamt) of the district the address lies in
/// ([`district::locate`]; `street` is the street line with its house number).
pub fn trade_office_at(zip: &str, city: &str, street: &str) -> TradeOfficeLookup {
    let found = trade_office_for(zip, city);
    let berlin = super::berlin_by_register(zip, city, street);
    let municipality = match (&found, berlin) {
        (_, Some(berlin)) => berlin,
        (TradeOfficeLookup::Found { office }, None) => {
            match Municipality::by_key(office.municipality_key) {
                Some(m) => m,
                None => return found,
            }
        }
        _ => return found,
    };
    match district::locate(municipality.key, zip, street) {
        None => found,
        Some(DistrictLookup::Located { locality, .. }) => TradeOfficeLookup::Found {
            office: district_office(municipality, locality.district),
        },
        Some(lookup @ DistrictLookup::Unlocated { reason, .. }) => {
            TradeOfficeLookup::DistrictNotDetermined {
                cause: reason,
                candidates: lookup
                    .districts()
                    .into_iter()
                    .map(|(d, _)| district_office(municipality, d))
                    .collect(),
            }
        }
    }
}

/// The district office receiving the trade notices of `district` of `municipality`.
pub fn district_office(municipality: Municipality, district: &'static District) -> TradeOfficeRef {
    TradeOfficeRef {
        key: district.key,
        kind: TradeOfficeKind::District,
        verband_type: None,
        name: district.office_name.to_owned(),
        seat: None,
        municipality_key: municipality.key,
        municipality_name: municipality.display_name(),
        note: None,
    }
}

/// The trade office for an establishment at this postal code and city (the municipality's;
/// Berlin and Hamburg need the street: [`trade_office_at`]).
pub fn trade_office_for(zip: &str, city: &str) -> TradeOfficeLookup {
    match municipalities_for(zip, city) {
        Resolution::Unique { municipality, .. } => TradeOfficeLookup::Found {
            office: trade_office(municipality),
        },
        // A city that names another municipality decides nothing, and neither does the
        // postal code alone: the postal code's offices are candidates.
        Resolution::Ambiguous { candidates } | Resolution::Contradicted { candidates, .. } => {
            TradeOfficeLookup::Ambiguous {
                candidates: candidates.into_iter().map(trade_office).collect(),
            }
        }
        Resolution::NotFound => TradeOfficeLookup::NotFound,
    }
}

fn verband_base_name(v: &VerbandRec) -> &'static str {
    let name = v.name.split(',').next().unwrap_or(v.name).trim();
    name.strip_suffix("(VGem)").map_or(name, str::trim)
}

/// The trade office of an establishment in `municipality` (see
/// [`VerbandType::handles_trade_matters`] for the per-state rule).
pub fn trade_office(municipality: Municipality) -> TradeOfficeRef {
    let index = index();
    let rec = municipality.rec();
    let own = TradeOfficeRef {
        key: rec.ags,
        kind: TradeOfficeKind::Municipality,
        verband_type: None,
        name: municipality.display_name(),
        seat: None,
        municipality_key: rec.ags,
        municipality_name: municipality.display_name(),
        note: match rec.ags {
            "11000000" => Some(
                "Berlin: the district office (Bezirksamt, Ordnungsamt) of the establishment's \
                 address receives the notice",
            ),
            "02000000" => Some(
                "Hamburg: the district office (Bezirksamt) of the establishment's address \
                 receives the notice",
            ),
            _ if !rec.in_register => Some(
                "municipality newer than the register edition: Gemeindeverband membership \
                 unknown, confirm the receiving office",
            ),
            _ => None,
        },
    };
    let Some(v) = rec.verband.map(|i| &index.verbaende[i as usize]) else {
        return own;
    };
    let Some(kind) = VerbandType::from_code(v.code) else {
        return own;
    };
    if !kind.handles_trade_matters(municipality.state_key()) {
        return own;
    }
    // An erfüllende Gemeinde (Thüringen) or a mitverwaltende Gemeinde (Brandenburg, registered
    // as an Amt named like the municipality) is itself a member: name it as the municipality.
    let mitverwaltung = municipality.state_key() == "12" && v.name.contains(',');
    let acting = (kind == VerbandType::ErfuellendeGemeinde || mitverwaltung)
        .then(|| {
            index.municipalities.iter().find(|m| {
                m.verband == rec.verband && m.name.split(',').next() == v.name.split(',').next()
            })
        })
        .flatten();
    if let Some(m) = acting {
        return TradeOfficeRef {
            key: m.ags,
            kind: TradeOfficeKind::Municipality,
            verband_type: Some(kind),
            name: display_municipality(m.name, m.code),
            seat: None,
            note: (m.ags != rec.ags).then_some(
                "the municipality administers the establishment's municipality \
                 (erfüllende / mitverwaltende Gemeinde)",
            ),
            ..own
        };
    }
    TradeOfficeRef {
        key: v.key,
        kind: TradeOfficeKind::Verband,
        verband_type: Some(kind),
        name: format!("{} {}", kind.title(), verband_base_name(v)),
        seat: (!v.seat.is_empty()).then_some(v.seat),
        note: (municipality.state_key() == "14" && kind == VerbandType::Verwaltungsgemeinschaft)
            .then_some(
                "Sachsen: the Verwaltungsgemeinschaft's erfüllende Gemeinde administers the \
                 notice",
            ),
        ..own
    }
}
