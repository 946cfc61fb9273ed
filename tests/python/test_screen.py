"""Screen space from Python: Camera, pick_pixels, select, render and a
scene file's cameras, against the CLI (`raypick pick --pixels`, `select`,
`render`) and hand-computed cases."""
import json
import os
import struct
import subprocess
import zlib

import numpy as np
import pytest

import raypick
from cube import CUBE_TRIANGLES, CUBE_VERTICES

SOURCE = os.path.join(os.path.dirname(__file__), "..", "..")
EXE = os.environ.get("RAYPICK_EXE", os.path.join(SOURCE, "build", "apps", "raypick"))
SHELF = os.path.join(SOURCE, "apps", "examples", "shelf.json")
CAMERAS_GLTF = os.path.join(SOURCE, "tests", "fuzz", "corpus", "gltf",
                            "assimp_glTF2_cameras_Cameras.gltf")
EYE, TARGET, W, H = (0.0, 1.5, -0.5), (0.0, 0.6, -3.0), 64, 48
CLI_CAMERA = ["--eye", "0,1.5,-0.5", "--target", "0,0.6,-3", "--size", f"{W}x{H}"]


def read_png(path):
    """An 8-bit RGB, non-interlaced PNG (what `raypick render` writes) as an
    (H, W, 3) uint8 array: the IDAT stream inflated and each row unfiltered."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert (depth, colour, interlace) == (8, 2, 0)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = 3 * width
    out = np.zeros((height, stride), dtype=np.int32)
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, row = line[0], np.frombuffer(line[1:], dtype=np.uint8).astype(np.int32)
        prev = out[y - 1] if y > 0 else np.zeros(stride, dtype=np.int32)
        cur = np.zeros(stride, dtype=np.int32)
        for x in range(stride):
            a = cur[x - 3] if x >= 3 else 0
            b = prev[x]
            c = prev[x - 3] if x >= 3 else 0
            if kind == 0:
                pred = 0
            elif kind == 1:
                pred = a
            elif kind == 2:
                pred = b
            elif kind == 3:
                pred = (a + b) // 2
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[x] = (row[x] + pred) & 0xFF
        out[y] = cur
    return out.reshape(height, width, 3).astype(np.uint8)


def cli(*args):
    return subprocess.run([EXE, *args], check=True, capture_output=True, text=True).stdout


def test_a_pixel_on_the_camera_axis_hits_the_cube_in_front():
    scene = raypick.Scene(mode="mesh")
    scene.add_object(scene.add_mesh(CUBE_VERTICES, CUBE_TRIANGLES), np.eye(4))
    scene.commit()
    cam = raypick.Camera(eye=(0, 0, 5), target=(0, 0, 0), width=101, height=101, fov=90)
    hits = scene.pick_pixels(cam, [[50.5, 50.5], [0.5, 0.5]])
    # The centre pixel's ray runs down -z from the eye: the face z = 0.5
    # at t = 4.5 (unit direction); the corner pixel looks 45 degrees off.
    assert hits["object"].tolist() == [0, -1]
    assert hits["t"][0] == np.float32(4.5)
    assert hits["point"][0].tolist() == [0.0, 0.0, 0.5]
    assert hits["normal"][0].tolist() == [0.0, 0.0, 1.0]
    rays = cam.rays([[50.5, 50.5]])
    assert rays.shape == (1, 6)
    assert rays[0].tolist() == [0.0, 0.0, 5.0, 0.0, 0.0, -1.0]
    assert np.allclose(cam.project([[0.0, 0.0, 0.0], [5.0, 0.0, 0.0]]),
                       [[50.5, 50.5], [101.0, 50.5]])
    # An orthographic view 2 units high: the cube fills the middle half.
    ortho = raypick.Camera(eye=(0, 0, 5), target=(0, 0, 0), width=8, height=8, ortho_height=2.0)
    img = scene.render(ortho, color="ids")
    assert img.shape == (8, 8, 3) and img.dtype == np.uint8
    inside = (img[:, :, 2] == 1)  # id 0 is colour (0, 0, 1)
    assert inside[2:6, 2:6].all() and inside.sum() == 16


def test_pick_pixels_equals_the_cli(tmp_path):
    for mode in ("obb", "mesh"):
        scene = raypick.load(SHELF, mode=mode)
        cam = raypick.Camera(eye=EYE, target=TARGET, width=W, height=H)
        rng = np.random.default_rng(5)
        pixels = rng.uniform(0, [W, H], size=(300, 2))
        got = scene.pick_pixels(cam, pixels)
        f = tmp_path / "pixels.txt"
        f.write_text("".join(f"{x!r} {y!r}\n" for x, y in pixels))
        rows = [json.loads(line) for line in
                cli("pick", SHELF, *CLI_CAMERA, "--pixels", str(f), "--mode", mode).splitlines()]
        assert len(rows) == len(pixels)
        hits = 0
        for i, row in enumerate(rows):
            if not row["hit"]:
                assert got["object"][i] == -1
                continue
            hits += 1
            assert got["object"][i] == row["object"]
            assert got["triangle"][i] == row.get("triangle", -1)
            assert got["t"][i] == np.float32(row["t"])
            assert np.array_equal(got["point"][i], np.float32(row["point"]))
        assert hits > 30


@pytest.mark.parametrize("rule", ["touch", "contain"])
@pytest.mark.parametrize("visible", [False, True])
def test_select_equals_the_cli(rule, visible):
    scene = raypick.load(SHELF, mode="mesh")
    cam = raypick.Camera(eye=EYE, target=TARGET, width=W, height=H)
    for rect in [(10, 10, 50, 40), (40, 30, 20, 5), (0, 0, W, H)]:
        args = ["select", SHELF, *CLI_CAMERA, "--mode", "mesh", "--rule", rule,
                "--rect", ",".join(str(v) for v in rect), "--format", "jsonl"]
        if visible:
            args.append("--visible")
        want = [json.loads(line)["object"] for line in cli(*args).splitlines()]
        got = scene.select(cam, rect, rule=rule, visible_only=visible)
        assert got.dtype == np.int64
        assert got.tolist() == want
    assert len(scene.select(cam, (0, 0, W, H))) == 5


@pytest.mark.parametrize("color", ["shade", "ids", "depth", "normal"])
def test_render_equals_the_cli_png(color, tmp_path):
    scene = raypick.load(SHELF, mode="mesh")
    cam = raypick.Camera(eye=EYE, target=TARGET, width=W, height=H)
    out = tmp_path / f"{color}.png"
    args = ["render", SHELF, *CLI_CAMERA, "--mode", "mesh", "--color", color, "--out", str(out)]
    highlight = [] if color == "ids" else [3]
    if highlight:
        args += ["--highlight", "3"]
    subprocess.run([EXE, *args], check=True, capture_output=True)
    want = read_png(out)
    got = scene.render(cam, color=color, highlight=highlight or None)
    assert got.shape == (H, W, 3)
    assert np.array_equal(got, want)
    assert len(np.unique(got.reshape(-1, 3), axis=0)) > 3  # a picture, not a flat fill


def test_a_gltf_files_cameras():
    scene = raypick.load(CAMERAS_GLTF)
    cams = scene.cameras
    assert [c.projection for c in cams] == ["perspective", "orthographic"]
    persp, ortho = cams
    # The file's camera nodes sit at (0.5, 0.5, 3) looking down -z.
    assert persp.eye == (0.5, 0.5, 3.0) and persp.target == (0.5, 0.5, 2.0)
    assert abs(persp.fov - np.degrees(0.7)) < 1e-9
    assert ortho.ortho_height == 2.0 and ortho.fov is None
    small = persp.resized(40, 30)
    assert (small.width, small.height) == (40, 30)
    hits = scene.pick_pixels(small, [[20, 15]])
    assert hits["object"][0] == 0
    assert raypick.load(SHELF).cameras == []


def test_screen_errors_name_the_argument():
    scene = raypick.load(SHELF)
    cam = raypick.Camera(eye=EYE, target=TARGET, width=W, height=H)
    with pytest.raises(ValueError, match="eye"):
        raypick.Camera(eye=(0, 0, 0), target=(0, 0, 0))
    with pytest.raises(ValueError, match="not both"):
        raypick.Camera(eye=(0, 0, 1), target=(0, 0, 0), fov=40, ortho_height=2)
    with pytest.raises(ValueError, match=r"pixels: expected shape \(N, 2\)"):
        scene.pick_pixels(cam, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="rect"):
        scene.select(cam, (0, 0, 1))
    with pytest.raises(ValueError, match="rule"):
        scene.select(cam, (0, 0, 1, 1), rule="inside")
    with pytest.raises(ValueError, match="color"):
        scene.render(cam, color="rainbow")
    with pytest.raises(IndexError, match="highlight"):
        scene.render(cam, highlight=[99])


def test_cast_rays_of_an_image_given_its_width_equals_cast_rays():
    """cast_rays(width=W) reaches C++ intersect_image and answers each
    pixel's ray exactly as cast_rays does, for a width that leaves partial
    tiles and a short last row, float32 and float64; a width under 1 is
    refused. (This scene is small, so intersect_image runs as a batch here:
    the 4x4 tiles themselves are checked by tests/bvh/test_batch.cpp.)"""
    scene = raypick.load(SHELF, mode="mesh")
    cam = raypick.Camera(eye=EYE, target=TARGET, width=W + 3, height=H)
    xs, ys = np.meshgrid(np.arange(W + 3) + 0.5, np.arange(H) + 0.5)
    pixels = np.stack([xs.ravel(), ys.ravel()], axis=1)[:-5]  # the last row short
    rays = cam.rays(pixels)
    plain = scene.cast_rays(rays)
    assert (plain["object"] >= 0).sum() > len(rays) // 10  # real hits compared
    for r in (rays, rays.astype(np.float32)):
        image = scene.cast_rays(r, width=W + 3)
        ref = scene.cast_rays(r)
        for key in ("t", "object", "triangle"):
            assert np.array_equal(image[key], ref[key]), key
    with pytest.raises(ValueError, match="width"):
        scene.cast_rays(rays, width=0)
