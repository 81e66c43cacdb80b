"""`shifteval data get/verify` against a local HTTP mirror of the official files in ../shared/realdata."""

import hashlib
import http.server
import os
import shutil
import stat
import tarfile
import threading
from pathlib import Path

import pytest
from conftest import SHARED

from shifteval import cli
from shifteval.datasets import download

REAL = SHARED / "realdata"
MNIST_SMALL = ["t10k-*"]
IV2_FILES = ["LICENSE", "data/metadata/class_info.json"]


def _need_real():
    if not REAL.is_dir():
        pytest.skip(f"real data folder {REAL} is absent")


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves files under ``self.server.folder`` with HTTP Range support; can drop a connection midway."""

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):  # noqa: N802
        server = self.server
        server.requests.append((self.path, self.headers.get("Range")))
        path = server.folder / self.path.lstrip("/")
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        start = 0
        rng = self.headers.get("Range")
        if rng and server.ranges:
            start = int(rng.removeprefix("bytes=").split("-")[0])
            if start >= len(data):
                self.send_error(416)
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if server.drop_after is not None:
            cut = server.drop_after
            if not server.drop_always:
                server.drop_after = None  # drop once
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.wfile.write(body)


@pytest.fixture
def serve():
    servers = []

    def start(folder, *, ranges=True, drop_after=None, drop_always=False):
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.folder, httpd.ranges, httpd.drop_after, httpd.requests = Path(folder), ranges, drop_after, []
        httpd.drop_always = drop_always
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def _sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_sources_table_is_complete():
    names = set(download.sources())
    assert {"mnist", "fashion-mnist", "cifar10", "cifar10.1", "cifar10.2", "imagenetv2-predictions"} <= names
    assert "cifar10.1-predictions" in names and not download.source("imagenet").downloadable
    for src in download.sources().values():
        assert src.homepage.startswith("http") and src.licence
        for f in src.files:
            assert f.url.startswith("https://") or f.url.startswith("http://")
            if "github.com" in f.url:  # GitHub releases are pinned to a commit
                assert len(f.url.split("/raw/")[1].split("/")[0]) == 40
    iv2 = download.source("imagenetv2-predictions")
    assert len(iv2.files) == 274 and all(f.sha256 and f.size for f in iv2.files)


def test_get_mnist_from_mirror_official_bytes(tmp_path, serve, capsys):
    _need_real()
    httpd, url = serve(REAL)
    rc = cli.main(["data", "get", "mnist", "--root", str(tmp_path), "--mirror", url + "/{name}",
                   "--include", "t10k-*", "--quiet"])  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        got = tmp_path / "mnist" / name
        assert _sha(got) == _sha(REAL / "mnist" / name)
        assert stat.S_IMODE(got.stat().st_mode) == 0o644
    assert not list((tmp_path / "mnist").glob("*.part"))
    assert cli.main(["data", "verify", "mnist", "--root", str(tmp_path), "--include", "t10k-*"]) == 0
    # a second get finds the verified files and makes no request
    n = len(httpd.requests)
    assert download.get("mnist", tmp_path, mirror=url + "/mnist", include=MNIST_SMALL, progress=False)
    assert len(httpd.requests) == n


def test_corrupted_mirror_is_refused(tmp_path, serve, capsys):
    _need_real()
    bad = tmp_path / "mirror" / "mnist"
    bad.mkdir(parents=True)
    data = bytearray((REAL / "mnist" / "t10k-labels-idx1-ubyte.gz").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (bad / "t10k-labels-idx1-ubyte.gz").write_bytes(bytes(data))
    _, url = serve(tmp_path / "mirror")
    rc = cli.main(["data", "get", "mnist", "--root", str(tmp_path / "out"), "--mirror", url + "/{name}",
                   "--include", "t10k-labels*", "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    spec = next(f for f in download.source("mnist").files if f.path == "t10k-labels-idx1-ubyte.gz")
    assert rc == 1
    assert "t10k-labels-idx1-ubyte.gz" in err and spec.sha256 in err
    assert hashlib.sha256(bytes(data)).hexdigest() in err
    assert not list((tmp_path / "out" / "mnist").iterdir())  # neither the final file nor a part file


def test_truncated_file_reports_checksum_and_size(tmp_path):
    _need_real()
    spec = next(f for f in download.source("mnist").files if f.path == "t10k-labels-idx1-ubyte.gz")
    short = tmp_path / "short"
    short.write_bytes((REAL / "mnist" / spec.path).read_bytes()[:100])
    with pytest.raises(download.ChecksumError) as err:
        download.check_file(short, spec)
    message = str(err.value)
    assert spec.path in message and spec.sha256 in message and _sha(short) in message
    assert spec.md5 in message and f"expected {spec.size} bytes, got 100" in message


def test_verify_detects_changed_file(tmp_path, capsys):
    _need_real()
    folder = tmp_path / "mnist"
    folder.mkdir()
    shutil.copy(REAL / "mnist" / "t10k-labels-idx1-ubyte.gz", folder)
    with open(folder / "t10k-labels-idx1-ubyte.gz", "r+b") as fh:
        fh.seek(100)
        fh.write(b"\0")
    assert cli.main(["data", "verify", "mnist", "--root", str(tmp_path), "--include", "t10k-labels*"]) == 1
    assert "checksum mismatch" in capsys.readouterr().err
    assert download.verify("mnist", tmp_path)["train-images-idx3-ubyte.gz"] == "missing"


def test_resume_from_part_file(tmp_path, serve):
    _need_real()
    httpd, url = serve(REAL)
    name = "t10k-images-idx3-ubyte.gz"
    full = (REAL / "mnist" / name).read_bytes()
    part = tmp_path / "mnist" / (name + ".part")
    part.parent.mkdir()
    part.write_bytes(full[: len(full) // 2])
    download.get("mnist", tmp_path, mirror=url + "/mnist", include=[name], progress=False)
    assert httpd.requests == [(f"/mnist/{name}", f"bytes={len(full) // 2}-")]
    assert _sha(tmp_path / "mnist" / name) == _sha(REAL / "mnist" / name) and not part.exists()


def test_dropped_connection_resumes(tmp_path, serve):
    _need_real()
    httpd, url = serve(REAL, drop_after=1_000_000)
    name = "t10k-images-idx3-ubyte.gz"
    download.get("mnist", tmp_path, mirror=url + "/mnist", include=[name], progress=False)
    assert [r for _, r in httpd.requests] == [None, "bytes=1000000-"]
    assert _sha(tmp_path / "mnist" / name) == _sha(REAL / "mnist" / name)


def test_server_without_ranges_restarts(tmp_path, serve):
    _need_real()
    httpd, url = serve(REAL, ranges=False)
    name = "t10k-labels-idx1-ubyte.gz"
    part = tmp_path / "mnist" / (name + ".part")
    part.parent.mkdir()
    part.write_bytes(b"garbage that must not survive")
    download.get("mnist", tmp_path, mirror=url + "/mnist", include=[name], progress=False)
    assert _sha(tmp_path / "mnist" / name) == _sha(REAL / "mnist" / name)


def test_imagenetv2_subset_from_mirror(tmp_path, serve):
    _need_real()
    mirror = tmp_path / "mirror"
    shutil.copytree(REAL / "imagenetv2" / "data" / "metadata", mirror / "data" / "metadata")
    shutil.copy(REAL / "imagenetv2" / "LICENSE", mirror)
    wanted = list(IV2_FILES)
    with tarfile.open(REAL / "imagenetv2" / "predictions.tar.xz") as tar:
        for member in tar:  # the first prediction files of the archive: no need to decompress it all
            if member.isfile() and member.name.endswith(".npy"):
                tar.extract(member, mirror, filter="data")
                wanted.append(member.name)
                if len(wanted) == len(IV2_FILES) + 3:
                    break
    _, url = serve(mirror)
    out = tmp_path / "out"
    paths = download.get("imagenetv2-predictions", out, mirror=url, include=wanted, progress=False)
    assert len(paths) == len(wanted) == 5
    assert set(download.verify("imagenetv2-predictions", out, include=wanted).values()) == {"ok"}
    for rel in wanted:
        assert _sha(out / "imagenetv2-predictions" / rel) == _sha(mirror / rel)


def test_unrecorded_checksums_are_refused(tmp_path, capsys):
    rc = cli.main(["data", "get", "cifar10.1", "--root", str(tmp_path), "--mirror", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 1 and "no checksum is recorded" in err and "--allow-unrecorded" in err


def test_unrecorded_allowed_from_local_folder(tmp_path):
    src = tmp_path / "mirror"
    src.mkdir()
    for f in download.source("cifar10.1").files:
        (src / f.path).write_bytes(f.path.encode())
    paths = download.get(
        "cifar10.1", tmp_path / "out", mirror=str(src), allow_unrecorded=True, progress=False
    )
    assert [p.read_bytes() for p in paths] == [f.path.encode() for f in download.source("cifar10.1").files]
    assert set(download.verify("cifar10.1", tmp_path / "out").values()) == {"unrecorded"}


def test_errors_name_the_problem(tmp_path, capsys):
    assert cli.main(["data", "get", "nosuch", "--root", str(tmp_path)]) == 1
    assert "unknown dataset 'nosuch'" in capsys.readouterr().err
    assert cli.main(["data", "get", "imagenet", "--root", str(tmp_path)]) == 1
    assert "image-net.org" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no file of mnist matches"):
        download.get("mnist", tmp_path, include=["nothing*"])
    assert not os.listdir(tmp_path)


def test_data_list_prints_every_dataset(capsys):
    assert cli.main(["data", "list"]) == 0
    out = capsys.readouterr().out
    for name in download.sources():
        assert name in out


def test_multi_dataset_get_with_name_placeholder(tmp_path, serve, capsys):
    _need_real()
    httpd, url = serve(REAL)
    argv = ["data", "get", "mnist", "fashion-mnist", "--root", str(tmp_path), "--mirror", url + "/{name}/",
            "--include", "t10k-labels*", "--quiet"]  # fmt: skip
    assert cli.main(argv) == 0, capsys.readouterr().err
    assert sorted(p for p, _ in httpd.requests) == [
        "/fashion-mnist/t10k-labels-idx1-ubyte.gz",
        "/mnist/t10k-labels-idx1-ubyte.gz",
    ]
    for name in ("mnist", "fashion-mnist"):
        got = tmp_path / name / "t10k-labels-idx1-ubyte.gz"
        assert _sha(got) == _sha(REAL / name / "t10k-labels-idx1-ubyte.gz")


def test_incomplete_download_keeps_its_part_for_the_next_run(tmp_path, serve):
    _need_real()
    name = "t10k-labels-idx1-ubyte.gz"
    _, flaky = serve(REAL, drop_after=1000, drop_always=True)
    with pytest.raises(download.DownloadError, match="incomplete after 2 attempts.*run the command again"):
        download.get("mnist", tmp_path, mirror=flaky + "/mnist", include=[name], progress=False, retries=1)
    part = tmp_path / "mnist" / (name + ".part")
    assert part.stat().st_size == 2000 and not (tmp_path / "mnist" / name).exists()
    httpd, good = serve(REAL)
    download.get("mnist", tmp_path, mirror=good + "/mnist", include=[name], progress=False)
    assert httpd.requests == [(f"/mnist/{name}", "bytes=2000-")]
    assert _sha(tmp_path / "mnist" / name) == _sha(REAL / "mnist" / name)
