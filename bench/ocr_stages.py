"""Where RapidOCR's time goes on one image, stage by stage (detection on the scaled image, cutting
the lines, recognition, character boxes), for the recogniser's minimum input widths given.

    python -m bench.ocr_stages IMAGE [--widths 320,48] [--threads 1]

Each width runs in a fresh process (the width is fixed when the engine is built), the image twice
(the first call warms onnxruntime up; the second is printed). Wall and CPU seconds per stage.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import Sequence

from bench.whole_process import ROOT

WORKER = r"""
import sys, time, resource
import numpy as np, cv2
from PIL import Image
from docassay.extractors.parsers import ocr
eng = ocr._get_engine("rapidocr"); s = ocr.OcrSettings.from_env()
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
im = Image.open(sys.argv[1]).convert("RGB")
for rep in range(2):
    arr = np.ascontiguousarray(np.asarray(im)[:, :, ::-1]); h, w = arr.shape[:2]
    ratio = min(1.0, s.det_max_side / max(h, w))
    T = [(time.perf_counter(), cpu())]
    small = cv2.resize(arr, (round(w * ratio), round(h * ratio)), interpolation=cv2.INTER_AREA)
    boxes, _ = eng.auto_text_det(small); T.append((time.perf_counter(), cpu()))
    full = [np.array(b, dtype=np.float32) / ratio for b in boxes]
    crops = eng.get_crop_img_list(arr, full); T.append((time.perf_counter(), cpu()))
    rec, _ = eng.text_rec(crops, True); T.append((time.perf_counter(), cpu()))
    eng.cal_rec_boxes(crops, full, rec); T.append((time.perf_counter(), cpu()))
names = ("detection", "cut", "recognition", "char boxes")
print(f"rec width {s.rec_width}: {len(crops)} lines; "
      + ", ".join(f"{n} {b[0] - a[0]:.2f} s / {b[1] - a[1]:.2f} CPU-s" for n, a, b in zip(names, T, T[1:])))
"""


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("image")
    ap.add_argument("--widths", default="320,48")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    for width in args.widths.split(","):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "DOCASSAY_OCR_REC_WIDTH": width,
               "DOCASSAY_OCR_THREADS": str(args.threads)}
        proc = subprocess.run([sys.executable, "-c", WORKER, args.image], env=env, cwd=ROOT, capture_output=True,
                              text=True, check=False)
        print(proc.stdout.strip() or proc.stderr[-2000:], f"(load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
