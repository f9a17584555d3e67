//! The compiled-in data and its lazily built indexes.
//!
//! The TSV files under `crates/domain/data/offices/` are included as `&'static str`; the index
//! rows borrow their strings from them (no copies), so the heap holds only the row vectors.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

use super::normalize::{core, normalize_city};
use super::{OfficePurpose, TaxOffice};

const MUNICIPALITIES: &str = include_str!("../../data/offices/municipalities.tsv");
const VERBAENDE: &str = include_str!("../../data/offices/verbaende.tsv");
const POSTCODES: &str = include_str!("../../data/offices/postcodes.tsv");
const TAX_OFFICES: &str = include_str!("../../data/offices/tax_offices.tsv");

/// One municipality of the register (or, with `in_register == false`, one only OpenStreetMap
/// knows: formed or renamed after the register's edition).
#[derive(Debug)]
pub(crate) struct MunicipalityRec {
    pub ags: &'static str,
    pub name: &'static str,
    /// Textkennzeichen of the register (60 Markt, 61 kreisfreie Stadt, 63 Stadt, 64 Gemeinde ...),
    /// 0 when not in the register.
    pub code: u8,
    /// Index into `Index::verbaende`.
    pub verband: Option<u16>,
    /// Finanzamtsbezirk, "" when none.
    pub tax_office: &'static str,
    pub in_register: bool,
}

/// One real Gemeindeverband (Satzart 50 without the "verbandsfreie Gemeinde" pseudo records).
#[derive(Debug)]
pub(crate) struct VerbandRec {
    pub key: &'static str,
    pub code: u8,
    pub name: &'static str,
    pub seat: &'static str,
}

/// One postal code to municipality assignment.
#[derive(Debug)]
pub(crate) struct PostcodeRec {
    pub plz: u32,
    pub municipality: u32,
    /// OpenStreetMap's place name; "" when it equals the register name.
    pub ort: &'static str,
}

pub(crate) struct Index {
    /// Sorted by AGS.
    pub municipalities: Vec<MunicipalityRec>,
    /// Sorted by key.
    pub verbaende: Vec<VerbandRec>,
    /// Sorted by (postal code, municipality).
    pub postcodes: Vec<PostcodeRec>,
    /// Sorted by number.
    pub offices: Vec<TaxOffice>,
    /// Per office (same order): the municipality its street address lies in, when determinable.
    pub office_location: Vec<Option<u32>>,
    /// Office numbers the register assigns to at least one municipality.
    pub assigned_numbers: BTreeSet<&'static str>,
    /// Register numbers missing from the directory -> suggested successors (office indexes).
    pub successors: BTreeMap<&'static str, Vec<u32>>,
}

/// Every municipality by its normalised names (the register's and OpenStreetMap's), to tell a
/// city that names another municipality from an Ortsteil or a spelling the data does not know
/// (docs/offices.md, "Address checks"). Built on its first use (a city that matches none of
/// its postal code's municipalities), or by [`super::index_stats`] at start-up.
pub(crate) struct Names {
    pub names: HashMap<String, Vec<u32>>,
    /// The same by the names' cores ("frankfurt" for Frankfurt am Main and Frankfurt (Oder)).
    pub cores: HashMap<String, Vec<u32>>,
}

static NAMES: OnceLock<Names> = OnceLock::new();

pub(crate) fn name_index() -> &'static Names {
    NAMES.get_or_init(|| {
        let index = index();
        let mut names: HashMap<String, Vec<u32>> = HashMap::with_capacity(13_000);
        let mut cores: HashMap<String, Vec<u32>> = HashMap::with_capacity(13_000);
        let mut add = |name: &str, m: u32| {
            for (map, key) in [(&mut names, normalize_city(name)), (&mut cores, core(name))] {
                if key.is_empty() {
                    continue;
                }
                let list = map.entry(key).or_default();
                if !list.contains(&m) {
                    list.push(m);
                }
            }
        };
        for (i, m) in index.municipalities.iter().enumerate() {
            add(m.name, i as u32);
        }
        for p in &index.postcodes {
            if !p.ort.is_empty() {
                add(p.ort, p.municipality);
            }
        }
        Names { names, cores }
    })
}

impl Names {
    /// Rough heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        [&self.names, &self.cores]
            .iter()
            .map(|map| {
                map.capacity() * (size_of::<String>() + size_of::<Vec<u32>>() + 1)
                    + map
                        .iter()
                        .map(|(k, v)| k.capacity() + v.capacity() * 4)
                        .sum::<usize>()
            })
            .sum()
    }
}

/// The data lines of a TSV file, split into (at most) `N` fields; missing fields are "".
fn rows<const N: usize>(text: &'static str) -> impl Iterator<Item = [&'static str; N]> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut fields = [""; N];
            for (slot, field) in fields.iter_mut().zip(l.splitn(N, '\t')) {
                *slot = field;
            }
            fields
        })
}

fn opt(s: &'static str) -> Option<&'static str> {
    (!s.is_empty()).then_some(s)
}

static INDEX: OnceLock<Index> = OnceLock::new();

pub(crate) fn index() -> &'static Index {
    INDEX.get_or_init(build)
}

fn build() -> Index {
    let verbaende: Vec<VerbandRec> = rows::<4>(VERBAENDE)
        .map(|r| VerbandRec {
            key: r[0],
            code: r[1].parse().unwrap_or(0),
            name: r[2],
            seat: r[3],
        })
        .collect();
    let mut municipalities: Vec<MunicipalityRec> = rows::<5>(MUNICIPALITIES)
        .map(|r| MunicipalityRec {
            ags: r[0],
            verband: opt(r[1]).and_then(|k| {
                verbaende
                    .binary_search_by(|v| v.key.cmp(k))
                    .ok()
                    .and_then(|i| u16::try_from(i).ok())
            }),
            code: r[2].parse().unwrap_or(0),
            tax_office: r[3],
            name: r[4],
            in_register: true,
        })
        .collect();
    // Municipalities only OpenStreetMap knows (newer than the register edition).
    let post_rows: Vec<[&'static str; 3]> = rows::<3>(POSTCODES).collect();
    let mut extra: BTreeMap<&'static str, &'static str> = BTreeMap::new();
    for r in &post_rows {
        if municipalities
            .binary_search_by(|m| m.ags.cmp(r[1]))
            .is_err()
        {
            extra.entry(r[1]).or_insert(r[2]);
        }
    }
    municipalities.extend(extra.into_iter().map(|(ags, name)| MunicipalityRec {
        ags,
        name,
        code: 0,
        verband: None,
        tax_office: "",
        in_register: false,
    }));
    municipalities.sort_by(|a, b| a.ags.cmp(b.ags));
    let mut postcodes: Vec<PostcodeRec> = post_rows
        .iter()
        .filter_map(|r| {
            let m = municipalities.binary_search_by(|m| m.ags.cmp(r[1])).ok()?;
            Some(PostcodeRec {
                plz: r[0].parse().ok()?,
                municipality: u32::try_from(m).ok()?,
                ort: if municipalities[m].in_register {
                    r[2]
                } else {
                    ""
                },
            })
        })
        .collect();
    postcodes.sort_by_key(|p| (p.plz, p.municipality));
    let offices: Vec<TaxOffice> = rows::<10>(TAX_OFFICES)
        .map(|r| {
            let f = |i: usize| r[i];
            TaxOffice {
                number: f(0),
                name: f(1),
                street: opt(f(2)),
                house_number: opt(f(3)),
                postal_code: opt(f(4)),
                city: opt(f(5)),
                phone: opt(f(6)),
                fax: opt(f(7)),
                email: opt(f(8)),
                website: opt(f(9)),
                purpose: OfficePurpose::classify(f(1)),
            }
        })
        .collect();
    let assigned_numbers = municipalities
        .iter()
        .filter_map(|m| opt(m.tax_office))
        .collect();
    let mut index = Index {
        municipalities,
        verbaende,
        postcodes,
        offices,
        office_location: Vec::new(),
        assigned_numbers,
        successors: BTreeMap::new(),
    };
    index.office_location = index
        .offices
        .iter()
        .map(|o| {
            let plz = o.postal_code?;
            match index.resolve_with(plz, o.city.unwrap_or(""), false) {
                Resolved::One(m, _) => Some(m),
                _ => None,
            }
        })
        .collect();
    index.successors = index.successor_suggestions();
    index
}

/// Internal result of a postal code + city lookup.
pub(crate) enum Resolved {
    /// One municipality; the flag says whether the city name agreed with it.
    One(u32, bool),
    /// Several municipalities remain (indexes, sorted).
    Several(Vec<u32>),
    /// The city names municipalities (`named`) none of which has the postal code, whose own
    /// municipalities are `candidates`: by their full name (`certain`), or by a name's core
    /// only, which may also be an Ortsteil of the same name ("Mülheim" in Köln).
    Contradicted {
        candidates: Vec<u32>,
        named: Vec<u32>,
        certain: bool,
    },
    NotFound,
}

impl Index {
    pub fn candidates(&self, plz: u32) -> &[PostcodeRec] {
        let start = self.postcodes.partition_point(|p| p.plz < plz);
        let end = self.postcodes.partition_point(|p| p.plz <= plz);
        &self.postcodes[start..end]
    }

    pub fn municipality_index(&self, ags: &str) -> Option<u32> {
        self.municipalities
            .binary_search_by(|m| m.ags.cmp(ags))
            .ok()
            .and_then(|i| u32::try_from(i).ok())
    }

    pub fn office_index(&self, number: &str) -> Option<usize> {
        self.offices.binary_search_by(|o| o.number.cmp(number)).ok()
    }

    /// Postal code candidates narrowed by the city name: exact normalised name first, then the
    /// name's core (see [`core`]), each against the register name and OpenStreetMap's name.
    pub fn resolve(&self, zip: &str, city: &str) -> Resolved {
        self.resolve_with(zip, city, true)
    }

    /// [`Self::resolve`]; `elsewhere` also looks for other municipalities the city names (not
    /// while the index itself is built: the offices' own addresses).
    fn resolve_with(&self, zip: &str, city: &str, elsewhere: bool) -> Resolved {
        let zip = zip.trim();
        let Some(plz) = (zip.len() == 5 && zip.bytes().all(|b| b.is_ascii_digit()))
            .then(|| zip.parse::<u32>().ok())
            .flatten()
        else {
            return Resolved::NotFound;
        };
        let rows = self.candidates(plz);
        if rows.is_empty() {
            return Resolved::NotFound;
        }
        let names = |p: &PostcodeRec| {
            let m = &self.municipalities[p.municipality as usize];
            [Some(m.name), opt(p.ort)]
        };
        let matching = |key: &dyn Fn(&str) -> String| -> Vec<u32> {
            let wanted = key(city);
            let mut found: Vec<u32> = rows
                .iter()
                .filter(|p| names(p).into_iter().flatten().any(|n| key(n) == wanted))
                .map(|p| p.municipality)
                .collect();
            found.dedup();
            found
        };
        let mut all: Vec<u32> = rows.iter().map(|p| p.municipality).collect();
        all.dedup();
        let wanted = normalize_city(city);
        if wanted.is_empty() {
            return match all.as_slice() {
                [only] => Resolved::One(*only, false),
                _ => Resolved::Several(all),
            };
        }
        let contradicted = |named: Vec<u32>, certain: bool| Resolved::Contradicted {
            candidates: all.clone(),
            named,
            certain,
        };
        let mut by_name = matching(&normalize_city);
        if by_name.is_empty() {
            by_name = matching(&core);
            // "Frankfurt (Oder)" is not Frankfurt am Main: a qualified name that matches one
            // of the postal code's only by its core, and another municipality in full.
            if !by_name.is_empty()
                && wanted != core(city)
                && elsewhere
                && let Some(named) = self.named_elsewhere(&name_index().names, &wanted, &all)
            {
                return contradicted(named, true);
            }
        }
        if by_name.is_empty() {
            // The municipality's name followed by an Ortsteil: "München-Pasing",
            // "Leipzig OT Plagwitz", "Frankfurt am Main-Höchst".
            by_name = rows
                .iter()
                .filter(|p| {
                    names(p).into_iter().flatten().any(|n| {
                        [normalize_city(n), core(n)]
                            .iter()
                            .any(|k| !k.is_empty() && wanted.starts_with(&format!("{k} ")))
                    })
                })
                .map(|p| p.municipality)
                .collect();
            by_name.dedup();
        }
        if by_name.is_empty() {
            // The full name of a municipality that does not have this postal code: a
            // contradiction ("Berlin" with 80331).
            if elsewhere
                && let Some(named) = self.named_elsewhere(&name_index().names, &wanted, &all)
            {
                return contradicted(named, true);
            }
            // Another municipality's core ("Frankfurt" with 80331), or its name followed by
            // more ("Berlin-Mitte"): a contradiction, or an Ortsteil of the same name
            // ("Mülheim" in Köln, "Bergen-Enkheim" in Frankfurt am Main). Not certain.
            let tokens: Vec<&str> = wanted.split(' ').collect();
            let prefixes = (1..tokens.len()).rev().map(|k| tokens[..k].join(" "));
            if elsewhere
                && let Some(named) = std::iter::once(core(city))
                    .filter_map(|c| self.named_elsewhere(&name_index().cores, &c, &all))
                    .chain(
                        prefixes
                            .filter_map(|p| self.named_elsewhere(&name_index().names, &p, &all)),
                    )
                    .next()
            {
                return contradicted(named, false);
            }
        }
        match (all.as_slice(), by_name.as_slice()) {
            ([only], found) => Resolved::One(*only, found == [*only]),
            (_, [one]) => Resolved::One(*one, true),
            (_, []) => Resolved::Several(all),
            (_, several) => Resolved::Several(several.to_vec()),
        }
    }

    /// The municipalities `map` has under `key` when none of them is one of `candidates`.
    fn named_elsewhere(
        &self,
        map: &HashMap<String, Vec<u32>>,
        key: &str,
        candidates: &[u32],
    ) -> Option<Vec<u32>> {
        let named = map.get(key)?;
        (!named.iter().any(|m| candidates.contains(m))).then(|| named.clone())
    }

    /// For every register office number missing from the directory, the general offices that
    /// probably took over its district: offices located in one of its municipalities; else
    /// offices of the same state whose name contains the name of one of its municipalities
    /// ("Eckernförde-Schleswig" for Eckernförde); else offices located in the same district
    /// (Kreis).
    fn successor_suggestions(&self) -> BTreeMap<&'static str, Vec<u32>> {
        let mut districts: BTreeMap<&'static str, Vec<&MunicipalityRec>> = BTreeMap::new();
        for m in &self.municipalities {
            if !m.tax_office.is_empty() && self.office_index(m.tax_office).is_none() {
                districts.entry(m.tax_office).or_default().push(m);
            }
        }
        let general: Vec<(u32, &TaxOffice)> = self
            .offices
            .iter()
            .enumerate()
            .filter(|(_, o)| o.purpose == OfficePurpose::General)
            .filter_map(|(i, o)| Some((u32::try_from(i).ok()?, o)))
            .collect();
        let office_names: Vec<String> = self
            .offices
            .iter()
            .map(|o| normalize_city(o.name))
            .collect();
        let located =
            |i: u32| self.office_location[i as usize].map(|m| &self.municipalities[m as usize]);
        districts
            .into_iter()
            .map(|(number, members)| {
                let ags: BTreeSet<&str> = members.iter().map(|m| m.ags).collect();
                let kreise: BTreeSet<&str> = members.iter().map(|m| &m.ags[..5]).collect();
                let states: BTreeSet<&str> = members.iter().map(|m| &m.ags[..2]).collect();
                let in_district: Vec<u32> = general
                    .iter()
                    .filter(|(i, _)| located(*i).is_some_and(|m| ags.contains(m.ags)))
                    .map(|(i, _)| *i)
                    .collect();
                let cores: BTreeSet<String> = members
                    .iter()
                    .map(|m| core(m.name))
                    .filter(|c| c.len() >= 4)
                    .collect();
                let named: Vec<u32> = general
                    .iter()
                    .filter(|(i, _)| {
                        located(*i).is_some_and(|m| states.contains(&m.ags[..2]))
                            && office_names[*i as usize]
                                .split(' ')
                                .any(|t| cores.contains(t))
                    })
                    .map(|(i, _)| *i)
                    .collect();
                let in_kreis: Vec<u32> = general
                    .iter()
                    .filter(|(i, _)| located(*i).is_some_and(|m| kreise.contains(&m.ags[..5])))
                    .map(|(i, _)| *i)
                    .collect();
                let pick = [in_district, named, in_kreis]
                    .into_iter()
                    .find(|v| !v.is_empty())
                    .unwrap_or_default();
                (number, pick)
            })
            .collect()
    }

    /// Rough heap size of the indexes in bytes (vector capacities times element sizes; the
    /// strings are borrowed from the compiled-in data and cost nothing).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.municipalities.capacity() * size_of::<MunicipalityRec>()
            + self.verbaende.capacity() * size_of::<VerbandRec>()
            + self.postcodes.capacity() * size_of::<PostcodeRec>()
            + self.offices.capacity() * size_of::<TaxOffice>()
            + self.office_location.capacity() * size_of::<Option<u32>>()
            + self.assigned_numbers.len() * (size_of::<&str>() + 16)
            + self
                .successors
                .values()
                .map(|v| size_of::<&str>() + size_of::<Vec<u32>>() + v.capacity() * 4 + 16)
                .sum::<usize>()
    }
}
