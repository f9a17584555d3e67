//! Below the municipality: the districts (Bezirke) of Berlin and Hamburg, whose district
//! offices (Bezirksämter) receive trade notices, and where an address lies among them.
//!
//! Berlin's address register (Geoportal Berlin, "Adressen Berlin", June 2023; every address with
//! its Ortsteil, each Ortsteil in one Bezirk) is compiled in as `berlin-addresses.tsv`, derived
//! by `crates/domain/tools/offices/berlin.py`: per postal code and street the Ortsteil, or, where
//! a street crosses an Ortsteil border, the house numbers the register has in each Ortsteil.
//! Hamburg publishes its Ortsteile as polygons only, and placing an address in them needs
//! address points or a geocoder, which the service has not: a Hamburg address is never located
//! (docs/offices.md, "Districts").

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Serialize;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::street::split_street;

const DISTRICT_OFFICES: &str = include_str!("../../data/offices/district-offices.tsv");
const BERLIN_ADDRESSES: &str = include_str!("../../data/offices/berlin-addresses.tsv");

/// Berlin's municipality key (AGS).
pub const BERLIN: &str = "11000000";
/// Hamburg's municipality key (AGS).
pub const HAMBURG: &str = "02000000";

/// A district (Bezirk) of Berlin or Hamburg, with the office that receives its trade notices.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub struct District {
    /// The city's AGS and the district's official number: `1100000001` (Berlin-Mitte) ...
    /// `0200000007` (Harburg). Ours: the municipality register has no key below the city.
    pub key: &'static str,
    /// The city's AGS.
    pub city_key: &'static str,
    /// The official district number: `01` to `12` in Berlin (the first digits of its LOR
    /// areas), `1` to `7` in Hamburg.
    pub number: &'static str,
    /// "Mitte", "Charlottenburg-Wilmersdorf", "Hamburg-Nord".
    pub name: &'static str,
    /// "Bezirksamt Mitte von Berlin", "Bezirksamt Altona".
    pub office_name: &'static str,
    /// The unit receiving trade notices and its postal address, as an official page gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phone: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website: Option<&'static str>,
    /// Where the contact data comes from, and the page's date (or "not found ...").
    #[serde(skip)]
    pub source: &'static str,
    #[serde(skip)]
    pub as_of: &'static str,
}

/// The 19 districts of Berlin (12) and Hamburg (7), by key.
pub fn districts() -> &'static [District] {
    static DISTRICTS: OnceLock<Vec<District>> = OnceLock::new();
    DISTRICTS.get_or_init(|| {
        let opt = |s: &'static str| (!s.is_empty()).then_some(s);
        DISTRICT_OFFICES
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| {
                let mut f = [""; 11];
                for (slot, field) in f.iter_mut().zip(l.split('\t')) {
                    *slot = field;
                }
                District {
                    key: f[0],
                    city_key: f[1],
                    number: f[2],
                    name: f[3],
                    office_name: f[4],
                    address: opt(f[5]),
                    email: opt(f[6]),
                    phone: opt(f[7]),
                    website: opt(f[8]),
                    source: f[9],
                    as_of: f[10],
                }
            })
            .collect()
    })
}

/// The district with this key.
pub fn district(key: &str) -> Option<&'static District> {
    districts().iter().find(|d| d.key == key)
}

/// The districts of a city (`BERLIN`, `HAMBURG`), by number; empty for any other municipality.
pub fn districts_of(city_key: &str) -> impl Iterator<Item = &'static District> {
    let city_key = city_key.to_owned();
    districts().iter().filter(move |d| d.city_key == city_key)
}

/// Whether the municipality is one whose districts receive trade notices.
pub fn has_districts(city_key: &str) -> bool {
    city_key == BERLIN || city_key == HAMBURG
}

/// Where an address lies: its district and, in Berlin, its Ortsteil.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Locality {
    #[serde(serialize_with = "district_summary")]
    pub district: &'static District,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ortsteil: Option<&'static str>,
}

fn district_summary<S: serde::Serializer>(d: &&'static District, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut st = s.serialize_struct("District", 3)?;
    st.serialize_field("key", d.key)?;
    st.serialize_field("number", d.number)?;
    st.serialize_field("name", d.name)?;
    st.end()
}

/// How an address was located.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LocatedBy {
    /// The street is in the register for this postal code: all its addresses there lie in one
    /// Ortsteil, or, where it crosses a border, the register has the address itself.
    Register,
    /// The street is not in the register under this postal code nor, in another district,
    /// under any other, and all of the postal code's addresses lie in one district (and, where
    /// named, one Ortsteil).
    PostalCode,
}

/// Why an address was not located.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unlocated {
    /// The street crosses an Ortsteil border and the register does not have the house number
    /// (a number between two addresses of one Ortsteil may still lie in an enclave of another).
    HouseNumberNotInRegister,
    /// The street crosses an Ortsteil border and the address has no house number.
    NoHouseNumber,
    /// The street is not in the register for this postal code, whose addresses lie in several
    /// districts (or Ortsteile).
    StreetNotInRegister,
    /// The street is not in the register under this postal code but under another, in another
    /// district: the postal code may be wrong.
    StreetUnderAnotherPostalCode,
    /// Hamburg: no licensed address data locates an address in its districts.
    NoDistrictData,
}

impl Unlocated {
    /// An English sentence for operators and API clients.
    pub fn message(self) -> &'static str {
        match self {
            Unlocated::HouseNumberNotInRegister => {
                "the street crosses a district or Ortsteil border and the house number is not in Berlin's address register"
            }
            Unlocated::NoHouseNumber => {
                "the street crosses a district or Ortsteil border and the address has no house number"
            }
            Unlocated::StreetNotInRegister => {
                "the street is not in Berlin's address register for this postal code, which spans several districts or Ortsteile"
            }
            Unlocated::StreetUnderAnotherPostalCode => {
                "Berlin's address register has the street under another postal code, in another district: check the postal code"
            }
            Unlocated::NoDistrictData => {
                "no licensed address data places a Hamburg address in its district"
            }
        }
    }
}

/// A locality an address may lie in, with a weight for how likely it is, the candidates' weights
/// summing to 1: the share of the postal code's addresses, or on a street, nearness to the house
/// number; `None` without data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Candidate {
    #[serde(flatten)]
    pub locality: Locality,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
}

/// The result of [`locate`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum DistrictLookup {
    Located {
        #[serde(flatten)]
        locality: Locality,
        by: LocatedBy,
    },
    /// Not located: the candidates, the likeliest first.
    Unlocated {
        reason: Unlocated,
        candidates: Vec<Candidate>,
    },
}

impl DistrictLookup {
    /// The locality, when located.
    pub fn locality(&self) -> Option<Locality> {
        match self {
            DistrictLookup::Located { locality, .. } => Some(*locality),
            DistrictLookup::Unlocated { .. } => None,
        }
    }

    /// The district alone, by likelihood: the located one, or the candidates' districts in the
    /// order of their best candidate, each with the sum of its candidates' shares.
    pub fn districts(&self) -> Vec<(&'static District, Option<f64>)> {
        match self {
            DistrictLookup::Located { locality, .. } => vec![(locality.district, Some(1.0))],
            DistrictLookup::Unlocated { candidates, .. } => {
                let mut out: Vec<(&'static District, Option<f64>)> = Vec::new();
                for c in candidates {
                    match out
                        .iter_mut()
                        .find(|(d, _)| d.key == c.locality.district.key)
                    {
                        Some((_, share)) => {
                            *share = share.zip(c.share).map(|(a, b)| a + b);
                        }
                        None => out.push((c.locality.district, c.share)),
                    }
                }
                // Stable: equal shares keep the order of the best candidate.
                out.sort_by(|a, b| {
                    b.1.unwrap_or(0.0)
                        .partial_cmp(&a.1.unwrap_or(0.0))
                        .unwrap_or(std::cmp::Ordering::Equal)
                });
                out
            }
        }
    }
}

/// Where the address at `zip` / `street` (one line, with its house number) lies in the city
/// `city_key`; `None` when the municipality has no districts that receive trade notices.
pub fn locate(city_key: &str, zip: &str, street: &str) -> Option<DistrictLookup> {
    match city_key {
        BERLIN => Some(berlin().locate(zip.trim(), street)),
        HAMBURG => Some(DistrictLookup::Unlocated {
            reason: Unlocated::NoDistrictData,
            candidates: districts_of(HAMBURG)
                .map(|district| Candidate {
                    locality: Locality {
                        district,
                        ortsteil: None,
                    },
                    share: None,
                })
                .collect(),
        }),
        _ => None,
    }
}

/// The Ortsteile of a Berlin postal code, by their share of its addresses, the largest first.
pub fn berlin_postal_code_ortsteile(zip: &str) -> Vec<Candidate> {
    berlin().postal_code_candidates(zip.trim().parse().unwrap_or(0))
}

/// Whether Berlin's address register has this street under this postal code: a few Berlin
/// addresses carry a postal code that the postal code data gives to a Brandenburg municipality
/// (15537, 15566, 15569 at the city's edge), which the city "Berlin" and the register correct.
pub fn in_berlin_register(zip: &str, street: &str) -> bool {
    let (name, _) = street_and_number(street);
    zip.trim()
        .parse::<u32>()
        .is_ok_and(|plz| berlin().streets.contains_key(&(plz, street_key(name))))
}

/// Whether Berlin's address register has addresses with this postal code (193 postal codes,
/// some of them shared with Brandenburg at the city's edge).
pub fn berlin_has_postal_code(zip: &str) -> bool {
    zip.trim()
        .parse::<u32>()
        .is_ok_and(|plz| berlin().postal_codes.contains_key(&plz))
}

/// The key a street name is found by: lower case, `ä ö ü ß` as `ae oe ue ss`, other diacritics
/// dropped, only letters and digits, and `strasse` as `str`, so that `Karl-Marx-Str.` finds
/// `Karl-Marx-Straße` and `Str. des 17. Juni` finds `Straße des 17. Juni`.
pub fn street_key(name: &str) -> String {
    let mut flat = String::with_capacity(name.len());
    for c in name.to_lowercase().chars() {
        match c {
            'ä' => flat.push_str("ae"),
            'ö' => flat.push_str("oe"),
            'ü' => flat.push_str("ue"),
            'ß' => flat.push_str("ss"),
            _ => flat.push(c),
        }
    }
    let plain: String = flat
        .nfd()
        .filter(|c| !is_combining_mark(*c) && c.is_ascii_alphanumeric())
        .collect();
    plain.replace("strasse", "str")
}

/// A house number in the register's order: the number, then its letter (`12` < `12A` < `13`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct HouseNo {
    number: u32,
    letter: u8,
}

impl HouseNo {
    fn parse(text: &str) -> Option<HouseNo> {
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        let number = text[..digits].parse().ok()?;
        let letter = match text.as_bytes().get(digits) {
            Some(b) if b.is_ascii_alphabetic() => b.to_ascii_uppercase(),
            _ => 0,
        };
        Some(HouseNo { number, letter })
    }
}

/// The street name and house number of a one-line street: `split_street`'s, or the first
/// token starting with a digit after the first token (`Weg 12 Hinterhaus`).
fn street_and_number(line: &str) -> (&str, Option<HouseNo>) {
    let split = split_street(line);
    if let Some(n) = split.number {
        let letter = split
            .suffix
            .as_deref()
            .and_then(|s| s.bytes().next())
            .filter(u8::is_ascii_alphabetic)
            .map_or(0, |b| b.to_ascii_uppercase());
        let number = n.parse().ok();
        return (
            split.street,
            number.map(|number| HouseNo { number, letter }),
        );
    }
    let line = line.trim();
    let mut offset = 0;
    for (i, token) in line.split_whitespace().enumerate() {
        let at = line[offset..].find(token).map_or(offset, |p| offset + p);
        offset = at + token.len();
        if i > 0 && token.starts_with(|c: char| c.is_ascii_digit()) && !token.ends_with('.') {
            return (line[..at].trim_end(), HouseNo::parse(token));
        }
    }
    (line, None)
}

#[derive(Debug)]
enum Place {
    /// Every address of the street in the postal code lies in this Ortsteil.
    One(u8),
    /// A street across a border: its addresses with their Ortsteil, by house number.
    Split(Vec<(HouseNo, u8)>),
}

struct Berlin {
    /// By id: name and the district's index in [`districts`].
    ortsteile: Vec<(&'static str, usize)>,
    /// (postal code, street key) -> the street's place.
    streets: HashMap<(u32, String), Place>,
    /// Street key -> the postal codes it is under.
    postal_codes_of_street: HashMap<String, Vec<u32>>,
    /// Postal code -> (Ortsteil, number of addresses), most first.
    postal_codes: HashMap<u32, Vec<(u8, u32)>>,
}

fn berlin() -> &'static Berlin {
    static BERLIN_INDEX: OnceLock<Berlin> = OnceLock::new();
    BERLIN_INDEX.get_or_init(Berlin::build)
}

/// Builds the Berlin index (on first use otherwise): call at start-up. Returns the number of
/// streets by postal code.
pub fn warm_up() -> usize {
    berlin().streets.len()
}

/// `id:12 12A 14|id:13 15` -> the addresses by house number.
fn parse_split(text: &str) -> Vec<(HouseNo, u8)> {
    let mut out: Vec<(HouseNo, u8)> = text
        .split('|')
        .filter_map(|part| part.split_once(':'))
        .flat_map(|(ot, numbers)| {
            let ot: u8 = ot.parse().unwrap_or(u8::MAX);
            numbers
                .split(' ')
                .filter_map(HouseNo::parse)
                .map(move |n| (n, ot))
        })
        .filter(|(_, ot)| *ot != u8::MAX)
        .collect();
    out.sort();
    out
}

impl Berlin {
    fn build() -> Berlin {
        let berlin_districts: Vec<usize> = districts()
            .iter()
            .enumerate()
            .filter(|(_, d)| d.city_key == BERLIN)
            .map(|(i, _)| i)
            .collect();
        let mut b = Berlin {
            ortsteile: Vec::with_capacity(100),
            streets: HashMap::with_capacity(12_000),
            postal_codes_of_street: HashMap::with_capacity(10_000),
            postal_codes: HashMap::with_capacity(200),
        };
        for line in BERLIN_ADDRESSES.lines() {
            let f: Vec<&'static str> = line.split('\t').collect();
            match f.as_slice() {
                ["O", _id, bezirk, name] => {
                    let district = berlin_districts
                        .iter()
                        .copied()
                        .find(|&i| districts()[i].number == *bezirk)
                        .expect("every Ortsteil's Bezirk is a Berlin district");
                    b.ortsteile.push((name, district));
                }
                ["P", plz, counts] => {
                    let counts = counts
                        .split(',')
                        .filter_map(|c| {
                            let (ot, n) = c.split_once('=')?;
                            Some((ot.parse().ok()?, n.parse().ok()?))
                        })
                        .collect();
                    if let Ok(plz) = plz.parse() {
                        b.postal_codes.insert(plz, counts);
                    }
                }
                ["S", plz, street, place] => {
                    let place = if place.contains(':') {
                        Place::Split(parse_split(place))
                    } else {
                        match place.parse() {
                            Ok(ot) => Place::One(ot),
                            Err(_) => continue,
                        }
                    };
                    if let Ok(plz) = plz.parse() {
                        let key = street_key(street);
                        b.postal_codes_of_street
                            .entry(key.clone())
                            .or_default()
                            .push(plz);
                        b.streets.insert((plz, key), place);
                    }
                }
                _ => {}
            }
        }
        b
    }

    fn locality(&self, ortsteil: u8) -> Locality {
        let (name, district) = self.ortsteile[usize::from(ortsteil)];
        Locality {
            district: &districts()[district],
            ortsteil: Some(name),
        }
    }

    fn locate(&self, zip: &str, street: &str) -> DistrictLookup {
        let plz: u32 = zip.parse().unwrap_or(0);
        let (name, number) = street_and_number(street);
        let key = street_key(name);
        match self.streets.get(&(plz, key.clone())) {
            Some(Place::One(ot)) => DistrictLookup::Located {
                locality: self.locality(*ot),
                by: LocatedBy::Register,
            },
            Some(Place::Split(addresses)) => self.on_street(addresses, number),
            None => self.by_postal_code(plz, &key),
        }
    }

    /// A street that crosses a border: the register's address, or the candidates, the Ortsteile
    /// of the nearest addresses first (on the house number's side of the street, then across).
    fn on_street(&self, addresses: &[(HouseNo, u8)], number: Option<HouseNo>) -> DistrictLookup {
        let Some(n) = number else {
            return self.unlocated(
                Unlocated::NoHouseNumber,
                addresses.iter().map(|(_, ot)| (*ot, 1.0)),
            );
        };
        if let Ok(i) = addresses.binary_search_by_key(&n, |(h, _)| *h) {
            return DistrictLookup::Located {
                locality: self.locality(addresses[i].1),
                by: LocatedBy::Register,
            };
        }
        let mut near: Vec<(u32, bool, u8)> = addresses
            .iter()
            .map(|(h, ot)| {
                (
                    h.number.abs_diff(n.number),
                    h.number % 2 == n.number % 2,
                    *ot,
                )
            })
            .collect();
        // The same side first, then by distance.
        near.sort_by_key(|(d, same_side, _)| (!same_side, *d));
        let weighted = near.iter().take(4).map(|(d, same_side, ot)| {
            let side = if *same_side { 1.0 } else { 0.5 };
            (*ot, side / (1.0 + f64::from(*d)))
        });
        self.unlocated(Unlocated::HouseNumberNotInRegister, weighted)
    }

    /// The Ortsteile of a postal code, by their share of its addresses.
    fn postal_code_candidates(&self, plz: u32) -> Vec<Candidate> {
        match self.unlocated(
            Unlocated::StreetNotInRegister,
            self.postal_codes
                .get(&plz)
                .into_iter()
                .flatten()
                .map(|(ot, n)| (*ot, f64::from(*n))),
        ) {
            DistrictLookup::Unlocated { candidates, .. } => candidates,
            DistrictLookup::Located { .. } => vec![],
        }
    }

    fn by_postal_code(&self, plz: u32, street: &str) -> DistrictLookup {
        let Some(counts) = self.postal_codes.get(&plz) else {
            return DistrictLookup::Unlocated {
                reason: Unlocated::StreetNotInRegister,
                candidates: vec![],
            };
        };
        let first = self.locality(counts[0].0);
        // The street under another postal code in another district: the postal code may be
        // wrong, so it decides nothing; the street's districts are candidates too.
        let elsewhere: Vec<u8> = self
            .postal_codes_of_street
            .get(street)
            .into_iter()
            .flatten()
            .filter_map(
                |other| match self.streets.get(&(*other, street.to_owned())) {
                    Some(Place::One(ot)) => Some(vec![*ot]),
                    Some(Place::Split(a)) => Some(a.iter().map(|(_, ot)| *ot).collect()),
                    None => None,
                },
            )
            .flatten()
            .collect();
        if elsewhere
            .iter()
            .any(|ot| self.locality(*ot).district.key != first.district.key)
        {
            let total: f64 = counts.iter().map(|(_, n)| f64::from(*n)).sum();
            let weighted = counts
                .iter()
                .map(|(ot, n)| (*ot, f64::from(*n) / total))
                .chain(
                    elsewhere
                        .iter()
                        .map(|ot| (*ot, 0.5 / elsewhere.len() as f64)),
                );
            return self.unlocated(Unlocated::StreetUnderAnotherPostalCode, weighted);
        }
        if counts
            .iter()
            .all(|(ot, _)| self.locality(*ot).district.key == first.district.key)
        {
            return DistrictLookup::Located {
                locality: Locality {
                    district: first.district,
                    ortsteil: (counts.len() == 1).then_some(first.ortsteil).flatten(),
                },
                by: LocatedBy::PostalCode,
            };
        }
        self.unlocated(
            Unlocated::StreetNotInRegister,
            counts.iter().map(|(ot, n)| (*ot, f64::from(*n))),
        )
    }

    /// Candidates from weighted Ortsteile: merged per Ortsteil, shares of the total, likeliest
    /// first (the order given on equal weights).
    fn unlocated(
        &self,
        reason: Unlocated,
        weighted: impl Iterator<Item = (u8, f64)>,
    ) -> DistrictLookup {
        let mut merged: Vec<(u8, f64)> = Vec::new();
        for (ot, w) in weighted {
            match merged.iter_mut().find(|(o, _)| *o == ot) {
                Some((_, total)) => *total += w,
                None => merged.push((ot, w)),
            }
        }
        let total: f64 = merged.iter().map(|(_, w)| w).sum();
        merged.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
        DistrictLookup::Unlocated {
            reason,
            candidates: merged
                .into_iter()
                .map(|(ot, w)| Candidate {
                    locality: self.locality(ot),
                    share: (total > 0.0).then(|| (w / total * 1000.0).round() / 1000.0),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn street_keys() {
        assert_eq!(street_key("Karl-Marx-Straße"), "karlmarxstr");
        assert_eq!(street_key("Karl-Marx-Str."), street_key("Karl-Marx-Straße"));
        assert_eq!(
            street_key("karl marx strasse"),
            street_key("Karl-Marx-Straße")
        );
        assert_eq!(
            street_key("Str. des 17. Juni"),
            street_key("Straße des 17. Juni")
        );
        assert_eq!(street_key("Müllerstraße"), "muellerstr");
        assert_eq!(street_key("Rue de l'Église"), "ruedeleglise");
    }

    #[test]
    fn house_numbers() {
        let hn = |s| street_and_number(s);
        assert_eq!(
            hn("Musterstraße 12a"),
            (
                "Musterstraße",
                Some(HouseNo {
                    number: 12,
                    letter: b'A'
                })
            )
        );
        assert_eq!(
            hn("Am Markt 12-14"),
            (
                "Am Markt",
                Some(HouseNo {
                    number: 12,
                    letter: 0
                })
            )
        );
        assert_eq!(
            hn("Weg 12 Hinterhaus"),
            (
                "Weg",
                Some(HouseNo {
                    number: 12,
                    letter: 0
                })
            )
        );
        assert_eq!(hn("Marktplatz"), ("Marktplatz", None));
        assert!(
            HouseNo {
                number: 12,
                letter: 0
            } < HouseNo {
                number: 12,
                letter: b'A'
            }
        );
        assert!(
            HouseNo {
                number: 12,
                letter: b'Z'
            } < HouseNo {
                number: 13,
                letter: 0
            }
        );
    }

    #[test]
    fn the_data_is_complete() {
        let b = berlin();
        assert_eq!(b.ortsteile.len(), 97);
        assert_eq!(b.postal_codes.len(), 193);
        assert_eq!(b.streets.len(), 11_066);
        assert_eq!(districts_of(BERLIN).count(), 12);
        assert_eq!(districts_of(HAMBURG).count(), 7);
        // Every Berlin district has Ortsteile.
        for d in districts_of(BERLIN) {
            assert!(
                b.ortsteile
                    .iter()
                    .any(|(_, i)| districts()[*i].key == d.key),
                "{}",
                d.name
            );
        }
    }
}
