"""Saved scenes and pickling: Scene.save / raypick.open_saved, pickle,
multiprocessing and Dask all give back the scene that answers as before."""
import importlib.util
import json
import multiprocessing
import os
import pickle
import subprocess

import numpy as np
import pytest

import raypick
from cube import CUBE_TRIANGLES, CUBE_VERTICES

SOURCE = os.path.join(os.path.dirname(__file__), "..", "..")
EXE = os.environ.get("RAYPICK_EXE", os.path.join(SOURCE, "build", "apps", "raypick"))
SHELF = os.path.join(SOURCE, "apps", "examples", "shelf.json")
CAMERAS = os.path.join(SOURCE, "tests", "fuzz", "corpus", "gltf", "assimp_glTF2_cameras_Cameras.gltf")


def rays(n, seed):
    rng = np.random.default_rng(seed)
    org = rng.uniform([-3, 0, -6], [3, 2.5, 1], size=(n, 3))
    return np.hstack([org, rng.normal(size=(n, 3))])


def same_answers(a, b, r):
    ha, hb = a.cast_rays(r), b.cast_rays(r)
    for key in ha:
        assert np.array_equal(ha[key], hb[key], equal_nan=True), key
    return int((ha["object"] >= 0).sum())


@pytest.mark.parametrize("mode", ["obb", "mesh"])
def test_save_then_open_saved_answers_as_the_loaded_scene(mode, tmp_path):
    scene = raypick.load(SHELF, mode=mode)
    path = str(tmp_path / "shelf.rpscene")
    scene.save(path)
    back = raypick.open_saved(path, mode=mode)
    # The saved trees were adopted (no build) and are the built ones.
    assert scene.stats()["trees"] == "built" and back.stats()["trees"] == "saved"
    alike = lambda st: {k: v for k, v in st.items() if k not in ("trees", "memory_bytes")}
    assert alike(back.stats()) == alike(scene.stats())
    # Opened in the other mode, the trees do not fit: built again, same answers.
    other = raypick.open_saved(path, mode="mesh" if mode == "obb" else "obb")
    assert other.stats()["trees"] == "built"
    assert back.names == scene.names and len(back) == len(scene)
    assert np.array_equal(back.matrices(), scene.matrices())
    assert same_answers(scene, back, rays(3000, 1)) > 100
    # raypick.load and the CLI read it too, with the same answers.
    assert same_answers(scene, raypick.load(path, mode=mode), rays(500, 2)) > 30
    r = rays(200, 3)
    f = tmp_path / "rays.txt"
    f.write_text("".join(" ".join(repr(float(x)) for x in ray) + "\n" for ray in r))
    run = lambda p: subprocess.run([EXE, "pick", p, "--rays", str(f), "--mode", mode],
                                   check=True, capture_output=True, text=True).stdout
    assert run(path) == run(SHELF)


def test_a_gltf_files_cameras_survive_saving(tmp_path):
    scene = raypick.load(CAMERAS)
    path = str(tmp_path / "cams.rpscene")
    scene.save(path)
    back = raypick.open_saved(path)
    assert [repr(c) for c in back.cameras] == [repr(c) for c in scene.cameras]
    assert len(back.cameras) == 2


def built_scene():
    """A numpy-built scene with a move, a mask and a removal since commit()."""
    scene = raypick.Scene(mode="mesh")
    cube = scene.add_mesh(CUBE_VERTICES, CUBE_TRIANGLES)
    for i in range(6):
        m = np.eye(4)
        m[:3, 3] = [2.0 * i - 5.0, 0.0, -3.0]
        scene.add_object(cube, m, name=f"cube {i}")
    scene.commit()
    moved = np.eye(4)
    moved[:3, 3] = [0.0, 1.0, -2.0]
    scene.set_matrix(1, moved)
    scene.set_mask(2, 0x4)
    scene.remove(3)
    scene.commit()
    return scene


def test_pickle_keeps_ids_names_moves_masks_and_removals():
    scene = built_scene()
    back = pickle.loads(pickle.dumps(scene))
    assert back.names == scene.names and len(back) == 6 and back.mode == "mesh"
    # Removed objects change the saved scene: its trees are built anew.
    assert back.stats()["trees"] == "built"
    r = np.array([[2.0 * i - 5.0, 0.0, 5.0, 0.0, 0.0, -1.0] for i in range(6)] +
                 [[0.0, 1.0, 5.0, 0.0, 0.0, -1.0]])
    hits = back.cast_rays(r)
    # Cube 1 moved away from its row, cube 3 removed: those rays miss;
    # the moved cube is hit where it went.
    assert hits["object"].tolist() == [0, -1, 2, -1, 4, 5, 1]
    assert same_answers(scene, back, r) == 5
    # Masks survive: cube 2 has bit 2 only, the others every bit.
    assert back.cast_rays(r, mask=0x8)["object"].tolist() == [0, -1, -1, -1, 4, 5, 1]


def test_pickling_an_unchanged_scene_ships_its_trees():
    scene = raypick.load(SHELF, mode="mesh")
    back = pickle.loads(pickle.dumps(scene))
    assert back.stats()["trees"] == "saved"
    assert same_answers(scene, back, rays(2000, 7)) > 50
    # After moves and a commit, the trees as they stand go along.
    scene.set_matrix(2, np.eye(4) + np.array([[0, 0, 0, 0.3], [0] * 4, [0] * 4, [0] * 4]))
    scene.commit()
    again = pickle.loads(pickle.dumps(scene))
    assert again.stats()["trees"] == "saved"
    assert same_answers(scene, again, rays(2000, 8)) > 50


def test_pickle_round_trips_a_scene_without_objects(tmp_path):
    # Saved scene files must hold objects; a Scene pickled before its first
    # object is still a Scene, and its meshes keep their ids.
    for mode in ("obb", "mesh"):
        empty = pickle.loads(pickle.dumps(raypick.Scene(mode)))
        assert empty.mode == mode and len(empty) == 0
        assert empty.cast_rays(np.array([[0.25, 0.25, -5.0, 0.0, 0.0, 1.0]]))["object"][0] == -1
        scene = raypick.Scene(mode)
        scene.add_mesh(np.zeros((3, 3)), np.array([[0, 1, 2]]))  # mesh 0, never placed
        cube = scene.add_mesh(CUBE_VERTICES, CUBE_TRIANGLES)
        back = pickle.loads(pickle.dumps(scene))
        back.add_object(cube, np.eye(4))
        back.commit()
        hit = back.cast_rays(np.array([[0.25, 0.25, -5.0, 0.0, 0.0, 1.0]]))
        assert hit["object"][0] == 0 and hit["t"][0] == pytest.approx(4.5)
    # A file is another matter: loading one without objects is an error.
    path = str(tmp_path / "empty.rpscene")
    raypick.Scene("obb").save(path)
    with pytest.raises(raypick.LoadError, match="the scene has no objects"):
        raypick.open_saved(path)


def _cast_in_worker(args):
    scene, r = args
    return scene.cast_rays(r, threads=1)["object"]


def test_multiprocessing_ships_a_scene_to_other_processes():
    scene = raypick.load(SHELF, mode="mesh")
    chunks = [rays(1000, k) for k in range(4)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        got = pool.map(_cast_in_worker, [(scene, c) for c in chunks])
    for c, g in zip(chunks, got):
        assert np.array_equal(g, scene.cast_rays(c)["object"])


def test_a_damaged_or_foreign_saved_scene_is_refused(tmp_path):
    scene = raypick.load(SHELF)
    path = tmp_path / "s.rpscene"
    scene.save(str(path))
    data = path.read_bytes()
    for name, bytes_ in [("cut.rpscene", data[:len(data) // 2]),
                         ("flip.rpscene", data[:40] + bytes([data[40] ^ 1]) + data[41:]),
                         ("json.rpscene", open(SHELF, "rb").read())]:
        (tmp_path / name).write_bytes(bytes_)
        with pytest.raises(raypick.LoadError, match=name):
            raypick.open_saved(str(tmp_path / name))
    with pytest.raises(ValueError, match="rpscene"):
        raypick.open_saved(SHELF)
    with pytest.raises(raypick.LoadError, match="max_objects"):
        raypick.open_saved(str(path), max_objects=2)
    # A pickle whose bytes were damaged on the way.
    mode, saved = scene.__getstate__()
    broken = raypick.Scene.__new__(raypick.Scene)
    with pytest.raises(raypick.LoadError, match="checksum"):
        broken.__setstate__((mode, saved[:-9] + b"x" + saved[-8:]))


def test_dask_casts_ten_million_rays_over_chunks_as_one_call():
    spec = importlib.util.spec_from_file_location(
        "dask_rays", os.path.join(SOURCE, "apps", "examples", "dask_rays.py"))
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    objects, whole = example.main(10_000_000, chunk=1_000_000, workers=2)
    assert objects.shape == (10_000_000,)
    assert np.array_equal(objects, whole)
    assert 0 < int((objects >= 0).sum()) < 10_000_000
