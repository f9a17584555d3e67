//! The request bodies of the benchmark, built once from the example requests in `examples/`.

use bytes::Bytes;
use domain::rule_cases::example;
use serde_json::{Value, json};

/// `POST /v1/trade-registration`, package `self`, one owner: the example as it is.
pub fn trade_self() -> Bytes {
    Bytes::from(example("self").to_string())
}

/// The boundary of the multipart body (not in the data: JSON and the PDF never contain it).
pub const BOUNDARY: &str = "filing-load-3f1c9a7e5d2b4086";

/// `POST /v1/trade-registration`, package `assisted`, three owners, multipart: the first owner's
/// signed GewA 1 is uploaded (`pdf`), the other two are generated, with three powers of attorney.
pub fn trade_assisted_multipart(pdf: &[u8]) -> Bytes {
    let mut data = example("assisted");
    let owners = data["owners"].as_array_mut().expect("owners");
    let mut third = owners[1].clone();
    third["first_name"] = json!("Jan");
    third["last_name"] = json!("Kowalski");
    third["dob"] = json!("1979-11-03");
    third["email"] = json!("jan.kowalski@example.pl");
    owners.push(third);
    owners[0]["documents"] = json!({"gewa_1": {"file": "signed0"}});
    if let Some(sigs) = owners[0]["signatures"].as_object_mut() {
        sigs.remove("gewa_1");
    }
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
    Bytes::from(body)
}

/// `POST /v1/tax-registration`: a GmbH with three directors and five shareholders (four people,
/// one company, 20 % each).
pub fn tax_gmbh() -> Bytes {
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
    Bytes::from(data.to_string())
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
