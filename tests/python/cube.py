"""The closed unit cube [-0.5, 0.5]^3 the Python tests build scenes from."""

import numpy as np

# Wound outward: corner i takes +0.5 on axis k when bit k of i is set.
CUBE_VERTICES = np.array([[(i & 1) - 0.5, ((i >> 1) & 1) - 0.5, ((i >> 2) & 1) - 0.5]
                          for i in range(8)])
CUBE_TRIANGLES = np.array([[0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5], [0, 1, 5], [0, 5, 4],
                           [2, 6, 7], [2, 7, 3], [0, 2, 3], [0, 3, 1], [4, 5, 7], [4, 7, 6]])
