"""Loaders of the real datasets, on tiny files synthesized in each official format."""

import gzip
import pickle

import numpy as np
import pytest
from PIL import Image

from shifteval.datasets import real

RNG = np.random.default_rng(0)


def _images(n, h=32, w=32):
    return RNG.integers(0, 256, (n, h, w, 3), dtype=np.uint8)


def test_cifar10_python_batches(tmp_path):
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    train = [_images(3) for _ in range(5)]
    for i, imgs in enumerate(train, 1):
        (folder / f"data_batch_{i}").write_bytes(real.pickle_cifar_batch(imgs, [i % 10] * 3))
    test = _images(4)
    (folder / "test_batch").write_bytes(real.pickle_cifar_batch(test, [0, 1, 2, 9]))
    images, labels = real.load("cifar10", tmp_path)
    assert images.shape == (4, 32, 32, 3) and images.dtype == np.uint8
    assert np.array_equal(images, test) and labels.tolist() == [0, 1, 2, 9] and labels.dtype == np.int64
    images, labels = real.load("cifar10", tmp_path, split="train")
    assert images.shape == (15, 32, 32, 3) and np.array_equal(images[:3], train[0])


def test_cifar10_refuses_foreign_pickles(tmp_path):
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    (folder / "test_batch").write_bytes(pickle.dumps({b"data": Evil(), b"labels": []}, protocol=2))
    with pytest.raises(real.DatasetError, match=r"refusing to load (__builtin__|builtins)\.print") as err:
        real.load("cifar10", tmp_path)
    assert "cifar-10-batches-py" in str(err.value) and "toronto" in str(err.value)


def test_cifar10_missing_file_names_the_layout(tmp_path):
    with pytest.raises(real.DatasetError, match=r"missing file .*test_batch(.|\n)*expected layout"):
        real.load("cifar10", tmp_path)


def test_cifar101_and_cifar102(tmp_path):
    imgs = _images(5)
    np.save(tmp_path / "cifar10.1_v6_data.npy", imgs)
    np.save(tmp_path / "cifar10.1_v6_labels.npy", np.arange(5))
    images, labels = real.load("cifar10.1", tmp_path)
    assert np.array_equal(images, imgs) and labels.tolist() == [0, 1, 2, 3, 4]
    np.savez(tmp_path / "cifar102_test.npz", images=imgs, labels=np.arange(5))
    images, labels = real.load("cifar10.2", tmp_path)
    assert np.array_equal(images, imgs) and labels.dtype == np.int64
    np.save(tmp_path / "cifar10.1_v4_data.npy", imgs)
    np.save(tmp_path / "cifar10.1_v4_labels.npy", np.arange(4))
    with pytest.raises(real.DatasetError, match="5 images but 4 labels"):
        real.load("cifar10.1", tmp_path, split="v4")
    np.savez(tmp_path / "cifar102_train.npz", images=imgs.astype(np.float32), labels=np.arange(5))
    with pytest.raises(real.DatasetError, match="expected uint8 images"):
        real.load("cifar10.2", tmp_path, split="train")


@pytest.mark.parametrize("name", ["mnist", "fashion-mnist"])
@pytest.mark.parametrize("gz", [False, True])
def test_mnist_idx_files(tmp_path, gz, name):
    imgs = RNG.integers(0, 256, (6, 28, 28), dtype=np.uint8)
    labels = np.array([5, 0, 4, 1, 9, 2], dtype=np.uint8)
    for fname, arr in (("t10k-images-idx3-ubyte", imgs), ("t10k-labels-idx1-ubyte", labels)):
        data = real.encode_idx(arr)
        if gz:
            (tmp_path / (fname + ".gz")).write_bytes(gzip.compress(data))
        else:
            (tmp_path / fname).write_bytes(data)
    images, lab = real.load(name, tmp_path)
    assert np.array_equal(images, imgs) and lab.tolist() == [5, 0, 4, 1, 9, 2] and lab.dtype == np.int64
    with pytest.raises(real.DatasetError, match=f"{name}: missing file .*train-images-idx3-ubyte") as err:
        real.load(name, tmp_path, split="train")
    assert ("zalandoresearch" if name == "fashion-mnist" else "MNIST database") in str(err.value)


def test_mnist_corrupted_files(tmp_path):
    (tmp_path / "t10k-images-idx3-ubyte").write_bytes(b"\x00\x00\x08\x01" + b"\x00" * 20)
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(real.encode_idx(np.zeros(3, np.uint8)))
    with pytest.raises(real.DatasetError, match="bad magic number"):
        real.load("mnist", tmp_path)
    (tmp_path / "t10k-images-idx3-ubyte").write_bytes(real.encode_idx(np.zeros((3, 4, 4), np.uint8))[:-5])
    with pytest.raises(real.DatasetError, match="header says"):
        real.load("mnist", tmp_path)


def _write_pngs(folder, n):
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        Image.fromarray(_images(1, 8, 8)[0]).save(folder / f"{i}.png")


def test_cinic10_class_folders(tmp_path):
    for c in real.CIFAR10_CLASSES:
        _write_pngs(tmp_path / "test" / c, 2)
    images, labels = real.load("cinic10", tmp_path)
    assert len(images) == 20 and labels.tolist() == [i for i in range(10) for _ in range(2)]
    assert images[0].shape == (8, 8, 3) and images[0].dtype == np.uint8
    (tmp_path / "test" / "truck" / "0.png").unlink()
    (tmp_path / "test" / "truck" / "1.png").unlink()
    (tmp_path / "test" / "truck").rmdir()
    with pytest.raises(real.DatasetError, match="missing class folder .*truck"):
        real.load("cinic10", tmp_path)


def test_imagenetv2_folder_names_are_class_indices_not_string_order(tmp_path):
    root = tmp_path / "imagenetv2-matched-frequency-format-val"
    for cls in (0, 2, 10, 100):
        _write_pngs(root / str(cls), 1)
    images, labels = real.load("imagenetv2", tmp_path, split="matched-frequency")
    # string order would give 0, 10, 100, 2 and, worse, label them 0..3
    assert labels.tolist() == [0, 2, 10, 100]
    assert [p.parent.name for p in images.paths] == ["0", "2", "10", "100"]
    (root / "n0144").mkdir()
    with pytest.raises(real.DatasetError, match="class folders named 0..999"):
        real.load("imagenetv2", tmp_path, split="matched-frequency")


def test_imagenet_wordnet_folders(tmp_path):
    for wnid in ("n01443537", "n01440764"):
        _write_pngs(tmp_path / "val" / wnid, 2)
    images, labels = real.load("imagenet", tmp_path)
    assert labels.tolist() == [0, 0, 1, 1]
    assert images.paths[0].parent.name == "n01440764"


def test_unknown_dataset_and_split(tmp_path):
    with pytest.raises(ValueError, match="unknown dataset 'svhn'"):
        real.load("svhn", tmp_path)
    with pytest.raises(ValueError, match="unknown split 'val'"):
        real.load("cifar10", tmp_path, split="val")


@pytest.mark.slow
def test_the_published_mnist_files_fetched_from_the_checksummed_mirror_read_as_the_paper_describes(real_data):
    """The real files, as users get them (``shifteval data get`` from a mirror, every checksum verified):
    MNIST and Fashion-MNIST read as 60,000 + 10,000 images of 28×28 bytes in ten classes."""
    for name in ("mnist", "fashion-mnist"):
        train_images, _ = real.load(name, real_data / name, "train")
        test_images, test_labels = real.load(name, real_data / name, "test")
        assert train_images.shape == (60_000, 28, 28) and test_images.shape == (10_000, 28, 28), name
        assert train_images.dtype == np.uint8 and train_images.max() > 200, name
        assert np.bincount(test_labels, minlength=10).min() >= 800, name  # every class present
