"""The Python module against the CLI, brute facts and its own error rules.

Run by ctest (tests/CMakeLists.txt) with PYTHONPATH at build/python and
RAYPICK_EXE naming the raypick binary, under Debian's /usr/bin/python3.
"""
import json
import os
import pickle
import resource
import subprocess
import threading
import time

import numpy as np
import pytest

import raypick
from cube import CUBE_TRIANGLES, CUBE_VERTICES

SOURCE = os.path.join(os.path.dirname(__file__), "..", "..")
EXE = os.environ.get("RAYPICK_EXE", os.path.join(SOURCE, "build", "apps", "raypick"))
ENGINE = "/usr/share/assimp/models/glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb"
SCENES = [
    os.path.join(SOURCE, "apps", "examples", "room.obj"),
    os.path.join(SOURCE, "apps", "examples", "shelf.json"),
    ENGINE,
]


def scene_rays(scene, n, seed):
    """Rays from around the scene's boxes, half aimed at object centres."""
    rng = np.random.default_rng(seed)
    boxes = scene.boxes()
    ok = ~np.isnan(boxes[:, 0, 0])
    lo, hi = boxes[ok, 0].min(axis=0), boxes[ok, 1].max(axis=0)
    size = hi - lo
    org = lo - 0.5 * size + rng.random((n, 3)) * 2.0 * size
    centres = 0.5 * (boxes[ok, 0] + boxes[ok, 1])
    aim = centres[rng.integers(0, len(centres), n)] - org
    rand = rng.normal(size=(n, 3))
    d = np.where(rng.random((n, 1)) < 0.5, aim, rand)
    return np.hstack([org, d]).astype(np.float64)


def cli_pick(path, rays, mode, tmp_path):
    """`raypick pick --rays` on the rays written as text (shortest repr:
    they read back as the same doubles)."""
    f = tmp_path / "rays.txt"
    f.write_text("".join(" ".join(repr(float(x)) for x in r) + "\n" for r in rays))
    out = subprocess.run([EXE, "pick", path, "--rays", str(f), "--mode", mode],
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("path", SCENES)
@pytest.mark.parametrize("mode", ["obb", "mesh"])
def test_cast_rays_equals_the_cli(path, mode, tmp_path):
    scene = raypick.load(path, mode=mode)
    rays = scene_rays(scene, 400, 7)
    hits = scene.cast_rays(rays)
    lines = cli_pick(path, rays, mode, tmp_path)
    assert len(lines) == len(rays)
    hit_count = 0
    for i, line in enumerate(lines):
        assert line["ray"] == i
        if not line["hit"]:
            assert hits["object"][i] == -1 and np.isinf(hits["t"][i]), i
            continue
        hit_count += 1
        assert hits["object"][i] == line["object"], i
        # 9 significant digits read back as the same float.
        assert hits["t"][i] == np.float32(line["t"]), i
        assert hits["triangle"][i] == line.get("triangle", -1), i
        assert scene.names[line["object"]] == line["name"]
        assert np.array_equal(hits["point"][i], np.float32(line["point"])), i
    assert hit_count > len(rays) // 4  # the comparison covers real hits


def test_float32_rays_answer_as_float64_rays_with_the_same_values():
    scene = raypick.load(ENGINE, mode="mesh")
    rays32 = scene_rays(scene, 2000, 3).astype(np.float32)
    a = scene.cast_rays(rays32)
    b = scene.cast_rays(rays32.astype(np.float64))
    for key in ("t", "object", "triangle", "point", "normal"):
        assert np.array_equal(a[key], b[key], equal_nan=True), key


def test_a_hand_made_scene_hits_where_the_geometry_says():
    s = raypick.Scene(mode="mesh")
    quad = s.add_mesh([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], [[0, 1, 2], [0, 2, 3]])
    m = np.eye(4)
    m[:3, 3] = [0, 0, 5]
    a = s.add_object(quad, m, name="near")
    m2 = np.diag([2.0, 2.0, 1.0, 1.0])  # scaled, further away
    m2[:3, 3] = [0, 0, 9]
    b = s.add_object(quad, m2, name="far")
    s.commit()
    assert (a, b) == (0, 1) and len(s) == 2 and s.names == ["near", "far"]
    # t is in units of the given direction (length 2 here): 5 / 2.
    h = s.cast_rays(np.array([[0.5, 0.5, 0, 0, 0, 2], [1.5, 1.5, 0, 0, 0, 1], [5, 5, 0, 0, 0, 1]]))
    assert list(h["object"]) == [0, 1, -1]
    assert h["t"][0] == 2.5 and h["t"][1] == 9.0 and np.isinf(h["t"][2])
    assert list(h["triangle"][:2]) >= [0, 0] and h["triangle"][2] == -1
    assert np.allclose(h["normal"][0], [0, 0, 1]) or np.allclose(h["normal"][0], [0, 0, -1])
    assert np.array_equal(h["point"][0], np.float32([0.5, 0.5, 5]))
    assert np.isnan(h["point"][2]).all()
    assert list(s.occluded(np.array([[0, 0, 0, 0, 0, 1]]), tmax=4.0)) == [False]
    assert list(s.occluded(np.array([[0, 0, 0, 0, 0, 1]]), tmax=6.0)) == [True]
    hits = s.all_hits(np.array([[0, 0, 0, 0, 0, 1]]))
    assert list(hits["object"]) == [0, 1] and list(hits["t"]) == [5.0, 9.0]
    assert list(s.cast_rays(np.array([[0, 0, 0, 0, 0, 1.0]]), mask=0)["object"]) == [-1]
    assert s.stats()["objects"] == 2 and "2 objects" in repr(s)
    # The kernel this CPU runs: AVX-512 goes with the 16-wide top level.
    stats = s.stats()
    assert stats["isa"] in ("avx512", "avx2", "sse2")
    assert stats["top_width"] == (16 if stats["isa"] == "avx512" else 8)
    flags = set()
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    if {"avx512f", "avx512vl", "avx512dq", "avx512bw"} <= flags:
        assert stats["isa"] == "avx512"
    elif "avx2" in flags:
        assert stats["isa"] == "avx2"


@pytest.mark.parametrize("mode", ["obb", "mesh"])
def test_a_float64_translation_is_kept_beyond_float(mode):
    # A cube at x = 300000.123, which float rounds to 300000.125: a ray from
    # 10 units before its centre meets its face (x - 0.5) at t = 9.5 only
    # if the placement keeps its digits.
    s = raypick.Scene(mode=mode)
    cube = s.add_mesh(CUBE_VERTICES, CUBE_TRIANGLES)
    m = np.eye(4)
    m[:3, 3] = [300000.123, -200000.0004, 7.0]
    s.add_object(cube, m)
    moved = m.copy()
    s.add_object(cube, moved)
    moved[:3, 3] += [0.0, 50.0, 0.0]
    s.set_matrix(1, moved)
    s.commit()
    held = s.matrices()
    assert held.dtype == np.float64
    assert np.abs(held[0, :3, 3] - m[:3, 3]).max() < 1e-8
    assert np.abs(held[1, :3, 3] - moved[:3, 3]).max() < 1e-8
    rays = np.array([[300000.123 - 10.0, -200000.0004, 7.0, 1.0, 0.0, 0.0],
                     [300000.123 - 10.0, -199950.0004, 7.0, 1.0, 0.0, 0.0]])
    h = s.cast_rays(rays)
    assert list(h["object"]) == [0, 1]
    assert np.abs(h["t"] - 9.5).max() < 1e-5, h["t"]  # 9.502 rounded to float
    # float32 rays with the same values answer alike.
    r32 = rays.astype(np.float32)
    assert np.array_equal(s.cast_rays(r32)["t"], s.cast_rays(r32.astype(np.float64))["t"])


def test_moving_objects_then_commit_equals_a_scene_built_with_the_moved_matrices():
    base = raypick.load(ENGINE, mode="obb")
    mats = base.matrices()
    rng = np.random.default_rng(11)
    moved = mats.copy()
    for i in range(0, len(mats), 3):
        moved[i, :3, 3] += rng.normal(scale=20.0, size=3)
        base.set_matrix(i, moved[i])
    base.commit()
    # A fresh scene from the file, every matrix set to the moved one before
    # its first commit after loading: a rebuild, where `base` refitted.
    fresh = raypick.load(ENGINE, mode="obb")
    for i in range(len(mats)):
        fresh.set_matrix(i, moved[i])
    fresh.commit()
    rays = scene_rays(base, 3000, 12)
    a, b = base.cast_rays(rays), fresh.cast_rays(rays)
    assert np.array_equal(a["object"], b["object"])
    assert np.array_equal(a["t"], b["t"])
    assert (a["object"] >= 0).sum() > 300


def test_set_matrices_equals_a_loop_of_set_matrix():
    loop = raypick.load(ENGINE, mode="mesh")
    many = raypick.load(ENGINE, mode="mesh")
    mats = loop.matrices()
    rng = np.random.default_rng(5)
    ids = np.arange(0, len(mats), 2)
    moved = mats[ids].copy()
    moved[:, :3, 3] += rng.normal(scale=30.0, size=(len(ids), 3))
    # A repeated id ends at its last matrix, as a loop leaves it.
    ids = np.append(ids, ids[0])
    moved = np.append(moved, moved[1:2], axis=0)
    moved[-1, :3, 3] += [5.0, -7.0, 11.0]
    for i, m in zip(ids, moved):
        loop.set_matrix(int(i), m)
    many.set_matrices(ids.astype(np.uint32), moved)
    loop.commit()
    many.commit()
    assert np.array_equal(many.matrices(), loop.matrices())
    # (The linear part is held in float: equal up to its rounding.)
    assert np.abs(many.matrices()[ids[0]] - moved[-1]).max() < 1e-5
    rays = scene_rays(loop, 3000, 14)
    a, b = loop.cast_rays(rays), many.cast_rays(rays)
    assert np.array_equal(a["object"], b["object"])
    assert np.array_equal(a["t"], b["t"])
    assert (a["object"] >= 0).sum() > 300


def test_set_matrices_checks_everything_before_moving_anything():
    s = raypick.Scene(mode="obb")
    cube = s.add_mesh(CUBE_VERTICES, CUBE_TRIANGLES)
    for x in range(4):
        m = np.eye(4)
        m[0, 3] = 3.0 * x
        s.add_object(cube, m)
    s.remove(3)
    s.commit()
    before = s.matrices()
    good = before[:3].copy()
    good[:, 1, 3] += 10.0
    far = good.copy()
    far[2, 0, 3] = 2e11
    skew = good.copy()
    skew[1, 3, :] = [0.0, 0.0, 1.0, 1.0]
    nan = good.copy()
    nan[0, 0, 0] = np.nan
    cases = [
        (np.array([0, 1, 7]), good, IndexError, r"ids\[2\]: object 7 does not exist"),
        (np.array([0, -1, 2]), good, IndexError, r"ids\[1\]: object -1 does not exist"),
        # Past int64's range: named as given, not as the negative number
        # the cast to int64 makes of it.
        (np.array([0, 1, 2**64 - 1], dtype=np.uint64), good, IndexError,
         r"ids\[2\]: object 18446744073709551615 does not exist"),
        (np.array([0, 3, 2]), good, ValueError, r"ids\[1\]: object 3 was removed"),
        (np.array([0, 1, 2]), far, ValueError, r"matrices\[2\]: places the mesh outside"),
        (np.array([0, 1, 2]), skew, ValueError, r"matrices\[1\]: the last row must be"),
        (np.array([0, 1, 2]), nan, ValueError, r"matrices\[0\]: entries must be finite"),
        (np.array([0, 1]), good, ValueError, r"matrices: expected shape \(2, 4, 4\)"),
        (np.array([[0, 1, 2]]), good, ValueError, r"ids: expected shape \(N,\)"),
        (np.array([0.0, 1.0, 2.0]), good, TypeError, "ids: expected an integer array"),
    ]
    for ids, mats, error, message in cases:
        with pytest.raises(error, match=message):
            s.set_matrices(ids, mats)
        # Nothing moved, and the scene needs no commit: queries still run.
        assert np.array_equal(s.matrices(), before)
        s.cast_rays(np.array([[0.5, -5.0, 0.5, 0.0, 1.0, 0.0]]))
    s.set_matrices(np.array([0, 1, 2]), good)
    s.commit()
    hit = s.cast_rays(np.array([[6.0, 5.0, 0.0, 0.0, 1.0, 0.0]]))
    assert hit["object"][0] == 2 and hit["t"][0] == pytest.approx(4.5)
    s.set_matrices(np.zeros(0, dtype=np.int64), np.zeros((0, 4, 4)))
    s.set_matrices([], np.zeros((0, 4, 4)))  # numpy makes [] float64


def test_a_removed_object_cannot_be_moved_masked_or_removed_again():
    s = raypick.Scene(mode="obb")
    cube = s.add_mesh(CUBE_VERTICES, CUBE_TRIANGLES)
    s.add_object(cube, np.eye(4))
    s.add_object(cube, np.eye(4))
    s.commit()
    s.remove(0)
    # Each once aborted the interpreter (the engine's precondition).
    with pytest.raises(ValueError, match="object 0 was removed"):
        s.set_matrix(0, np.eye(4))
    with pytest.raises(ValueError, match="object 0 was removed"):
        s.set_mask(0, 1)
    with pytest.raises(ValueError, match="object 0 was removed"):
        s.remove(0)
    s.commit()
    hit = s.cast_rays(np.array([[0.5, 0.5, -5.0, 0.0, 0.0, 1.0]]))
    assert hit["object"][0] == 1


def test_errors_name_the_argument_and_the_shapes(tmp_path):
    s = raypick.load(os.path.join(SOURCE, "apps", "examples", "room.obj"))
    with pytest.raises(ValueError, match=r"rays: expected shape \(N, 6\), got \(3, 5\)"):
        s.cast_rays(np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"rays: expected shape \(N, 6\), got \(6,\)"):
        s.cast_rays(np.zeros(6))
    with pytest.raises(TypeError, match="rays: expected real numbers"):
        s.cast_rays(np.zeros((2, 6), dtype=complex))
    with pytest.raises(TypeError, match="rays"):
        s.cast_rays(np.array([[object()] * 6]))
    with pytest.raises(ValueError, match=r"rays\[1\]"):
        s.cast_rays(np.array([[0, 0, 0, 0, 0, 1], [0, 0, 0, np.nan, 0, 1]]))
    with pytest.raises(ValueError, match=r"rays\[0\]"):
        s.occluded(np.array([[0, 0, 0, 0, 0, 0]]))
    with pytest.raises(ValueError, match=r"points\[1\]: not finite or outside the supported range"):
        s.closest_points(np.array([[0.0, 0.0, 0.0], [2e11, 0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"matrix: expected shape \(4, 4\), got \(3, 3\)"):
        s.set_matrix(0, np.eye(3))
    with pytest.raises(ValueError, match="affine"):
        s.set_matrix(0, np.ones((4, 4)))
    with pytest.raises(IndexError):
        s.set_matrix(99, np.eye(4))
    with pytest.raises(ValueError, match="mode"):
        raypick.Scene(mode="boxes")
    bad = tmp_path / "bad.obj"
    bad.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n")
    with pytest.raises(raypick.LoadError, match=r"bad\.obj:4:") as e:
        raypick.load(str(bad))
    assert isinstance(e.value, ValueError)
    with pytest.raises(raypick.LoadError, match="max_triangles"):
        raypick.load(ENGINE, max_triangles=100)
    e = raypick.Scene()
    m = e.add_mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    with pytest.raises(ValueError, match=r"triangles\[0\]: index 3"):
        e.add_mesh([[0, 0, 0]], [[0, 0, 3]])
    with pytest.raises(TypeError, match="triangles"):
        e.add_mesh([[0, 0, 0]], [[0.0, 0.0, 0.0]])
    e.add_object(m, np.eye(4))
    with pytest.raises(ValueError, match="commit"):
        e.cast_rays(np.array([[0, 0, 1, 0, 0, -1.0]]))
    e.commit()
    assert e.cast_rays(np.array([[0.2, 0.2, 1, 0, 0, -1.0]]))["object"][0] == 0


def test_cast_rays_releases_the_gil():
    scene = raypick.load(ENGINE, mode="mesh")
    rays = scene_rays(scene, 400000, 5)
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.01)
    before = len(ticks)
    start = time.monotonic()
    scene.cast_rays(rays, threads=1)
    elapsed = time.monotonic() - start
    during = len(ticks) - before
    stop.set()
    t.join()
    # The other thread ran while the rays were cast (about one tick a
    # millisecond when it gets the GIL).
    assert elapsed > 0.05
    assert during > 10


def test_a_change_while_another_thread_queries_or_commits_raises():
    # Each change below once aborted the interpreter: the engine's checks
    # fired on the query's thread, or the trees moved under it.
    scene = raypick.load(ENGINE, mode="mesh")
    rays = scene_rays(scene, 400000, 6)
    want = scene.cast_rays(rays, threads=1)
    refused = []
    for _ in range(5):
        out = {}
        worker = threading.Thread(target=lambda: out.update(scene.cast_rays(rays, threads=1)))
        worker.start()
        while worker.is_alive():
            try:
                scene.set_mask(0, 0xFFFFFFFF)  # allowed only when nothing runs
            except RuntimeError as e:
                refused.append(str(e))
            time.sleep(0.001)
        worker.join()
        # The query's answers are whole and right.
        assert np.array_equal(out["object"], want["object"])
        assert np.array_equal(out["t"], want["t"])
        if refused:
            break
    assert refused and "queried by another thread" in refused[0]
    scene.set_matrix(0, scene.matrices()[0])  # idle again: changes go through
    scene.commit()

    # A commit long enough to be met: a fresh mesh of 200,000 triangles,
    # whose tree the commit builds.
    rng = np.random.default_rng(7)
    vertices = rng.uniform(-1.0, 1.0, (30000, 3))
    triangles = rng.integers(0, len(vertices), (200000, 3))
    refused = []
    for _ in range(5):
        busy = raypick.Scene(mode="mesh")
        busy.add_object(busy.add_mesh(vertices, triangles), np.eye(4))
        stats = {}
        worker = threading.Thread(target=lambda: stats.update(busy.commit()))
        worker.start()
        while worker.is_alive():
            for call in (busy.stats, lambda: busy.set_mask(0, 1)):
                try:
                    call()
                except RuntimeError as e:
                    refused.append(str(e))
        worker.join()
        # The commit itself went through whole (a commit that raised leaves
        # `stats` empty, and the scene refusing queries).
        assert stats["rebuilt"]
        if refused:
            break
    assert refused and "committed by another thread" in refused[0]
    assert busy.stats()["triangles"] == 200000  # and usable once it returned
    assert busy.occluded(np.array([[0.0, 0.0, -5.0, 0.0, 0.0, 1.0]])).shape == (1,)
    assert np.array_equal(scene.cast_rays(rays[:1000])["t"], want["t"][:1000])


def test_what_add_object_accepts_pickles_and_loads_again():
    # The range check is the loaders' (the placement as the engine holds
    # it): a box the double matrix keeps a hundredth inside the range but
    # the held one carries past it was once accepted here and then refused
    # by pickle's load.
    s = raypick.Scene(mode="obb")
    cube = s.add_mesh(CUBE_VERTICES + 0.5, CUBE_TRIANGLES)  # [0, 1]^3
    edge = float(np.float32(1e11))
    m = np.eye(4)
    m[0, 0] = 1e6 + 0.2275
    m[0, 3] = edge - m[0, 0] - 0.01
    with pytest.raises(ValueError, match="outside the supported range"):
        s.add_object(cube, m)
    m[0, 3] = edge - m[0, 0] - 1e5
    s.add_object(cube, m)
    s.commit()
    again = pickle.loads(pickle.dumps(s))
    assert np.array_equal(again.matrices(), s.matrices())


def test_threads_beyond_1024_are_refused():
    scene = raypick.load(os.path.join(SOURCE, "apps", "examples", "room.obj"))
    with pytest.raises(ValueError, match="threads: expected 0 .all cores. to 1024, got 100000000"):
        scene.cast_rays(np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 1.0]]), threads=10**8)
    scene.set_mask(0, 1)  # the refused query no longer counts as running


def test_no_memory_growth_over_1000_calls():
    scene = raypick.load(os.path.join(SOURCE, "apps", "examples", "room.obj"), mode="mesh")
    rays = scene_rays(scene, 2000, 9)
    for _ in range(50):
        scene.cast_rays(rays)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(1000):
        scene.cast_rays(rays)
        scene.all_hits(rays[:100])
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert after - before < 4096  # KiB


def test_version_is_the_projects():
    cmake = open(os.path.join(SOURCE, "CMakeLists.txt")).read()
    assert f"project(raypick VERSION {raypick.__version__} " in cmake
    doc = raypick.Scene.cast_rays.__doc__
    assert "(N, 6)" in doc and "float64" in doc and "units of the given direction" in doc


@pytest.mark.parametrize("mode", ["obb", "mesh"])
def test_closest_points_equal_the_cli_nearest(mode, tmp_path):
    path = SCENES[0]
    scene = raypick.load(path, mode=mode)
    rng = np.random.default_rng(21)
    pts = rng.uniform(-3, 3, size=(200, 3))
    got = scene.closest_points(pts, max_distance=1.5)
    f = tmp_path / "points.txt"
    f.write_text("".join(" ".join(repr(float(x)) for x in p) + "\n" for p in pts))
    out = subprocess.run([EXE, "nearest", path, "--points", str(f), "--mode", mode,
                          "--max-distance", "1.5"], check=True, capture_output=True,
                         text=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == len(pts)
    hits = 0
    for i, row in enumerate(rows):
        if not row["hit"]:
            assert got["object"][i] == -1 and np.isinf(got["distance"][i])
            continue
        hits += 1
        assert got["object"][i] == row["object"]
        assert got["triangle"][i] == row.get("triangle", -1)
        assert np.float32(got["distance"][i]) == np.float32(row["distance"])
        assert np.array_equal(got["point"][i].astype(np.float32), np.float32(row["closest"]))
    assert hits > 20


@pytest.mark.parametrize("mode", ["obb", "mesh"])
def test_contains_and_signed_distance_of_placed_cubes(mode):
    # A cube scaled 2 at the origin and a mirrored one (x scale -1) at x = 5.
    scene = raypick.Scene(mode=mode)
    mesh = scene.add_mesh(CUBE_VERTICES, CUBE_TRIANGLES)
    scene.add_object(mesh, np.diag([2.0, 2.0, 2.0, 1.0]))
    mirrored = np.diag([-1.0, 1.0, 1.0, 1.0])
    mirrored[0, 3] = 5.0
    scene.add_object(mesh, mirrored)
    scene.commit()
    points = np.array([[0.0, 0.0, 0.0],    # centre of the first: 1 deep
                       [0.75, 0.0, 0.0],   # 0.25 inside its +x face
                       [1.0, 0.3, -0.2],   # on its +x face
                       [2.5, 0.0, 0.0],    # between them: 1.5 from the first
                       [5.0, 0.25, 0.0],   # in the mirrored one: 0.25 from y = 0.5
                       [0.0, 3.0, 0.0]])   # above the first: 2 away
    assert scene.contains(points).tolist() == [True, True, True, False, True, False]
    sd = scene.signed_distance(points)
    assert sd.dtype == np.float64 and sd.shape == (6,)
    assert sd[[0, 1, 3, 4, 5]].tolist() == [-1.0, -0.25, 1.5, -0.25, 2.0]
    assert abs(sd[2]) < 1e-12
    d = scene.distance(points)
    if mode == "mesh":
        assert np.array_equal(d, np.abs(sd))
    else:  # a box's inside is at distance 0
        assert d[[0, 1, 4]].tolist() == [0.0, 0.0, 0.0]
    assert np.array_equal(d, scene.closest_points(points)["distance"])
    assert scene.distance(points, max_distance=1.0)[3] == np.inf
    with pytest.raises(ValueError, match="points"):
        scene.contains(np.zeros((2, 2)))


def test_signed_distance_equals_the_cli_nearest_signed(tmp_path):
    path = SCENES[0]
    scene = raypick.load(path, mode="mesh")
    pts = np.random.default_rng(22).uniform(-3, 3, size=(300, 3))
    f = tmp_path / "points.txt"
    f.write_text("".join(" ".join(repr(float(x)) for x in p) + "\n" for p in pts))
    out = subprocess.run([EXE, "nearest", path, "--points", str(f), "--mode", "mesh",
                          "--inside", "--signed"], check=True, capture_output=True,
                         text=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    inside = scene.contains(pts)
    sd = scene.signed_distance(pts)
    assert [r["inside"] for r in rows] == inside.tolist()
    assert [np.float32(r["distance"]) for r in rows] == [np.float32(x) for x in sd]


def test_load_takes_the_memory_budget():
    with pytest.raises(raypick.LoadError, match="max_memory"):
        raypick.load(SCENES[0], max_memory=1000)
    assert len(raypick.load(SCENES[0], max_memory=1 << 30)) == 10


def test_an_instance_made_without_init_is_refused():
    # cls.__new__(cls) makes an instance whose __init__ never ran; its
    # methods, and methods given it as an argument, raise instead of
    # reading memory that was never set.
    never = "was never initialized"
    scene = raypick.Scene.__new__(raypick.Scene)
    for call in (lambda: repr(scene), lambda: len(scene), lambda: scene.stats(),
                 lambda: scene.add_mesh(CUBE_VERTICES, CUBE_TRIANGLES),
                 lambda: scene.cast_rays(np.array([[0.0, 0.0, -5.0, 0.0, 0.0, 1.0]])),
                 lambda: pickle.dumps(scene)):
        with pytest.raises(TypeError, match=never):
            call()
    camera = raypick.Camera.__new__(raypick.Camera)
    with pytest.raises(TypeError, match=never):
        repr(camera)
    good = raypick.Scene("obb")
    good.add_object(good.add_mesh(CUBE_VERTICES, CUBE_TRIANGLES), np.eye(4))
    good.commit()
    with pytest.raises(TypeError, match=never):
        good.pick_pixels(camera, np.array([[0.5, 0.5]]))
    # A subclass that runs the base __init__ is a scene like any other.

    class Named(raypick.Scene):
        def __init__(self):
            super().__init__("mesh")

    named = Named()
    named.add_object(named.add_mesh(CUBE_VERTICES, CUBE_TRIANGLES), np.eye(4))
    named.commit()
    hit = named.cast_rays(np.array([[0.25, 0.25, -5.0, 0.0, 0.0, 1.0]]))
    assert hit["object"][0] == 0 and hit["t"][0] == pytest.approx(4.5)
