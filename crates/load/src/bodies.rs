//! The request bodies of the benchmark, built once from the example requests in `examples/`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use domain::rule_cases::example;
use serde_json::{Value, json};

/// `POST /v1/trade-registration`, package `self`, one owner: the example, each body with a
/// company, owner and streets of its own ([`vary_trade`]).
pub fn trade_self() -> Body {
    let data = example("self");
    Body::each(move |n| {
        let mut data = data.clone();
        vary_trade(&mut data, n);
        Bytes::from(data.to_string())
    })
}

/// A request body: the same every time, or a new one for each request.
#[derive(Clone)]
pub enum Body {
    Same(Bytes),
    /// The `n`th body for the `n`th request of the whole tool run, so no two requests of one
    /// run, in any scenario or at any concurrency, send the same names.
    Each(Arc<dyn Fn(u64) -> Bytes + Send + Sync>, Arc<AtomicU64>),
}

impl Body {
    fn each(make: impl Fn(u64) -> Bytes + Send + Sync + 'static) -> Self {
        Self::Each(Arc::new(make), Arc::new(AtomicU64::new(0)))
    }

    /// The body of the next request.
    pub fn next(&self) -> Bytes {
        match self {
            Self::Same(b) => b.clone(),
            Self::Each(make, count) => make(count.fetch_add(1, Ordering::Relaxed)),
        }
    }
}

/// A made-up family name, different for each `n` below 20^5 = 3.2 million.
fn made_up_name(n: u64) -> String {
    const SYLLABLES: [&str; 20] = [
        "ber", "ka", "lin", "mo", "ra", "sen", "to", "wal", "de", "fi", "gu", "han", "jo", "lu",
        "ne", "pe", "ri", "sa", "ve", "zo",
    ];
    let mut name: String = (0..5)
        .map(|k| SYLLABLES[(n / 20u64.pow(k) % 20) as usize])
        .collect();
    name[..1].make_ascii_uppercase();
    name
}

/// Makes a trade body the `n`th of its kind: the company's name, register number, client
/// reference and street, and each owner's names, birth date, street, phone and e-mail address
/// differ from request to request, as they do between a provider's clients. Places,
/// nationalities, the purpose and the authorities stay as in the example. Without this, every
/// form would hold the same text, and what the server keeps of one form for the next (shaped
/// text, see `crates/forms/src/text.rs`) would be measured at its best.
pub fn vary_trade(data: &mut Value, n: u64) {
    const FIRST: [&str; 8] = [
        "Erika", "Jürgen", "Ayşe", "Łukasz", "Sophie", "Mehmet", "Anna", "Jan",
    ];
    let company = made_up_name(n);
    data["name"] = json!(format!("{company} Software GmbH"));
    data["registration_number"] = json!(format!("HRB {} B", 100_000 + n % 900_000));
    data["client_reference"] = json!(format!("KD-{n}"));
    data["email"] = json!(format!("kontakt@{}.de", company.to_lowercase()));
    data["registered_office"]["street"] = json!(format!("{company}straße {}", 1 + n % 199));
    if let Some(owners) = data["owners"].as_array_mut() {
        for (i, owner) in owners.iter_mut().enumerate() {
            let m = n * 4 + i as u64;
            let (first, last) = (FIRST[(m % 8) as usize], made_up_name(m + 7));
            owner["first_name"] = json!(first);
            owner["last_name"] = json!(last);
            owner["dob"] = json!(format!(
                "{}-{:02}-{:02}",
                1950 + m % 50,
                1 + m % 12,
                1 + m % 28
            ));
            owner["phone"] = json!(format!("+49 170 {:07}", m % 10_000_000));
            owner["email"] = json!(format!("p{m}@example.de"));
            if let Some(address) = owner.get_mut("address").and_then(Value::as_object_mut) {
                let street = format!("{}weg {}", made_up_name(m + 11), 1 + m % 97);
                address.insert("street".into(), json!(street));
            }
        }
    }
}

/// The boundary of the multipart body (not in the data: JSON and the PDF never contain it).
pub const BOUNDARY: &str = "filing-load-3f1c9a7e5d2b4086";

/// `POST /v1/trade-registration`, package `assisted`, three owners, multipart: the first owner's
/// signed GewA 1 is uploaded (`pdf`), the other two are generated, with three powers of attorney;
/// each body with names of its own ([`vary_trade`]).
pub fn trade_assisted_multipart(pdf: &[u8]) -> Body {
    let mut data = example("assisted");
    let owners = data["owners"].as_array_mut().expect("owners");
    let mut third = owners[1].clone();
    third["first_name"] = json!("Jan");
    third["last_name"] = json!("Kowalski");
    third["dob"] = json!("1979-11-03");
    third["email"] = json!("jan.kowalski@example.pl");
    owners.push(third);
    uploads_owner0(&mut data);
    let pdf = Bytes::copy_from_slice(pdf);
    Body::each(move |n| {
        let mut data = data.clone();
        vary_trade(&mut data, n);
        Bytes::from(with_upload(&data, &pdf))
    })
}

/// Owner 0 files the signed GewA 1 uploaded as the part `signed0` (and signs nothing here).
fn uploads_owner0(data: &mut Value) {
    data["owners"][0]["documents"] = json!({"gewa_1": {"file": "signed0"}});
    if let Some(sigs) = data["owners"][0]["signatures"].as_object_mut() {
        sigs.remove("gewa_1");
    }
}

/// A multipart body: the payload `data`, then `pdf` as the part `signed0`.
fn with_upload(data: &Value, pdf: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(pdf.len() + 8192);
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"data\"\r\n\
             Content-Type: application/json\r\n\r\n{data}\r\n--{BOUNDARY}\r\n\
             Content-Disposition: form-data; name=\"signed0\"; filename=\"gewa1.pdf\"\r\n\
             Content-Type: application/pdf\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(pdf);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

/// `POST /v1/trade-registration`, package `self`, multipart: the owner's signed GewA 1 uploaded
/// as `pdf` (50 MB in the `trade-upload` scenario, for the server's memory under big uploads).
pub fn trade_self_upload_multipart(pdf: &[u8]) -> Body {
    let mut data = example("self");
    uploads_owner0(&mut data);
    Body::Same(Bytes::from(with_upload(&data, pdf)))
}

/// `POST /v1/tax-registration`: a GmbH with three directors and five shareholders (four people,
/// one company, 20 % each).
pub fn tax_gmbh() -> Body {
    let mut data = example("gmbh");
    let first = data["directors"][0].clone();
    let people = [
        ("Erika", "Mustermann", "1984-08-12"),
        ("Hans", "Becker", "1975-05-20"),
        ("Ayşe", "Yılmaz", "1988-12-01"),
        ("Jürgen", "Groß", "1969-07-15"),
    ];
    let ids = tax_ids(people.len());
    let person = |i: usize| {
        let mut p = first.clone();
        p["first_name"] = json!(people[i].0);
        p["last_name"] = json!(people[i].1);
        p["dob"] = json!(people[i].2);
        p["tax_identification_number"] = json!(ids[i]);
        if let Some(o) = p.as_object_mut() {
            o.remove("middle_name");
        }
        p
    };
    data["directors"] = Value::Array((0..3).map(person).collect());
    let individuals: Vec<Value> = (0..4)
        .map(|i| {
            let p = person(i);
            json!({
                "first_name": p["first_name"], "last_name": p["last_name"], "dob": p["dob"],
                "tax_identification_number": p["tax_identification_number"],
                "address": p["address"], "share_percentage": 20,
            })
        })
        .collect();
    data["shareholders"]["individuals"] = Value::Array(individuals);
    data["shareholders"]["entities"][0]["share_percentage"] = json!(20);
    Body::Same(Bytes::from(data.to_string()))
}

/// `n` distinct valid tax identification numbers (not test numbers).
fn tax_ids(n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut base: u64 = 8_609_574_271;
    while out.len() < n {
        base += 1;
        let ten = format!("{base:010}");
        let digits: Vec<u8> = ten.bytes().map(|b| b - b'0').collect();
        let number = format!("{ten}{}", domain::taxid::check_digit(&digits));
        if domain::taxid::validate(&number, false).is_ok() {
            out.push(number);
        }
    }
    out
}

/// A real PDF of about `size` bytes: one page and an incompressible stream, so that the
/// server's PDF check parses a file of the size a scanned, signed form has.
pub fn pdf_of_size(size: usize) -> Vec<u8> {
    use lopdf::{Document, Object, Stream, dictionary};
    use rand::RngCore;
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let content = Stream::new(
        dictionary! {},
        b"BT /F1 12 Tf 72 720 Td (Gewerbeanmeldung, unterschrieben) Tj ET".to_vec(),
    );
    let content_id = doc.add_object(content);
    let mut filler = vec![0u8; size.saturating_sub(1200)];
    rand::rng().fill_bytes(&mut filler);
    let filler_id = doc.add_object(Stream::new(dictionary! {}, filler));
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page",
        "Parent" => pages_id,
        "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        "Contents" => content_id,
        "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id } },
        "PieceInfo" => dictionary! { "Scan" => dictionary! { "Data" => filler_id } },
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("PDF in memory");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every varied body is a valid request, and no two of them name the same company or owner.
    #[test]
    fn varied_trade_bodies_are_valid_and_distinct() {
        let today = time::OffsetDateTime::now_utc().date();
        let mut names = std::collections::HashSet::new();
        for kind in ["self", "assisted"] {
            for n in (0..2_000).chain([159_999, 3_199_999]) {
                let mut data = example(kind);
                vary_trade(&mut data, n);
                if let Err(v) = domain::trade_request::parse(&data, today) {
                    panic!("{kind} body {n}: {v:?}");
                }
                assert!(names.insert(format!("{kind}/{}", data["name"])), "{n}");
                for owner in data["owners"].as_array().unwrap() {
                    let name = format!("{kind}/{} {}", owner["first_name"], owner["last_name"]);
                    assert!(names.insert(name), "{kind} body {n}");
                }
            }
        }
    }
}
