"""Put the GGUF parts written by ``benchmarks/gguf_split.py`` back together and check the sha256.

    PYTHONPATH=src python benchmarks/gguf_join.py [--dir models/gguf-parts]

Writes ``models/gguf-parts/SmolLM2-135M-Instruct.Q4_1.gguf`` when the joined bytes have the digest of
the ``.sha256`` file, which must be the pinned wheel's (exit 1 otherwise, naming both). ``make gpu-check``
and ``scoring/small_model.py: gguf_path`` then use that file and need neither the wheel nor a registry.
Needs only the standard library (and this package's source on the path).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import ROOT

from medcalc_maintained.scoring import small_model


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", type=Path, default=ROOT / small_model.PARTS_DIR)
    args = ap.parse_args()
    try:
        joined = small_model.join(args.dir)
    except (FileNotFoundError, ValueError) as exc:
        print(f"gguf_join: {exc}", file=sys.stderr)
        return 1
    print(f"{joined}: {joined.stat().st_size} bytes, sha256 {small_model.GGUF_SHA256} (checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
