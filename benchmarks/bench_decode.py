"""Benchmark: JPEG/PNG decoders and resizers, side by side, for the photo path (issue 29).

Every candidate decodes the same generated photo-like JPEGs (the tf_flowers-like ones of
bench_pipeline.py, 200-500 px sides, quality 90) in one process, taking turns, and the table
gives the median CPU time per image (ms; `time.process_time`) and the speed-up over the
group's reference (Pillow; for crops, a full decode then slice; for the scales, 8/8):

- full-size decode to RGB: Pillow, simplejpeg, PyTurboJPEG, imagecodecs, OpenCV (imdecode);
- decode + resize to 192x192 (the flowers row): Pillow full decode + its antialiased
  bilinear resize (catalog before issue 29), Pillow draft (1/2, 1/4, 1/8) + resize, OpenCV's
  reduced imdecode (1/2, 1/4, 1/8) + resize, simplejpeg / PyTurboJPEG at the smallest M/8
  scale that covers 192 + cv2.resize (INTER_LINEAR), and `catalog.transforms.resize`;
- a random-resized-crop window (torchvision's parameters) to 224: decode everything then
  slice, simplejpeg at the smallest covering scale then slice, PyTurboJPEG's lossless crop
  (MCU-aligned) then decode, and `catalog.transforms.random_resized_crop`;
- PNG decode (a 500x375 RGB photo and a 28x28 grayscale image): Pillow, OpenCV, imagecodecs;
- simplejpeg's decode at each scale M/8: why `catalog.features.image_decode.SCALES` skips
  5/8, 6/8 and 7/8 (libjpeg-turbo has SIMD inverse DCTs for 8/8, 4/8 and 2/8 only).

PyTurboJPEG needs the system's libturbojpeg (``apt-get install libturbojpeg0``; macOS:
``brew install jpeg-turbo``); without it, or without any other candidate, its lines say
"skipped".

    python benchmarks/bench_decode.py [--images 100] [--repeat 5]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_pipeline import flower_jpeg

import catalog.transforms as T
from catalog.features import image_decode
from catalog.transforms.image import resample

OUT = (192, 192)
CROP = 224


def candidates() -> tuple[dict[str, Any], dict[str, str]]:
    """The importable libraries, and why each missing one is missing."""
    found: dict[str, Any] = {}
    missing: dict[str, str] = {}
    for name in ("simplejpeg", "cv2", "imagecodecs"):
        try:
            found[name] = __import__(name)
        except ImportError as error:
            missing[name] = f"not installed ({error})"
    try:
        from turbojpeg import TurboJPEG

        found["turbojpeg"] = TurboJPEG()
    except Exception as error:  # ImportError, or RuntimeError: no libturbojpeg on the system
        missing["turbojpeg"] = f"{type(error).__name__}: {str(error).splitlines()[0]}"
    return found, missing


def time_each(fn: Callable[[Any], Any], items: Sequence[Any]) -> float:
    """CPU milliseconds per item (every candidate runs in this thread: on a shared machine,
    CPU time is what each costs, whatever share of the cores the scheduler gives)."""
    start = time.process_time()
    for item in items:
        fn(item)
    return (time.process_time() - start) / len(items) * 1000


def covering_min(height: int, width: int, want: tuple[int, int]) -> tuple[int, int]:
    """min_height/min_width for simplejpeg: the image's size at the smallest M/8 scale at
    which it still covers `want`."""
    for m in range(1, 9):
        h, w = -(-height * m // 8), -(-width * m // 8)
        if h >= want[0] and w >= want[1]:
            return h, w
    return height, width


def crop_windows(jpegs: Sequence[bytes]) -> list[tuple[bytes, tuple[int, int, int, int]]]:
    import simplejpeg

    rng = np.random.default_rng(0)
    out = []
    for data in jpegs:
        h, w, _, _ = simplejpeg.decode_jpeg_header(data)
        out.append((data, T.random_resized_crop_window((h, w), rng)))
    return out


def contenders(
    found: dict[str, Any], missing: dict[str, str]
) -> dict[str, tuple[str, Callable[[Any], Any] | str]]:
    """name -> (group, function of one input, or the reason it is skipped)."""
    from PIL import Image

    sj, cv2, ic, tj = (found.get(k) for k in ("simplejpeg", "cv2", "imagecodecs", "turbojpeg"))

    def skip(lib: str) -> str:
        return f"skipped: {lib} {missing.get(lib, '')}"

    def pil_full(d: bytes) -> Any:
        with Image.open(io.BytesIO(d)) as img:
            return np.asarray(img.convert("RGB"))

    def pil_resize(d: bytes) -> Any:
        with Image.open(io.BytesIO(d)) as img:
            return np.asarray(img.convert("RGB").resize(OUT[::-1], Image.Resampling.BILINEAR))

    def pil_draft(d: bytes) -> Any:
        with Image.open(io.BytesIO(d)) as img:
            img.draft("RGB", OUT[::-1])
            return np.asarray(img.convert("RGB").resize(OUT[::-1], Image.Resampling.BILINEAR))

    def sj_scaled(d: bytes) -> Any:
        h, w, _, _ = sj.decode_jpeg_header(d)
        mh, mw = covering_min(h, w, OUT)
        return cv2.resize(sj.decode_jpeg(d, min_height=mh, min_width=mw), OUT[::-1])

    def cv_reduced(d: bytes) -> Any:
        h, w, _, _ = sj.decode_jpeg_header(d)
        flag = cv2.IMREAD_COLOR
        for f, reduced in ((8, cv2.IMREAD_REDUCED_COLOR_8), (4, cv2.IMREAD_REDUCED_COLOR_4)):
            if h // f >= OUT[0] and w // f >= OUT[1]:
                flag = reduced
                break
        else:
            if h // 2 >= OUT[0] and w // 2 >= OUT[1]:
                flag = cv2.IMREAD_REDUCED_COLOR_2
        bgr = cv2.imdecode(np.frombuffer(d, np.uint8), flag)
        return cv2.cvtColor(cv2.resize(bgr, OUT[::-1]), cv2.COLOR_BGR2RGB)

    def tj_scaled(d: bytes) -> Any:
        w, h, _, _ = tj.decode_header(d)
        factor = (8, 8)
        for m in range(1, 9):
            if -(-h * m // 8) >= OUT[0] and -(-w * m // 8) >= OUT[1]:
                factor = (m, 8)
                break
        rgb = tj.decode(d, pixel_format=0, scaling_factor=factor)  # TJPF_RGB
        return cv2.resize(rgb, OUT[::-1])

    def crop_full(item: Any) -> Any:
        d, (top, left, h, w) = item
        return cv2.resize(sj.decode_jpeg(d)[top : top + h, left : left + w], (CROP, CROP))

    def crop_scaled(item: Any) -> Any:
        d, window = item
        pixels = image_decode.decode(d, window=window, at_least=(CROP, CROP))
        return resample(pixels, (CROP, CROP))

    crop_rng = np.random.default_rng(0)

    def crop_transform(item: Any) -> Any:
        return T.random_resized_crop(item[0], CROP, crop_rng)

    def at_scale(m: int) -> Callable[[bytes], Any]:
        def run(d: bytes) -> Any:
            h, w, _, _ = sj.decode_jpeg_header(d)
            return sj.decode_jpeg(d, min_height=-(-h * m // 8), min_width=-(-w * m // 8))

        return run

    def crop_tj(item: Any) -> Any:
        d, (top, left, h, w) = item
        # lossless crop snaps the window's corner down to the MCU grid (16 px for 4:2:0)
        x, y = left - left % 16, top - top % 16
        cropped = tj.crop(d, x, y, w + left - x, h + top - y)
        rgb = tj.decode(cropped, pixel_format=0)
        return cv2.resize(rgb[top - y : top - y + h, left - x : left - x + w], (CROP, CROP))

    def png(fn: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
        return fn

    table: dict[str, tuple[str, Callable[[Any], Any] | str]] = {
        "Pillow": ("full", pil_full),
        "simplejpeg": ("full", (lambda d: sj.decode_jpeg(d)) if sj else skip("simplejpeg")),
        "PyTurboJPEG": (
            "full",
            (lambda d: tj.decode(d, pixel_format=0)) if tj else skip("turbojpeg"),
        ),
        "imagecodecs.jpeg8_decode": (
            "full",
            (lambda d: ic.jpeg8_decode(d)) if ic else skip("imagecodecs"),
        ),
        "cv2.imdecode (BGR)": (
            "full",
            (lambda d: cv2.imdecode(np.frombuffer(d, np.uint8), cv2.IMREAD_COLOR))
            if cv2
            else skip("cv2"),
        ),
        "Pillow decode + antialiased bilinear resize (before)": ("resize", pil_resize),
        "Pillow draft (1/2,1/4,1/8) + resize": ("resize", pil_draft),
        "cv2.imdecode reduced (1/2,1/4,1/8) + cv2.resize": (
            "resize",
            cv_reduced if cv2 and sj else skip("cv2"),
        ),
        "simplejpeg at M/8 + cv2.resize": (
            "resize",
            sj_scaled if sj and cv2 else skip("simplejpeg"),
        ),
        "PyTurboJPEG at M/8 + cv2.resize": (
            "resize",
            tj_scaled if tj and cv2 else skip("turbojpeg"),
        ),
        "catalog.transforms.resize(bytes)": ("resize", lambda d: T.resize(d, OUT)),
        "simplejpeg full + slice + cv2.resize": (
            "crop",
            crop_full if sj and cv2 else skip("simplejpeg"),
        ),
        "PyTurboJPEG lossless crop + decode + resize": (
            "crop",
            crop_tj if tj and cv2 else skip("turbojpeg"),
        ),
        "catalog decode(window, at_least=224) + resample": ("crop", crop_scaled),
        "catalog.transforms.random_resized_crop (+ window draw)": ("crop", crop_transform),
        **{
            f"simplejpeg at {m}/8": ("scale", at_scale(m) if sj else skip("simplejpeg"))
            for m in range(1, 9)
        },
        "PNG Pillow": ("png", png(pil_full)),
        "PNG cv2.imdecode (BGR)": (
            "png",
            (lambda d: cv2.imdecode(np.frombuffer(d, np.uint8), cv2.IMREAD_UNCHANGED))
            if cv2
            else skip("cv2"),
        ),
        "PNG imagecodecs.png_decode": (
            "png",
            (lambda d: ic.png_decode(d)) if ic else skip("imagecodecs"),
        ),
        # the channels the file has (PNG colour type 0: gray), as a feature of them asks
        "PNG catalog decode_image": ("png", lambda d: T.decode_image(d, 1 if d[25] == 0 else 3)),
    }
    return table


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=100, help="generated JPEGs")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of every contender")
    args = parser.parse_args(argv)
    from PIL import Image

    rng = np.random.default_rng(1)
    jpegs = [flower_jpeg(rng) for _ in range(args.images)]
    pngs = []
    for data in jpegs[: max(1, args.images // 4)]:
        out = io.BytesIO()
        Image.open(io.BytesIO(data)).save(out, format="PNG")
        pngs.append(out.getvalue())
    small = []
    for _i in range(args.images):
        out = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (28, 28), np.uint8)).save(out, format="PNG")
        small.append(out.getvalue())
    found, missing = candidates()
    inputs = {
        "full": jpegs,
        "resize": jpegs,
        "crop": crop_windows(jpegs),
        "png": pngs,
        "scale": jpegs,
    }
    table = contenders(found, missing)
    times: dict[str, list[float]] = {name: [] for name in table}
    small_times: dict[str, list[float]] = {name: [] for name, (g, _) in table.items() if g == "png"}
    for _ in range(args.repeat):
        for name, (group, fn) in table.items():
            if callable(fn):
                times[name].append(time_each(fn, inputs[group]))
                if group == "png":
                    small_times[name].append(time_each(fn, small) * 1000)
    print(f"bench_decode: {args.images} JPEGs of 200-500 px (quality 90), {args.repeat} rounds")
    print("versions:", ", ".join(versions(found)))
    base = {
        "full": "Pillow",
        "resize": "Pillow decode + antialiased bilinear resize (before)",
        "crop": "simplejpeg full + slice + cv2.resize",
        "png": "PNG Pillow",
        "scale": "simplejpeg at 8/8",
    }
    titles = {
        "full": "full-size decode to RGB",
        "resize": f"decode + resize to {OUT}",
        "crop": f"random-resized-crop window to {CROP}x{CROP}",
        "png": "PNG decode: 500x375-ish RGB (ms) | 28x28 gray (us)",
        "scale": "simplejpeg decode at M/8 (ratio: full-size time / this)",
    }
    for group, title in titles.items():
        print(f"\n{title}")
        ref = statistics.median(times[base[group]]) if times[base[group]] else None
        for name, (g, fn) in table.items():
            if g != group:
                continue
            if not callable(fn):
                print(f"  {name:<52} {fn}")
                continue
            med = statistics.median(times[name])
            ratio = f"{ref / med:5.2f}x" if ref else ""
            extra = f"   {statistics.median(small_times[name]):7.1f} us" if group == "png" else ""
            print(f"  {name:<52} {med:7.3f} ms  {ratio}{extra}")
    return 0


def versions(found: dict[str, Any]) -> list[str]:
    import importlib.metadata as md

    out = []
    for dist in ("pillow", "simplejpeg", "PyTurboJPEG", "imagecodecs", "opencv-python-headless"):
        try:
            out.append(f"{dist} {md.version(dist)}")
        except md.PackageNotFoundError:
            out.append(f"{dist} missing")
    return out


if __name__ == "__main__":
    sys.exit(main())
