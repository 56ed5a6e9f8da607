"""DP-HYPE on real images: the Fashion-MNIST loader (Debian's IDX files), the MLP, and the reproduction's part."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from engine.cli import main
from engine.hype import fashion, mlp
from engine.hype.training import candidate_grid
from engine.reproduce.stored_papers import BESIDE_FILES
from engine.validation import ConfigError

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "data" / "reproduction" / BESIDE_FILES["dp-hype"][0]     # the one place that names it


def _idx(array: np.ndarray) -> bytes:
    """``array`` (uint8) in the IDX format: two zero bytes, type 0x08, the number of dimensions, each dimension
    as a big-endian uint32, then the bytes."""
    header = bytes([0, 0, 0x08, array.ndim]) + np.asarray(array.shape, ">u4").tobytes()
    return header + np.ascontiguousarray(array, dtype=np.uint8).tobytes()


def _write_fixture(folder: Path, gz: bool = True, train: int = 6, test: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """The package's four files with ``train`` and ``test`` random 28 x 28 images; returns (images, labels)."""
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(train + test, 28, 28)).astype(np.uint8)
    labels = rng.integers(0, 10, size=train + test).astype(np.uint8)
    parts = {"train-images-idx3-ubyte": images[:train], "train-labels-idx1-ubyte": labels[:train],
             "t10k-images-idx3-ubyte": images[train:], "t10k-labels-idx1-ubyte": labels[train:]}
    folder.mkdir(parents=True, exist_ok=True)
    for stem, array in parts.items():
        data = _idx(array)
        if gz:
            (folder / (stem + ".gz")).write_bytes(gzip.compress(data))
        else:
            (folder / stem).write_bytes(data)
    return images, labels


@pytest.mark.parametrize("gz", [True, False])
def test_the_loader_reads_the_packages_idx_files_and_pools_them(tmp_path, gz):
    images, labels = _write_fixture(tmp_path, gz=gz)
    features, read = fashion.load_fashion_mnist(tmp_path)
    assert features.shape == (10, 196) and read.tolist() == labels.tolist()      # training images first
    # 2 x 2 average pooling: feature (i, j) is the mean of pixels (2i..2i+1, 2j..2j+1).
    expected = images.astype(float).reshape(10, 14, 2, 14, 2).mean(axis=(2, 4)).reshape(10, 196)
    np.testing.assert_array_equal(features, expected)
    assert fashion.available(tmp_path)


def test_the_folder_comes_from_the_environment_else_the_debian_package():
    assert fashion.fashion_dir({}) == Path("/usr/share/datasets/fashion-mnist")
    assert fashion.fashion_dir({fashion.FASHION_MNIST_ENV: "/elsewhere"}) == Path("/elsewhere")


def test_without_the_package_one_sentence_in_the_api_and_exit_2_on_the_cli(tmp_path, monkeypatch, capsys):
    with pytest.raises(ConfigError, match="install the Debian package dataset-fashion-mnist") as caught:
        fashion.load_fashion_mnist(tmp_path)
    assert "\n" not in str(caught.value)
    monkeypatch.setenv(fashion.FASHION_MNIST_ENV, str(tmp_path))
    assert main(["reproduce", "dp-hype", "--parts", "fashion-mnist", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "dataset-fashion-mnist" in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_truncated_or_foreign_file_is_refused_in_one_sentence(tmp_path):
    _write_fixture(tmp_path, gz=False)
    path = tmp_path / "train-images-idx3-ubyte"
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(ConfigError, match="truncated"):
        fashion.read_idx(path)
    path.write_bytes(b"PK\x03\x04 not an idx file")
    with pytest.raises(ConfigError, match="not an IDX file"):
        fashion.read_idx(path)


# ------------------------------------------------------------------ the MLP

def _blobs(clients=2, per=40, dim=4, classes=2, seed=0):
    """Well separated Gaussian blobs (one per class) with a bias column, split among ``clients``."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 4, size=(classes, dim))
    y = rng.integers(0, classes, size=(clients, per))
    x = centres[y] + rng.normal(0, 0.5, size=(clients, per, dim))
    x = np.concatenate([x, np.ones((clients, per, 1))], axis=2).astype(np.float32)
    return x, y, np.ones((clients, per), bool)


def _train(grid, x, y, mask, classes, seed, epochs=5):
    start = mlp.initial_weights(x.shape[2] - 1, classes, np.random.default_rng(seed))
    flat = mlp.common_start(start, len(grid))
    weights = np.broadcast_to(flat, (x.shape[0], flat.size))
    return flat, mlp.train_local(weights, x, y, mask, grid, classes, np.random.default_rng(seed + 1), epochs=epochs,
                                 batch=16)


def test_the_mlp_is_deterministic_given_its_seed():
    x, y, mask = _blobs()
    grid = candidate_grid()[::7]
    _, first = _train(grid, x, y, mask, 2, seed=3)
    _, again = _train(grid, x, y, mask, 2, seed=3)
    _, other = _train(grid, x, y, mask, 2, seed=4)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_the_mlp_learns_a_separable_problem_and_a_tiny_learning_rate_does_not():
    x, y, mask = _blobs()
    grid = np.array([[0.1, 1.0, 0.9], [1e-7, 1.0, 0.0]])           # (learning rate, decay, momentum)
    start, trained = _train(grid, x, y, mask, 2, seed=0)
    before, _ = mlp.predict_scores(np.broadcast_to(start, trained.shape), x, y, mask, 2)
    after, loss = mlp.predict_scores(trained, x, y, mask, 2)
    assert after[:, 0].min() == 1.0 and loss[:, 0].max() < 0.1       # every client separates its blobs
    np.testing.assert_allclose(after[:, 1], before[:, 1])           # lr 1e-7 leaves the start's accuracy
    test_x, test_y, _ = _blobs(clients=1, per=50, seed=0)
    assert mlp.test_accuracy(trained[0], test_x[0], test_y[0], 2)[0] == 1.0


def test_an_mlp_step_follows_the_gradient_of_the_mean_cross_entropy():
    """One epoch of one full batch at learning rate 1 without momentum moves the weights by minus the numerical
    gradient of the mean cross-entropy."""
    rng = np.random.default_rng(0)
    dim, classes, batch = 5, 3, 8
    x = rng.normal(size=(1, batch, dim)).astype(np.float32)
    x[..., -1] = 1.0
    y = rng.integers(0, classes, size=(1, batch))
    flat = mlp.common_start(mlp.initial_weights(dim - 1, classes, rng), 1)
    after = mlp.train_local(flat[None], x, y, np.ones((1, batch), bool), np.array([[1.0, 1.0, 0.0]]), classes,
                            np.random.default_rng(1), epochs=1, batch=batch)

    def loss(weights):
        z = mlp.logits(weights, x[0].astype(float), classes)[0]
        z = z - z.max(axis=1, keepdims=True)
        return float((np.log(np.exp(z).sum(axis=1)) - z[np.arange(batch), y[0]]).mean())

    start = flat.astype(float)
    step = 1e-5
    numeric = np.array([(loss(start + e) - loss(start - e)) / (2 * step) for e in np.eye(flat.size) * step])
    np.testing.assert_allclose(start - after[0], numeric, atol=2e-5)
    assert np.abs(numeric).max() > 1e-2                             # a step that moved


# ------------------------------------------------------------------ the reproduction's part

def _fake_table(model, clients, alpha, seed):
    """Every client ranks candidate 7 first; test accuracies drawn from the seed and the model."""
    rng = np.random.default_rng((seed, len(model)))
    local = rng.uniform(0, 0.5, (clients, 100))
    local[:, 7] = 1.0
    return {"local_accuracy": local, "local_loss": 1 - local, "test_accuracy": rng.uniform(0.1, 0.9, 100)}


def test_the_fashion_part_judges_both_models_and_marks_every_claim_as_other_data():
    from engine.reproduce.claims import verdict_of
    from engine.reproduce.dp_hype_fashion import CELLS, MODELS, fashion_part

    part = fashion_part(3, 0, votes=4, load_table=_fake_table)
    assert part["runs"] == 3 and len(part["cells"]) == len(MODELS) * len(CELLS)
    claims = part["claims"]
    for model, label in (("softmax", "Fashion-MNIST, softmax regression: "), ("mlp", "Fashion-MNIST, MLP: ")):
        own = [c for c in claims if c["claim"].startswith(label)]
        assert {c["figure"] for c in own} == {"Fig. 4", "Fig. 5", "Fig. 6", "Fig. 9", "Fig. 10", "Fig. 11"}
        assert any("RANDGUESS hovers around 30%" in c["claim"] for c in own)      # MNIST's level
    assert len({c["claim"] for c in claims}) == len(claims) == 2 * 17
    for claim in claims:
        assert claim["data_kind"] == "other" and claim["by_construction"] is False
        assert claim["verdict"] == verdict_of(claim["numbers"]["difference"], claim["numbers"]["stderr"])[0]


def test_fashion_mnist_is_asked_for_not_a_default_part_and_priced_on_its_own():
    from engine.reproduce import dp_hype_fashion
    from engine.reproduce.dp_hype import DEFAULT_PARTS, MEMORY_MB, PARTS
    from engine.reproduce.papers import default_parts, paper_cost

    assert "fashion-mnist" in PARTS and "fashion-mnist" not in DEFAULT_PARTS == default_parts("dp-hype")
    cost = paper_cost("dp-hype", ("fashion-mnist",), 20, workers=2)
    # At most its own run count, whatever --runs asks; its tables shared by the workers.
    assert cost.seconds == pytest.approx(dp_hype_fashion.SECONDS_PER_RUN * dp_hype_fashion.RUNS / 2)
    assert cost.memory_mb == MEMORY_MB + 2 * dp_hype_fashion.WORKER_MEMORY_MB
    assert paper_cost("dp-hype", ("fashion-mnist",), 3).seconds == pytest.approx(3 * dp_hype_fashion.SECONDS_PER_RUN)


@pytest.mark.skipif(not STORED.is_file(), reason="the stored Fashion-MNIST part is not in this checkout")
def test_the_stored_fashion_verdicts_follow_from_their_numbers_and_say_how_they_were_made():
    from engine.reproduce.claims import redecided
    from engine.reproduce.stored_papers import provenance

    payload = json.loads(STORED.read_text())
    part = payload["parts"]["fashion-mnist"]
    assert list(payload["parts"]) == ["fashion-mnist"] and part["data_kind"] == "other"
    assert {c["model"] for c in part["cells"]} == {"softmax", "mlp"}
    # The one rule (engine.reproduce.claims.decide) over the part's own claims, a family apart from DP-HYPE's
    # tally; its decisive claims have no replication run and say so.
    assert [c["verdict"] for c in part["claims"]] == redecided(part["claims"])
    for claim in part["claims"]:
        assert claim["holds"] == (claim["verdict"] == "holds"), claim["claim"]
        assert claim["verdict"] != "holds" or claim["why"] == "discovery only (no replication run)"
        assert claim["data_kind"] == "other" and claim["by_construction"] is False
        assert claim["numbers"]["runs"] == part["runs"] or claim["numbers"]["runs"] == 1
    made = provenance("dp-hype-fashion-mnist")
    assert made["seed"] == payload["seed"] and made["runs"] == part["runs"]
    assert "--parts fashion-mnist" in made["command"] and made["date"] and made["wall_seconds"] > 0




@pytest.mark.skipif(not STORED.is_file(), reason="the stored Fashion-MNIST part is not in this checkout")
def test_the_docs_show_the_stored_fashion_claims_in_a_block_made_from_them():
    from engine.reproduce.docs_blocks import block, names

    text = (ROOT / "docs" / "paper-comparisons.md").read_text()
    assert "claims:dp-hype:fashion-mnist" in names(text)
    table = block("claims:dp-hype:fashion-mnist")
    for claim in json.loads(STORED.read_text())["parts"]["fashion-mnist"]["claims"]:
        assert sum(line.split(" | ")[1] == claim["claim"] for line in table.splitlines()[2:]) == 1


def test_mlp_score_tables_are_cached_apart_from_the_softmax_regressions_whose_key_is_unchanged():
    from engine.hype.scores import compute_scores, score_description

    softmax, net = (score_description("wine", 10, None, 0, model=m) for m in ("softmax", "mlp"))
    assert softmax["model"] == "softmax-regression" and net["model"] == f"mlp-{mlp.HIDDEN}-relu"
    assert {key for key in softmax if softmax[key] != net[key]} == {"model"}
    table = compute_scores("wine", 10, None, 0, model="mlp")
    assert table["local_accuracy"].shape == (10, 100) and table["test_accuracy"].shape == (100,)
    assert table["test_accuracy"].max() > 0.8 > table["test_accuracy"].min()     # good and useless candidates


def test_reproduce_all_runs_dp_hypes_default_parts_only():
    """``reproduce all`` keeps its price and needs no package: the Fashion-MNIST part runs when asked for."""
    from engine.cli import build_parser
    from engine.cli.reproduce import _parts_of

    parser = build_parser()
    assert "fashion-mnist" not in _parts_of(parser.parse_args(["reproduce", "all"]), "dp-hype")
    assert "fashion-mnist" not in _parts_of(parser.parse_args(["reproduce", "dp-hype"]), "dp-hype")
    asked = parser.parse_args(["reproduce", "dp-hype", "--parts", "fashion-mnist"])
    assert _parts_of(asked, "dp-hype") == ("fashion-mnist",)
