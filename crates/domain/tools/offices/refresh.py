#!/usr/bin/env python3
"""Regenerate the compact office data of `domain::offices` from the raw sources.

Usage:
    refresh.py --gv100 GV100AD_DDMMYY.txt --plz plz-municipality.csv \
               --offices finanzaemter.json --out crates/domain/data/offices

Inputs (see docs/offices.md for where to get newer editions):
  --gv100    Destatis Gemeindeverzeichnis GV100AD, fixed width, UTF-8.
  --plz      suche-postleitzahl.org "zuordnung_plz_ort" CSV (OpenStreetMap, ODbL):
             columns osm_id, ags, ort, plz, landkreis, bundesland.
  --offices  BZSt GemFA export as JSON (list of {buFaNr, name, hausanschrift, tel, fax, mail, url}),
             e.g. kontist/finanzamt's finanzaemter.json.

Outputs (tab separated, UTF-8, sorted, one header line starting with '#'):
  municipalities.tsv  ags, verband key (9 digits, empty when verbandsfrei), Textkennzeichen,
                      tax office number (empty when none), register name
  verbaende.tsv       verband key, Textkennzeichen, name, seat of the administration
  postcodes.tsv       postal code, ags, OSM place name (empty when it equals the register name
                      before its comma)
  tax_offices.tsv     number, name, street, house number, postal code, city, phone, fax, mail, url
  SOURCES.txt         editions and checksums of the inputs

Only the standard library is used. The script is deterministic: same inputs, same bytes.
"""
import argparse
import csv
import hashlib
import json
import os
import sys

# Satzart 50 Textkennzeichen that are real Gemeindeverbände (50 = verbandsfreie Gemeinde, a
# pseudo record repeating the municipality).
REAL_VERBAND_CODES = {"51", "52", "53", "54", "55", "56", "57", "58"}


def clean(value):
    return " ".join((value or "").replace("\t", " ").split())


def read_gv100(path):
    municipalities, verbaende = [], []
    stand = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\r\n")
            kind = line[:2]
            if kind == "10" and stand is None:
                stand = line[2:10]
            if kind == "50":
                code = line[122:124]
                if code in REAL_VERBAND_CODES:
                    key = line[10:15] + line[18:22]
                    verbaende.append((key, code, clean(line[22:72]), clean(line[72:122])))
            elif kind == "60":
                ags = line[10:18]
                verband = line[10:15] + line[18:22]
                fa = line[177:181].strip()
                municipalities.append([ags, verband, line[122:124], fa, clean(line[22:72])])
    real = {v[0] for v in verbaende}
    for m in municipalities:
        if m[1] not in real:
            m[1] = ""
    if len(municipalities) < 10000 or not verbaende:
        sys.exit(f"{path}: only {len(municipalities)} municipalities, is this a GV100AD file?")
    return sorted(municipalities), sorted(verbaende), stand


def read_plz(path):
    rows = set()
    with open(path, encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            plz, ags = r["plz"].strip(), r["ags"].strip()
            if len(plz) != 5 or not plz.isdigit() or len(ags) != 8 or not ags.isdigit():
                print(f"skipping {r}", file=sys.stderr)
                continue
            rows.add((plz, ags, clean(r["ort"])))
    return sorted(rows)


def read_offices(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    out = []
    for o in data:
        a = o.get("hausanschrift") or {}
        number = str(o["buFaNr"]).strip()
        if len(number) != 4 or not number.isdigit():
            print(f"skipping office {o}", file=sys.stderr)
            continue
        out.append(tuple(clean(x) for x in (
            number, o.get("name"), a.get("strasse"), a.get("hausNr"), a.get("plz"), a.get("ort"),
            o.get("tel"), o.get("fax"), o.get("mail"), o.get("url"))))
    return sorted(out)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write(out_dir, name, header, rows):
    with open(os.path.join(out_dir, name), "w", encoding="utf-8", newline="\n") as f:
        f.write("#" + "\t".join(header) + "\n")
        for r in rows:
            f.write("\t".join(r) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gv100", required=True)
    p.add_argument("--plz", required=True)
    p.add_argument("--offices", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    municipalities, verbaende, stand = read_gv100(a.gv100)
    register_names = {m[0]: m[4].split(",")[0].strip() for m in municipalities}
    # The OSM place name is kept only where it differs from the register name (before its comma).
    postcodes = [(plz, ags, "" if register_names.get(ags) == ort else ort)
                 for plz, ags, ort in read_plz(a.plz)]
    offices = read_offices(a.offices)
    write(a.out, "municipalities.tsv", ["ags", "verband", "textkennzeichen", "finanzamt", "name"], municipalities)
    write(a.out, "verbaende.tsv", ["key", "textkennzeichen", "name", "sitz"], verbaende)
    write(a.out, "postcodes.tsv", ["plz", "ags", "ort"], postcodes)
    write(a.out, "tax_offices.tsv",
          ["number", "name", "street", "house", "plz", "city", "phone", "fax", "mail", "url"], offices)
    with open(os.path.join(a.out, "SOURCES.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write(f"GV100AD territorial status {stand}: {os.path.basename(a.gv100)} sha256 {sha256(a.gv100)}\n")
        f.write(f"postal codes: {os.path.basename(a.plz)} sha256 {sha256(a.plz)}\n")
        f.write(f"tax offices: {os.path.basename(a.offices)} sha256 {sha256(a.offices)}\n")
    print(f"{len(municipalities)} municipalities, {len(verbaende)} Verbände, "
          f"{len(postcodes)} postal code rows, {len(offices)} tax offices -> {a.out}")


if __name__ == "__main__":
    main()
