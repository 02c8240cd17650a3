"""gpstream.layout against gpe.md's rules (§3 positions, §4 attention, §2 delays), checked row by row in
numpy code written here, separately from the C++ layout function."""

import numpy as np
import pytest

import gpstream

SOURCE = "Save the file in your home folder before you close the program."
TARGET = "Enregistrez le fichier dans votre dossier personnel avant de fermer le programme."


def groups_of(rows):
    return rows["groups"].astype(bool)  # True: target


def rank_in_group(rows):
    """Each row's index among the rows of its own group, in arrival order."""
    target = groups_of(rows)
    return np.where(target, np.cumsum(target) - 1, np.cumsum(~target) - 1)


def mask_from_counts(rows):
    """gpe.md §4 as a mask: row i sees row j iff j is among the first n_src[i] source rows or the first
    n_tgt[i] target rows."""
    target = groups_of(rows)
    rank = rank_in_group(rows)
    limit = np.where(target[None, :], rows["n_tgt"][:, None], rows["n_src"][:, None])
    return rank[None, :] < limit


@pytest.mark.parametrize("k", [1, 3, 100])
def test_group_layout_follows_gpe(model, k):
    rows = gpstream.layout(model, SOURCE, TARGET, paradigm="group", k=k, phi="0", dense_mask=True)
    n = len(rows["ids"])
    for key in ("positions", "groups", "n_src", "n_tgt", "labels", "loss_weights"):
        assert rows[key].shape == (n,)
    target = groups_of(rows)
    rank = rank_in_group(rows)
    n_source = int((~target).sum())
    assert n_source == rows["n_source_rows"] and n - n_source == rows["n_target_rows"]
    # §3: both groups count positions from their start (source 0, target φ = 0), one per row.
    np.testing.assert_array_equal(rows["positions"], rank.astype(np.float32))
    # §4: source rows are causal over the source and never see a target row.
    np.testing.assert_array_equal(rows["n_src"][~target], rank[~target] + 1)
    assert (rows["n_tgt"][~target] == 0).all()
    # Target rows are causal over the target, and see more source as the target goes on.
    np.testing.assert_array_equal(rows["n_tgt"][target], rank[target] + 1)
    assert (np.diff(rows["n_src"][target]) >= 0).all()
    assert rows["n_src"][target].max() <= n_source
    if k == 100:  # k beyond the source: every target row sees the whole source
        assert (rows["n_src"][target] == n_source).all()
    # §2/§4: target word j is written after min(k + j - 1, M) source words.
    m = len(SOURCE.split())
    delays = rows["delays"].tolist()
    assert delays == [min(k + j, m) for j in range(len(delays))]
    # Teacher forcing: a labelled row predicts the next target row's token, the last one the end marker.
    labelled = np.flatnonzero(rows["labels"] >= 0)
    assert (target[labelled]).all()
    np.testing.assert_array_equal(rows["loss_weights"], (rows["labels"] >= 0).astype(np.float32))
    target_rows = np.flatnonzero(target)
    following = {int(r): int(target_rows[i + 1]) for i, r in enumerate(target_rows[:-1])}
    for r in labelled[:-1]:
        assert rows["labels"][r] == rows["ids"][following[int(r)]]
    predicted = [int(rows["labels"][r]) for r in labelled[:-1]]
    assert model.detokenize(predicted).strip() == TARGET
    # The dense mask is the rule of n_src and n_tgt.
    np.testing.assert_array_equal(rows["mask"], mask_from_counts(rows))


def test_phi_moves_only_the_target_positions(model):
    at_0 = gpstream.layout(model, SOURCE, TARGET, k=3, phi=0)
    at_half = gpstream.layout(model, SOURCE, TARGET, k=3, phi=0.5)
    target = groups_of(at_0)
    np.testing.assert_array_equal(at_half["positions"][~target], at_0["positions"][~target])
    np.testing.assert_array_equal(at_half["positions"][target], at_0["positions"][target] + np.float32(0.5))
    for key in ("ids", "groups", "n_src", "n_tgt", "labels"):
        np.testing.assert_array_equal(at_half[key], at_0[key])


def test_interleaved_source_rows_see_the_target_written_before_them(model):
    rows = gpstream.layout(model, SOURCE, TARGET, paradigm="interleaved", k=2, dense_mask=True)
    target = groups_of(rows)
    first_target = int(np.flatnonzero(target)[0])
    later_source = np.flatnonzero(~target)
    later_source = later_source[later_source > first_target]
    assert len(later_source) > 0 and (rows["n_tgt"][later_source] > 0).all()
    # One position sequence over the interleaved rows (gpe.md §6): 0, 1, 2, ... in arrival order.
    np.testing.assert_array_equal(rows["positions"], np.arange(len(rows["ids"]), dtype=np.float32))
    np.testing.assert_array_equal(rows["mask"], mask_from_counts(rows))


def test_positions_removed_puts_a_group_at_zero(model):
    rows = gpstream.layout(model, SOURCE, TARGET, k=3, positions_removed="target")
    target = groups_of(rows)
    assert (rows["positions"][target] == 0).all() and rows["positions"][~target].max() > 0


def test_layout_errors(model):
    with pytest.raises(ValueError, match="paradigm"):
        gpstream.layout(model, SOURCE, TARGET, paradigm="sideways")
    with pytest.raises(ValueError, match="re-?encode|single"):
        gpstream.layout(model, SOURCE, TARGET, paradigm="reencode")
    with pytest.raises(ValueError, match="k"):
        gpstream.layout(model, SOURCE, TARGET, k=0)
    with pytest.raises(ValueError, match="phi"):
        gpstream.layout(model, SOURCE, TARGET, phi="x")
