"""Landmine task: the loader, the split, refusing a bad file, fetching, and table == direct training."""

from __future__ import annotations

import shutil
import urllib.error
import zipfile

import numpy as np
import pytest

from engine.cli import main
from engine.objectives import DatasetUnavailable, build_objective
from engine.objectives import landmine
from engine.objectives.builds import build_table
from engine.objectives.datasets import LANDMINE_SHA256, fetch_landmine, file_sha256, load_landmine
from engine.objectives.tasks import grid_candidates
from engine.validation import ConfigError

pytestmark = pytest.mark.landmine


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def fields(data_dir):
    return load_landmine(data_dir)


def _tampered_copy(data_dir, root):
    target = root / "landmine" / "LandmineData.mat"
    target.parent.mkdir(parents=True)
    shutil.copyfile(data_dir / "landmine" / "LandmineData.mat", target)
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    return target


def test_loader_reads_29_fields_with_the_readme_shapes(fields):
    assert len(fields) == 29
    sizes = []
    for features, labels in fields:
        assert features.ndim == 2 and features.shape[1] == 9 and features.dtype == float
        assert labels.shape == (features.shape[0],)
        assert set(np.unique(labels)) == {0, 1}
        sizes.append(len(labels))
    assert min(sizes) == 445 and max(sizes) == 690
    share = sum(int(labels.sum()) for _, labels in fields) / sum(sizes)
    assert 0.058 < share < 0.064  # README: about 6.1 % of labels are 1


@pytest.mark.parametrize("split", ["authors", "seeded"])
def test_split_is_stratified_disjoint_and_reproducible(fields, split):
    splits = landmine.split_fields(fields, seed=0, split=split)
    for (features, labels), half in zip(fields, splits):
        assert len(half.y_train) + len(half.y_valid) == len(labels)
        # Stratified halves: per class, train and validation differ by at most one example.
        for label in (0, 1):
            n_train, n_valid = np.sum(half.y_train == label), np.sum(half.y_valid == label)
            assert abs(int(n_train) - int(n_valid)) <= 1
        # Together the halves are exactly the field's rows (no row twice, none lost).
        rows = np.concatenate([half.x_train, half.x_valid])
        assert np.array_equal(np.unique(rows, axis=0), np.unique(features, axis=0))
    again = landmine.split_fields(fields, seed=0, split=split)
    other = landmine.split_fields(fields, seed=1, split=split)
    assert all(np.array_equal(a.x_train, b.x_train) for a, b in zip(splits, again))
    # The authors' split is one fixed split for every seed; a seeded split moves with the seed.
    same = all(np.array_equal(a.x_train, b.x_train) for a, b in zip(splits, other))
    assert same == (split == "authors")


def test_authors_split_is_scikit_learns_random_state_0_half_split(fields):
    # preprocess.py:17 of the authors' code: train_test_split(..., test_size=0.5, stratify=label, random_state=0).
    from sklearn.model_selection import train_test_split

    splits = landmine.split_fields(fields[:3], seed=7)
    for (features, labels), half in zip(fields[:3], splits):
        x_train, x_test, y_train, y_test = train_test_split(features, labels, test_size=0.5, stratify=labels,
                                                            random_state=0)
        assert np.array_equal(half.x_train, x_train) and np.array_equal(half.y_valid, y_test)


def test_hyperparameters_map_linearly_as_in_the_authors_code(data_dir):
    # landmine_dp_fts_de.py:31-35: C = 1e-4 + x0 (10 - 1e-4), gamma = 1e-2 + x1 (10 - 1e-2).
    task = landmine.make_task(n_agents=1, data_dir=data_dir)
    corners = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.5, 0.25]])
    hp = task.hyperparameters(corners)
    np.testing.assert_allclose(hp["C"], [1e-4, 10.0, 1e-4, 10.0, 1e-4 + 0.5 * (10 - 1e-4)], rtol=1e-12)
    np.testing.assert_allclose(hp["gamma"], [1e-2, 10.0, 10.0, 1e-2, 1e-2 + 0.25 * (10 - 1e-2)], rtol=1e-12)
    # A table built on the old log-scale map (or another split) has another cache key: never trusted.
    from engine.objectives.store import table_path

    log_task = landmine.make_task(n_agents=1, data_dir=data_dir)
    object.__setattr__(log_task, "scale", "log10")
    assert table_path(log_task) != table_path(task)
    assert table_path(landmine.make_task(n_agents=1, data_dir=data_dir, split="seeded")) != table_path(task)


def test_agents_default_to_all_fields_and_take_the_first_n(data_dir):
    task = landmine.make_task(data_dir=data_dir)
    assert task.n_agents == 29 and task.default_grid == 50 and task.dim == 2
    assert (task.lengthscale, task.noise_var) == (0.01, 1e-6)  # DP-FTS-DE App. B.2.1
    small = landmine.make_task(n_agents=3, data_dir=data_dir)
    assert small.n_agents == 3
    assert all(np.array_equal(a.x_train, b.x_train) for a, b in zip(small.agents, task.agents[:3]))
    with pytest.raises(ConfigError, match="at most 29"):
        landmine.make_task(n_agents=30, data_dir=data_dir)


def test_tampered_file_is_refused_with_where_to_put_it(data_dir, tmp_path, monkeypatch):
    _tampered_copy(data_dir, tmp_path)

    def worked(*args, **kw):
        raise AssertionError("the file's fields were read or its task built before the file was checked")

    # The dashboard shows the sentence at once: no field is split and no task or table is built first.
    monkeypatch.setattr(landmine, "split_fields", worked)
    monkeypatch.setattr(landmine, "objective_for", worked)
    with pytest.raises(DatasetUnavailable) as err:
        build_objective("landmine", data_dir=str(tmp_path))
    message = str(err.value)
    assert "sha256" in message and str(tmp_path / "landmine" / "LandmineData.mat") in message
    assert "DPBO_DATA_DIR/landmine/LandmineData.mat" in message and "--data-dir" in message
    assert "python -m engine data fetch landmine" in message
    assert isinstance(err.value, ConfigError)


def test_missing_file_is_refused_with_where_to_put_it(tmp_path, capsys):
    with pytest.raises(DatasetUnavailable, match="does not exist.*DPBO_DATA_DIR/landmine/LandmineData.mat"):
        load_landmine(tmp_path)
    assert main(["data", "build-table", "--dataset", "landmine", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: The landmine data set is unavailable") and "Traceback" not in err


def test_fetch_from_a_local_url_verifies_and_installs_the_file(data_dir, tmp_path):
    source = data_dir / "landmine" / "LandmineData.mat"
    result = fetch_landmine(tmp_path / "plain", source.as_uri())
    assert result["status"] == "downloaded"
    assert file_sha256(tmp_path / "plain" / "landmine" / "LandmineData.mat") == LANDMINE_SHA256
    assert fetch_landmine(tmp_path / "plain", "file:///nonexistent")["status"] == "present"
    # The papers' address serves a zip holding the file.
    archive = tmp_path / "LandmineData.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.write(source, "LandmineData/LandmineData.mat")
    assert fetch_landmine(tmp_path / "zipped", archive.as_uri())["status"] == "downloaded"
    assert file_sha256(tmp_path / "zipped" / "landmine" / "LandmineData.mat") == LANDMINE_SHA256


def test_fetch_refuses_a_corrupt_download_and_writes_nothing(data_dir, tmp_path):
    corrupt = _tampered_copy(data_dir, tmp_path / "source")
    with pytest.raises(DatasetUnavailable, match="does not match the published sha256.*nothing was written"):
        fetch_landmine(tmp_path / "target", corrupt.as_uri())
    assert not (tmp_path / "target" / "landmine").exists() or not any((tmp_path / "target" / "landmine").iterdir())


def test_fetch_without_network_says_where_to_put_the_file(tmp_path, capsys):
    def offline(url, timeout):
        raise urllib.error.URLError("Name or service not known")

    with pytest.raises(DatasetUnavailable, match="Could not download.*Put LandmineData.mat at"):
        fetch_landmine(tmp_path, "http://example.invalid/LandmineData.zip", opener=offline)
    # The CLI turns it into one sentence and exit 2 (port 9 on localhost refuses at once).
    code = main(["data", "fetch", "landmine", "--data-dir", str(tmp_path), "--url", "http://127.0.0.1:9/x.zip",
                 "--timeout", "5"])
    err = capsys.readouterr().err
    assert code == 2 and "Put LandmineData.mat at" in err and "Traceback" not in err
    assert not (tmp_path / "landmine" / "LandmineData.mat").exists()


def test_table_equals_direct_training_with_scikit_learn(data_dir):
    from sklearn.metrics import roc_auc_score
    from sklearn.svm import SVC

    task = landmine.make_task(n_agents=2, data_dir=data_dir)
    built = build_table(task, grid=5, n_jobs=1)
    assert built.values.shape == (2, 25) and not built.from_cache
    exact = build_objective("landmine", n_agents=2, data_dir=str(data_dir), domain="continuous")
    rng = np.random.default_rng(0)
    for agent in (0, 1):
        split = task.agents[agent]
        for point in rng.choice(25, size=4, replace=False):
            x = built.candidates[point]
            c_value, gamma = 1e-4 + x[0] * (10 - 1e-4), 1e-2 + x[1] * (10 - 1e-2)
            model = SVC(kernel="rbf", C=c_value, gamma=gamma).fit(split.x_train, split.y_train)
            direct = roc_auc_score(split.y_valid, model.decision_function(split.x_valid))
            # Same solver, kernel values equal up to rounding: AUCs agree to float precision.
            assert built.values[agent, point] == pytest.approx(direct, abs=1e-9)
            assert exact.value(np.array([agent]), x[None])[0] == built.values[agent, point]


def test_table_objective_carries_the_paper_settings(data_dir, monkeypatch):
    monkeypatch.setattr(landmine, "DEFAULT_GRID", 4)
    objective = build_objective("landmine", n_agents=2, data_dir=str(data_dir))
    assert objective.is_discrete and objective.values.shape == (2, 16)
    assert np.array_equal(objective.candidates, grid_candidates(2, 4))
    assert np.all(objective.reference == 1.0) and objective.metric_label == "1 - AUC"
    assert np.all((objective.values >= 0) & (objective.values <= 1))
    assert objective.noise_std == 0.0 and objective.lengthscale == 0.01 and objective.noise_var == 1e-6
