# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   shifteval:
#     threads: 1
#     seconds: 20
#     after: [replication-world]
# ---

# %% [markdown]
# # Your own replication: how much of your drop is real?
#
# The chapters before this one ask, for the papers' test sets, how much of an accuracy drop on a
# replicated test set is real. If you built a new test set of your own — a replication, a shifted
# benchmark, a held-out split — you have the same question, and this chapter answers it in one command:
#
# ```
# shifteval run your-replication --data DIR
# ```
#
# where `DIR` is a folder in the layout below. The page then shows, for whatever the folder allows: the
# linear and probit fits of new against original accuracy over your models beside the lines of
# {cite:t}`recht2019imagenet` (is your drop the usual one?); matched evaluation
# {cite:p}`anzaku2022principled` of every model with probabilities; the selection-frequency adjustment of
# {cite:t}`engstrom2020bias` when you have annotators' votes; the misclassification likelihood matrix
# {cite:p}`sikar2024mlm` of your best model on both sets; label-free accuracy estimates on an unlabeled third
# set {cite:p}`zhu2023labelfree`; and a verdict. Where a paper states a result that two test sets can test,
# the page says whether yours reproduce it, by a rule fixed before the run, and ends with a table of these
# findings. The folder is checked before anything runs; what it does not allow is skipped, and the page says
# why.
#
# ```
# DIR/
#   labels/original.npy               true labels of the original test set (int, N)
#   labels/new.npy                    true labels of the new test set (int, M)
#   predictions/<model>/original.npz  per model: 'probs' (N x K softmax), or 'predicted' (N,), or 'correct' (N,)
#   predictions/<model>/new.npz       the same on the new set
#   predictions/<model>/unlabeled.npz optional: 'probs' on an unlabeled third set
#   votes/original.npz, votes/new.npz optional, both or neither: 'k' (yes votes) and 'n' (votes) per image
#   replication.json                  optional: display names {"original": ..., "new": ..., "unlabeled": ...}
# ```
#
# A prediction file is the project's prediction format (what `shifteval.zoo.PredictionStore` writes). If
# your predictions come from `shifteval predict` (timm models on CIFAR-10, CIFAR-10.1, ImageNet, ...), give
# its store (the folder given to `shifteval predict --out`) instead of a folder and name the two sets as the
# store names them (`NAME`, or `NAME-SPLIT` such as `imagenetv2-matched-frequency`); the labels are taken
# from the store, and the models with predictions on both sets are analysed:
#
# ```
# shifteval run your-replication --data predictions/cifar10 --original cifar10 --new cifar10.1
# ```
#
# (`--unlabeled cinic10` adds an unlabeled third set). Without
# `--data`, the chapter runs on a worked example: `shifteval export-predictions` writes the replication
# world's zoo in this layout (v1 as the original set, MatchedFrequency as the new one, fresh votes of
# re-annotators on both, Threshold0.7 without labels as the unlabeled set).
#
# Terms used here are explained in the glossary: {term}`accuracy drop`, {term}`matched accuracy`,
# {term}`fraction unmatched`, {term}`MLM`.

# %% tags=["parameters"]
data_dir = None  # your folder (see shifteval run your-replication --data DIR); None: the worked example
data_fingerprint = ""  # set by --data: a hash of the folder's files, so a changed folder re-runs the chapter
world = {}  # replication-world settings of the worked example (WorldConfig overrides)
zoo_size = "default"  # the worked example's zoo: "default" (31 models) or "smoke"
new = "matchedfrequency"  # the worked example's new test set (a replicated set of the world)
unlabeled = "threshold0.7"  # the worked example's unlabeled third set
annotators = 40  # fresh votes per image in the worked example
n_boot = 10_000  # bootstrap replicates of the fits over models
n_boot_images = 1000  # replicates of the bootstrap over models and images
eps = 0.005  # matching tolerance ε of Algorithms 1 and 2 (the paper's 0.005)
n_runs = 10  # random matchings averaged
n_boot_selection = 100  # bootstrap samples of the parametric selection estimator
seed = 0  # seed of every random draw

# %% tags=["remove-stderr"]
import tempfile

from IPython.display import Markdown, display

from shifteval import viz
from shifteval.book import results
from shifteval.book.claims import about, above, at_most, below, equal, ranks_first, within
from shifteval.book.findings import holds_in, not_testable, same_direction, verdict_counts
from shifteval.datasets import published
from shifteval.yourrep import analysis, export, folder, report

R = results.Results("your-replication")
viz.set_style()

# %% tags=["remove-stderr"]
# without a folder: the worked example, the world's zoo written by `shifteval export-predictions`
worked_example = None
if data_dir is None:
    out = tempfile.mkdtemp(prefix="your-replication-")
    data_dir = export.export_world(out, world, zoo_size, new, unlabeled, annotators, seed)
    worked_example = (
        f"the worked example (the replication world's {zoo_size} zoo, `shifteval export-predictions`)"
    )
data = folder.load_folder(data_dir)
data_label = report.source(data, worked_example)
ok = folder.available_analyses(data)

# %%
table = analysis.accuracy_table(data)
D = report.drop_facts(table)
display(
    Markdown(
        f"Predictions from {data_label}: {D['n']} models on **{data.names['original']}** "
        f"({len(data.labels['original']):,} images) and **{data.names['new']}** "
        f"({len(data.labels['new']):,} images), {data.n_classes} classes."
    )
)
R.table("your-replication-analyses", report.availability(data, ok).set_index("analysis"))
R.table("your-replication-accuracies", viz.intervals(table, ".4f"))
R.record({"data": data_label, "names": data.names, "analyses": ok, "drop": D})
R.record({"accuracies": table.to_dict(orient="index")})

# %% [markdown]
# ```{glue:figure} your-replication-analyses
# :name: tbl-your-replication-analyses
#
# **What this folder allows.** Each analysis of the page, whether it runs, and if not, why.
# ```
#
# ## The drop

# %%
# Recht et al. (§3.3): every model of their testbeds is less accurate on the new test sets
f_drop = R.finding(
    "s3.3-every-model-drops",
    paper="recht2019imagenet",
    where="§3.3",
    statement="All models see a large drop in accuracy from the original test sets to our new test sets.",
    quantity="models less accurate on the new set than on the original",
    paper_value="every model",
    run_value=f"{D['n_drop']} of {D['n']}",
    criterion=holds_in(D["n_drop"], D["n"]),
    section="The drop",
)

# %% tags=["remove-cell"]
# the verdict's words are right: "every one" exactly when the finding is reproduced
all_models = R.cite("recht2019imagenet", "§3.3", quote="All models see a large drop in accuracy")
every_drop, said = D["n_drop"] == D["n"], f_drop.verdict == "reproduced"
R.check("models-that-drop", equal(every_drop, said), **D, cite=all_models, finding=f_drop)

# %% [markdown]
# <span claim="models-that-drop">Less accurate on the new set than on the original: {n_drop} of your {n}
# models, {finding:every one, as in Recht et al.'s replications|most but not all, where every model of Recht
# et al.'s replications was|at most half, unlike Recht et al.'s replications}, of which they write {cite}. The
# gap (original minus new accuracy) is {gap:.1f} points on average, from {gap_min:.1f} to {gap_max:.1f}.</span>
# The table below lists every model with 95% Clopper-Pearson intervals {cite:p}`clopper1934`.
#
# ```{glue:figure} your-replication-accuracies
# :name: tbl-your-replication-accuracies
#
# **Accuracies on both sets** (fractions) with their 95% intervals, the gap in points, and how each model's
# predictions were given (probabilities, predicted labels, or whether each image is classified correctly).
# ```
#
# ## Is it the usual drop? Linear and probit fits
#
# {cite:t}`recht2019imagenet` found that new accuracy is close to a linear function of original accuracy,
# closer still on probit axes (§3.3, App. C.2), and published the lines of their CIFAR-10 and ImageNet
# replications. Your models' points, your fits and those two lines are drawn in
# {numref}`fig-your-replication-fits`. Your fit's intervals come from two bootstraps: over models only (as in
# the paper) and over models *and* the images of both test sets (as the linear-fits chapter does with the
# released per-image predictions), which also covers the finite test sets' noise.

# %%
F = {}  # the fits' numbers, when the folder allows a fit
if ok["linear_fits"] is None:
    fits = analysis.fit_lines(data, n_boot=n_boot, n_boot_images=n_boot_images, seed=seed)
    refs = analysis.reference_lines(n_boot=n_boot, seed=seed)
    comparison = analysis.compare_with_references(table, refs)
    F = report.fit_facts(fits, comparison)
    fig = viz.your_replication.fit_with_references(table, fits, refs)
    R.record({"fits": {s: fits[s]["fit"].summary() for s in fits}, "fit_facts": F})
    R.record({"references": comparison.to_dict(orient="index")})
else:
    fig = viz.your_replication.skipped(report.TITLES["linear_fits"], ok["linear_fits"])
R.figure("your-replication-fits", fig)

# %% [markdown]
# ```{glue:figure} your-replication-fits
# :name: fig-your-replication-fits
#
# **New against original accuracy.** One point per model with 95% Clopper-Pearson bars, your least-squares
# line with its pointwise bootstrap band (over models), and Recht et al.'s CIFAR-10 (dashed) and ImageNet
# (dotted) lines, each drawn only over the original accuracies of the models it was fitted on (34 CIFAR-10
# models; 64 ImageNet convolutional networks). Left: linear axes, the lines as printed (§3.3); right: probit
# axes, our fits of the same models (the paper printed no probit line).
# ```

# %% tags=["remove-cell"]
if ok["linear_fits"] is None:
    R.check("images-widen-the-interval", above(F["pro_width_images"], F["pro_width"]), **F)
else:
    R.omit("images-widen-the-interval")

# %% [markdown]
# <span claim="images-widen-the-interval">On probit axes your slope is {pro_slope:.2f}: 95% interval
# [{pro_lo:.2f}, {pro_hi:.2f}] when models are resampled, [{pro_ilo:.2f}, {pro_ihi:.2f}] when their images are
# resampled too — {test:wider}, since the test sets are finite.</span>

# %% tags=["remove-input"]
if ok["linear_fits"] is None:
    # each printed line against the models within its range only: separate groups of models, not compared
    display(Markdown(report.reference_sentence(comparison)))

# %%
# Recht et al.'s slopes (§3.3), and whether your fit has a slope and an interval to test them with
recht = published.reported()["recht2019"]
cifar_slope, imagenet_slope = (
    recht[k]["slope"] for k in ("cifar10_fit", "imagenet_top1_matchedfrequency_fit")
)
fitted = report.finite(F, "lin_slope", "lin_ilo", "lin_ihi")

# %%
# the slope is above 1 on both of their sets; here clear of 1 with the interval over models and images
f_slope = R.finding(
    "fig1-slope-above-one",
    paper="recht2019imagenet",
    where="§3.3",
    statement="On both datasets, the slope of the linear fit is greater than 1.",
    quantity="slope of the linear fit of new on original accuracy (95% interval over models and images)",
    paper_value=f"{cifar_slope} (CIFAR-10), {imagenet_slope} (ImageNet)",
    run_value=F.get("lin_slope"),
    interval=(F["lin_ilo"], F["lin_ihi"]) if fitted else None,
    criterion=same_direction(F["lin_slope"], imagenet_slope, 1.0, (F["lin_ilo"], F["lin_ihi"]))
    if fitted
    else not_testable(ok["linear_fits"] or "the slope or its interval is undefined on these sets"),
    section="Is it the usual drop? Linear and probit fits",
)

# %% tags=["remove-cell"]
printed_slopes = R.cite("recht2019imagenet", "§3.3", numbers=["1.69", "1.11"])
if fitted:  # "above 1" is the verdict's word exactly when the slope is above 1
    steep, said = F["lin_slope"] > 1, f_slope.verdict != "not reproduced"
    R.check("slope-vs-paper", equal(steep, said), **F, cite=printed_slopes, finding=f_slope)
else:
    R.omit("slope-vs-paper")

# %% [markdown]
# <span claim="slope-vs-paper">On linear axes your slope is {lin_slope:.2f}, 95% interval [{lin_ilo:.2f},
# {lin_ihi:.2f}] over models and images: {finding:above 1 with its whole interval, as in both of Recht et
# al.'s replications|above 1, but its interval reaches 1, where Recht et al.'s intervals lie above 1|not above
# 1, unlike both of Recht et al.'s replications} (slopes 1.69 on CIFAR-10 and 1.11 on ImageNet, {cite}: each
# point of original accuracy gained is worth more than one on the new set).</span>

# %% [markdown]
# ## Matched evaluation
#
# {cite:t}`anzaku2022principled` compare the two sets only on examples a model treats alike: each image of
# the smaller set (the target) is paired with an unused image of the larger set (the source) with the same
# predicted label and a predicted probability within ε (Algorithm 1; Algorithm 2 drops the label condition).
# The matched gap is the accuracy difference on the pairs; the part of the drop it removes is explained by
# which images each set contains, as judged by the model's own confidence. The matched-evaluation chapter
# explains the method and its pitfalls (quantised probabilities, the choice of ε).

# %%
M = {}  # the matching's numbers, when the folder allows matching
if ok["matching"] is None:
    mtables = analysis.matched_gaps(data, eps=eps, n_runs=n_runs, seed=seed)
    M = report.matching_facts(mtables)
    # the matched gaps that the word M["effect"] ("narrows", "reverses", ...) describes
    matched_range = report.effect_range(M["gap"], M["effect"])
    fig = viz.your_replication.matched_gaps(mtables)
    R.record({"matching": M})
else:
    fig = viz.your_replication.skipped(report.TITLES["matching"], ok["matching"])
R.figure("your-replication-matching", fig)

# %% [markdown]
# ```{glue:figure} your-replication-matching
# :name: fig-your-replication-matching
#
# **Accuracy gap and matched gaps**, model by model (sorted by source accuracy). Top: the accuracy gap and
# the matched gaps of Algorithms 1 and 2 (means over the matching runs). Bottom: the fraction of target
# images left without a partner.
# ```

# %%
# Anzaku et al. (§4.2): the matched gap is narrower for every model; only a model whose accuracy differs
# between the sets has a gap to narrow
f_narrow = R.finding(
    "matched-gap-consistently-narrower",
    paper="anzaku2022principled",
    where="§4.2",
    statement="the matched accuracy gap is consistently narrower",
    quantity="models whose matched gap (Algorithm 1) is narrower than their accuracy gap, of those with a gap",
    paper_value="every model",
    run_value=f"{M['n_narrower1']} of {M['n_gap']}" if M else None,
    criterion=holds_in(M["n_narrower1"], M["n_gap"])
    if M.get("n_gap")
    else not_testable(ok["matching"] or "no model's accuracy differs between the two sets: no gap to narrow"),
    section="Matched evaluation",
)

# %% tags=["remove-cell"]
# the comparison with the paper, or what the run found where it has none: no model with a gap to narrow
narrower = R.cite("anzaku2022principled", "§4.2", quote="the matched accuracy gap is consistently narrower")
if M.get("n_gap"):  # "every one" is the verdict's word exactly when every gap narrows
    R.omit("no-gap-to-narrow")
    all_narrow, said = M["n_narrower1"] == M["n_gap"], f_narrow.verdict == "reproduced"
    R.check("matching-narrows-the-gap", equal(all_narrow, said), **M, cite=narrower, finding=f_narrow)
elif M:
    R.omit("matching-narrows-the-gap")
    R.check("no-gap-to-narrow", equal(M["n_gap"], 0), **M)
else:
    R.omit("matching-narrows-the-gap", "no-gap-to-narrow")

# %% tags=["remove-cell"]
# the two algorithms' fractions unmatched compared, or, where both are 0, no ratio to state: what the run found
if not M:
    R.omit("algorithm-2-fewer-unmatched", "none-unmatched")
elif M["fu1"] or M["fu2"]:
    R.omit("none-unmatched")
    R.check("algorithm-2-fewer-unmatched", below(M["fu2"], M["fu1"], by="much"), **M)
else:  # every target image found a partner
    R.omit("algorithm-2-fewer-unmatched")
    R.check("none-unmatched", at_most(max(M["fu1"], M["fu2"]), 0), **M)

# %% [markdown]
# <span claim="matching-narrows-the-gap">With Algorithm 1 the matched gap is narrower than the accuracy gap
# for {n_narrower1} of the {n_gap} models whose accuracy differs between the sets: {finding:every one, as for
# Anzaku et al.|most but not all, where Anzaku et al. found it narrower for every model|at most half, unlike
# Anzaku et al., who found it narrower for every model}; they write {cite}. The mean gap is {gap:.1f} points
# before matching and {mgap1:.1f} after (Algorithm 2: {mgap2:.1f}).</span>
# <span claim="no-gap-to-narrow">None of your {n} models is more or less accurate on one set than on the other
# ({test.a} with a gap), so matching has no gap to narrow (mean matched gaps: {mgap1:.1f} points with
# Algorithm 1, {mgap2:.1f} with Algorithm 2).</span>
#
# <span claim="algorithm-2-fewer-unmatched">Algorithm 2 leaves {test:fewer} target images unmatched than
# Algorithm 1, at most half as many (mean fractions {test.a:.3f} and {test.b:.3f}); the largest run-to-run
# standard deviation of a model's matched gap is {sd:.2f} points.</span>
# <span claim="none-unmatched">Both algorithms find a partner for every target image (the largest mean
# fraction unmatched is {test.a:.3f}), so the two do not differ in what they leave out; the largest
# run-to-run standard deviation of a model's matched gap is {sd:.2f} points.</span>

# %% [markdown]
# ## Selection-frequency adjustment
#
# A replication that matches the original set on annotators' selection frequencies measured with few votes
# still differs from it in the *true* frequencies {cite:p}`engstrom2020bias`. With votes on both sets, the
# naive estimator (their Eq. 4) reweights the new set's accuracy to the original set's distribution of
# observed frequencies, the jackknife (§5.2) removes the naive estimator's bias in the number of annotators,
# and the parametric estimator (§5.3) models true frequencies with beta-binomial mixtures; its 95% intervals
# come from a bootstrap over images (App. F.1). Counts `k` of `n` do not say which annotator cast which vote;
# for the jackknife the votes of an image are laid out in a random order drawn from the seed.

# %%
S = {}  # the selection adjustment's numbers, when the folder has votes
if ok["selection"] is None:
    sel, sel_notes = analysis.selection_adjusted(data, n_boot=n_boot_selection, seed=seed)
    S = report.selection_facts(sel)
    # the gaps left that the word S["effect"] describes, a gap within the intervals' half-width counting as none
    adjusted_range = report.effect_range(S["gap"], S["effect"], S["halfwidth"])
    fig = viz.your_replication.selection_estimates(sel)
    R.record({"selection": {**S, **sel_notes, "per_model": sel.to_dict(orient="index")}})
else:
    fig = viz.your_replication.skipped(report.TITLES["selection"], ok["selection"])
R.figure("your-replication-selection", fig)

# %% [markdown]
# ```{glue:figure} your-replication-selection
# :name: fig-your-replication-selection
#
# **Selection-adjusted new accuracy.** For every model (sorted by original accuracy): its accuracy on the
# original and the new set, and the new set's accuracy adjusted by the naive, jackknife and parametric
# estimators (the last with its 95% bootstrap interval).
# ```

# %% tags=["remove-cell"]
if ok["selection"] is None:
    # the sentence quotes gap_param as {test.a}
    R.check("selection-adjustment-effect", within(S["gap_param"], *adjusted_range), **S)
else:
    R.omit("selection-adjustment-effect")

# %% [markdown]
# <span claim="selection-adjustment-effect">The parametric adjustment {effect} the mean gap: {gap:.1f} points
# become {test.a:.1f} (naive estimator: {gap_naive:.1f}); it brings the new accuracy closer to the original for
# {n_closer} of {n} models, and its intervals, ±{halfwidth:.1f} points (median half-width), exclude the
# original accuracy for {n_excludes}.</span>

# %%
# Engstrom et al.: the naive estimator (§5.1) corrects less than the bias-corrected ones (on ImageNet-v2 it
# leaves 5.7 points, the jackknife 4.6 (§5.2), the parametric model 3.6 of 11.7 (§5.3))
f_naive = R.finding(
    "s51-naive-underestimates",
    paper="engstrom2020bias",
    where="§5.1, §5.2, §5.3",
    statement="the selection-adjusted v2 accuracy computed by the naïve estimator is likely to still "
    "underestimate the true selection-adjusted accuracy",
    quantity="mean gap left by the naive estimator minus the gap left by the parametric one, points",
    paper_value=round(5.7 - 3.6, 1),
    run_value=S["gap_naive"] - S["gap_param"] if S else None,
    criterion=same_direction(S["gap_naive"] - S["gap_param"], 5.7 - 3.6)
    if report.finite(S, "gap_naive", "gap_param")
    else not_testable(ok["selection"] or "an estimator gave no estimate (NaN)"),
    section="Selection-frequency adjustment",
)

# %%
# Engstrom et al. (Figure 6): the adjusted gap is much smaller than the one observed (3.6 of 11.7 points, §5.3);
# "much" as the book's margin: less than half of it is left
f_much = R.finding(
    "headline-bias-explains-most-of-gap",
    paper="engstrom2020bias",
    where="Figure 6, §5.3",
    statement="The graphs confirm that the “true” gap in accuracy between v1 and v2 is indeed much smaller than "
    "the initially observed gap.",
    quantity="gap left by the parametric adjustment as a share of the observed gap (much smaller: below half)",
    paper_value=round(3.6 / 11.7, 2),
    run_value=S.get("share_left"),
    criterion=same_direction(S["share_left"], 3.6 / 11.7, reference=0.5)
    if report.finite(S, "share_left")
    else not_testable(ok["selection"] or "the new set is not harder on average: no drop to explain"),
    section="Selection-frequency adjustment",
)

# %% tags=["remove-cell"]
v2 = R.cite("engstrom2020bias", "§5.2", numbers=["5.7%"])  # the gap the naive estimator leaves on v2
left = R.cite("engstrom2020bias", "§5.3", numbers=["3.6", "11.7", "30%"])  # what the parametric model leaves
if f_naive.verdict != "not testable":  # "corrects less" is the verdict's word exactly when it leaves more
    naive_more, said = S["gap_naive"] > S["gap_param"], f_naive.verdict == "reproduced"
    R.check("naive-vs-paper", equal(naive_more, said), **S, v2=v2, left=left, finding=f_naive)
else:
    R.omit("naive-vs-paper")

# %% tags=["remove-cell"]
if f_much.verdict != "not testable":  # "much smaller" is the verdict's word exactly when under half is left
    under_half, said = S["share_left"] < 0.5, f_much.verdict == "reproduced"
    R.check("adjusted-gap-vs-paper", equal(under_half, said), **S, left=left, finding=f_much)
else:
    R.omit("adjusted-gap-vs-paper")

# %% [markdown]
# <span claim="naive-vs-paper">The naive estimator leaves {gap_naive:.1f} points of the gap and the parametric
# one {gap_param:.1f}: {finding:the naive estimator corrects less, as Engstrom et al. expected of it|the naive
# estimator corrects less, as Engstrom et al. expected of it|the naive estimator does not correct less, unlike
# Engstrom et al.'s expectation of it} (§5.1; on ImageNet-v2 it left 5.7 points, {v2}, and the parametric
# model 3.6, {left}).</span>
# <span claim="adjusted-gap-vs-paper">What the parametric adjustment leaves is {share_left:.0%} of your gap:
# {finding:much smaller than the gap observed, as on Engstrom et al.'s ImageNet-v2|much smaller than the gap
# observed, as on Engstrom et al.'s ImageNet-v2|not much smaller (at least half of it), unlike Engstrom et
# al.'s ImageNet-v2}, where 3.6 of 11.7 points were left, around 30% ({left}).</span>

# %% [markdown]
# ## Which mistakes: the MLM of your best model
#
# The misclassification likelihood matrix {cite:p}`sikar2024mlm` ranks, for every true class, the classes a
# model's softmax outputs come closest to. Here it is built for your most accurate model with probabilities,
# on each set; the class centroids are the mean softmax outputs of its correct predictions on the *original
# test set* (the paper uses the training set, which the folder does not hold). If the new set shifts which
# mistakes come first, the two matrices disagree.

# %%
if ok["mlm"] is None:
    ML = analysis.mlm_of_best(data)
    MF = report.mlm_facts(ML)
    agree_range = report.AGREEMENT[MF["agree"]]  # the Spearman correlations the word MF["agree"] describes
    fig = viz.your_replication.mlm_sets(ML)
    R.record({"mlm": MF})
else:
    fig = viz.your_replication.skipped(report.TITLES["mlm"], ok["mlm"])
R.figure("your-replication-mlm", fig)

# %% [markdown]
# ```{glue:figure} your-replication-mlm
# :name: fig-your-replication-mlm
#
# **The best model's MLM on both sets**, one point per ordered pair of different classes; the dashed line is
# equality.
# ```

# %% tags=["remove-cell"]
if ok["mlm"] is None:
    R.check("mlm-ranks-confusions", above(MF["rho_new"], 0.3) & within(MF["stability"], *agree_range), **MF)
else:
    R.omit("mlm-ranks-confusions")

# %% [markdown]
# <span claim="mlm-ranks-confusions">For {model}, the MLM on the new set ranks the pairs of classes like the
# confusions it actually makes there (Spearman {test[0].a:.2f}, {test[0]} {test[0].b}; on the original set
# {rho_original:.2f}); the two sets' matrices agree {agree} (Spearman {test[1].a:.2f} between their entries;
# "closely" means at least 0.7, "partly" at least 0.3).</span>

# %% [markdown]
# ## Label-free estimates
#
# Without labels, a model's accuracy on a new set can only be estimated. The baselines of the OOD-aware
# AutoEval chapter that need nothing but probabilities are computed here, calibrated on the original set:
# the share of images with confidence above τ = 0.8 and 0.9, the average confidence, DoC
# {cite:p}`guillory2021doc` and ATC {cite:p}`garg2022atc`. (AutoEval itself {cite:p}`zhu2023labelfree`
# regresses accuracy on the network's features over synthetic meta-sets; a folder of predictions holds no
# features, so it is not run here.) They are first checked on the new set, whose labels you have, then
# applied to the unlabeled set when the folder has one.

# %%
lf_new, lf_unl = analysis.label_free_table(data)
LF = {}  # the label-free estimators' numbers, when models have probabilities
if ok["matching"] is None:
    LF = report.label_free_facts(lf_new, analysis.rmse_by_method(lf_new))
    fig = viz.your_replication.label_free(lf_new, lf_unl)
    R.record({"label_free": LF})
else:
    fig = viz.your_replication.skipped("Label-free estimates", ok["matching"])
R.figure("your-replication-label-free", fig)
if ok["label_free"] is None:
    R.record({"unlabeled_estimates": lf_unl.to_dict(orient="index")})

# %% [markdown]
# ```{glue:figure} your-replication-label-free
# :name: fig-your-replication-label-free
#
# **Label-free estimates.** Left: each estimator's estimate of every model's new-set accuracy against the
# truth (the dashed line is a perfect estimate). Right, when the folder has an unlabeled set: the estimates
# there, model by model.
# ```

# %% tags=["remove-cell"]
# the best and the worst estimator, or, where two tie at either end, the tie the run found
if LF and not LF["tie"]:
    R.omit("label-free-tie")
    R.check(
        "label-free-best-method",
        ranks_first(LF["rmse"], LF["best"], highest=False) & ranks_first(LF["rmse"], LF["worst"]),
        **LF,
    )
elif LF:
    R.omit("label-free-best-method")
    R.check("label-free-tie", equal(LF["rmse"][LF["tie"][0]], LF["rmse"][LF["tie"][-1]]), **LF)
else:
    R.omit("label-free-best-method", "label-free-tie")

# %% [markdown]
# <span claim="label-free-best-method">Checked on the new set, {best} estimates your models' accuracy best,
# with {test[0]} RMSE ({rmse_best:.1f} points), and {worst} worst, with {test[1]} ({rmse_worst:.1f}); average
# confidence overestimates it for {n_over} of {n} models.</span>
# <span claim="label-free-tie">Checked on the new set, {ties} estimate your models' accuracy with the same RMSE,
# {test.a:.1f} points, so no single estimator is {tie_end}; RMSE runs from {rmse_best:.1f} to {rmse_worst:.1f}
# points, and average confidence overestimates the accuracy for {n_over} of {n} models.</span>

# %%
# Zhu et al. (§4.4, Table 1): the softmax baseline errs less with τ = 0.9 than with τ = 0.8 (their Table 1's
# mean RMSE over its eight pairs of sets: 5.45 against 11.24 points)
t1_softmax_08 = ["14.11", "13.61", "13.43", "12.78", "9.62", "9.12", "8.94", "8.29"]  # Table 1, as printed
t1_softmax_09 = ["8.64", "7.85", "7.31", "6.95", "4.16", "3.37", "2.83", "2.46"]
paper_08, paper_09 = (sum(map(float, row)) / len(row) for row in (t1_softmax_08, t1_softmax_09))
paper_diff = paper_09 - paper_08

# %%
f_softmax = R.finding(
    "softmax-0.9-errs-less-than-0.8",
    paper="zhu2023labelfree",
    where="Table 1, §4.4",
    statement="the error of the prediction-based method is higher when τ = 0.8 … As τ increases to 0.9, "
    "the error decreases",
    quantity="RMSE of the softmax baseline with τ = 0.9 minus with τ = 0.8, on the new set (points)",
    paper_value=round(paper_diff, 3),
    run_value=LF.get("softmax_diff"),
    criterion=same_direction(LF["softmax_diff"], paper_diff)
    if report.finite(LF, "softmax_diff")
    else not_testable(ok["matching"] or "no RMSE to compare"),
    section="Label-free estimates",
)

# %% tags=["remove-cell"]
if f_softmax.verdict != "not testable":  # "errs less" is the verdict's word exactly when the RMSE falls
    t1 = R.cite("zhu2023labelfree", "Table 1", numbers=t1_softmax_08 + t1_softmax_09)
    less, said = LF["softmax_diff"] < 0, f_softmax.verdict == "reproduced"
    paper = {"paper_08": paper_08, "paper_09": paper_09, "t1": t1}
    R.check("softmax-vs-paper", equal(less, said), **LF, **paper, finding=f_softmax)
else:
    R.omit("softmax-vs-paper")

# %% [markdown]
# <span claim="softmax-vs-paper">The softmax baseline's RMSE is {rmse_08:.1f} points with τ = 0.8 and
# {rmse_09:.1f} with τ = 0.9: {finding:it errs less with the higher threshold, as Zhu et al. found|it errs
# less with the higher threshold, as Zhu et al. found|it does not err less with the higher threshold, unlike
# Zhu et al.} (their mean RMSE over the eight test sets of {t1}: {paper_08:.2f} and {paper_09:.2f} points,
# §4.4).</span>

# %% tags=["remove-input"]
if ok["label_free"] is None:
    display(Markdown("The estimates on the unlabeled set (fractions):"))
    display(viz.readable(lf_unl.round(3)))
else:
    display(Markdown(f"No estimates on an unlabeled set: {ok['label_free']}."))

# %% [markdown]
# ## Verdict

# %% tags=["remove-cell"]
# the verdict's first sentence: the mean gap's direction (0 up to rounding error: the accuracy does not change)
v = "On the new set your models' accuracy {moves} ({size:.1f} points on average, {n} models)."
gap, drops, rises = D["gap"], D["moves"] == "drops", D["moves"] == "rises"
moved = R.claim(
    "verdict-drop",
    v,
    above(gap, 0) if drops else below(gap, 0) if rises else about(gap, 0, tol=report.NO_GAP),
    **D,
)

# %% tags=["remove-input"]
# the verdict: a sentence per analysis that ran, then the skipped ones; a paragraph whose wording depends on what
# ran, so its claims stay in code
parts = [moved]
if ok["linear_fits"] is None:
    printed = report.reference_sentence(comparison, short=True)
    parts.append(f"Against Recht et al.'s printed lines, each over the models within its range: {printed}")
if ok["matching"] is None:
    v = "Matching (Algorithm 1) {effect} it: {mgap1:.1f} points are left."
    parts.append(R.claim("verdict-matching", v, within(M["mgap1"], *matched_range), **M))
if ok["selection"] is None:
    v = "The parametric selection adjustment {effect} it: {gap_param:.1f} points are left (per-model 95% intervals: ±{halfwidth:.1f} points, median half-width)."
    parts.append(R.claim("verdict-selection", v, within(S["gap_param"], *adjusted_range), **S))
skipped = [f"Skipped: {report.TITLES[a].lower()}, since {why}." for a, why in ok.items() if why]
R.say(*parts, *skipped)

# %% [markdown]
# ## Exercises
#
# ````{exercise}
# :label: your-replication-ex-images
# The slope's interval is computed twice: by resampling models, and by resampling models *and* images.
# Why can the second only add uncertainty, and when are the two about the same size?
# ````
#
# ````{solution} your-replication-ex-images
# :class: dropdown
# Resampling models treats each model's two accuracies as exact. Resampling the images of both test sets as
# well adds each accuracy's sampling error (of order √(a(1 − a)/n) for n images), the error Recht et al.
# draw as Clopper–Pearson bars; it adds variance and removes none. When the test sets are large (tens of
# thousands of images) that error is small against the spread of the models' accuracies and the two
# intervals nearly agree; with a few hundred images per set it can dominate. Compare the two widths that
# this page reports for your folder.
# ````
#
# ````{exercise}
# :label: your-replication-ex-labels-only
# You have your models' predicted labels on both sets, but no probabilities and no votes. Which analyses of
# this page run on such a folder, and which are skipped? Write the folder with `predicted` arrays (see the
# layout above) and check your answer with `shifteval run your-replication --data DIR`.
# ````
#
# ````{solution} your-replication-ex-labels-only
# :class: dropdown
# Predicted labels give each model's correctness on both sets, which is all the accuracies and the linear and
# probit fits need (with at least three models of different original accuracy). Matching pairs images by
# predicted probability, the MLM is built from softmax outputs and the label-free estimates read confidences,
# so all three are skipped; the selection-frequency adjustment needs annotators' votes, so it is skipped too.
# The page's "Skipped: …" lines name each skipped analysis with the reason
# (`shifteval.yourrep.folder.available_analyses`).
# ````
#
# ````{exercise}
# :label: your-replication-ex-votes
# The worked example re-annotates every image with 40 fresh votes, as Engstrom et al. did (§3). Re-run it
# with `-p annotators=10`. Which of the three selection-adjusted estimates would you expect to suffer most
# from fewer votes, and why? Then look at your run.
# ````
#
# ````{solution} your-replication-ex-votes
# :class: dropdown
# The naive estimator weights v2's accuracy per observed frequency by v1's distribution of observed
# frequencies; with fewer votes the observed frequencies are noisier, so it corrects for less of the
# selection bias; its bias vanishes only as the number of votes per image grows. The jackknife extrapolates the naive estimate in 1/n from n and n − 1 votes, which is rougher when n is small.
# The parametric estimator fits a mixture to the vote counts; with 10 votes there are only 11 count levels
# to fit, so its estimate rests more on the shape of the mixture. Which effect is largest on this world is
# for the run to say, not this text: compare the three estimates and their intervals in your run's table
# with the ones on this page.
# ````

# %% tags=["remove-cell"]
R.table("your-replication-findings", R.findings_table())
tally = {v.replace(" ", "_"): n for v, n in verdict_counts([f.as_record() for f in R.findings]).items()}
missed = ", ".join(f.id for f in R.findings if f.verdict == "not reproduced") or "none"
R.check(
    "findings-summary", equal(sum(tally.values()), len(R.findings)), **tally, missed=missed, finding=f_drop
)

# %% [markdown]
# ## What this chapter reproduces
#
# <span claim="findings-summary">This page tests {test.b} of the papers' findings on your two test sets:
# {reproduced} reproduced, {partly} partly, {not_reproduced} not reproduced ({missed}) and {not_testable} not
# testable with what the folder holds. The first of them, that every model loses accuracy on the new set, is
# {finding:reproduced|partly reproduced|not reproduced|not testable} here.</span> A finding that a paper's
# chapter tests too has the same name there, and the book's overview of findings ({doc}`../reproduction`) shows
# its verdict on your sets beside the chapter's.
#
# ```{glue:figure} your-replication-findings
# :name: tbl-your-replication-findings
#
# **What this chapter reproduces.** Each result of the papers this chapter tests on your test sets, where the
# paper states it, the values compared, and the verdict its criterion gives (the rules: {doc}`../reproduction`).
# ```
