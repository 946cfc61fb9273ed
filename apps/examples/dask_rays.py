"""Casting many rays on several processes with Dask: a raypick.Scene
pickles (as its saved form, rebuilt on arrival), so Dask ships it to each
worker once and casts each chunk of a dask.array of rays there.

    PYTHONPATH=build/python /usr/bin/python3 apps/examples/dask_rays.py [N]

Needs Debian's python3-dask and python3-distributed (./setup.sh installs
them). Prints the hits counted over N rays (default 10,000,000), and that
they equal one cast_rays call in this process.
"""
import os
import sys

import dask
import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

import raypick

HERE = os.path.dirname(os.path.abspath(__file__))


def random_rays(n, seed, chunk):
    """(n, 6) float64 rays from random points of the room's box, random
    directions, as a dask.array in chunks of `chunk` rows."""
    rng = da.random.RandomState(seed)
    lo, size = np.array([-4.0, 0.0, -4.0]), np.array([8.0, 2.0, 8.0])
    org = lo + size * rng.uniform(size=(n, 3), chunks=(chunk, 3))
    d = rng.normal(size=(n, 3), chunks=(chunk, 3))
    return da.concatenate([org, d], axis=1)


def cast_block(block, scene):
    """One chunk's hit object ids (int64, -1 for a miss), on one thread."""
    return scene.cast_rays(block, threads=1)["object"]


def cast(scene, rays):
    """The dask.array of hit object ids of `rays`: the scene goes into the
    graph once (dask.delayed), so each worker receives it once."""
    return rays.map_blocks(cast_block, dask.delayed(scene), dtype=np.int64, drop_axis=1,
                           meta=np.array((), dtype=np.int64))


def main(n=10_000_000, chunk=1_000_000, workers=2):
    scene = raypick.load(os.path.join(HERE, "room.obj"), mode="mesh")
    rays = random_rays(n, 7, chunk)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        objects = cast(scene, rays).compute()
    # The same rays in this process, one call.
    whole = scene.cast_rays(rays.compute())["object"]
    hits = int((objects >= 0).sum())
    print(f"{n} rays, {hits} hits, on {workers} workers in chunks of {chunk}; "
          f"equal to one cast_rays call: {bool(np.array_equal(objects, whole))}")
    return objects, whole


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000)
