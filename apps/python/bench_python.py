#!/usr/bin/env python3
"""cast_rays from Python against the C++ batch query, in one run.

    PYTHONPATH=build/python /usr/bin/python3 apps/python/bench_python.py [--n 1000000] [--rays 1000000]

Builds a boxes scene of N unit cubes under random rotations, scales and
translations (as `raypick bench`'s boxes scenes, not the same seeds),
fires R incoherent float64 rays, and times, median of --runs: cast_rays
(the whole Python call: array checks, conversion, the query, the result
arrays) and the C++ intersect_batch alone on the same rays. Prints the
ratio C++ time / Python time (goal: at least 0.9). Then moves every
object, alternating a loop of set_matrix with one set_matrices call, and
commits (the refit) after each. Then saves the scene
(--save-dir, default the system's temporary folder) with and without its
trees and times raypick.open_saved of each: opening with the trees refits
them; without, the BVH is built as a fresh load would.
"""
import argparse
import os
import tempfile
import time

import numpy as np

import raypick


def boxes_scene(n, seed):
    rng = np.random.default_rng(seed)
    s = raypick.Scene(mode="obb")
    c = [[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]
    cube = s.add_mesh(c, [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                          [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    side = n ** (1.0 / 3.0) * 3.0
    for _ in range(n):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        w, x, y, z = q
        r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                      [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                      [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        m = np.eye(4)
        m[:3, :3] = r * rng.uniform(0.5, 1.5, size=3)
        m[:3, 3] = rng.uniform(0, side, size=3)
        s.add_object(cube, m)
    s.commit()
    return s, side


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1000000, help="objects")
    p.add_argument("--rays", type=int, default=1000000, help="incoherent rays")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--save-dir", default=None, help="where the saved scenes go (removed after)")
    a = p.parse_args()
    t0 = time.perf_counter()
    scene, side = boxes_scene(a.n, 1)
    print(f"scene: {scene!r}, built in {time.perf_counter() - t0:.1f} s")
    rng = np.random.default_rng(2)
    rays = np.hstack([rng.uniform(0, side, (a.rays, 3)), rng.normal(size=(a.rays, 3))])
    py_s, cpp_s = [], []
    for _ in range(a.runs):
        start = time.perf_counter()
        hits = scene.cast_rays(rays, threads=a.threads)
        py_s.append(time.perf_counter() - start)
        cpp_s.append(scene._time_batch(rays, threads=a.threads))
    py, cpp = float(np.median(py_s)), float(np.median(cpp_s))
    print(f"{a.rays} incoherent rays, {a.threads} thread(s), median of {a.runs}: "
          f"cast_rays {a.rays / py / 1e6:.3f} Mrays/s, C++ intersect_batch "
          f"{a.rays / cpp / 1e6:.3f} Mrays/s; ratio {cpp / py:.2f} (goal >= 0.9); "
          f"{int((hits['object'] >= 0).sum())} hits")
    # Moves: every object by a small float64 translation, then commit();
    # one call per object against one call for all.
    ids = np.arange(a.n)
    mats = scene.matrices()
    loop_s, bulk_s, commit_s = [], [], []
    for r in range(a.runs):
        mats[:, :3, 3] += rng.uniform(-0.01, 0.01, (a.n, 3))
        start = time.perf_counter()
        if r % 2 == 0:
            for i in range(a.n):
                scene.set_matrix(i, mats[i])
            loop_s.append(time.perf_counter() - start)
        else:
            scene.set_matrices(ids, mats)
            bulk_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        scene.commit()
        commit_s.append(time.perf_counter() - start)
    loop = float(np.median(loop_s))
    bulk = float(np.median(bulk_s)) if bulk_s else float("nan")
    print(f"moving all {a.n} objects, median of {a.runs} runs alternated: set_matrix in a loop "
          f"{loop / a.n * 1e9:.0f} ns per object, set_matrices {bulk / a.n * 1e9:.0f} ns; "
          f"commit {float(np.median(commit_s)) * 1e3:.2f} ms")
    with tempfile.TemporaryDirectory(dir=a.save_dir) as d:
        times = {}
        for trees in (True, False):
            path = os.path.join(d, f"boxes-{trees}.rpscene")
            scene.save(path, trees=trees)
            runs = []
            for _ in range(a.runs):
                start = time.perf_counter()
                back = raypick.open_saved(path)
                runs.append(time.perf_counter() - start)
            assert back.stats()["trees"] == ("saved" if trees else "built")
            times[trees] = (float(np.median(runs)), os.path.getsize(path))
        (t_with, size_with), (t_without, size_without) = times[True], times[False]
        print(f"open_saved, median of {a.runs}: with the trees {t_with:.3f} s "
              f"({size_with / 1e6:.0f} MB), without (BVH built) {t_without:.3f} s "
              f"({size_without / 1e6:.0f} MB); {t_without / t_with:.1f}x faster with the trees")


if __name__ == "__main__":
    main()
