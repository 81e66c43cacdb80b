"""The book's figure style: sizes for the content width, one-panel image grids, the legibility measure."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from shifteval.viz import common
from shifteval.viz.common import (
    CONTENT_WIDTH_PX,
    MAX_PANELS_PER_ROW,
    MIN_TEXT_PX,
    content_width_in,
    fit_width,
    image_grid,
    legibility,
    legibility_problems,
    subplots,
    wrap,
)


@pytest.fixture(autouse=True)
def style():
    common.set_style()
    yield
    plt.close("all")


def test_thresholds_are_the_books():
    assert (CONTENT_WIDTH_PX, MIN_TEXT_PX, MAX_PANELS_PER_ROW) == (800, 9, 3)


def test_a_figure_of_the_content_width_is_shown_unscaled():
    fig, axes = subplots(1, 3, height=3)
    for ax in axes:
        ax.plot([0, 1], [0, 1])
        ax.set(title="a title", xlabel="an x label", ylabel="a y label")
    m = legibility(fig)
    assert m["width_px"] <= CONTENT_WIDTH_PX and m["scale"] == 1.0
    assert m["panels_per_row"] == 3 and m["overlaps"] == [] and m["min_text_px"] >= MIN_TEXT_PX
    assert legibility_problems(m) == []


def test_subplots_width_and_limits():
    fig, _ = subplots(width=0.5, height=2)
    assert fig.get_figwidth() == pytest.approx(content_width_in() / 2)
    assert content_width_in(200) == pytest.approx(800 / 200 - 2 * plt.rcParams["savefig.pad_inches"])
    with pytest.raises(ValueError, match="at most 3 panels per row"):
        subplots(1, 4)
    with pytest.raises(ValueError, match="fraction of the content width"):
        subplots(width=1.5)


@pytest.mark.parametrize("n, grid", [(1, (1, 1)), (3, (1, 3)), (4, (2, 3)), (6, (2, 3)), (10, (4, 3))])
def test_wrap_keeps_at_most_three_panels_to_a_row(n, grid):
    rows, cols = wrap(n)
    assert (rows, cols) == grid and rows * cols >= n and cols <= MAX_PANELS_PER_ROW


def test_fit_width_shrinks_a_wide_figure_until_it_is_shown_unscaled():
    fig = plt.figure(figsize=(14, 5), layout="constrained")
    fig.gca().set(title="wide", xlabel="x", ylabel="y")
    assert legibility(fig)["scale"] < 0.6
    fit_width(fig)
    assert legibility(fig)["scale"] == 1.0
    assert fig.get_figheight() / fig.get_figwidth() == pytest.approx(5 / 14)  # both sides shrink


def test_image_grid_is_one_panel_with_its_labels_as_ticks():
    images = np.random.default_rng(0).random((10, 9, 16, 16))
    rows, cols = [str(r) for r in range(10)], [f"d={c}" for c in range(9)]
    fig = image_grid(images, row_labels=rows, col_labels=cols)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == rows
    assert [t.get_text() for t in ax.get_xticklabels()] == cols
    mosaic = ax.get_images()[0].get_array()
    assert mosaic.shape == (10 * 17 - 1, 9 * 17 - 1)
    np.testing.assert_array_equal(mosaic[17:33, 34:50], images[1, 2])  # row 1, column 2
    assert np.ma.getmaskarray(mosaic)[16].all()  # a blank line between rows
    assert legibility_problems(legibility(fig)) == []


def test_image_grid_without_labels_has_no_ticks():
    ax = image_grid(np.zeros((2, 2, 4, 4))).axes[0]
    assert list(ax.get_xticks()) == [] and list(ax.get_yticks()) == []


def test_legibility_reports_colliding_panels_and_small_text():
    fig, axes = plt.subplots(1, 2, figsize=(4, 2), dpi=100)
    fig.subplots_adjust(wspace=0)
    axes[1].set_ylabel("a long label that runs into the left panel " * 2)
    axes[0].set_title("tiny", fontsize=5)
    m = legibility(fig)
    assert m["overlaps"] == [(0, 1)]
    assert [p.split()[0] for p in legibility_problems(m)] == ["smallest", "colliding"]


def test_legibility_ignores_tick_labels_outside_the_view():
    """Matplotlib keeps labels for ticks beyond the axis limits but does not draw them."""
    fig, axes = subplots(1, 2, height=3)
    for ax in axes:
        ax.set_xticks(np.linspace(-1, 2, 13))  # most of them lie outside the view, over the neighbour
        ax.set_xlim(0.05, 0.95)
    fig.canvas.draw()
    every = [[t.get_window_extent() for t in ax.get_xticklabels()] for ax in axes]
    assert any(a.overlaps(b) for a in every[0] for b in every[1])  # were they drawn, they would collide
    assert legibility(fig)["overlaps"] == []


def test_legibility_problems_name_the_measured_values():
    record = {"min_text_px": 7.1, "min_font_pt": 9.5, "scale": 0.54, "panels_per_row": 9, "overlaps": []}
    assert legibility_problems(record) == [
        "smallest text 7.1 px < 9 px (9.5 pt at scale 0.54)",
        "9 panels per row > 3",
    ]
    assert legibility_problems({"min_text_px": 0, "panels_per_row": 1, "overlaps": []}) == []  # no text


def _identifiers():
    from shifteval import zoo
    from shifteval.autoeval import METHODS
    from shifteval.datasets import published
    from shifteval.viz.names import NAMES

    tables = published.list_tables()
    models = [s.name for size in ("default", "smoke") for s in zoo.default_zoo(size)]
    return sorted(
        {*models, *METHODS, *NAMES, *tables, "v1+fog@3", "test+gaussian_noise@3", "natural_patches"}
    )


def test_display_names_are_distinct_words_and_stable():
    """Each identifier gets its own display name (no two rows merge), a display name is its own display
    name (so the page test can recognise one), and no zoo model keeps an underscore but timm's own names."""
    from shifteval.viz.names import display_name

    ids = _identifiers()
    shown = {i: display_name(i) for i in ids}
    assert len(set(shown.values())) == len(ids), [i for i in ids if list(shown.values()).count(shown[i]) > 1]
    assert all(display_name(s) == s for s in shown.values()), [
        s for s in shown.values() if display_name(s) != s
    ]
    assert not [s for s in shown.values() if "_" in s and not s.startswith("timm ")]
    assert display_name("cnn_w16_d3_e12") == "CNN 16×3, 12 epochs"
    assert display_name("v1+fog@3 + natural_patches") == "v1 + fog (level 3) + natural patches"
    assert display_name(3) == 3 and display_name("mean gap (points)") == "mean gap (points)"


def test_readable_renames_labels_and_keeps_numbers():
    import pandas as pd

    from shifteval.viz import readable

    frame = pd.DataFrame(
        {"n_models": [3, 4], "kind": ["probs", "free text"], "gap": [0.5, -1.25]},
        index=pd.Index(["knn_5", "topimages"], name="ood_share"),
    )
    shown = readable(frame)
    assert list(shown.index) == ["k-NN, k = 5", "TopImages"] and shown.index.name == "OOD share"
    assert list(shown.columns) == ["models", "kind", "gap"]
    assert shown["kind"].tolist() == ["probabilities", "free text"]
    assert shown["gap"].tolist() == [0.5, -1.25] and shown["models"].tolist() == [3, 4]
    assert list(frame.index) == ["knn_5", "topimages"]  # the chapter's frame is left as it was


def test_intervals_join_estimate_and_ends_in_one_column():
    import pandas as pd

    from shifteval.viz import intervals

    frame = pd.DataFrame(
        {"slope": [1.0], "slope CI low": [0.9], "slope CI high": [1.2], "slope_low": [0.0], "r": [0.99]}
    )
    joined = intervals(frame, ".2f", " CI low", " CI high")
    assert list(joined.columns) == ["slope [CI]", "slope_low", "r"]  # an incomplete triple is left alone
    assert joined.loc[0, "slope [CI]"] == "1.00 [0.90, 1.20]"


def test_every_public_function_of_a_figure_module_is_traced():
    """Each figure names the library function that drew it (``results.json``, provenance box): a public
    function of a chapter's figure module without ``@traced`` (or a helper slipped between the decorator and
    its function) would draw figures the book cannot trace."""
    import importlib
    import inspect
    import pkgutil

    import shifteval.viz as viz_package

    untraced = []
    for info in pkgutil.iter_modules(viz_package.__path__):
        if info.name in ("common", "names"):  # the shared drawing tools and display names, not figures
            continue
        module = importlib.import_module(f"shifteval.viz.{info.name}")
        for name, obj in vars(module).items():
            public = (
                inspect.isfunction(obj) and obj.__module__ == module.__name__ and not name.startswith("_")
            )
            if public and not getattr(obj, "_shifteval_traced", False):
                untraced.append(f"{info.name}.{name}")
    assert not untraced, untraced
