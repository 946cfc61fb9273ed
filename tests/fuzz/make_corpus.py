#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora into tests/fuzz/corpus/<target>/.

  python3 tests/fuzz/make_corpus.py

Seeds: the examples in apps/examples, small hand-made files covering each
loader's features (as the doctest suite writes them), and small models of
Debian's assimp-testmodels (under 50 KB each). Deterministic: running it
again gives the same files. The corpus is committed; run this only to
change it.
"""
import base64
import json
import os
import random
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")
ASSIMP = "/usr/share/assimp/models"

# Small assimp-testmodels files worth starting from: valid models, and the
# broken ones the loaders must refuse.
ASSIMP_FILES = {
    "obj": [
        "OBJ/box.obj", "OBJ/concave_polygon.obj", "OBJ/cube_usemtl.obj",
        "OBJ/number_formats.obj", "OBJ/testmixed.obj", "OBJ/testline.obj",
        "OBJ/testpoints.obj", "OBJ/box_without_lineending.obj",
        "OBJ/multiple_spaces.obj", "OBJ/cube_with_vertexcolors.obj",
        "OBJ/regr_3429812.obj", "OBJ/box_UTF16BE.obj",
        "invalid/malformed.obj", "invalid/malformed2.obj",
    ],
    "gltf": [
        "glTF2/BoxTextured-glTF-Embedded/BoxTextured.gltf",
        "glTF2/cameras/Cameras.gltf",
        "glTF2/TestNoRootNode/NoScene.gltf",
        "glTF2/TestNoRootNode/SceneWithoutNodes.gltf",
        "glTF2/IndexOutOfRange/IndexOutOfRange.gltf",
        "glTF2/RecursiveNodes/RecursiveNodes.gltf",
        "glTF2/wrongTypes/badArray.gltf",
        "glTF2/glTF-Asset-Generator/Mesh_PrimitiveMode/Mesh_PrimitiveMode_05.gltf",
        "glTF2/glTF-Asset-Generator/Mesh_PrimitiveMode/Mesh_PrimitiveMode_06.gltf",
        "glTF2/glTF-Asset-Generator/Mesh_PrimitiveMode/Mesh_PrimitiveMode_13.gltf",
        "glTF2/simple_skin/simple_skin.gltf",
        "glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf",
    ],
    "glb": [
        "glTF2/BoxTextured-glTF-Binary/BoxTextured.glb",
        "glTF2/BoxBadNormals-glTF-Binary/BoxBadNormals.glb",
        "glTF2/BoxWithInfinites-glTF-Binary/BoxWithInfinites.glb",
    ],
}
MAX_FILE = 50 * 1024


def write(target, name, data):
    path = os.path.join(CORPUS, target, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(path, "wb") as f:
        f.write(data)


# ---- glTF: one buffer, built from accessors ---------------------------------

def gltf_doc(prims, nodes, scenes=None, extra=None):
    """prims: list of (positions, indices or None, mode) for one mesh each."""
    blob = b""
    views, accessors, meshes = [], [], []
    for positions, indices, mode in prims:
        prim = {"mode": mode}
        data = b"".join(struct.pack("<3f", *p) for p in positions)
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(data)})
        lo = [min(p[k] for p in positions) for k in range(3)]
        hi = [max(p[k] for p in positions) for k in range(3)]
        accessors.append({"bufferView": len(views) - 1, "componentType": 5126,
                          "count": len(positions), "type": "VEC3", "min": lo, "max": hi})
        prim["attributes"] = {"POSITION": len(accessors) - 1}
        blob += data
        if indices is not None:
            idx = b"".join(struct.pack("<H", i) for i in indices)
            idx += b"\0" * (-len(idx) % 4)
            views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": 2 * len(indices)})
            accessors.append({"bufferView": len(views) - 1, "componentType": 5123,
                              "count": len(indices), "type": "SCALAR"})
            prim["indices"] = len(accessors) - 1
            blob += idx
        meshes.append({"primitives": [prim]})
    doc = {"asset": {"version": "2.0"}, "scene": 0,
           "scenes": scenes or [{"nodes": [0]}], "nodes": nodes, "meshes": meshes,
           "accessors": accessors, "bufferViews": views,
           "buffers": [{"byteLength": len(blob)}]}
    if extra:
        doc.update(extra)
    return doc, blob


def as_gltf(doc, blob):
    doc = json.loads(json.dumps(doc))
    doc["buffers"][0]["uri"] = ("data:application/octet-stream;base64," +
                                base64.b64encode(blob).decode())
    return json.dumps(doc, indent=1)


def as_glb(doc, blob):
    text = json.dumps(doc, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 4)
    blob += b"\0" * (-len(blob) % 4)
    chunks = struct.pack("<I4s", len(text), b"JSON") + text
    chunks += struct.pack("<I4s", len(blob), b"BIN\0") + blob
    return struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks


CUBE = [(x, y, z) for z in (0, 1) for y in (0, 1) for x in (0, 1)]
CUBE_TRIS = [0, 1, 3, 0, 3, 2, 4, 5, 7, 4, 7, 6, 0, 1, 5, 0, 5, 4,
             2, 3, 7, 2, 7, 6, 0, 2, 6, 0, 6, 4, 1, 3, 7, 1, 7, 5]
QUAD = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]


def gltf_seeds():
    yield "cube", gltf_doc([(CUBE, CUBE_TRIS, 4)], [{"name": "cube", "mesh": 0}])
    yield "strip_fan", gltf_doc(
        [(QUAD, [0, 1, 3, 2], 5), (QUAD, [0, 1, 2, 3], 6), (QUAD[:3], None, 4)],
        [{"name": "strip", "mesh": 0, "children": [1, 2]},
         {"mesh": 1, "translation": [2, 0, 0], "rotation": [0, 0.7071068, 0, 0.7071068]},
         {"mesh": 2, "scale": [1, -2, 0.5]}])
    yield "hierarchy", gltf_doc(
        [(CUBE, CUBE_TRIS, 4)],
        [{"name": "root", "children": [1, 2],
          "matrix": [2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 1, 2, 3, 1]},
         {"name": "a", "mesh": 0, "children": [3]},
         {"name": "b", "mesh": 0, "children": [3], "scale": [0, 0, 0]},
         {"name": "shared", "mesh": 0, "translation": [0, 5, 0]}],
        scenes=[{"nodes": [0]}, {"nodes": [1]}])
    yield "points_lines", gltf_doc([(QUAD, None, 0), (QUAD, [0, 1, 1, 2], 1)],
                                   [{"mesh": 0, "children": [1]}, {"mesh": 1}])


# ---- OBJ, JSON scenes, rays --------------------------------------------------

OBJ_SEEDS = {
    "groups.obj": "# two groups\nmtllib missing.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
                  "v 0 0 1\no first\nusemtl red\nf 1 2 3\nf 1 3 4\ng second\n"
                  "f -5 -4 -1\ns off\nf 1/1/1 2/2/2 5/3/3\n",
    "polygon.obj": "v 0 0 0\nv 2 0 0\nv 2 2 0\nv 1 1 0\nv 0 2 0\nvt 0 0\nvn 0 0 1\n"
                   "f 1//1 2//1 3//1 4//1 5//1\n",
    "empty_group.obj": "g empty\ng full\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",
    "crlf.obj": "v 0 0 0\r\nv 1e2 0 0\r\nv 0 -1.5E-1 0\r\nf 1 2 3\r\n",
}

JSON_SEEDS = {
    "boxes.json": {
        "raypick_scene": 1,
        "meshes": [{"name": "crate", "box": {"min": [-0.5, 0, -0.5], "max": [0.5, 1, 0.5]}},
                   {"name": "flat", "box": {"min": [0, 0, 0], "max": [1, 0, 1]}}],
        "objects": [
            {"name": "a", "mesh": "crate", "translate": [1, 0, 2],
             "rotate": {"euler_deg": [0, 90, 0]}, "layer": 2},
            {"mesh": "crate", "rotate": {"quat": [0, 0.3826834, 0, 0.9238795]}, "scale": 0.5},
            {"mesh": "flat", "matrix": [2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 4, 0, 0, 1]},
            {"mesh": "flat", "scale": [1, -1, 0]}]},
    "files.json": {
        "raypick_scene": 1,
        "meshes": [{"name": "cube", "file": "cube.obj"},
                   {"name": "face", "file": "cube.obj", "object": "cube"},
                   {"name": "tri", "file": "tri.gltf", "object": 0},
                   {"name": "tri_by_name", "file": "tri.gltf", "object": "tri"}],
        "objects": [{"mesh": "cube"}, {"mesh": "face", "translate": [2, 0, 0]},
                    {"mesh": "tri", "translate": [0, 2, 0]}, {"mesh": "tri_by_name"}]},
}

RAYS_SEEDS = {
    "mixed.rays": "# origin, direction\n0 1.6 3 0 -0.8 -3\n\n  0,0,0 , 1,0,0\n"
                  "+1 -2 3e2 -0.0 0 1E-3\n\t# indented comment\r\n1 2 3 4 5 6\r\n",
    "bad_count.rays": "0 0 0 1 0\n",
    "bad_number.rays": "0 0 0 1 0 1x\n",
    "zero_dir.rays": "1 1 1 0 0 -0\n",
    "double_comma.rays": "0,,0,1,0,0\n",
    "huge.rays": "1e39 0 0 1 0 0\n",
}


def embed_buffers(path, data):
    """A .gltf whose buffers are files next to it, with them as data URIs
    (the fuzzer's input is one file)."""
    try:
        doc = json.loads(data)
    except ValueError:
        return data
    changed = False
    for buf in doc.get("buffers", []) if isinstance(doc, dict) else []:
        uri = buf.get("uri") if isinstance(buf, dict) else None
        if not isinstance(uri, str) or uri.startswith("data:"):
            continue
        src = os.path.join(os.path.dirname(path), uri)
        if os.path.isfile(src) and os.path.getsize(src) <= MAX_FILE:
            buf["uri"] = ("data:application/octet-stream;base64," +
                          base64.b64encode(open(src, "rb").read()).decode())
            changed = True
    return json.dumps(doc, indent=1).encode() if changed else data


def main():
    if os.path.isdir(CORPUS):
        shutil.rmtree(CORPUS)
    # Examples shipped with raypick.
    write("obj", "room.obj", open(os.path.join(ROOT, "apps/examples/room.obj"), "rb").read())
    write("rays", "rays.txt", open(os.path.join(ROOT, "apps/examples/rays.txt"), "rb").read())
    shelf = json.load(open(os.path.join(ROOT, "apps/examples/shelf.json")))
    for mesh in shelf["meshes"]:  # the fuzzers' folder holds cube.obj, not room.obj
        if "file" in mesh:
            mesh["file"], mesh["object"] = "cube.obj", "cube"
    write("json_scene", "shelf.json", json.dumps(shelf, indent=1))
    for name, text in OBJ_SEEDS.items():
        write("obj", name, text)
    for name, doc in JSON_SEEDS.items():
        write("json_scene", name, json.dumps(doc, indent=1))
    for name, text in RAYS_SEEDS.items():
        write("rays", name, text)
    for name, (doc, blob) in gltf_seeds():
        write("gltf", name + ".gltf", as_gltf(doc, blob))
        write("glb", name + ".glb", as_glb(doc, blob))
    # assimp-testmodels, when installed.
    for target, files in ASSIMP_FILES.items():
        for rel in files:
            src = os.path.join(ASSIMP, rel)
            if not os.path.isfile(src):
                print("missing (assimp-testmodels not installed?):", src, file=sys.stderr)
                continue
            if os.path.getsize(src) > MAX_FILE:
                continue
            name = "assimp_" + rel.replace("/", "_")
            data = open(src, "rb").read()
            if target == "gltf":
                data = embed_buffers(src, data)
            if len(data) <= MAX_FILE:
                write(target, name, data)
    # The Picker target reads bytes as a program: random programs of a few
    # sizes start it in many states.
    rng = random.Random(10)
    for i, n in enumerate([16, 64, 256, 512, 1024]):
        write("picker", "random_%d" % i, bytes(rng.randrange(256) for _ in range(n)))
    total = sum(os.path.getsize(os.path.join(d, f))
                for d, _, fs in os.walk(CORPUS) for f in fs)
    print("corpus: %d bytes" % total)


if __name__ == "__main__":
    main()
