"""Smoke execution of every chapter, the linear-fits numbers, and a warning-free book build."""

import contextlib
import json
import re
import shutil

import pytest
from conftest import shifteval

from shifteval import pipeline
from shifteval.datasets import published

CHAPTERS = [c.name for c in pipeline.chapters()]


@pytest.fixture(scope="module")
def built_book(tmp_path_factory):
    """Every chapter executed with its smoke parameters and the book built, once for this module."""
    from conftest import copy_project

    project = copy_project(tmp_path_factory.mktemp("book") / "project")
    out = shifteval("build", "--params", "smoke", cwd=project, timeout=1800)
    return project, out


def test_smoke_build_succeeds_without_warnings(built_book):
    project, out = built_book
    assert out.returncode == 0, out.stderr[-4000:]
    assert (project / "_build" / "html" / "index.html").is_file()
    log = out.stdout + out.stderr
    assert "WARNING" not in log and "build succeeded" in log
    for name in CHAPTERS:
        assert (project / "_build" / "html" / "book" / "chapters" / f"{name}.html").is_file(), name


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_chapter_executes_and_records_results(built_book, name):
    project, out = built_book
    nb = json.loads((project / "book" / "chapters" / f"{name}.ipynb").read_text())
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors
    res = json.loads((project / "book" / "chapters" / f"{name}.results.json").read_text())
    assert res["provenance"]["chapter"] == name and res["provenance"]["parameter_set"] == "smoke"


def test_linear_fits_results_reproduce_the_paper(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "linear-fits.results.json").read_text())
    ref = published.reported()["recht2019"]
    cifar, imnet = res["fits"]["cifar10"], res["fits"]["imagenet_top1_matchedfrequency"]
    assert cifar["n"] == 34 and imnet["n"] == 64
    assert cifar["slope"] == pytest.approx(ref["cifar10_fit"]["slope"], abs=0.006)
    assert cifar["intercept"] == pytest.approx(ref["cifar10_fit"]["intercept"], abs=0.1)
    assert imnet["slope"] == pytest.approx(ref["imagenet_top1_matchedfrequency_fit"]["slope"], abs=0.006)
    assert imnet["intercept"] == pytest.approx(ref["imagenet_top1_matchedfrequency_fit"]["intercept"], abs=0.1)
    # smoke runs 2,000 bootstrap replicates; the 100,000-replicate intervals are tested in test_linfit
    assert cifar["slope_ci"] == pytest.approx(ref["cifar10_fit"]["slope_ci"], abs=0.03)
    for strategy, changes in res["table2"].items():
        for k in ("top1", "top5"):
            assert round(changes[k], 1) == ref["table2"][strategy][k]
    g = res["gaussian_model"]
    assert g["fitted"]["slope"] == pytest.approx(g["analytic"]["slope"], abs=0.1)
    assert max(res["clopper_pearson_max_deviation"].values()) <= 0.1 + 1e-9


def test_warm_build_skips_every_chapter(built_book):
    project, _ = built_book
    out = shifteval("build", "--params", "smoke", cwd=project, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stderr.count("up to date") == len(CHAPTERS)
    assert "executing" not in out.stderr


def test_replication_world_smoke_results_show_the_mechanism(built_book):
    """What can be asserted at smoke size (six models, 40 images per class and set)."""
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "replication-world.results.json").read_text())
    freq = res["selection_frequency"]
    assert set(freq) == {"v1", "matchedfrequency", "threshold0.7", "topimages"}
    # Engstrom's bias: observed frequencies matched, true frequencies lower
    assert abs(freq["matchedfrequency"]["observed"] - freq["v1"]["observed"]) <= 0.02
    assert freq["v1"]["true"] - freq["matchedfrequency"]["true"] >= 0.02
    # Recht's Table 2 ordering of the mean accuracy change
    change = res["accuracy_change"]
    assert change["matchedfrequency"] < change["threshold0.7"] < change["topimages"]
    assert change["matchedfrequency"] < 0
    assert set(res["fraction_models_dropping"]) == set(change)
    # the ablation shrinks the MatchedFrequency drop
    assert res["ablation"]["drop_noise_free"] < res["ablation"]["drop_noisy"] / 2
    assert res["zoo"]["n_models"] == 6


def test_linear_fits_records_the_zoo_fits(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "linear-fits.results.json").read_text())
    assert {f"{s}_{scale}" for s in ("matchedfrequency", "threshold0.7", "topimages") for scale in ("linear", "probit")} == set(res["zoo_fits"])
    assert all(f["n"] == 6 for f in res["zoo_fits"].values())


def test_matched_evaluation_smoke_results(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "matched-evaluation.results.json").read_text())
    narrower = res["fraction_models_gap_narrower"]
    assert set(narrower) == {"matchedfrequency", "threshold0.7", "topimages"}
    for strategy in narrower.values():
        assert set(strategy) == {"label_and_prob", "prob"}
        assert all(0 <= v <= 1 for v in strategy.values())
    per_model = res["per_model"]["matchedfrequency"]["label_and_prob"]
    assert len(per_model) == 6
    assert all(0 <= m["fraction_unmatched"] <= 1 for m in per_model.values())


def test_matched_evaluation_runs_on_real_format_prediction_files(tmp_path):
    """real.yaml's path: a folder of CIFAR-10 / CIFAR-10.1 predictions in the project's format."""
    import numpy as np

    from conftest import copy_project

    from shifteval.zoo import PredictionStore

    rng = np.random.default_rng(0)
    store = PredictionStore(tmp_path / "preds")
    for m, skill in enumerate((0.6, 0.75, 0.9)):
        for dataset, n, shift in (("cifar10", 1000, 0.0), ("cifar10.1", 400, 0.1)):
            labels = rng.integers(0, 10, n)
            logits = rng.normal(0, 1, (n, 10))
            logits[np.arange(n), labels] += 3 * (skill - shift)
            probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
            store.save(f"model{m}", dataset, labels, probs)
    project = copy_project(tmp_path / "project")
    out = shifteval("run", "matched-evaluation", "--params", "real", "-p", f"predictions_dir={tmp_path / 'preds'}",
                    "-p", "n_runs=2", "-p", "eps_grid=[0.005, 0.05]", cwd=project, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads((project / "book" / "chapters" / "matched-evaluation.results.json").read_text())
    assert res["source"] == "cifar10" and res["targets"] == ["cifar10.1"]
    assert set(res["per_model"]["cifar10.1"]["prob"]) == {"model0", "model1", "model2"}


def test_matched_evaluation_names_missing_prediction_files(tmp_path):
    from conftest import copy_project

    (tmp_path / "preds" / "model0").mkdir(parents=True)
    project = copy_project(tmp_path / "project")
    out = shifteval("run", "matched-evaluation", "--params", "real", "-p", f"predictions_dir={tmp_path / 'preds'}", cwd=project)
    assert out.returncode == 1
    assert "no model in" in out.stderr and "cifar10.1.npz" in out.stderr


def test_selection_bias_smoke_results(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "selection-bias.results.json").read_text())
    assert set(res["mean_bias"]) == {"naive", "jackknife", "parametric"}
    assert 0 <= res["fraction_parametric_closer"] <= 1
    assert len(res["per_model"]) == 6
    for row in res["per_model"].values():
        assert set(row) == {"v1", "observed", "naive", "jackknife", "parametric", "ground_truth"}
    # every estimator starts from the observed v2 accuracy and moves towards the truth
    assert res["mean_abs_error"]["naive"] < res["mean_abs_error"]["observed"]
    assert res["toy_model"]["l1_distance"] < 0.05  # 10^5 samples at smoke size


def test_mlm_smoke_results(built_book):
    import numpy as np

    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "mlm.results.json").read_text())
    assert res["levels"] == list(range(1, 11)) and len(res["perturbations"]) == 12
    assert len(res["accuracy_by_level"]) == 10 and all(0 <= a <= 1 for a in res["accuracy_by_level"])
    assert all(len(v) == 10 for v in res["accuracy"].values())
    # the mean over perturbations equals accuracy_by_level
    assert np.allclose(np.mean(list(res["accuracy"].values()), axis=0), res["accuracy_by_level"])
    # stronger perturbation, lower accuracy: level 10 well below level 1 even for the smoke model
    assert res["accuracy_by_level"][-1] < res["accuracy_by_level"][0] - 0.1
    for key in ("mlm_clean", "mlm_mean"):
        m = np.array(res[key])
        assert m.shape == (10, 10) and np.allclose(m.sum(1), 1) and np.allclose(np.diag(m), 0) and (m >= 0).all()
    assert np.array(res["mlm_std"]).shape == (10, 10)
    assert set(res["rank_correlation"]) == {"MLM (clean) vs observed", "MLM at the level vs observed",
                                            "clean confusion rates vs observed"}
    assert res["n_parameters"] == 71_754  # the paper's CNN on 16×16 inputs


def test_mlm_runs_on_mnist_idx_files(tmp_path):
    """real.yaml's path: MNIST from its four official idx files (tiny ones synthesized here)."""
    import numpy as np
    from conftest import copy_project

    from shifteval.datasets.world import base_digits

    digits, labels = base_digits(28)
    data = tmp_path / "mnist"
    _write_idx_dataset(data, np.round(digits[:1500] * 255).astype(np.uint8), labels[:1500], split_at=1200)
    project = copy_project(tmp_path / "project")
    out = shifteval("run", "mlm", "--params", "real", "-p", f"data_dir={data}", "-p", "epochs=3",
                    "-p", "perturbations=[fog, pixelation]", "-p", "figure_perturbation=fog", cwd=project, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads((project / "book" / "chapters" / "mlm.results.json").read_text())
    assert res["n_train"] == 1200 and res["n_test"] == 300 and res["n_parameters"] == 206_922
    assert res["perturbations"] == ["fog", "pixelation"] and len(res["accuracy_by_level"]) == 10


def test_mlm_names_a_wrong_idx_file(tmp_path):
    from conftest import copy_project

    data = tmp_path / "mnist"
    data.mkdir()
    (data / "train-images-idx3-ubyte").write_bytes(b"\x00\x00\x08\x01" + b"\x00" * 8)
    project = copy_project(tmp_path / "project")
    out = shifteval("run", "mlm", "--params", "real", "-p", f"data_dir={data}", cwd=project)
    assert out.returncode == 1
    assert "train-images-idx3-ubyte" in out.stderr and "bad magic number" in out.stderr


def test_ood_autoeval_smoke_results(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "ood-autoeval.results.json").read_text())
    rmse = res["rmse_at_10pct_ood"]
    assert {"autoeval", "autoeval_energy_ood", "rotation", "atc", "doc", "softmax_0.8", "softmax_0.9",
            "average_confidence"} <= set(rmse)
    assert all(0 <= v <= 100 for v in rmse.values())
    assert len(res["table1"]) == 3 * 3 + 1 and len(res["table2"]) == 3 * 3 + 1  # ID × OOD pairs + all sets
    sweep = res["threshold_sweep"]
    kept = [row["ood_kept"] for row in sweep]
    excluded = [row["id_excluded"] for row in sweep]
    # a higher threshold keeps more OOD images and excludes fewer ID images
    assert kept == sorted(kept) and excluded == sorted(excluded, reverse=True)
    assert set(res["unseen_transforms"]) == {"v1-A (cutout)", "v1-B (shear + contrast)"}
    detection = res["detection"]
    assert {f"{d}: {s}" for d in ("classifier", "detector (outlier exposure)")
            for s in ("v1", "natural_patches", "letters", "textures")} == set(detection)
    assert all(0 <= row["share kept"] <= 1 for row in detection.values())
    assert all(0 <= row["AUROC"] <= 1 for key, row in detection.items() if not key.endswith("v1"))


def _write_idx_dataset(folder, images, labels, split_at):
    """MNIST's four-file idx layout (images gzipped, labels not) in ``folder``: the first ``split_at``
    images are the training split, the rest the test split."""
    import gzip

    import numpy as np

    from shifteval.datasets.real import encode_idx

    folder.mkdir(parents=True)
    for prefix, sl in (("train", slice(0, split_at)), ("t10k", slice(split_at, None))):
        (folder / f"{prefix}-images-idx3-ubyte.gz").write_bytes(gzip.compress(encode_idx(images[sl])))
        (folder / f"{prefix}-labels-idx1-ubyte").write_bytes(encode_idx(np.asarray(labels[sl], np.uint8)))


def test_ood_autoeval_runs_on_mnist_and_fashion_mnist_idx_files(tmp_path):
    """real.yaml's path: MNIST as the training distribution, Fashion-MNIST as a real OOD source (tiny
    files in the official idx format synthesized here)."""
    import numpy as np
    from conftest import copy_project

    from shifteval import autoeval as ae
    from shifteval.datasets.world import base_digits

    digits, labels = base_digits(28)
    _write_idx_dataset(tmp_path / "mnist", np.round(digits * 255).astype(np.uint8), labels, split_at=1300)
    clothes = np.round(ae.ood_images("textures", 300, side=28, seed=5) * 255).astype(np.uint8)
    _write_idx_dataset(tmp_path / "fashion", clothes, np.zeros(300, int), split_at=100)
    project = copy_project(tmp_path / "project")
    small = ["epochs=2", "second_epochs=1", "meta_sets=8", "meta_val_sets=3", "meta_set_size=60", "ood_pool=150",
             "set_size=100", "repeats=1", "outlier_exposure=200", "detector_epochs=1", "percentile_grid=[99, 99.5]",
             "ood_share_grid=[0.0, 0.1]", "id_sources=[test, 'test+fog@3']"]
    out = shifteval("run", "ood-autoeval", "--params", "real", "-p", f"data_dir={tmp_path / 'mnist'}",
                    "-p", f"ood_dirs={{fashion-mnist: {tmp_path / 'fashion'}}}", *[a for p in small for a in ("-p", p)],
                    cwd=project, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads((project / "book" / "chapters" / "ood-autoeval.results.json").read_text())
    assert res["data"].startswith("MNIST idx files") and res["ood_sources"][-1] == "fashion-mnist"
    assert "test + fashion-mnist" in res["table1"] and "test+fog@3 + fashion-mnist" in res["table1"]
    assert set(res["unseen_transforms"]) == {"test-A (cutout)", "test-B (shear + contrast)"}
    assert 0 <= res["rmse_at_10pct_ood"]["autoeval_energy_ood"] <= 100


def test_ood_autoeval_names_a_missing_ood_file(tmp_path):
    from conftest import copy_project

    project = copy_project(tmp_path / "project")
    out = shifteval("run", "ood-autoeval", "--params", "smoke", "-p", f"ood_dirs={{fashion-mnist: {tmp_path}}}",
                    cwd=project, timeout=600)
    assert out.returncode == 1
    assert "fashion-mnist: missing file" in out.stderr and "t10k-images-idx3-ubyte" in out.stderr


# --- the built book in a real browser --------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _browse(html_root, shots, base_url=None):
    """Open every page of a built book in headless Chromium with networking off; report per page.

    Pages are opened from the file system, or with ``base_url`` from a static web server serving
    ``html_root`` (the only address the browser may then reach).
    """
    from playwright.sync_api import sync_playwright

    pages = sorted(p for p in html_root.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts
                   and 'http-equiv="Refresh"' not in p.read_text(encoding="utf-8"))  # the root index only redirects
    shots.mkdir(parents=True, exist_ok=True)
    report = {}

    def local(url):
        return base_url is not None and url.startswith(base_url)

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
        context = browser.new_context(offline=base_url is None, viewport={"width": 1280, "height": 900})
        # nothing leaves the machine
        context.route(re.compile(r"^https?://"), lambda route: route.continue_() if local(route.request.url) else route.abort())
        for path in pages:
            page = context.new_page()
            errors, remote = [], []
            page.on("console", lambda msg, errors=errors: errors.append(msg.text) if msg.type == "error" else None)
            page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
            page.on("request", lambda req, remote=remote: remote.append(req.url)
                    if req.url.startswith("http") and not local(req.url) else None)
            relative = path.relative_to(html_root).as_posix()
            page.goto(path.as_uri() if base_url is None else base_url + relative, wait_until="load")
            has_math = page.evaluate("document.querySelectorAll('.math').length") > 0
            if has_math:  # MathJax 3: typesetting is done when its startup promise resolves
                page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=60_000)
                page.evaluate("MathJax.startup.promise.then(() => true)")
            report[relative] = {
                "errors": errors,
                "remote_requests": remote,
                "broken_images": page.evaluate(
                    "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"),
                "images": page.evaluate("document.images.length"),
                "math": has_math,
                "math_rendered": page.evaluate("document.querySelectorAll('mjx-container svg').length"),
                "math_errors": page.evaluate("document.querySelectorAll('mjx-merror, [data-mml-node=merror]').length"),
                # TeX source left in the reading text (outside code and typeset math): math that did not render
                "raw_tex": re.findall(r".{0,30}(?:\$|\\[a-zA-Z]+).{0,30}", page.evaluate(
                    "(() => { const c = (document.querySelector('main') || document.body).cloneNode(true);"
                    " c.querySelectorAll('pre, code, mjx-container, script, style').forEach(e => e.remove());"
                    " return c.innerText; })()")),
                "exercises": page.evaluate("document.querySelectorAll('.exercise').length"),
                "solutions": page.evaluate("document.querySelectorAll('.solution').length"),
                "text": page.evaluate("document.body.innerText"),
            }
            name = relative.replace("/", "__").removesuffix(".html")
            page.screenshot(path=str(shots / f"{name}.png"), full_page=False)
            page.close()
        browser.close()
    return report


@contextlib.contextmanager
def _static_server(folder):
    """A static web server for ``folder`` on a free local port; yields its base URL."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (.ci/run installs Debian's chromium)")
def test_book_in_a_browser_full_and_student_editions(built_book):
    from conftest import ROOT

    project, _ = built_book
    out = shifteval("build", "--params", "smoke", "--edition", "student", cwd=project, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    student_root = project / "_build" / "student" / "html"
    assert (student_root / "index.html").is_file()
    reports = {}
    for edition, html_root in (("full", project / "_build" / "html"), ("student", student_root)):
        reports[edition] = _browse(html_root, ROOT / "_build" / "screenshots" / edition)
    with _static_server(project / "_build" / "html") as base_url:  # the same book from a web server
        reports["full, served"] = _browse(project / "_build" / "html", ROOT / "_build" / "screenshots" / "served", base_url)
    for edition, report in reports.items():
        for page, r in report.items():
            where = f"{edition}: {page}"
            assert not r["errors"], (where, r["errors"])
            assert not r["remote_requests"], (where, r["remote_requests"])
            assert not r["broken_images"], (where, r["broken_images"])
            if r["math"]:
                assert r["math_rendered"] > 0 and r["math_errors"] == 0, where
            assert not r["raw_tex"], (where, r["raw_tex"])
        for name in CHAPTERS:
            r = report[f"book/chapters/{name}.html"]
            assert r["exercises"] >= 3, (edition, name)
            assert r["images"] >= 1, (edition, name)
            assert "Provenance of this page" in r["text"], (edition, name)
    # solutions: in dropdowns in the full edition, absent from the student edition
    for name in CHAPTERS:
        full, student = reports["full"][f"book/chapters/{name}.html"], reports["student"][f"book/chapters/{name}.html"]
        assert full["solutions"] >= 3 and student["solutions"] == 0, name
        assert "Solution to Exercise" in full["text"] and "Solution to Exercise" not in student["text"], name
    assert reports["full"]["book/intro.html"]["math"] is False or reports["full"]["book/intro.html"]["math_rendered"] > 0
