"""Display names: the words a reader sees in a table for the identifiers the code uses.

Results, claims and files keep the code's identifiers (``matchedfrequency``, ``knn_5``,
``v1+fog@3``, ``autoeval_energy_ood``); only the tables the book shows pass through
:func:`display_name` (row and column labels) and :func:`readable` (a whole frame), which
:meth:`shifteval.book.results.Results.table` applies to every table (:func:`readable_table`). The
names are those of the papers: Recht et al. (2019, §3.1) call the replicated ImageNet test sets
*MatchedFrequency*, *Threshold0.7* and *TopImages*; Anzaku et al. number their matching procedures
Algorithms 1 and 2.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from pandas.io.formats.style import Styler

NBSP = "\u00a0"

#: Identifiers shown under another name, wherever they appear (labels and cells).
NAMES: dict[str, str] = {
    # test sets and sampling strategies (Recht et al. 2019, §3.1)
    "matchedfrequency": "MatchedFrequency",
    "threshold0.7": "Threshold0.7",
    "topimages": "TopImages",
    "top1": "top-1",
    "top5": "top-5",
    "cifar10": "CIFAR-10",
    "cifar10_balanced": "CIFAR-10, balanced",
    "imagenet": "ImageNet",
    "mnist": "MNIST",
    "fashion-mnist": "Fashion-MNIST",
    "natural_patches": "natural patches",
    # label-free estimators (Zhu et al. 2023, Table 1; shifteval.autoeval.METHOD_LABELS)
    "softmax_0.8": "softmax τ=0.8",
    "softmax_0.9": "softmax τ=0.9",
    "average_confidence": "avg. conf.",
    "doc": "DoC",
    "atc": "ATC",
    "autoeval_linear": "AutoEval (FD, linear)",
    "autoeval": "AutoEval",
    "autoeval_energy_ood": "AutoEval + energy OOD",
    # matching procedures (Anzaku et al., Algorithms 1 and 2)
    "label_and_prob": "Alg. 1 (label, p̂)",
    "prob": "Alg. 2 (p̂)",
    # model families and prediction kinds
    "sklearn": "scikit-learn",
    "cnn": "CNN",
    "mlp": "MLP",
    "probs": "probabilities",
    "predicted": "predicted labels",
    "correct": "correct or not",
    # column names
    "spearman": "Spearman ρ",
    "max_abs_delta_rank": "largest |rank change|",
    "mean_abs_delta_rank": "mean |rank change|",
    "unchanged": "same rank",
    "n_models": "models",
    "n_boot": "bootstrap replicates",
    "intercept": "offset",
    "confused_with": "confused with",
    "ood_share": "OOD share",
    "distinct_source": "distinct p̂ (source)",
    "distinct_target": "distinct p̂ (target)",
    "distinct_share": "distinct share",
    "top_share": "top value's share",
    "min_spacing": "min. spacing",
    "accuracy_source": "source accuracy",
    "matched_gap": "matched gap",
    "fraction_unmatched": "unmatched (ε)",
    "matched_gap_small": "matched gap (small ε)",
    "fraction_unmatched_small": "unmatched (small ε)",
    "acc_original": "original",
    "acc_new": "new",
}

_PUBLISHED = {"recht2019": "Recht et al. (2019)", "engstrom2020": "Engstrom et al. (2020)"}
_CNN_SUFFIX = {"ce": "cross-entropy", "focal": "focal loss", "label_smoothing": "label smoothing"}


def _model(label: str) -> str | None:
    """A zoo model's display name (``shifteval.zoo.default_zoo``), or None for another label."""
    if m := re.fullmatch(r"cnn_w(\d+)_d(\d+)(?:_(.+))?", label):
        extra = m[3] and (
            f"{m[3][1:]} epochs"
            if re.fullmatch(r"e\d+", m[3])
            else f"seed {m[3][4:]}"
            if re.fullmatch(r"seed\d+", m[3])
            else _CNN_SUFFIX.get(m[3], m[3].replace("_", " "))
        )
        return f"CNN {m[1]}×{m[2]}" + (f", {extra}" if extra else "")
    patterns = {
        r"knn_(\d+)": "k-NN, k = {}",
        r"logistic(?:_C(.+))?": "logistic regression, C = {}",
        r"gaussian_nb": "Gaussian naive Bayes",
        r"random_features_(\w+)": "random features ({})",
        r"fisher_vector_(\d+)": "Fisher vector, {} Gaussians",
        r"random_forest(?:_d(\d+))?": "random forest, depth {}",
        r"extra_trees": "extra trees",
        r"mlp_(\w+)": "MLP {}",
        r"timm_(.+)": "timm {}",
    }
    for pattern, name in patterns.items():
        if m := re.fullmatch(pattern, label):
            value = m.groups()[0] if m.groups() else None
            if value is None:  # an optional setting left at its default
                return name.split(",")[0].replace(" ({})", "").replace(" {}", "")
            return name.format(value.replace("x", "×") if pattern.startswith("mlp") else value)
    return None


def _source(label: str) -> str | None:
    """An ID test set under a corruption (``v1+fog@3``) as words, or None for another label."""
    if m := re.fullmatch(r"(.+)\+(\w+)@(\d+)", label):
        return f"{display_name(m[1])} + {m[2].replace('_', ' ')} (level {m[3]})"
    return None


def display_name(label: Any) -> Any:
    """The words a reader sees for an identifier; other labels (numbers, prose) are returned unchanged.

    Exact names first (:data:`NAMES`), then zoo models (``cnn_w8_d2_ce`` → ``CNN 8×2, cross-entropy``),
    corrupted test sets (``v1+fog@3`` → ``v1 + fog (level 3)``), the transcribed tables of the papers
    (``recht2019_imagenet_top1_matchedfrequency``), labels joined by ``" + "``, ``", "`` or ``" / "``
    (each part named), and last any remaining ``snake_case`` identifier with spaces for underscores.

    Parameters
    ----------
    label : object
        A row or column label.

    Returns
    -------
    object
        The display name (a ``str``) for a string label, else ``label`` itself.

    Examples
    --------
    >>> display_name("matchedfrequency"), display_name("knn_5"), display_name("v1+fog@3")
    ('MatchedFrequency', 'k-NN, k = 5', 'v1 + fog (level 3)')
    >>> display_name("recht2019_imagenet_top1_threshold0.7")
    'Recht et al. (2019): ImageNet top-1 Threshold0.7'
    >>> display_name("top1, topimages"), display_name("some_column"), display_name(0.5)
    ('top-1, TopImages', 'some column', 0.5)
    """
    if not isinstance(label, str):
        return label
    if label in NAMES:
        return NAMES[label]
    for name in (_model(label), _source(label)):
        if name is not None:
            return name
    if m := re.fullmatch(r"(Δ )(\S+)", label):  # a change on a named test set
        return m[1] + str(display_name(m[2]))
    for joint in (" + ", ", ", " / "):
        if joint in label:
            return joint.join(str(display_name(part)) for part in label.split(joint))
    if m := re.fullmatch(
        r"(\S+)( \(.+\))", label
    ):  # a named thing with a note: "recht2019_cifar10 (n = 2,021)"
        return f"{display_name(m[1])}{m[2]}"
    head, _, rest = label.partition("_")
    if head in _PUBLISHED:
        return f"{_PUBLISHED[head]}: " + " ".join(NAMES.get(t, t) for t in rest.split("_"))
    if re.fullmatch(r"[a-z][a-z0-9.]*(?:_[a-z0-9.]+)+", label):
        return " ".join(NAMES.get(t, t) for t in label.split("_"))
    return label


#: An interval ``[lo, hi]`` in a text cell, with the estimate before it when there is one.
_INTERVAL = re.compile(r"(?:[^\s\[\],;]+ )?\[[^\s\[\],;]+, [^\s\[\],;]+\]")


def _cell(value: Any) -> Any:
    r"""A cell as shown: identifiers named (exact names and models only), intervals kept on one line.

    Examples
    --------
    >>> _cell("[1.63, 1.76], [-78.6, -67.5]; 9.1 [8.0, 10.2]").split(" ")
    ['[1.63,\xa01.76],', '[-78.6,\xa0-67.5];', '9.1\xa0[8.0,\xa010.2]']
    """
    if not isinstance(value, str):
        return value
    if _INTERVAL.search(value):  # "estimate [lo, hi]" never breaks over lines, wherever it sits in a cell
        return _INTERVAL.sub(lambda m: m[0].replace(" ", NBSP), value)
    return NAMES.get(value) or _model(value) or _source(value) or value


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    r"""A table with display names: row and column labels and their names, and identifier cells.

    Parameters
    ----------
    frame : pandas.DataFrame
        A table as a chapter computes it.

    Returns
    -------
    pandas.DataFrame
        A copy with every label passed through :func:`display_name`, text cells naming an identifier
        replaced by its display name and ``"estimate [lo, hi]"`` cells joined by non-breaking spaces.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"n_models": [3], "kind": ["probs"], "slope [CI]": ["1.1 [1.0, 1.2]"]},
    ...                  index=pd.Index(["knn_5"], name="ood_share"))
    >>> r = readable(f)
    >>> list(r.columns), r.index.name, r.index[0], r.iloc[0, 1], r.iloc[0, 2] == "1.1\xa0[1.0,\xa01.2]"
    (['models', 'kind', 'slope [CI]'], 'OOD share', 'k-NN, k = 5', 'probabilities', True)
    """
    import pandas as pd

    out = frame.rename(index=display_name, columns=display_name)
    out.index.names = [display_name(n) for n in out.index.names]
    out.columns.names = [display_name(n) for n in out.columns.names]
    for i in range(out.shape[1]):
        if not pd.api.types.is_numeric_dtype(out.iloc[:, i]):
            out.iloc[:, i] = out.iloc[:, i].map(_cell)
    return out


def readable_table(frame: pd.DataFrame | Styler) -> pd.DataFrame | Styler:
    """A table as the book shows it: :func:`readable` for a frame; a ``Styler`` keeps its formats.

    Parameters
    ----------
    frame : pandas.DataFrame or pandas.io.formats.style.Styler
        A table as a chapter computes it, or styled.

    Returns
    -------
    pandas.DataFrame or pandas.io.formats.style.Styler
        A frame as :func:`readable` returns it; a ``Styler`` whose row and column labels (and their
        names) are shown by their display names, its cell formats unchanged.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"n_models": [3]}, index=pd.Index(["knn_5"], name="ood_share"))
    >>> html = readable_table(frame.style.format("{:d}")).to_html()
    >>> "k-NN, k = 5" in html, "OOD share" in html, "models" in html, "knn_5" in html
    (True, True, True, False)
    """
    import pandas as pd

    if isinstance(frame, pd.DataFrame):
        return readable(frame)
    styled = frame.format_index(display_name, axis=0).format_index(display_name, axis=1)
    styled.data = styled.data.rename_axis(index=display_name, columns=display_name)
    styled.index, styled.columns = styled.data.index, styled.data.columns
    return styled


def intervals(frame: pd.DataFrame, fmt: str = ".3f", low: str = "_low", high: str = "_high") -> pd.DataFrame:
    """Join each ``X``, ``X<low>``, ``X<high>`` column triple into one ``X [CI]`` column ``"x [lo, hi]"``.

    Parameters
    ----------
    frame : pandas.DataFrame
        A table whose intervals are in separate columns.
    fmt : str
        Number format of the joined columns.
    low, high : str
        Suffixes of the interval's ends.

    Returns
    -------
    pandas.DataFrame
        The table with every complete triple joined in place of the estimate's column; other columns
        unchanged.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"slope": [1.1], "slope_low": [1.0], "slope_high": [1.25], "n": [3]})
    >>> intervals(f, ".2f").to_dict("records")
    [{'slope [CI]': '1.10 [1.00, 1.25]', 'n': 3}]
    """
    out = frame.copy()
    for column in list(frame.columns):
        lo, hi = f"{column}{low}", f"{column}{high}"
        if lo in frame.columns and hi in frame.columns:
            joined = [
                f"{v:{fmt}} [{a:{fmt}}, {b:{fmt}}]"
                for v, a, b in zip(frame[column], frame[lo], frame[hi], strict=True)
            ]
            out[column] = joined
            out = out.drop(columns=[lo, hi]).rename(columns={column: f"{display_name(column)} [CI]"})
    return out
