//! The values and order of key elements of the corporation's questionnaire (`FsE_KapG/KapG`),
//! read back with quick-xml.

mod el;
mod fixtures;

use domain::tax::TaxRegistration;
use el::{El, kapg};
use elster::validate;
use fixtures::{gmbh, gmbh_99, kapg_xml as xml, ug};

#[test]
fn fse_kapg_order_and_company_values() {
    let doc = El::parse(&xml(&gmbh(), true));
    let k = kapg(&doc);
    k.assert_names(
        "FragebogenTyp Ordnungskriterium AllgAngaben Gesellschafter Gruendung \
         FestsetzungsAngaben LohnberechnungsStelle Umsatzsteuer",
    );
    let a = k.child("AllgAngaben");
    // No `SitzKapGes` and no `BankKonto` (no public content: listed on the case instead).
    a.assert_names(
        "Firmenname Adrkette Komm ArtTaet Vertreter Vertreter Vertreter \
         NotarVertrag Rechtsform BeginnTaetigkeit GewinnErmittlgsAngaben \
         HoeheGrundStammkapital",
    );
    // The company's telephone split at its area code (St12), and its web address.
    let komm = a.child("Komm");
    komm.assert_names("Tel Web");
    komm.child("Tel").assert_children(&[
        ("IntVorw", Some("+49")),
        ("NatVorw", Some("30")),
        ("RufNr", Some("98765400")),
    ]);
    assert_eq!(
        komm.at("Web/Adresse").text(),
        "https://www.mustermann-software.de"
    );
    assert_eq!(a.child("Firmenname").text(), "Mustermann Software GmbH");
    assert_eq!(a.at("Rechtsform/RechtsformId").text(), "350");
    assert_eq!(
        a.at("ArtTaet/GewerbeArt").text(),
        "Entwicklung und Vertrieb von Software sowie IT-Beratung"
    );
    assert_eq!(a.at("BeginnTaetigkeit/Betriebsbeginn").text(), "01.03.2025");
    let seat = a.at("Adrkette/StrAdr");
    seat.assert_names("Str HausNr AdressErg Plz Ort");
    assert_eq!(seat.child("Str").text(), "Musterstraße");
    assert_eq!(seat.child("HausNr").text(), "1");
    assert_eq!(seat.child("AdressErg").text(), "Hinterhaus, 3. OG");
    let hrg = a.at("NotarVertrag/HrgAngaben");
    hrg.assert_children(&[
        ("HrgAntragGestellt", Some("true")),
        ("TagDesAntrags", Some("12.02.2025")),
        ("HrgEintragVorhanden", Some("true")),
        ("TagDerEintragung", Some("20.02.2025")),
        ("HandelsregisterGericht", None),
        ("HrgRegisterbezeichnung", Some("HRB")),
        ("HrgRegisternummer", Some("245789B")),
    ]);
    assert_eq!(a.at("NotarVertrag/DatumGVertrag").text(), "10.02.2025");
    assert_eq!(
        a.at("NotarVertrag/GruendungsNotar/Adrkette/StrAdr/Str")
            .text(),
        "Kurfürstendamm"
    );
    assert_eq!(
        a.at("HoeheGrundStammkapital/Grundstammkapital").text(),
        "25000"
    );
    assert_eq!(
        a.at("HoeheGrundStammkapital/Eingezahlteskapital").text(),
        "12500"
    );
    assert_eq!(
        a.at("GewinnErmittlgsAngaben/MerkerAbwWirtschaftsjahr")
            .text(),
        "false"
    );
    assert!(!a.child("GewinnErmittlgsAngaben").has("AbwWJ_ab"));

    let lohn = k.child("LohnberechnungsStelle");
    assert_eq!(lohn.child("AnzahlBeschaeftigteArbeitnehmer").text(), "3");
    assert_eq!(lohn.child("AnzahlGeringfuegigBeschaeftigte").text(), "1");
    assert_eq!(lohn.child("BeginnLohnzahlungen").text(), "01.04.2025");
    assert_eq!(lohn.child("VoraussichtlicheLohnsteuer").text(), "18000");

    let ust = k.child("Umsatzsteuer");
    // Above 25,000 euros founding-year revenue the small-business rule is waived formally.
    ust.assert_names(
        "GesUmsatz KleinunternehmerRegelung ZahllastUeberschuss SollIstVersteuerung UStIdNr",
    );
    ust.at("KleinunternehmerRegelung")
        .assert_names("KleinUnternUStVerzicht");
    assert_eq!(ust.at("ZahllastUeberschuss/Auswahl").text(), "2");
    assert_eq!(ust.at("ZahllastUeberschuss/Betrag").text(), "12000");
    assert_eq!(
        ust.at("ZahllastUeberschuss/VoranmeldungMonatlich").text(),
        "true"
    );
    ust.at("SollIstVersteuerung")
        .assert_names("AuswahlSollIstVerst");
    assert_eq!(
        ust.at("SollIstVersteuerung/AuswahlSollIstVerst").text(),
        "1"
    );
    assert_eq!(ust.at("UStIdNr/MerkerAntragUStId").text(), "true");
    assert_eq!(ust.at("GesUmsatz/GruendJahr").text(), "120000");
}

/// The most directors a request may name (9) are all filed, and the XSD takes them.
#[test]
fn nine_directors_are_nine_vertreter() {
    let mut reg = gmbh();
    let first = reg.directors[0].clone();
    reg.directors = (0..9)
        .map(|i| {
            let mut d = first.clone();
            d.last_name = format!(
                "Mustermann{}",
                ["", "a", "b", "c", "d", "e", "f", "g", "h"][i]
            );
            d
        })
        .collect();
    let bytes = xml(&reg, true);
    validate(&bytes).unwrap();
    let doc = El::parse(&bytes);
    let v = kapg(&doc).child("AllgAngaben").all("Vertreter");
    assert_eq!(v.len(), 9);
    assert_eq!(v[8].child("Name").text(), "Mustermannh");
}

#[test]
fn directors_are_vertreter_with_middle_names_and_without_contact_details() {
    let bytes = xml(&gmbh(), true);
    let doc = El::parse(&bytes);
    let a = kapg(&doc).child("AllgAngaben");
    let v = a.all("Vertreter");
    assert_eq!(v.len(), 3);
    assert_eq!(v[0].child("Vorname").text(), "Erika Maria");
    assert_eq!(v[0].child("Name").text(), "Mustermann");
    assert_eq!(v[0].child("GebDat").text(), "12.08.1984");
    assert_eq!(v[0].child("PersIdNr").text(), "86095742719");
    assert_eq!(v[1].child("Vorname").text(), "Jonas");
    assert!(!v[1].has("PersIdNr"));
    assert_eq!(v[1].child("GebDat").text(), "05.01.1979");
    let markt = v[1].at("Adrkette/StrAdr");
    assert_eq!(markt.child("Str").text(), "Am Markt");
    assert_eq!(markt.child("HausNr").text(), "12");
    assert_eq!(markt.child("HausNrZu").text(), "-14");
    assert_eq!(markt.child("Plz").text(), "04109");
    // Abroad: no public form, so no Adrkette (the case lists the address).
    assert!(!v[2].has("Adrkette"));
    for vertreter in &v[..2] {
        assert_eq!(
            vertreter.names(),
            if vertreter.has("PersIdNr") {
                vec!["Vorname", "Name", "GebDat", "PersIdNr", "Adrkette"]
            } else {
                vec!["Vorname", "Name", "GebDat", "Adrkette"]
            }
        );
    }
    assert!(v.iter().all(|v| !v.has("Komm")));
    let text = String::from_utf8(bytes).unwrap();
    for contact in ["erika@mustermann-software.de", "jonas@", "1234567", "@"] {
        assert!(!text.contains(contact), "{contact} in the filing");
    }
}

#[test]
fn shareholders_with_percentages_and_nominal_amounts() {
    let doc = El::parse(&xml(&gmbh(), true));
    let g = kapg(&doc).child("Gesellschafter");
    g.assert_names("Anteilseigner Anteilseigner Anteilseigner Treuhandverhaeltnisse");
    assert_eq!(g.at("Treuhandverhaeltnisse/Treuhand").text(), "false");
    let a = g.all("Anteilseigner");
    assert_eq!(a.len(), 3);
    let numbers: Vec<_> = a.iter().map(|e| e.child("ZeichnerNummer").text()).collect();
    assert_eq!(numbers, ["1", "2", "3"]);
    assert_eq!(a[0].names(), ["ZeichnerNummer", "NatPers", "Beteiligung"]);
    assert_eq!(a[2].names(), ["ZeichnerNummer", "NNatPers", "Beteiligung"]);
    let pct: Vec<_> = a
        .iter()
        .map(|e| e.at("Beteiligung/ProzentAnteil").text())
        .collect();
    // The percentage each nominal amount is of the capital (8,333 of 25,000 euros are
    // 33.3320 %), not the 33.3333 % sent: the two always agree.
    assert_eq!(pct, ["33.3320", "33.3320", "33.3360"]);
    // Running numbers as sent, free text as the list of shareholders states them.
    let mut reg = gmbh();
    reg.shareholders.individuals[0].share_numbers = Some("1-3".into());
    reg.shareholders.entities[0].share_numbers = Some("5, 7".into());
    let bytes = xml(&reg, true);
    validate(&bytes).unwrap();
    let doc = El::parse(&bytes);
    let a = kapg(&doc).child("Gesellschafter").all("Anteilseigner");
    assert_eq!(a[0].child("ZeichnerNummer").text(), "1-3");
    assert_eq!(a[2].child("ZeichnerNummer").text(), "5, 7");
}

/// The questionnaire asks for the shares' running numbers in the list of shareholders; a
/// holder's position is not that number, so a holder sent without them has no
/// `ZeichnerNummer` and the case lists the line for the operator.
#[test]
fn share_numbers_are_written_only_as_sent() {
    let mut reg = gmbh();
    reg.shareholders.individuals[1].share_numbers = None;
    reg.shareholders.entities[0].share_numbers = None;
    let bytes = xml(&reg, true);
    validate(&bytes).unwrap();
    let doc = El::parse(&bytes);
    let a = kapg(&doc).child("Gesellschafter").all("Anteilseigner");
    assert_eq!(a[0].child("ZeichnerNummer").text(), "1");
    assert_eq!(a[1].names(), ["NatPers", "Beteiligung"]);
    assert_eq!(a[2].names(), ["NNatPers", "Beteiligung"]);
    let listed: Vec<_> = elster::not_in_xml(&reg)
        .into_iter()
        .filter(|e| e.field.ends_with("share_numbers"))
        .collect();
    let fields: Vec<_> = listed.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "shareholders.individuals[1].share_numbers",
            "shareholders.entities[0].share_numbers"
        ]
    );
    assert!(
        listed
            .iter()
            .all(|e| e.reason == elster::ManualReason::NotGiven
                && e.sub_page == "10 Anteilseigner"
                && e.value.is_none())
    );
    let nominal: Vec<_> = a
        .iter()
        .map(|e| e.at("Beteiligung/Nominal").text())
        .collect();
    // Whole euros by largest remainder, summing to the capital (8333.33 + 8333.33 + 8333.35
    // was 25,000.01).
    assert_eq!(nominal, ["8333.00", "8333.00", "8334.00"]);
    assert_eq!(a[0].at("NatPers/Vorname").text(), "Erika");
    assert_eq!(a[0].at("NatPers/GebDat").text(), "12.08.1984");
    // Paris: no public form for an address abroad.
    assert!(!a[1].child("NatPers").has("Adrkette"));
    let entity = a[2].child("NNatPers");
    assert_eq!(
        entity.child("Firmenname").text(),
        "Beteiligungs-UG (haftungsbeschränkt)"
    );
    let hafen = entity.at("Adrkette/StrAdr");
    assert_eq!(hafen.child("Str").text(), "Hafenstraße");
    assert_eq!(hafen.child("HausNr").text(), "5");
    assert_eq!(hafen.child("HausNrZu").text(), "a");
}

#[test]
fn ug_small_business_application_filed_no_payroll() {
    let doc = El::parse(&xml(&ug(), false));
    let k = kapg(&doc);
    assert!(!k.has("LohnberechnungsStelle"));
    let a = k.child("AllgAngaben");
    assert!(!a.has("BankKonto"));
    assert!(!a.child("NotarVertrag").has("GruendungsNotar"));
    assert_eq!(a.at("Rechtsform/RechtsformId").text(), "370");
    let hrg = a.at("NotarVertrag/HrgAngaben");
    hrg.assert_names("HrgAntragGestellt TagDesAntrags HrgEintragVorhanden");
    assert_eq!(hrg.child("HrgAntragGestellt").text(), "true");
    assert_eq!(hrg.child("TagDesAntrags").text(), "05.05.2025");
    assert_eq!(hrg.child("HrgEintragVorhanden").text(), "false");
    let gj = a.child("GewinnErmittlgsAngaben");
    assert_eq!(gj.child("MerkerAbwWirtschaftsjahr").text(), "true");
    assert_eq!(gj.child("AbwWJ_ab").text(), "01.07.2025");
    // A founding-year loss has no public form (the reference's amounts carry no sign): only
    // the following year's profit is written, the loss is listed on the case.
    k.at("FestsetzungsAngaben/Gewinn").assert_names("FolgeJahr");
    assert_eq!(k.at("FestsetzungsAngaben/Gewinn/FolgeJahr").text(), "8000");
    let ust = k.child("Umsatzsteuer");
    // Under § 19 UStG: the flag, and ZahllastUeberschuss still written as payable 0; no VAT
    // id requested, so no UStIdNr.
    // No `Onlinehandel`: its children are not public (listed on the case).
    ust.assert_names(
        "GesUmsatz KleinunternehmerRegelung ZahllastUeberschuss SteuerschuldnerschaftLE",
    );
    ust.at("KleinunternehmerRegelung")
        .assert_names("KleinUnternUSt");
    assert_eq!(
        ust.at("KleinunternehmerRegelung/KleinUnternUSt").text(),
        "true"
    );
    let zu = ust.child("ZahllastUeberschuss");
    zu.assert_names("Auswahl Betrag");
    assert_eq!(zu.child("Auswahl").text(), "1");
    assert_eq!(zu.child("Betrag").text(), "0");
    let le = ust.child("SteuerschuldnerschaftLE");
    le.assert_names("NachweisBeantragt UmfangGebaeudereinigung");
    assert_eq!(le.child("NachweisBeantragt").text(), "true");
    assert_eq!(le.child("UmfangGebaeudereinigung").text(), "true");
    let share = k.at("Gesellschafter/Anteilseigner/Beteiligung");
    assert_eq!(share.child("ProzentAnteil").text(), "100.0000");
    assert_eq!(share.child("Nominal").text(), "1000.00");
}

/// `reg` with `vat.regime: standard` and the fields that then belong to it (a payable balance
/// of 500 euros, quarterly returns), written and XSD-validated.
fn standard_regime(reg: &mut TaxRegistration, method: domain::tax::AccountingMethod) -> El {
    reg.vat.regime = Some(domain::tax::VatRegime::Standard);
    reg.vat.small_business = false;
    reg.vat.accounting_method = Some(method);
    reg.vat.estimated_balance_type = Some(domain::tax::BalanceType::Payable);
    reg.vat.estimated_balance_amount = Some(500);
    reg.vat.return_frequency = Some(domain::tax::ReturnFrequency::Quarterly);
    let bytes = xml(reg, false);
    validate(&bytes).unwrap();
    El::parse(&bytes)
}

/// Where the election is not open (founding-year revenue above 25,000, or the following year's
/// above 100,000) the regular regime applies, and the filing carries the waiver flag all the
/// same: exactly one of the two flags is always present, as the reference builder adds
/// `KleinUnternUStVerzicht` above 25,000 euros (K:620-640).
#[test]
fn above_the_thresholds_the_waiver_flag_is_written() {
    for (founding, following) in [(25_001, 50_000), (120_000, 300_000), (20_000, 100_001)] {
        let mut reg = ug();
        reg.financial_estimates.formation_year.revenue_amount = founding;
        reg.financial_estimates.formation_year.profit_amount = 0;
        reg.financial_estimates.following_year.revenue_amount = following;
        reg.financial_estimates.following_year.profit_amount = 0;
        let doc = standard_regime(&mut reg, domain::tax::AccountingMethod::Accrual);
        let ust = kapg(&doc).child("Umsatzsteuer");
        assert_eq!(
            ust.at("KleinunternehmerRegelung").names(),
            ["KleinUnternUStVerzicht"],
            "{founding}/{following}"
        );
        assert_eq!(ust.at("ZahllastUeberschuss/Auswahl").text(), "1");
    }
}

#[test]
fn standard_regime_chosen_is_a_waiver() {
    let doc = standard_regime(&mut ug(), domain::tax::AccountingMethod::Cash);
    let ust = kapg(&doc).child("Umsatzsteuer");
    assert_eq!(
        ust.at("KleinunternehmerRegelung/KleinUnternUStVerzicht")
            .text(),
        "true"
    );
    assert_eq!(ust.at("ZahllastUeberschuss/Auswahl").text(), "1");
    // Quarterly: no VoranmeldungMonatlich (the reference's "ablehnen" writes nothing).
    ust.at("ZahllastUeberschuss").assert_names("Auswahl Betrag");
    // Cash accounting with its reason, the turnover limit.
    let si = ust.child("SollIstVersteuerung");
    si.assert_names("AuswahlSollIstVerst IstVerstUStGrundUmsatz");
    assert_eq!(si.child("AuswahlSollIstVerst").text(), "2");
    assert_eq!(si.child("IstVerstUStGrundUmsatz").text(), "true");
}

#[test]
fn reverse_charge_scopes() {
    use domain::tax::ReverseChargeServiceType as T;
    for (kind, scopes) in [
        (
            T::Construction,
            vec!["NachweisBeantragt", "UmfangBauleistungen"],
        ),
        (
            T::BuildingCleaning,
            vec!["NachweisBeantragt", "UmfangGebaeudereinigung"],
        ),
        (
            T::Both,
            vec![
                "NachweisBeantragt",
                "UmfangBauleistungen",
                "UmfangGebaeudereinigung",
            ],
        ),
    ] {
        let mut reg = gmbh();
        reg.vat.request_reverse_charge_certificate = true;
        reg.vat.reverse_charge_service_type = Some(kind);
        let bytes = xml(&reg, false);
        validate(&bytes).unwrap();
        let doc = El::parse(&bytes);
        let le = kapg(&doc).at("Umsatzsteuer/SteuerschuldnerschaftLE");
        assert_eq!(le.names(), scopes, "{kind:?}");
        assert!(le.children.iter().all(|c| c.text() == "true"));
    }
}

/// An in-kind formation or a conversion has no public code: no `Gruendung` (listed on the
/// case); a cash formation's is `1`.
#[test]
fn not_applied_register_and_other_formations() {
    use domain::tax::{CommercialRegister, ConversionType, FormationType};
    for formation in [FormationType::InKind, FormationType::Conversion] {
        let mut reg = gmbh();
        reg.commercial_register = CommercialRegister::NotApplied;
        reg.formation_type = formation;
        if formation == FormationType::Conversion {
            reg.conversion_type = Some(ConversionType::FormChange);
        }
        let bytes = xml(&reg, true);
        validate(&bytes).unwrap();
        let doc = El::parse(&bytes);
        let k = kapg(&doc);
        assert!(!k.has("Gruendung"));
        let hrg = k.at("AllgAngaben/NotarVertrag/HrgAngaben");
        hrg.assert_names("HrgAntragGestellt HrgEintragVorhanden");
        assert_eq!(hrg.child("HrgAntragGestellt").text(), "false");
        assert_eq!(hrg.child("HrgEintragVorhanden").text(), "false");
    }
}

#[test]
fn ninety_nine_shareholders() {
    let bytes = xml(&gmbh_99(), true);
    validate(&bytes).unwrap();
    let doc = El::parse(&bytes);
    let a = kapg(&doc).child("Gesellschafter").all("Anteilseigner");
    assert_eq!(a.len(), 99);
    assert_eq!(a[98].child("ZeichnerNummer").text(), "99");
    // Each nominal amount's share of the capital: 253 of 25,000 euros are 1.0120 %, 252 are
    // 1.0080 %.
    assert_eq!(a[98].at("Beteiligung/ProzentAnteil").text(), "1.0120");
    assert_eq!(a[51].at("Beteiligung/ProzentAnteil").text(), "1.0080");
    // 252.525 euros each, 252.55 for the last: 99 × 252 leaves 52 euros, one each to the 52
    // largest fractions (the last share's .55 first, then the earliest 51 of the .525s).
    let nominal: Vec<i64> = a
        .iter()
        .map(|e| {
            let n = e.at("Beteiligung/Nominal").text();
            n.strip_suffix(".00").unwrap().parse().unwrap()
        })
        .collect();
    assert_eq!(nominal.iter().sum::<i64>(), 25_000);
    assert_eq!(nominal[98], 253);
    assert_eq!(nominal[..51], [253; 51]);
    assert_eq!(nominal[51..98], [252; 47]);
    assert_eq!(a[98].at("NatPers/Adrkette/StrAdr/HausNr").text(), "99");

    // A hundredth shareholder exceeds the schema's limit.
    let text = String::from_utf8(bytes).unwrap();
    let first = &text[text.find("<Anteilseigner>").unwrap()..];
    let first = &first[..first.find("</Anteilseigner>").unwrap() + "</Anteilseigner>".len()];
    let extra = text.replacen(first, &format!("{first}{first}"), 1);
    assert!(validate(extra.as_bytes()).is_err());
}

/// The § 48b exemption certificate is requested last in the questionnaire (St225:57), and only
/// when asked for.
#[test]
fn construction_exemption_certificate() {
    let mut reg = gmbh();
    let doc = El::parse(&xml(&reg, true));
    assert!(!kapg(&doc).has("Freistellungsbescheinigung"));
    reg.request_construction_exemption_certificate = true;
    let bytes = xml(&reg, true);
    validate(&bytes).unwrap();
    let doc = El::parse(&bytes);
    let k = kapg(&doc);
    assert_eq!(k.names().last(), Some(&"Freistellungsbescheinigung"));
    assert_eq!(
        k.at("Freistellungsbescheinigung/AntragFreistBauabzugsSt")
            .text(),
        "true"
    );
}

/// Two losses leave no profit to write, so no `FestsetzungsAngaben`; a foreign or unsplit
/// number no `Tel`; the web address alone still makes a `Komm`.
#[test]
fn what_has_no_public_form_is_left_out() {
    let mut reg = gmbh();
    reg.financial_estimates.formation_year.profit_amount = -20_000;
    reg.financial_estimates.following_year.profit_amount = -1;
    reg.phone = Some("+33 1 42 60 00 00".into());
    let bytes = xml(&reg, true);
    validate(&bytes).unwrap();
    let doc = El::parse(&bytes);
    let k = kapg(&doc);
    assert!(!k.has("FestsetzungsAngaben"));
    k.at("AllgAngaben/Komm").assert_names("Web");
    reg.website = None;
    let doc = El::parse(&xml(&reg, true));
    assert!(!kapg(&doc).child("AllgAngaben").has("Komm"));
    // Listed for the operator instead, with the portal's sub-page and line.
    let listed = elster::not_in_xml(&reg);
    let find = |field: &str| listed.iter().find(|e| e.field == field).cloned();
    let loss = find("financial_estimates.formation_year.profit_amount").unwrap();
    assert_eq!(loss.value.as_deref(), Some("-20.000 €"));
    assert_eq!(loss.sub_page, "15 Vorauszahlungen");
    assert_eq!(loss.line.as_deref(), Some("165"));
    assert_eq!(loss.reason, elster::ManualReason::NoPublicFormat);
    assert_eq!(
        find("phone").unwrap().value.as_deref(),
        Some("+33 1 42 60 00 00")
    );
    assert_eq!(
        find("directors[2].address").unwrap().value.as_deref(),
        Some("Kärntner Straße 3, 1010 Wien, Österreich")
    );
    assert_eq!(
        find("iban").unwrap().value.as_deref(),
        Some("IBAN DE89370400440532013000, BIC COBADEFFXXX")
    );
    assert_eq!(find("address.city").unwrap().line.as_deref(), Some("3"));
    assert!(find("attachments.articles_of_association").is_some());
    // The register application date is known here.
    assert!(find("commercial_register.registration_application_date").is_none());
}

/// The attachments go beside the questionnaire in `Anhaenge` (K:432, 684-701), with the first
/// director's e-mail for the answer, and pass both validators.
#[test]
fn attachments_beside_the_questionnaire() {
    let reg = gmbh();
    let pdf = b"%PDF-1.7\nnot really a PDF, but bytes".to_vec();
    let attachments = [
        elster::Attachment {
            name: "Gesellschaftsvertrag".into(),
            content_type: "application/pdf".into(),
            bytes: pdf.clone(),
        },
        elster::Attachment {
            name: "Gesellschafterliste".into(),
            content_type: "application/pdf".into(),
            bytes: b"%PDF-1.4 list".to_vec(),
        },
    ];
    let bytes = elster::write_validated_with(&reg, &fixtures::ctx(true), &attachments).unwrap();
    el::xmllint(&bytes, "elster-v11-fse-kapg.xsd").unwrap();
    let doc = El::parse(&bytes);
    let nutzdaten = doc.at("DatenTeil/Nutzdatenblock/Nutzdaten");
    nutzdaten.assert_names("FsE_KapG Anhaenge");
    let anhaenge = nutzdaten.child("Anhaenge");
    assert_eq!(anhaenge.attr("xmlns"), Some(elster::ANHAENGE_NS));
    assert_eq!(anhaenge.attr("version"), Some("3"));
    anhaenge.assert_names("Rueckmeldung Anhang Anhang");
    assert_eq!(
        anhaenge.at("Rueckmeldung/EmailRueckmeldung").text(),
        "erika@mustermann-software.de"
    );
    let first = &anhaenge.all("Anhang")[0];
    first.assert_children(&[
        ("Dateibezeichnung", Some("Gesellschaftsvertrag")),
        ("Dateityp", Some("application/pdf")),
        ("Dateiinhalt", None),
    ]);
    use base64::Engine;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(first.child("Dateiinhalt").text())
        .unwrap();
    assert_eq!(decoded, pdf);
    // Without attachments there is no block.
    let doc = El::parse(&xml(&reg, true));
    doc.at("DatenTeil/Nutzdatenblock/Nutzdaten")
        .assert_names("FsE_KapG");
    // A wrong type is refused by the attachments' schema.
    let text = String::from_utf8(bytes).unwrap();
    let broken = el::replace_once(
        &text.replacen("application/pdf", "image/png", 1),
        "<Dateibezeichnung>Gesellschaftsvertrag",
        "<Dateibezeichnung>Gesellschaftsvertrag",
    );
    assert!(validate(broken.as_bytes()).is_err());
}
