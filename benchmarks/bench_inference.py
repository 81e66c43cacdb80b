"""Inference throughput of a timm model at 224×224: images per second on this machine's devices.

Measures ``resnet50`` (random weights: throughput does not depend on them) in eval mode under
``torch.inference_mode`` on the CPU and, when available, on CUDA; prints the median over repeats.
The README quotes its numbers.
"""

from __future__ import annotations

import argparse

from _timing import median_time

from shifteval.zoo import pretrained


def main():
    import torch

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--batches", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    model = pretrained.load_model(args.model, None)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    print(
        f"{args.model}, batch {args.batch_size}, 224x224, torch {torch.__version__}, {torch.get_num_threads()} CPU threads"
    )
    for dev in devices:
        m = model.to(dev)
        x = torch.randn(args.batch_size, 3, 224, 224, device=dev)

        def run(m=m, x=x, dev=dev):
            with torch.inference_mode():
                for _ in range(args.batches):
                    m(x)
            if dev == "cuda":
                torch.cuda.synchronize()

        run()  # warm-up
        seconds = median_time(run, args.repeats)
        print(f"{dev:5s}: {args.batch_size * args.batches / seconds:8.1f} images/s")


if __name__ == "__main__":
    main()
