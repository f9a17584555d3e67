//! ISO 3166-1 alpha-2 country codes with German short names.
//!
//! The list holds all 249 officially assigned alpha-2 codes (ISO 3166-1, as of 2024) and `XK`
//! for Kosovo, a user-assigned code that the EU, Destatis and ICAO use while ISO has none
//! (Germany recognises Kosovo; its people must be able to state their nationality). The German
//! names are the short forms used on German official forms (following the Auswärtiges Amt's
//! "Verzeichnis der Staatennamen für den amtlichen Gebrauch" where a state is listed, e.g.
//! "Korea, Republik", "Vereinigte Staaten", "Türkei"; common German names for territories). They
//! are printed in the GewA 1 fields "Geburtsort und -land" and "Staatsangehörigkeit(en)".

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `(alpha-2 code, German short name)`, sorted by code.
const COUNTRIES: &[(&str, &str)] = &[
    ("AD", "Andorra"),
    ("AE", "Vereinigte Arabische Emirate"),
    ("AF", "Afghanistan"),
    ("AG", "Antigua und Barbuda"),
    ("AI", "Anguilla"),
    ("AL", "Albanien"),
    ("AM", "Armenien"),
    ("AO", "Angola"),
    ("AQ", "Antarktis"),
    ("AR", "Argentinien"),
    ("AS", "Amerikanisch-Samoa"),
    ("AT", "Österreich"),
    ("AU", "Australien"),
    ("AW", "Aruba"),
    ("AX", "Ålandinseln"),
    ("AZ", "Aserbaidschan"),
    ("BA", "Bosnien und Herzegowina"),
    ("BB", "Barbados"),
    ("BD", "Bangladesch"),
    ("BE", "Belgien"),
    ("BF", "Burkina Faso"),
    ("BG", "Bulgarien"),
    ("BH", "Bahrain"),
    ("BI", "Burundi"),
    ("BJ", "Benin"),
    ("BL", "St. Barthélemy"),
    ("BM", "Bermuda"),
    ("BN", "Brunei Darussalam"),
    ("BO", "Bolivien"),
    ("BQ", "Bonaire, Sint Eustatius und Saba"),
    ("BR", "Brasilien"),
    ("BS", "Bahamas"),
    ("BT", "Bhutan"),
    ("BV", "Bouvetinsel"),
    ("BW", "Botsuana"),
    ("BY", "Belarus"),
    ("BZ", "Belize"),
    ("CA", "Kanada"),
    ("CC", "Kokosinseln"),
    ("CD", "Kongo, Demokratische Republik"),
    ("CF", "Zentralafrikanische Republik"),
    ("CG", "Kongo"),
    ("CH", "Schweiz"),
    ("CI", "Côte d'Ivoire"),
    ("CK", "Cookinseln"),
    ("CL", "Chile"),
    ("CM", "Kamerun"),
    ("CN", "China"),
    ("CO", "Kolumbien"),
    ("CR", "Costa Rica"),
    ("CU", "Kuba"),
    ("CV", "Cabo Verde"),
    ("CW", "Curaçao"),
    ("CX", "Weihnachtsinsel"),
    ("CY", "Zypern"),
    ("CZ", "Tschechien"),
    ("DE", "Deutschland"),
    ("DJ", "Dschibuti"),
    ("DK", "Dänemark"),
    ("DM", "Dominica"),
    ("DO", "Dominikanische Republik"),
    ("DZ", "Algerien"),
    ("EC", "Ecuador"),
    ("EE", "Estland"),
    ("EG", "Ägypten"),
    ("EH", "Westsahara"),
    ("ER", "Eritrea"),
    ("ES", "Spanien"),
    ("ET", "Äthiopien"),
    ("FI", "Finnland"),
    ("FJ", "Fidschi"),
    ("FK", "Falklandinseln"),
    ("FM", "Mikronesien"),
    ("FO", "Färöer"),
    ("FR", "Frankreich"),
    ("GA", "Gabun"),
    ("GB", "Vereinigtes Königreich"),
    ("GD", "Grenada"),
    ("GE", "Georgien"),
    ("GF", "Französisch-Guayana"),
    ("GG", "Guernsey"),
    ("GH", "Ghana"),
    ("GI", "Gibraltar"),
    ("GL", "Grönland"),
    ("GM", "Gambia"),
    ("GN", "Guinea"),
    ("GP", "Guadeloupe"),
    ("GQ", "Äquatorialguinea"),
    ("GR", "Griechenland"),
    ("GS", "Südgeorgien und die Südlichen Sandwichinseln"),
    ("GT", "Guatemala"),
    ("GU", "Guam"),
    ("GW", "Guinea-Bissau"),
    ("GY", "Guyana"),
    ("HK", "Hongkong"),
    ("HM", "Heard und McDonaldinseln"),
    ("HN", "Honduras"),
    ("HR", "Kroatien"),
    ("HT", "Haiti"),
    ("HU", "Ungarn"),
    ("ID", "Indonesien"),
    ("IE", "Irland"),
    ("IL", "Israel"),
    ("IM", "Insel Man"),
    ("IN", "Indien"),
    ("IO", "Britisches Territorium im Indischen Ozean"),
    ("IQ", "Irak"),
    ("IR", "Iran"),
    ("IS", "Island"),
    ("IT", "Italien"),
    ("JE", "Jersey"),
    ("JM", "Jamaika"),
    ("JO", "Jordanien"),
    ("JP", "Japan"),
    ("KE", "Kenia"),
    ("KG", "Kirgisistan"),
    ("KH", "Kambodscha"),
    ("KI", "Kiribati"),
    ("KM", "Komoren"),
    ("KN", "St. Kitts und Nevis"),
    ("KP", "Korea, Demokratische Volksrepublik"),
    ("KR", "Korea, Republik"),
    ("KW", "Kuwait"),
    ("KY", "Kaimaninseln"),
    ("KZ", "Kasachstan"),
    ("LA", "Laos"),
    ("LB", "Libanon"),
    ("LC", "St. Lucia"),
    ("LI", "Liechtenstein"),
    ("LK", "Sri Lanka"),
    ("LR", "Liberia"),
    ("LS", "Lesotho"),
    ("LT", "Litauen"),
    ("LU", "Luxemburg"),
    ("LV", "Lettland"),
    ("LY", "Libyen"),
    ("MA", "Marokko"),
    ("MC", "Monaco"),
    ("MD", "Moldau"),
    ("ME", "Montenegro"),
    ("MF", "St. Martin"),
    ("MG", "Madagaskar"),
    ("MH", "Marshallinseln"),
    ("MK", "Nordmazedonien"),
    ("ML", "Mali"),
    ("MM", "Myanmar"),
    ("MN", "Mongolei"),
    ("MO", "Macau"),
    ("MP", "Nördliche Marianen"),
    ("MQ", "Martinique"),
    ("MR", "Mauretanien"),
    ("MS", "Montserrat"),
    ("MT", "Malta"),
    ("MU", "Mauritius"),
    ("MV", "Malediven"),
    ("MW", "Malawi"),
    ("MX", "Mexiko"),
    ("MY", "Malaysia"),
    ("MZ", "Mosambik"),
    ("NA", "Namibia"),
    ("NC", "Neukaledonien"),
    ("NE", "Niger"),
    ("NF", "Norfolkinsel"),
    ("NG", "Nigeria"),
    ("NI", "Nicaragua"),
    ("NL", "Niederlande"),
    ("NO", "Norwegen"),
    ("NP", "Nepal"),
    ("NR", "Nauru"),
    ("NU", "Niue"),
    ("NZ", "Neuseeland"),
    ("OM", "Oman"),
    ("PA", "Panama"),
    ("PE", "Peru"),
    ("PF", "Französisch-Polynesien"),
    ("PG", "Papua-Neuguinea"),
    ("PH", "Philippinen"),
    ("PK", "Pakistan"),
    ("PL", "Polen"),
    ("PM", "St. Pierre und Miquelon"),
    ("PN", "Pitcairninseln"),
    ("PR", "Puerto Rico"),
    ("PS", "Palästinensische Gebiete"),
    ("PT", "Portugal"),
    ("PW", "Palau"),
    ("PY", "Paraguay"),
    ("QA", "Katar"),
    ("RE", "Réunion"),
    ("RO", "Rumänien"),
    ("RS", "Serbien"),
    ("RU", "Russische Föderation"),
    ("RW", "Ruanda"),
    ("SA", "Saudi-Arabien"),
    ("SB", "Salomonen"),
    ("SC", "Seychellen"),
    ("SD", "Sudan"),
    ("SE", "Schweden"),
    ("SG", "Singapur"),
    ("SH", "St. Helena, Ascension und Tristan da Cunha"),
    ("SI", "Slowenien"),
    ("SJ", "Svalbard und Jan Mayen"),
    ("SK", "Slowakei"),
    ("SL", "Sierra Leone"),
    ("SM", "San Marino"),
    ("SN", "Senegal"),
    ("SO", "Somalia"),
    ("SR", "Suriname"),
    ("SS", "Südsudan"),
    ("ST", "São Tomé und Príncipe"),
    ("SV", "El Salvador"),
    ("SX", "Sint Maarten"),
    ("SY", "Syrien"),
    ("SZ", "Eswatini"),
    ("TC", "Turks- und Caicosinseln"),
    ("TD", "Tschad"),
    ("TF", "Französische Süd- und Antarktisgebiete"),
    ("TG", "Togo"),
    ("TH", "Thailand"),
    ("TJ", "Tadschikistan"),
    ("TK", "Tokelau"),
    ("TL", "Timor-Leste"),
    ("TM", "Turkmenistan"),
    ("TN", "Tunesien"),
    ("TO", "Tonga"),
    ("TR", "Türkei"),
    ("TT", "Trinidad und Tobago"),
    ("TV", "Tuvalu"),
    ("TW", "Taiwan"),
    ("TZ", "Tansania"),
    ("UA", "Ukraine"),
    ("UG", "Uganda"),
    ("UM", "Kleinere Amerikanische Überseeinseln"),
    ("US", "Vereinigte Staaten"),
    ("UY", "Uruguay"),
    ("UZ", "Usbekistan"),
    ("VA", "Vatikanstadt"),
    ("VC", "St. Vincent und die Grenadinen"),
    ("VE", "Venezuela"),
    ("VG", "Britische Jungferninseln"),
    ("VI", "Amerikanische Jungferninseln"),
    ("VN", "Vietnam"),
    ("VU", "Vanuatu"),
    ("WF", "Wallis und Futuna"),
    ("WS", "Samoa"),
    ("XK", "Kosovo"),
    ("YE", "Jemen"),
    ("YT", "Mayotte"),
    ("ZA", "Südafrika"),
    ("ZM", "Sambia"),
    ("ZW", "Simbabwe"),
];

/// An officially assigned ISO 3166-1 alpha-2 code, stored upper-case.
///
/// Parsing is case-insensitive (`de`, `DE` and `De` are Germany); serialisation writes the
/// canonical upper-case code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CountryCode([u8; 2]);

/// The code is not an officially assigned ISO 3166-1 alpha-2 code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an ISO 3166-1 alpha-2 country code")]
pub struct UnknownCountry(pub String);

impl CountryCode {
    /// Germany.
    pub const DE: CountryCode = CountryCode(*b"DE");

    /// Case-insensitive lookup of an assigned code.
    pub fn parse(code: &str) -> Result<CountryCode, UnknownCountry> {
        let b = code.as_bytes();
        if b.len() == 2 && b[0].is_ascii_alphabetic() && b[1].is_ascii_alphabetic() {
            let upper = [b[0].to_ascii_uppercase(), b[1].to_ascii_uppercase()];
            if index_of(&upper).is_some() {
                return Ok(CountryCode(upper));
            }
        }
        Err(UnknownCountry(code.to_owned()))
    }

    /// The upper-case code, e.g. `"DE"`.
    pub fn as_str(&self) -> &'static str {
        // Every constructed code is in the table.
        index_of(&self.0).map_or("", |i| COUNTRIES[i].0)
    }

    /// The German short name, e.g. `"Österreich"` for `AT`.
    pub fn german_name(&self) -> &'static str {
        index_of(&self.0).map_or("", |i| COUNTRIES[i].1)
    }

    /// Whether this is Germany.
    pub fn is_germany(&self) -> bool {
        *self == CountryCode::DE
    }

    /// All assigned codes in alphabetical order.
    pub fn all() -> impl Iterator<Item = CountryCode> {
        COUNTRIES.iter().map(|(c, _)| {
            let b = c.as_bytes();
            CountryCode([b[0], b[1]])
        })
    }
}

fn index_of(code: &[u8; 2]) -> Option<usize> {
    COUNTRIES
        .binary_search_by(|(c, _)| c.as_bytes().cmp(code.as_slice()))
        .ok()
}

/// German short name for a code, case-insensitive; `None` when the code is not assigned.
pub fn german_name(code: &str) -> Option<&'static str> {
    CountryCode::parse(code).ok().map(|c| c.german_name())
}

impl fmt::Display for CountryCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for CountryCode {
    type Err = UnknownCountry;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CountryCode::parse(s)
    }
}

impl Serialize for CountryCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CountryCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        CountryCode::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_complete_sorted_and_unique() {
        assert_eq!(COUNTRIES.len(), 250, "249 ISO codes and XK");
        assert!(COUNTRIES.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(COUNTRIES.iter().all(|(c, n)| c.len() == 2
            && c.bytes().all(|b| b.is_ascii_uppercase())
            && !n.is_empty()));
        assert_eq!(CountryCode::all().count(), 250);
    }

    #[test]
    fn german_names() {
        for (code, name) in [
            ("DE", "Deutschland"),
            ("at", "Österreich"),
            ("Fr", "Frankreich"),
            ("US", "Vereinigte Staaten"),
            ("TR", "Türkei"),
            ("PL", "Polen"),
            ("GB", "Vereinigtes Königreich"),
            ("CH", "Schweiz"),
            ("NL", "Niederlande"),
            ("KR", "Korea, Republik"),
            ("CZ", "Tschechien"),
            ("UA", "Ukraine"),
        ] {
            assert_eq!(german_name(code), Some(name), "{code}");
        }
    }

    #[test]
    fn unknown_and_malformed_codes_are_rejected() {
        for bad in ["", "D", "DEU", "XX", "UK", "EU", "ZZ", "1A", "ÄÖ", "d\u{0}"] {
            assert!(CountryCode::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn serde_is_case_insensitive_and_canonical() {
        let c: CountryCode = serde_json::from_str("\"de\"").unwrap();
        assert!(c.is_germany());
        assert_eq!(serde_json::to_string(&c).unwrap(), "\"DE\"");
        assert!(serde_json::from_str::<CountryCode>("\"xx\"").is_err());
    }
}
