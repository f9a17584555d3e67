#!/usr/bin/env python3
"""Derives crates/domain/data/offices/berlin-addresses.tsv from Berlin's address register.

Input: "Adressen Berlin" (Geoportal Berlin, June 2023, with each address's Ortsteil and LOR
Planungsraum), kept in the repository as `crates/domain/data/offices/berlin/adressen-2023-06.csv.gz`
with the header `hnr,hnr_zusatz,str_name,plz,ort_name,PLR_NAME,PLR_ID`. The first two digits of
PLR_ID are the Bezirk. Run from the repository root:

    python3 crates/domain/tools/offices/berlin.py crates/domain/data/offices/berlin/adressen-2023-06.csv.gz

Output lines (tab-separated, UTF-8, sorted; `#` lines are comments):

    O <id> <bezirk> <Ortsteil>          one per Ortsteil (97), id 0..96 by name
    S <plz> <street> <id>               a street whose addresses in this postal code all lie in
                                        one Ortsteil
    S <plz> <street> <id>:<numbers>|... otherwise: per Ortsteil the house numbers the register
                                        has there (`12 12A 14`), Ortsteile separated by `|`
    P <plz> <id>=<count>,...            the postal code's addresses per Ortsteil, most first

Only a house number the register has is placed on a street that crosses a border: a number
between two addresses of one Ortsteil may still lie in an enclave of the other (49 of the 36,258
addresses on such streets, taken out one at a time, would land in the wrong Ortsteil). The tool
also writes the input's sha256 into SOURCES.txt's Berlin line.
"""

import csv
import gzip
import hashlib
import pathlib
import sys
from collections import defaultdict

OUT = pathlib.Path("crates/domain/data/offices/berlin-addresses.tsv")
SOURCES = pathlib.Path("crates/domain/data/offices/SOURCES.txt")


def house_key(hnr: str, zusatz: str):
    return (int(hnr), zusatz)


def fmt(key) -> str:
    return f"{key[0]}{key[1]}"


def main(path: str) -> None:
    raw = pathlib.Path(path).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    rows = list(csv.DictReader(gzip.decompress(raw).decode("utf-8").splitlines()))
    ortsteile = {}
    for r in rows:
        ortsteile.setdefault(r["ort_name"], set()).add(r["PLR_ID"][:2])
    for name, bezirke in ortsteile.items():
        assert len(bezirke) == 1, f"Ortsteil {name} in several Bezirke: {bezirke}"
    names = sorted(ortsteile)
    ids = {name: i for i, name in enumerate(names)}
    pairs = defaultdict(list)
    for r in rows:
        if not r["hnr"].isdigit():
            # 296 places without a house number (squares, bridges): the street's other addresses
            # decide; without any, the place is not in the file.
            pairs[(r["plz"], r["str_name"])]
            continue
        pairs[(r["plz"], r["str_name"])].append(
            (house_key(r["hnr"], r["hnr_zusatz"].strip()), ids[r["ort_name"]])
        )
    lines = [
        "# Berlin addresses -> Ortsteil -> Bezirk. Derived by crates/domain/tools/offices/berlin.py",
        "# from Geoportal Berlin, \"Adressen Berlin\" (June 2023), Datenlizenz Deutschland; see README.md.",
    ]
    for name in names:
        lines.append(f"O\t{ids[name]}\t{next(iter(ortsteile[name]))}\t{name}")
    per_plz = defaultdict(lambda: defaultdict(int))
    for r in rows:
        per_plz[r["plz"]][ids[r["ort_name"]]] += 1
    for plz in sorted(per_plz):
        counts = sorted(per_plz[plz].items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append(f"P\t{plz}\t" + ",".join(f"{ot}={n}" for ot, n in counts))
    skipped = 0
    for (plz, street), addresses in sorted(pairs.items()):
        if not addresses:
            skipped += 1
            continue
        found = {ot for _, ot in addresses}
        if len(found) == 1:
            lines.append(f"S\t{plz}\t{street}\t{found.pop()}")
            continue
        per_ot = defaultdict(list)
        for key, ot in sorted(addresses):
            per_ot[ot].append(fmt(key))
        lines.append(
            f"S\t{plz}\t{street}\t"
            + "|".join(f"{ot}:{' '.join(nums)}" for ot, nums in sorted(per_ot.items()))
        )
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    kept = [l for l in SOURCES.read_text().splitlines() if not l.startswith("Berlin addresses")]
    kept.append(f"Berlin addresses: adressen.csv.gz (Geoportal Berlin, June 2023) sha256 {digest}")
    SOURCES.write_text("\n".join(kept) + "\n")
    print(f"{len(rows)} addresses, {len(names)} Ortsteile, {len(pairs) - skipped} streets by postal code -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
