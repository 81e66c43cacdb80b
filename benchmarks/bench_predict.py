"""Prediction at scale (``zoo.predict``): shared passes against their limits and against separate jobs.

Two regimes, in one run, on the device ``pretrained.device()`` gives (CPU, or CUDA where present):

* model-bound: timm ``resnet50`` (random weights, 1,000 classes, its own 224 px data configuration) on
  synthetic ImageNetV2-like JPEGs of 500x375;
* decode-bound: a tiny timm model (``test_vit``, the cheapest ``test_*`` model per image on the CPU) on
  large JPEGs (3000x2250, a 6.75-megapixel photograph), so that decoding and resizing dominate, as they
  do in front of a GPU.

The JPEGs (smooth structure plus noise, quality 90) are written once into a temporary ImageNetV2-format
folder (class folders ``0``, ``1``, ...) and read through ``datasets.real.load("imagenetv2", ...)``. Per
regime, with the same decoding workers and batch size, images (or model-images) per second of:

* model alone: ``inference.Runner.feed`` on random tensors of the model's input size;
* decoding alone: iterating ``decode.loader`` over the folder's images, no model;
* pipeline, 1 model: ``predict.run_pass([job])`` into a fresh store;
* pipeline, 8 models sharing a pass: one architecture stored under 8 labels, each with its own random
  weights (safetensors files, different seeds);
* 8 separate jobs (decode-bound regime): 8 ``run_pass([job])`` calls one after another.

Targets: pipeline / min(model alone, decoding alone x models in the pass) >= 0.7 for 1 and for 8 models
(pipeline rates from the pass's own time, ``report.model_images / report.seconds``); decode-bound, 8 models
sharing a pass against 8 separate jobs >= 5x (model-images per second of wall time, model loading and
worker start-up included). Medians over ``--repeats`` (a fresh store each repeat). On the CPU the models
and the decoding workers share the cores, so the pipeline there is bounded by the serial sum of the two
costs; that bound is printed too, for reference.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _timing import median_time

from shifteval.datasets import real
from shifteval.utils.compat import import_timm
from shifteval.zoo import decode, inference, predict, pretrained

MODELS_SHARED = 8
TARGET_LIMIT = 0.7
TARGET_SHARED = 5.0
REGIMES = {
    # name: (timm architecture, JPEG width x height)
    "model-bound": ("resnet50", (500, 375)),
    "decode-bound": ("test_vit", (3000, 2250)),
}


def write_jpegs(folder: Path, n: int, size: tuple[int, int], classes: int = 4, seed: int = 0) -> None:
    """``n`` JPEGs of ``size`` (width, height) in class folders ``0..classes-1``: smooth colour fields plus noise."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    w, h = size
    for i in range(n):
        sub = folder / str(i % classes)
        sub.mkdir(parents=True, exist_ok=True)
        coarse = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
        smooth = np.asarray(Image.fromarray(coarse).resize((w, h), Image.BICUBIC), dtype=np.int16)
        noisy = smooth + rng.integers(-12, 13, (h, w, 3), dtype=np.int16)
        Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)).save(sub / f"{i:05d}.jpeg", quality=90)


def write_weights(arch: str, folder: Path, k: int) -> list[str]:
    """``k`` safetensors files of ``arch`` (1,000 classes), each with its own random weights (seed = index)."""
    import torch
    from safetensors.torch import save_file

    paths = []
    for seed in range(k):
        torch.manual_seed(seed)
        model = pretrained.load_model(arch, None, num_classes=1000)
        path = folder / f"{arch}-{seed}.safetensors"
        save_file({name: t.contiguous() for name, t in model.state_dict().items()}, str(path))
        paths.append(str(path))
    return paths


def model_alone(model, cfg: dict, dev: str, n: int, batch_size: int, repeats: int) -> float:
    """Images per second of ``Runner.feed`` on random tensors of the model's input size (``n`` per repeat)."""
    import torch

    sizes = [min(batch_size, n - i) for i in range(0, n, batch_size)]
    x = torch.randn(batch_size, *cfg["input_size"], device=dev)

    def run():
        runner = inference.Runner(model, dev, "fp32")  # a fresh one: only this repeat's outputs are kept
        for b in sizes:
            runner.feed(x[:b])

    with inference.strict_fp32(dev):
        inference.Runner(model, dev, "fp32").feed(x[: sizes[0]])  # warm-up
        return n / median_time(run, repeats)


def decode_alone(images, cfg: dict, dev: str, batch_size: int, workers: int, repeats: int) -> float:
    """Images per second of iterating ``decode.loader`` over ``images`` (no model)."""

    def run():
        count = 0
        for batch in decode.loader(images, cfg, batch_size, workers, pin=dev == "cuda"):
            count += len(batch)
        assert count == len(images)

    for _ in decode.loader(images[:batch_size], cfg, batch_size, workers, pin=dev == "cuda"):  # warm-up
        pass
    return len(images) / median_time(run, repeats)


def jobs_for(arch: str, root: Path, out: Path, weights: list[str], batch_size: int, workers: int):
    """One job per weights file: ``arch`` on the ImageNetV2-format folder ``root``, labelled ``m0``, ``m1``, ..."""
    return [
        predict.Job(
            arch,
            "imagenetv2",
            str(root),
            str(out),
            weights=w,
            batch_size=batch_size,
            workers=workers,
            name=f"m{i}",
        )
        for i, w in enumerate(weights)
    ]


def passes(make_jobs, separate: bool, repeats: int, tmp: Path) -> dict:
    """Medians over repeats of model-images per second, by the passes' own time and by wall time.

    ``make_jobs(out)`` gives the jobs for a fresh store ``out``; they run as one shared pass, or with
    ``separate`` as one pass each, one after another.
    """
    by_pass, by_wall, decode_share = [], [], []
    for _ in range(max(1, repeats)):
        jobs = make_jobs(Path(tempfile.mkdtemp(dir=tmp, prefix="store-")))
        start = time.perf_counter()
        groups = [[job] for job in jobs] if separate else [jobs]
        reports = [predict.run_pass(group, progress=False) for group in groups]
        wall = time.perf_counter() - start
        statuses = [s for r in reports for s in r.statuses]
        if statuses != ["done"] * len(jobs):
            raise RuntimeError(f"pipeline jobs did not all finish: {statuses}")
        model_images = sum(r.model_images for r in reports)
        seconds = sum(r.seconds for r in reports)
        by_pass.append(model_images / seconds)
        by_wall.append(model_images / wall)
        decode_share.append(sum(r.decode_seconds for r in reports) / seconds)
    return {
        "pass": statistics.median(by_pass),
        "wall": statistics.median(by_wall),
        "decode_share": statistics.median(decode_share),
    }


def regime(name: str, n_images: int, n_shared: int, args, dev: str, workers: int, tmp: Path) -> list:
    """Measure one regime; print its rates and ratios; return ``(target name, value, target)`` triples."""
    import torch

    arch, size = REGIMES[name]
    print(f"\n== {name}: {arch} on {size[0]}x{size[1]} JPEGs (quality 90) ==")
    base = tmp / name
    folders = {}
    for label, n in {"warm-up": min(args.batch_size, 8), "main": n_images, "shared": n_shared}.items():
        if label == "shared" and n == n_images:
            folders[label] = folders["main"]
            continue
        folders[label] = base / f"data-{label}"
        start = time.perf_counter()
        write_jpegs(folders[label], n, size, seed=len(folders))
        if label != "warm-up":
            print(f"wrote {n} JPEGs ({label}) in {time.perf_counter() - start:.1f} s")
    (base / "weights").mkdir(parents=True)
    weights = write_weights(arch, base / "weights", MODELS_SHARED)
    images, _ = real.load("imagenetv2", folders["main"])
    shared_images, _ = real.load("imagenetv2", folders["shared"])
    sizes = [os.path.getsize(p) for p in images.paths]
    model = pretrained.load_model(arch, weights[0], num_classes=1000)
    cfg = decode.data_config(model)
    print(
        f"input {cfg['input_size']}, {cfg['interpolation']}, crop {cfg['crop_pct']}; {len(images)} images "
        f"(8-model pass: {len(shared_images)}), mean JPEG {np.mean(sizes) / 1e3:.0f} kB"
    )

    alone = model_alone(model, cfg, dev, n_images, args.batch_size, args.repeats)
    del model
    if dev == "cuda":
        torch.cuda.empty_cache()
    decoding = decode_alone(images, cfg, dev, args.batch_size, workers, args.repeats)
    print(f"model alone            : {alone:9.1f} images/s")
    print(f"decoding alone         : {decoding:9.1f} images/s ({workers} workers)")

    def make(root, k):
        return lambda out: jobs_for(arch, root, out, weights[:k], args.batch_size, workers)

    # Warm-up: one pass over a handful of images (worker start-up, first forward pass, store writes).
    passes(make(folders["warm-up"], 1), separate=False, repeats=1, tmp=tmp)
    one = passes(make(folders["main"], 1), separate=False, repeats=args.repeats, tmp=tmp)
    shared = passes(make(folders["shared"], MODELS_SHARED), separate=False, repeats=args.repeats, tmp=tmp)
    rows = [("pipeline, 1 model", one), (f"pipeline, {MODELS_SHARED} shared", shared)]
    apart = None
    if name == "decode-bound" or args.separate_model_bound:
        apart = passes(make(folders["shared"], MODELS_SHARED), separate=True, repeats=args.repeats, tmp=tmp)
        rows.append((f"{MODELS_SHARED} separate jobs", apart))
    for label, r in rows:
        print(
            f"{label:23s}: {r['pass']:9.1f} model-images/s by pass time, {r['wall']:9.1f} by wall time "
            f"({r['decode_share']:.0%} of the pass waiting for decoding)"
        )

    results = []
    for k, r in ((1, one), (MODELS_SHARED, shared)):
        limit = min(alone, decoding * k)
        serial = 1 / (1 / alone + 1 / (decoding * k))  # models and decoding on the same cores, in turn
        ratio = r["pass"] / limit
        print(
            f"pipeline / limit, {k} model(s): {ratio:5.2f} (limit {limit:.1f} model-images/s = min(model alone, "
            f"decoding x {k}); target >= {TARGET_LIMIT}; serial bound {serial:.1f}, {r['pass'] / serial:.2f} of it)"
        )
        results.append((f"{name}: pipeline / limit, {k} model(s)", ratio, TARGET_LIMIT))
    if apart is not None:
        ratio = shared["wall"] / apart["wall"]
        print(
            f"{MODELS_SHARED} shared / {MODELS_SHARED} separate: {ratio:5.2f}x by wall time "
            f"({shared['pass'] / apart['pass']:.2f}x by pass time)"
            + (f"; target >= {TARGET_SHARED}" if name == "decode-bound" else "")
        )
        if name == "decode-bound":
            results.append(
                (f"{name}: {MODELS_SHARED} shared / {MODELS_SHARED} separate", ratio, TARGET_SHARED)
            )
    return results


def main():
    import torch

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--regime", choices=["model-bound", "decode-bound", "both"], default="both")
    parser.add_argument("--images-model-bound", type=int, default=64)
    parser.add_argument(
        "--images-model-bound-shared",
        type=int,
        default=None,
        help="images of the model-bound 8-model pass (default: half of --images-model-bound)",
    )
    parser.add_argument("--images-decode-bound", type=int, default=96)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="default: decode.decode_workers (one per core, less one on CUDA)",
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--separate-model-bound",
        action="store_true",
        help="also time 8 separate jobs in the model-bound regime",
    )
    args = parser.parse_args()

    timm = import_timm()
    dev = pretrained.device()
    workers = decode.decode_workers(args.workers, dev == "cuda")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    gpu = f" ({torch.cuda.get_device_name()})" if dev == "cuda" else ""
    print(
        f"device {dev}{gpu}, torch {torch.__version__}, timm {timm.__version__}, {cores} cores, "
        f"{torch.get_num_threads()} torch threads, {workers} decoding workers, batch {args.batch_size}, "
        f"CPU chunk {inference.CPU_CHUNK}, {args.repeats} repeats"
    )
    print("image sizes: " + ", ".join(f"{n} {w}x{h} ({a})" for n, (a, (w, h)) in REGIMES.items()))

    n_mb_shared = args.images_model_bound_shared or max(1, math.ceil(args.images_model_bound / 2))
    chosen = list(REGIMES) if args.regime == "both" else [args.regime]
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-predict-") as tmp:
        for name in chosen:
            if name == "model-bound":
                n, n_shared = args.images_model_bound, n_mb_shared
            else:
                n = n_shared = args.images_decode_bound
            results += regime(name, n, n_shared, args, dev, workers, Path(tmp))

    print()
    for label, value, target in results:
        print(f"{'PASS' if value >= target else 'FAIL'}: {label} = {value:.2f} (target >= {target})")


if __name__ == "__main__":
    main()
