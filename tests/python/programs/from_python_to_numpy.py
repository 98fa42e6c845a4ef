# Nicolas P. Rougier's book "From Python to NumPy"
# (https://github.com/rougier/from-python-to-numpy, commit
# 8a5f0d9973fe7513ef8463291ec71bf0f2453688, code/*.py); the book's code is
# under the BSD 2-Clause License (LICENSE-code.txt: "Copyright (c) 2017,
# Nicolas P. Rougier. All rights reserved."; smoke_solver.py adapts Alberto
# Santini's python-fluid, MIT License, Copyright (c) 2015 Alberto Santini).
# The programs, ported as a NumPy user would port them to braze: the numerical
# core (the update steps, the solvers) is kept as written, but for
#
# - the arrays a program makes from nothing (np.zeros, np.random...) pass
#   through `asarray`: np.asarray for the reference run, braze's for the
#   braze run, so that every np.* call after them meets a braze tensor
#   (NumPy's protocols bring it to braze);
# - np.random's global state (and Python's `random`) is the seeded Generator
#   `rng` (np.random.default_rng(0), fresh for each run): np.random.randint
#   -> rng.integers, uniform/normal/choice keep their names, random.sample
#   -> rng.choice(..., replace=False);
# - state a program keeps in globals (`global Z, M`) is `nonlocal` to the
#   function that runs it; matplotlib (im.set_data, Path codes, the
#   animation), printing and timing are left out, and the animation's frames
#   are a loop of a few steps;
# - sizes are shrunk (noted in each function) so that a run takes well under
#   a second.
#
# Each function is one program; it takes `asarray` and `rng` and returns the
# arrays (and values) the program computes. tests/python/
# test_from_python_to_numpy.py runs each on NumPy and on braze and compares.
from collections import deque

import numpy as np
from numpy.lib.array_utils import byte_bounds
from scipy.spatial.distance import cdist

PROGRAMS = {}


def program(f):
    PROGRAMS[f.__name__] = f
    return f


# --- game_of_life_numpy.py ---------------------------------------------------
@program
def game_of_life(asarray, rng, frames=20):  # 2000 frames
    Z = asarray(rng.integers(0, 2, (100, 200)))  # np.random.randint(0, 2, (300, 600))
    M = asarray(np.zeros(Z.shape))

    def update(*args):
        nonlocal Z, M  # global Z, M

        N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] +
             Z[1:-1, 0:-2]                 + Z[1:-1, 2:] +
             Z[2:  , 0:-2] + Z[2:  , 1:-1] + Z[2:  , 2:])
        birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
        survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
        Z[...] = 0
        Z[1:-1, 1:-1][birth | survive] = 1

        # Show past activities
        M[M>0.25] = 0.25
        M *= 0.995
        M[Z==1] = 1
        # Direct activity
        # M[...] = Z
        # im.set_data(M)

    for frame in range(frames):  # FuncAnimation(fig, update, frames=2000)
        update()
    return [Z, M]


# --- gray_scott.py -----------------------------------------------------------
def _gray_scott(Z, U, V, rng, frames):
    n = U.shape[0] - 2
    Du, Dv, F, k = 0.16, 0.08, 0.035, 0.065  # Bacteria 1
    u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]

    r = 20 * n // 256  # r = 20 for n = 256
    u[...] = 1.0
    U[n//2-r:n//2+r, n//2-r:n//2+r] = 0.50
    V[n//2-r:n//2+r, n//2-r:n//2+r] = 0.25
    u += 0.05*rng.uniform(-1, +1, (n, n))
    v += 0.05*rng.uniform(-1, +1, (n, n))

    def update(frame):
        nonlocal U, V, u, v  # global U, V, u, v, im

        for i in range(10):
            Lu = (                  U[0:-2, 1:-1] +
                  U[1:-1, 0:-2] - 4*U[1:-1, 1:-1] + U[1:-1, 2:] +
                                    U[2:  , 1:-1])
            Lv = (                  V[0:-2, 1:-1] +
                  V[1:-1, 0:-2] - 4*V[1:-1, 1:-1] + V[1:-1, 2:] +
                                    V[2:  , 1:-1])
            uvv = u*v*v
            u += (Du*Lu - uvv + F*(1-u))
            v += (Dv*Lv + uvv - (F+k)*v)

        # im.set_data(V)
        # im.set_clim(vmin=V.min(), vmax=V.max())
        return V.min(), V.max()

    clim = [update(frame) for frame in range(frames)]
    return [U, V, clim] + ([Z] if Z is not None else [])


@program
def gray_scott(asarray, rng, n=128, frames=5):  # n = 256
    # The program keeps U and V as the fields of one structured array
    # (gray_scott_structured below); here they are two float64 arrays.
    U = asarray(np.zeros((n+2, n+2)))
    V = asarray(np.zeros((n+2, n+2)))
    return _gray_scott(None, U, V, rng, frames)


@program
def gray_scott_structured(asarray, rng, n=128, frames=5):  # n = 256
    Z = asarray(np.zeros((n+2, n+2), [('U', np.double),
                                      ('V', np.double)]))
    U, V = Z['U'], Z['V']
    return _gray_scott(Z, U, V, rng, frames)


# --- boid_numpy.py -----------------------------------------------------------
class MarkerCollection:
    """
    Marker collection
    """

    def __init__(self, asarray, n=100):
        v = asarray(np.array([(-0.25, -0.25), (+0.0, +0.5), (+0.25, -0.25), (0, 0)]))
        # c = np.array([Path.MOVETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY])
        self._base_vertices = np.tile(v.reshape(-1), n).reshape(n, len(v), 2)
        self._vertices = np.tile(v.reshape(-1), n).reshape(n, len(v), 2)
        # self._codes = np.tile(c.reshape(-1), n)

        self._scale = np.ones(n)
        self._translate = np.zeros((n, 2))
        self._rotate = np.zeros(n)

        # self._path = Path(...); self._collection = PathCollection(...)

    def update(self):
        n = len(self._base_vertices)
        self._vertices[...] = self._base_vertices * self._scale
        cos_rotate, sin_rotate = np.cos(self._rotate), np.sin(self._rotate)
        R = np.empty((n, 2, 2))
        R[:, 0, 0] = cos_rotate
        R[:, 1, 0] = sin_rotate
        R[:, 0, 1] = -sin_rotate
        R[:, 1, 1] = cos_rotate
        self._vertices[...] = np.einsum('ijk,ilk->ijl', self._vertices, R)
        self._vertices += self._translate.reshape(n, 1, 2)


class Flock:
    def __init__(self, asarray, rng, count=500, width=640, height=360):
        self.width = width
        self.height = height
        self.min_velocity = 0.5
        self.max_velocity = 2.0
        self.max_acceleration = 0.03
        self.velocity = asarray(np.zeros((count, 2), dtype=np.float32))
        self.position = asarray(np.zeros((count, 2), dtype=np.float32))

        angle = rng.uniform(0, 2*np.pi, count)
        self.velocity[:, 0] = np.cos(angle)
        self.velocity[:, 1] = np.sin(angle)
        angle = rng.uniform(0, 2*np.pi, count)
        radius = min(width, height)/2*rng.uniform(0, 1, count)
        self.position[:, 0] = width/2 + np.cos(angle)*radius
        self.position[:, 1] = height/2 + np.sin(angle)*radius

    def run(self):
        position = self.position
        velocity = self.velocity
        min_velocity = self.min_velocity
        max_velocity = self.max_velocity
        max_acceleration = self.max_acceleration
        n = len(position)

        dx = np.subtract.outer(position[:, 0], position[:, 0])
        dy = np.subtract.outer(position[:, 1], position[:, 1])
        distance = np.hypot(dx, dy)

        # Compute common distance masks
        mask_0 = (distance > 0)
        mask_1 = (distance < 25)
        mask_2 = (distance < 50)
        mask_1 *= mask_0
        mask_2 *= mask_0
        mask_3 = mask_2
        mask_1_count = np.maximum(mask_1.sum(axis=1), 1)
        mask_2_count = np.maximum(mask_2.sum(axis=1), 1)
        mask_3_count = mask_2_count

        # Separation
        mask, count = mask_1, mask_1_count
        target = np.dstack((dx, dy))
        target = np.divide(target, distance.reshape(n, n, 1)**2, out=target,
                           where=distance.reshape(n, n, 1) != 0)
        steer = (target*mask.reshape(n, n, 1)).sum(axis=1)/count.reshape(n, 1)
        norm = np.sqrt((steer*steer).sum(axis=1)).reshape(n, 1)
        steer = max_velocity*np.divide(steer, norm, out=steer,
                                       where=norm != 0)
        steer -= velocity

        # Limit acceleration
        norm = np.sqrt((steer*steer).sum(axis=1)).reshape(n, 1)
        steer = np.multiply(steer, max_acceleration/norm, out=steer,
                            where=norm > max_acceleration)

        separation = steer

        # Alignment
        # ---------------------------------------------------------------------
        # Compute target
        mask, count = mask_2, mask_2_count
        target = np.dot(mask, velocity)/count.reshape(n, 1)

        # Compute steering
        norm = np.sqrt((target*target).sum(axis=1)).reshape(n, 1)
        target = max_velocity * np.divide(target, norm, out=target,
                                          where=norm != 0)
        steer = target - velocity

        # Limit acceleration
        norm = np.sqrt((steer*steer).sum(axis=1)).reshape(n, 1)
        steer = np.multiply(steer, max_acceleration/norm, out=steer,
                            where=norm > max_acceleration)
        alignment = steer

        # Cohesion
        # ---------------------------------------------------------------------
        # Compute target
        mask, count = mask_3, mask_3_count
        target = np.dot(mask, position)/count.reshape(n, 1)

        # Compute steering
        desired = target - position
        norm = np.sqrt((desired*desired).sum(axis=1)).reshape(n, 1)
        desired *= max_velocity / norm
        steer = desired - velocity

        # Limit acceleration
        norm = np.sqrt((steer*steer).sum(axis=1)).reshape(n, 1)
        steer = np.multiply(steer, max_acceleration/norm, out=steer,
                            where=norm > max_acceleration)
        cohesion = steer

        # ---------------------------------------------------------------------
        acceleration = 1.5 * separation + alignment + cohesion
        velocity += acceleration

        norm = np.sqrt((velocity*velocity).sum(axis=1)).reshape(n, 1)
        velocity = np.multiply(velocity, max_velocity/norm, out=velocity,
                               where=norm > max_velocity)
        velocity = np.multiply(velocity, min_velocity/norm, out=velocity,
                               where=norm < min_velocity)
        position += velocity

        # Wraparound
        position += (self.width, self.height)
        position %= (self.width, self.height)


@program
def boids(asarray, rng, n=200, frames=5):  # n = 500, 1000 frames
    width, height = 640, 360
    flock = Flock(asarray, rng, n)
    collection = MarkerCollection(asarray, n)
    # Trace: `trace = None; if 0: trace = np.zeros((height, width))` in the program
    trace = asarray(np.zeros((height, width)))

    def update(*args):
        nonlocal flock, collection, trace  # global flock, collection, trace

        # Flock updating
        flock.run()
        collection._scale = 10
        collection._translate = flock.position
        collection._rotate = -np.pi/2 + np.arctan2(flock.velocity[:, 1],
                                                   flock.velocity[:, 0])
        collection.update()

        # Trace updating
        if trace is not None:
            P = flock.position.astype(int)
            trace[height-1-P[:, 1], P[:, 0]] = .75
            trace *= .99
            # im.set_array(trace)

    for frame in range(frames):
        update()
    return [flock.position, flock.velocity, collection._vertices, trace]


# --- maze_numpy.py -----------------------------------------------------------
def build_maze(asarray, rng, shape=(65,65), complexity=0.75, density = 0.50):
    """
    Build a maze using given complexity and density

    Parameters
    ==========

    shape : (rows,cols)
      Size of the maze

    complexity: float
      Mean length of islands (as a ratio of maze size)

    density: float
      Mean numbers of highland (as a ratio of maze surface)

    """

    # Only odd shapes
    shape = ((shape[0]//2)*2+1, (shape[1]//2)*2+1)

    # Adjust complexity and density relatively to maze size
    n_complexity = int(complexity*(shape[0]+shape[1]))
    n_density    = int(density*(shape[0]*shape[1]))

    # Build actual maze
    Z = asarray(np.zeros(shape, dtype=bool))

    # Fill borders
    Z[0,:] = Z[-1,:] = Z[:,0] = Z[:,-1] = 1

    # Islands starting point with a bias in favor of border
    P = rng.normal(0, 0.5, (n_density,2))
    P = 0.5 - np.maximum(-0.5, np.minimum(P, +0.5))
    P = (P*[shape[1],shape[0]]).astype(int)
    P = 2*(P//2)

    # Create islands
    for i in range(n_density):

        # Test for early stop: if all starting point are busy, this means we
        # won't be able to connect any island, so we stop.
        T = Z[2:-2:2,2:-2:2]
        if T.sum() == T.size:
            break

        x, y = P[i]
        Z[y,x] = 1
        for j in range(n_complexity):
            neighbours = []
            if x > 1:
                neighbours.append([(y, x-1), (y, x-2)])
            if x < shape[1]-2:
                neighbours.append([(y, x+1), (y, x+2)])
            if y > 1:
                neighbours.append([(y-1, x), (y-2, x)])
            if y < shape[0]-2:
                neighbours.append([(y+1, x), (y+2, x)])
            if len(neighbours):
                choice = rng.integers(len(neighbours))
                next_1, next_2 = neighbours[choice]
                if Z[next_2] == 0:
                    Z[next_1] = Z[next_2] = 1
                    y, x = next_2
            else:
                break
    return Z


def BellmanFord(asarray, Z, start, goal):

    # We reserve Z such that walls have value 0
    Z = 1 - Z

    # Build gradient array
    G = asarray(np.zeros(Z.shape))

    # Initialize gradient at the entrance with value 1
    G[start] = 1

    # Discount factor
    gamma = 0.99

    # def diffuse(Z): ... (for the "Slow" scipy generic_filter variant, not used)

    # Shortest path in best case cannot be less the Manhattan distance
    # from entrance to exit
    length = Z.shape[0]+Z.shape[1]  # noqa: F841

    # We iterate until value at exit is > 0. This requires the maze
    # to have a solution or it will be stuck in the loop.

    G_gamma = np.empty_like(G)
    while G[goal] == 0.0:
        # Fast
        np.multiply(G, gamma, out=G_gamma)
        N = G_gamma[0:-2,1:-1]
        W = G_gamma[1:-1,0:-2]
        C = G[1:-1,1:-1]
        E = G_gamma[1:-1,2:]
        S = G_gamma[2:,1:-1]
        G[1:-1,1:-1] = Z[1:-1,1:-1]*np.maximum(N,np.maximum(W,np.maximum(C,np.maximum(E,S))))

    # Descent gradient to find shortest path from entrance to exit
    y, x = goal
    P = []
    dirs = [(0,-1), (0,+1), (-1,0), (+1,0)]
    while (x, y) != start:
        P.append((x, y))
        neighbours = [-1, -1, -1, -1]
        if x > 0:
            neighbours[0] = G[y, x-1]
        if x < G.shape[1]-1:
            neighbours[1] = G[y, x+1]
        if y > 0:
            neighbours[2] = G[y-1, x]
        if y < G.shape[0]-1:
            neighbours[3] = G[y+1, x]
        a = np.argmax(neighbours)
        x, y  = x + dirs[a][1], y + dirs[a][0]
    P.append((x, y))
    return G, np.array(P)


def build_graph(maze):
    height, width = maze.shape
    graph = {(i, j): [] for j in range(width) for i in range(height) if not maze[i][j]}
    for row, col in graph.keys():
        if row < height - 1 and not maze[row + 1][col]:
            graph[(row, col)].append(("S", (row + 1, col)))
            graph[(row + 1, col)].append(("N", (row, col)))
        if col < width - 1 and not maze[row][col + 1]:
            graph[(row, col)].append(("E", (row, col + 1)))
            graph[(row, col + 1)].append(("W", (row, col)))
    return graph


def BreadthFirst(maze, start, goal):
    queue = deque([([start], start)])
    visited = set()
    graph = build_graph(maze)
    while queue:
        path, current = queue.popleft()
        if current == goal:
            return np.array(path)
        if current in visited:
            continue
        visited.add(current)
        for direction, neighbour in graph[current]:
            p = list(path)
            p.append(neighbour)
            queue.append((p, neighbour))
    return None


# The maze both solvers run on: build_maze on NumPy, then `asarray`.
def _maze(asarray, rng, shape):
    return asarray(build_maze(np.asarray, rng, shape))


@program
def maze_build(asarray, rng):
    Z = build_maze(asarray, rng, (21, 41))  # build_maze((41, 81))
    return [Z]


@program
def maze_bellman_ford(asarray, rng):
    Z = _maze(asarray, rng, (41, 81))
    start, goal = (1,1), (Z.shape[0]-2, Z.shape[1]-2)
    G, P = BellmanFord(asarray, Z, start, goal)
    X, Y = P[:,0], P[:,1]
    return [G, P, X, Y]


@program
def maze_breadth_first(asarray, rng):
    Z = _maze(asarray, rng, (21, 41))  # (41, 81)
    start, goal = (1,1), (Z.shape[0]-2, Z.shape[1]-2)
    P = BreadthFirst(Z, start, goal)
    X, Y = P[:,1], P[:,0]
    return [P, X, Y]


# --- maze_build.py: build_maze as a generator of the maze's frames -----------
def build_maze_frames(asarray, rng, shape=(65, 65), complexity=0.75, density=0.50):
    # Only odd shapes
    shape = ((shape[0]//2)*2+1, (shape[1]//2)*2+1)

    # Adjust complexity and density relatively to maze size
    n_complexity = int(complexity*(shape[0]+shape[1]))
    n_density = int(density*(shape[0]*shape[1]))

    # Build actual maze
    Z = asarray(np.zeros(shape, dtype=bool))

    # Fill borders
    Z[0, :] = Z[-1, :] = Z[:, 0] = Z[:, -1] = 1

    # Islands starting point with a bias in favor of border
    P = rng.normal(0, 0.5, (n_density, 2))
    P = 0.5 - np.maximum(-0.5, np.minimum(P, +0.5))
    P = (P*[shape[1], shape[0]]).astype(int)
    P = 2*(P//2)

    # Create islands
    for i in range(n_density):

        # Test for early stop: if all starting point are busy, this means we
        # won't be able to connect any island, so we stop.
        T = Z[2:-2:2, 2:-2:2]
        if T.sum() == T.size:
            break

        x, y = P[i]
        Z[y, x] = 1
        for j in range(n_complexity):
            neighbours = []
            if x > 1:
                neighbours.append([(y, x-1), (y, x-2)])
            if x < shape[1]-2:
                neighbours.append([(y, x+1), (y, x+2)])
            if y > 1:
                neighbours.append([(y-1, x), (y-2, x)])
            if y < shape[0]-2:
                neighbours.append([(y+1, x), (y+2, x)])
            if len(neighbours):
                choice = rng.integers(len(neighbours))
                next_1, next_2 = neighbours[choice]
                if Z[next_2] == 0:
                    Z[next_1] = 1
                    yield Z.copy()
                    Z[next_2] = 1
                    yield Z.copy()
                    y, x = next_2
            else:
                break
    return Z


@program
def maze_build_frames(asarray, rng):
    S = []
    for i, Z in enumerate(build_maze_frames(asarray, rng, (11, 21))):  # (51, 101)
        S.append(Z)
    return [np.stack(S) if S else None, S[0], S[-1]]


# --- smoke_solver.py (Jos Stam's stable fluids, after Alberto Santini) ------
def set_bnd(N, b, x):
    """We assume that the fluid is contained in a box with solid walls.

    No flow should exit the walls. This simply means that the horizontal
    component of the velocity should be zero on the vertical walls, while the
    vertical component of the velocity should be zero on the horizontal walls.
    For the density and other fields considered in the code we simply assume
    continuity. The following code implements these conditions.
    """

    if b == 1:
        x[0, 1:-1] = -x[1, 1:-1]
        x[-1, 1:-1] = -x[N, 1:-1]
    else:
        x[ 0, 1:-1] = x[1, 1:-1]
        x[-1, 1:-1] = x[N, 1:-1]
    if b == 2:
        x[1:-1,  0] = -x[1:-1, 1]
        x[1:-1, -1] = -x[1:-1, N]
    else:
        x[1:-1,  0] = x[1:-1, 1]
        x[1:-1, -1] = x[1:-1, N]

    x[ 0,  0] = 0.5 * (x[1,  0] + x[ 0, 1])
    x[ 0, -1] = 0.5 * (x[1, -1] + x[ 0, N])
    x[-1,  0] = 0.5 * (x[N,  0] + x[-1, 1])
    x[-1, -1] = 0.5 * (x[N, -1] + x[-1, N])


def lin_solve(N, b, x, x0, a, c):
    """lin_solve."""

    for k in range(20):
        x[1:-1, 1:-1] = (x0[1:-1, 1:-1] +
                         a * (x[:N, 1:-1] + x[2:, 1:-1] +
                              x[1:-1, :N] + x[1:-1, 2:])) / c
        set_bnd(N, b, x)


def add_source(N, x, s, dt):
    """Addition of forces: the density increases due to sources."""
    x += dt * s


def diffuse(N, b, x, x0, diff, dt):
    """Diffusion: the density diffuses at a certain rate.

    The basic idea behind our method is to find the densities which when
    diffused backward in time yield the densities we started with. The simplest
    iterative solver which works well in practice is Gauss-Seidel relaxation.
    """

    a = dt * diff * N * N
    lin_solve(N, b, x, x0, a, 1 + 4 * a)


def advect(N, b, d, d0, u, v, dt):
    """Advection: the density follows the velocity field.

    The basic idea behind the advection step. Instead of moving the cell
    centers forward in time through the velocity field, we look for the
    particles which end up exactly at the cell centers by tracing backwards in
    time from the cell centers.
    """

    dt0 = dt * N

    I, J = np.indices((N, N))
    I += 1
    J += 1
    X = I - dt0 * u[I, J]
    Y = J - dt0 * v[I, J]

    X = np.minimum(np.maximum(X, 0.5), N+0.5)
    I0 = X.astype(int)
    I1 = I0+1
    S1 = X - I0
    S0 = 1 - S1

    Y = np.minimum(np.maximum(Y, 0.5), N+0.5)
    J0 = Y.astype(int)
    J1 = J0 + 1
    T1 = Y - J0
    T0 = 1 - T1

    d[I, J] = (S0 * (T0 * d0[I0, J0] + T1 * d0[I0, J1])
             + S1 * (T0 * d0[I1, J0] + T1 * d0[I1, J1]))

    set_bnd(N, b, d)


def project(N, u, v, p, div):
    """ Projection """

    h = 1.0 / N
    div[1:-1, 1:-1] = (-0.5 * h *
                       (u[2:, 1:-1] - u[0:N, 1:-1] +
                        v[1:-1, 2:] - v[1:-1, 0:N]))
    p[1:-1, 1:-1] = 0
    set_bnd(N, 0, div)
    set_bnd(N, 0, p)
    lin_solve(N, 0, p, div, 1, 4)
    u[1:-1, 1:-1] -= 0.5 * (p[2:, 1:-1] - p[0:N, 1:-1]) / h
    v[1:-1, 1:-1] -= 0.5 * (p[1:-1, 2:] - p[1:-1, 0:N]) / h
    set_bnd(N, 1, u)
    set_bnd(N, 2, v)


def dens_step(N, x, x0, u, v, diff, dt):
    # Density step: advection, diffusion & addition of sources.
    add_source(N, x, x0, dt)
    x0, x = x, x0  # swap
    diffuse(N, 0, x, x0, diff, dt)
    x0, x = x, x0  # swap
    advect(N, 0, x, x0, u, v, dt)


def vel_step(N, u, v, u0, v0, visc, dt):
    # Velocity step: self-advection, viscous diffusion & addition of forces

    add_source(N, u, u0, dt)
    add_source(N, v, v0, dt)
    u0, u = u, u0  # swap

    diffuse(N, 1, u, u0, visc, dt)
    v0, v = v, v0  # swap

    diffuse(N, 2, v, v0, visc, dt)
    project(N, u, v, u0, v0)
    u0, u = u, u0  # swap
    v0, v = v, v0  # swap

    advect(N, 1, u, u0, u0, v0, dt)
    advect(N, 2, v, v0, u0, v0, dt)
    project(N, u, v, u0, v0)


# smoke_1.py: the simulation that runs the solver
@program
def smoke(asarray, rng, frames=3):  # 800 frames
    N = 64  # 128
    size = N + 2
    dt = 0.1
    diff = 0.0
    visc = 0.0
    force = 5.0
    source = 100.0

    u = asarray(np.zeros((size, size), np.float32))  # velocity
    u_prev = asarray(np.zeros((size, size), np.float32))

    v = asarray(np.zeros((size, size), np.float32))  # velocity
    v_prev = asarray(np.zeros((size, size), np.float32))

    dens = asarray(np.zeros((size, size), np.float32))  # density
    dens_prev = asarray(np.zeros((size, size), np.float32))

    def initialization():
        nonlocal u, v, u_prev, v_prev, dens, dens_prev, size

        u[:, :] = 0.0
        v[:, :] = 0.0
        u_prev[:, :] = 0.0
        v_prev[:, :] = 0.0
        dens[:, :] = 0.0
        dens_prev[:, :] = 0.0

        def disc(shape=(size, size), center=(size/2, size/2), radius=10):
            def distance(x, y):
                return np.sqrt((x-center[0])**2+(y-center[1])**2)
            D = np.fromfunction(distance, shape)
            return np.where(D <= radius, True, False)

        D = disc(radius=32*N//128) ^ disc(radius=16*N//128)  # radius=32, 16
        dens[...] = D*source/10
        u[:, :] = force * 0.1 * rng.uniform(-1, 1, u.shape)
        v[:, :] = force * 0.1 * rng.uniform(-1, 1, u.shape)

    def update(*args):
        nonlocal dens, dens_prev, u, u_prev, v, v_prev, N, visc, dt, diff

        vel_step(N, u, v, u_prev, v_prev, visc, dt)
        dens_step(N, dens, dens_prev, u, v, diff, dt)
        # im.set_data(dens)
        # im.set_clim(vmin=dens.min(), vmax=dens.max())
        return dens.min(), dens.max()

    initialization()
    clim = [update() for frame in range(frames)]
    return [u, v, u_prev, v_prev, dens, dens_prev, clim]


# --- random_walk.py ----------------------------------------------------------
def random_walk_fastest(asarray, rng, n=1000):
    # No 's' in numpy choice (Python offers choice & choices)
    steps = asarray(rng.choice([-1,+1], 1000))
    return np.cumsum(steps)


# Readable but slow
def find_crossing_1(seq, sub):
    return [i for i in range(len(seq) - len(sub) +1) if seq[i:i+len(sub)] == sub]


# Fast but hardly readable
def find_crossing_2(seq, sub):
    # See stackoverflow.com / "python-numpy-first-occurrence-of-subarray"
    target = np.dot(sub, sub)
    candidates = np.where(np.correlate(seq, sub, mode='valid') == target)[0]
    # some of the candidates entries may be false positives, double check
    check = candidates[:, np.newaxis] + np.arange(len(sub))
    mask = np.all((np.take(seq, check) == sub), axis=-1)
    return candidates[mask]


@program
def random_walk(asarray, rng):
    W = random_walk_fastest(asarray, rng, n=1000)
    return [W, find_crossing_2(W, [+1,0,-1]), find_crossing_1(list(W), [+1,0,-1])]


# --- DART_sampling_numpy.py --------------------------------------------------
def DART_sampling_numpy(asarray, rng, width=1.0, height=1.0, radius=0.025, k=100):

    # Theoretical limit
    n = int((width+radius)*(height+radius) / (2*(radius/2)*(radius/2)*np.sqrt(3))) + 1
    # 5 times the theoretical limit
    n = 5*n

    # Compute n random points
    P = asarray(np.zeros((n, 2)))
    P[:, 0] = rng.uniform(0, width, n)
    P[:, 1] = rng.uniform(0, height, n)

    # Computes respective distances at once
    D = cdist(P, P)

    # Cancel null distances on the diagonal
    D[range(n), range(n)] = 1e10

    points, indices = [P[0]], [0]
    i = 1
    last_success = 0
    while i < n and i - last_success < k:
        if D[i, indices].min() > radius:
            indices.append(i)
            points.append(P[i])
            last_success = i
        i += 1
    return points


@program
def DART_sampling(asarray, rng):
    return DART_sampling_numpy(asarray, rng, radius=0.05)  # radius=0.025


# --- Bridson_sampling.py -----------------------------------------------------
def Bridson_sampling(asarray, rng, width=1.0, height=1.0, radius=0.025, k=30):
    # References: Fast Poisson Disk Sampling in Arbitrary Dimensions
    #             Robert Bridson, SIGGRAPH, 2007
    def squared_distance(p0, p1):
        return (p0[0]-p1[0])**2 + (p0[1]-p1[1])**2

    def random_point_around(p, k=1):
        # WARNING: This is not uniform around p but we can live with it
        R = rng.uniform(radius, 2*radius, k)
        T = rng.uniform(0, 2*np.pi, k)
        P = np.empty((k, 2))
        P[:, 0] = p[0]+R*np.sin(T)
        P[:, 1] = p[1]+R*np.cos(T)
        return P

    def in_limits(p):
        return 0 <= p[0] < width and 0 <= p[1] < height

    def neighborhood(shape, index, n=2):
        row, col = index
        row0, row1 = max(row-n, 0), min(row+n+1, shape[0])
        col0, col1 = max(col-n, 0), min(col+n+1, shape[1])
        I = np.dstack(np.mgrid[row0:row1, col0:col1])
        I = I.reshape(I.size//2, 2).tolist()
        I.remove([row, col])
        return I

    def in_neighborhood(p):
        i, j = int(p[0]/cellsize), int(p[1]/cellsize)
        if M[i, j]:
            return True
        for (i, j) in N[(i, j)]:
            if M[i, j] and squared_distance(p, P[i, j]) < squared_radius:
                return True
        return False

    def add_point(p):
        points.append(p)
        i, j = int(p[0]/cellsize), int(p[1]/cellsize)
        P[i, j], M[i, j] = p, True

    # Here `2` corresponds to the number of dimension
    cellsize = radius/np.sqrt(2)
    rows = int(np.ceil(width/cellsize))
    cols = int(np.ceil(height/cellsize))

    # Squared radius because we'll compare squared distance
    squared_radius = radius*radius

    # Positions cells
    P = asarray(np.zeros((rows, cols, 2), dtype=np.float32))
    M = asarray(np.zeros((rows, cols), dtype=bool))

    # Cache generation for neighborhood
    N = {}
    for i in range(rows):
        for j in range(cols):
            N[(i, j)] = neighborhood(M.shape, (i, j), 2)

    points = []
    add_point((rng.uniform(0,width), rng.uniform(0,height)))
    while len(points):
        i = rng.integers(len(points))
        p = points[i]
        del points[i]
        Q = random_point_around(p, k)
        for q in Q:
            if in_limits(q) and not in_neighborhood(q):
                add_point(q)
    return P[M]


@program
def bridson_sampling(asarray, rng):
    return [Bridson_sampling(asarray, rng, radius=0.1)]  # radius=0.025


# --- fractal_dimension.py ----------------------------------------------------
def fractal_dimension(Z, threshold=0.9):
    def boxcount(Z, k):
        S = np.add.reduceat(
            np.add.reduceat(Z, np.arange(0, Z.shape[0], k), axis=0),
                               np.arange(0, Z.shape[1], k), axis=1)
        return len(np.where((S > 0) & (S < k*k))[0])
    Z = (Z < threshold)
    p = min(Z.shape)
    n = 2**np.floor(np.log(p)/np.log(2))
    n = int(np.log(n)/np.log(2))
    sizes = 2**np.arange(n, 1, -1)
    counts = []
    for size in sizes:
        counts.append(boxcount(Z, size))
    coeffs = np.polyfit(np.log(sizes), np.log(counts), 1)
    return -coeffs[0]


@program
def fractal_dimension_of_an_image(asarray, rng):
    # The program reads ../data/Great-Britain.png; here a random blob image:
    # smoothed noise, so that the boxes' counts vary with the box size.
    noise = rng.random((130, 130))
    image = (noise[:-2, :-2] + noise[1:-1, 1:-1] + noise[2:, 2:]) / 3
    Z = asarray(1.0 - image)
    return [fractal_dimension(Z, threshold=0.45)]


# --- find_index.py -----------------------------------------------------------
def find_index(base, view):
    """
    Given an array that is a `view` of a `base`, find an index such that
    `base[index] is view`
    """

    if not isinstance(view, np.ndarray):
        return "..."

    itemsize = view.itemsize
    # np.byte_bounds: np.lib.array_utils.byte_bounds since NumPy 2.0
    offset_start = (byte_bounds(view)[0] - byte_bounds(base)[0])//itemsize
    offset_stop = (byte_bounds(view)[-1] - byte_bounds(base)[-1]-1)//itemsize
    index_start = np.unravel_index(offset_start, base.shape)
    index_stop = np.unravel_index(base.size+offset_stop, base.shape)
    index_step  = np.array(view.strides)//np.array(base.strides)

    index = ""
    for i in range(len(index_step)):
        start = index_start[i]
        stop = index_stop[i]
        step = index_step[i]

        if stop == start:
            stop, step = None, None
        else:
            if stop == base.shape[i] - 1:
                stop = None
            else:
                stop = stop
            if start == 0:
                start = None
        if step is not None and stop is not None:
            if step < 0:
                start, stop = stop, start - 1
            else:
                start, stop = start, stop + 1

        if start is not None:
            index += str(start)
        if stop is not None:
            index += ":" + str(stop)
        elif step is not None:
            index += ":"
        if step is not None:
            index += ":" + str(step)
        index += ','
    index = index[:-1]

    return index


@program
def find_index_of_views(asarray, rng):
    base = asarray(np.arange(8*8)).reshape(8,8)
    out = []
    for Z in (base[1:-1,1:-1], base[::2,::2], base[:,0], base[0,:], base[4:1:-1,6:2:-1],
              base[::-1,::-1], base[1:5:3,3:1:-1]):
        index = find_index(base,Z)
        out.append(index)
        out.append(np.allclose(Z, eval("base[%s]" % index)))
    return out


# --- vectorization.py --------------------------------------------------------
def compute_1(x, y):
    """ Pure python version """

    result = 0
    for i in range(len(x)):
        for j in range(len(y)):
            result += x[i] * y[j]
    return result


def compute_2(X, Y):
    """ Numpy version, faster """

    return (X.reshape(len(X), 1) * Y.reshape(1, len(Y))).sum()


def compute_3(X, Y):
    """ Numpy version, fastest """

    return X.sum()*Y.sum()


def compute_4(X, Y):
    """ Pure python version, fastesr """

    return sum(X)*sum(Y)


@program
def vectorization(asarray, rng):
    X = asarray(np.arange(1000))
    x = asarray(np.arange(30))  # compute_1 on 30, not 1000: 900 scalar products
    return [compute_1(x, x), compute_2(X, X), compute_3(X, X), compute_4(X, X)]


# --- addition.py -------------------------------------------------------------
def solution_1(Z1,Z2):
    return [z1+z2 for (z1,z2) in zip(Z1,Z2)]


def solution_2(Z1,Z2):
    return np.add(Z1,Z2)


@program
def addition(asarray, rng):
    Z1 = asarray(rng.choice(10000, 1000, replace=False))  # random.sample(range(10000), 1000)
    Z2 = asarray(rng.choice(10000, 1000, replace=False))
    out = solution_1(Z1, Z2) + [solution_2(Z1, Z2)]

    Z1 = asarray(np.array([[1,2],[3,4]]))  # [[1,2],[3,4]]
    Z2 = asarray(np.array([[5,6],[7,8]]))
    return out + solution_1(Z1, Z2) + [solution_2(Z1, Z2)]


# --- allocations.py ----------------------------------------------------------
@program
def allocations(asarray, rng):
    # solution_4, Yaser Martinez: Numpy indices
    X123 = asarray(np.indices((11,11,11))).reshape(3,11*11*11)
    X4 = 10 - X123.sum(axis=0)
    return [np.vstack((X123, X4)).T[X4 > -1]]


# --- c_fortran.py ------------------------------------------------------------
@program
def c_fortran(asarray, rng):
    Z1 = asarray(np.arange(9)).reshape(3,3)
    Z2 = asarray(np.arange(9)).reshape(3, 3, order='F')
    return [Z1.ravel(), Z2.ravel(), Z2]


# --- mandelbrot_numpy_1.py ---------------------------------------------------
def mandelbrot_1(xmin, xmax, ymin, ymax, xn, yn, maxiter, horizon=2.0):
    # Adapted from https://www.ibm.com/developerworks/community/blogs/jfp/...
    #              .../entry/How_To_Compute_Mandelbrodt_Set_Quickly?lang=en
    X = np.linspace(xmin, xmax, xn, dtype=np.float32)
    Y = np.linspace(ymin, ymax, yn, dtype=np.float32)
    C = X + Y[:,None]*1j
    N = np.zeros(C.shape, dtype=int)
    Z = np.zeros(C.shape, np.complex64)
    for n in range(maxiter):
        I = np.less(abs(Z), horizon)
        N[I] = n
        Z[I] = Z[I]**2 + C[I]
    N[N == maxiter-1] = 0
    return Z, N


# --- mandelbrot_numpy_2.py ---------------------------------------------------
def mandelbrot_2(xmin, xmax, ymin, ymax, xn, yn, itermax, horizon=2.0):
    # Adapted from
    # https://thesamovar.wordpress.com/2009/03/22/fast-fractals-with-python-and-numpy/
    Xi, Yi = np.mgrid[0:xn, 0:yn]
    Xi, Yi = Xi.astype(np.uint32), Yi.astype(np.uint32)
    X = np.linspace(xmin, xmax, xn, dtype=np.float32)[Xi]
    Y = np.linspace(ymin, ymax, yn, dtype=np.float32)[Yi]
    C = X + Y*1j
    N_ = np.zeros(C.shape, dtype=np.uint32)
    Z_ = np.zeros(C.shape, dtype=np.complex64)
    Xi.shape = Yi.shape = C.shape = xn*yn

    Z = np.zeros(C.shape, np.complex64)
    for i in range(itermax):
        if not len(Z):
            break

        # Compute for relevant points only
        np.multiply(Z, Z, Z)
        np.add(Z, C, Z)

        # Failed convergence
        I = abs(Z) > horizon
        N_[Xi[I], Yi[I]] = i+1
        Z_[Xi[I], Yi[I]] = Z[I]

        # Keep going with those who have not diverged yet
        I = ~I
        Z = Z[I]
        Xi, Yi = Xi[I], Yi[I]
        C = C[I]
    return Z_.T, N_.T


# The plane's bounds are 0-d arrays, so that np.linspace(xmin, xmax, ...) is
# braze's (the program passes Python floats: then nothing would be braze's).
@program
def mandelbrot_numpy_1(asarray, rng):
    xmin, xmax, ymin, ymax = (asarray(np.float64(b)) for b in (-2.25, +0.75, -1.25, +1.25))
    Z, N = mandelbrot_1(xmin, xmax, ymin, ymax, 60, 50, 20)  # 1000, 833, 200
    return [Z, N]


@program
def mandelbrot_numpy_2(asarray, rng):
    xmin, xmax, ymin, ymax = (asarray(np.float64(b)) for b in (-2.25, +0.75, -1.25, +1.25))
    Z, N = mandelbrot_2(xmin, xmax, ymin, ymax, 60, 50, 20)  # 1000, 833, 200
    return [Z, N]


# --- 03-anatomy.rst: the chapter's examples (pycon sessions; `>>> Z` shows Z)
@program
def anatomy_layout(asarray, rng):
    Z = asarray(np.arange(9).reshape(3, 3).astype(np.int16))
    out = [Z.itemsize, Z.shape, Z.ndim]
    strides = Z.shape[1]*Z.itemsize, Z.itemsize
    out += [strides, Z.strides]
    return out


@program
def anatomy_views_and_copies(asarray, rng):
    out = []
    Z = asarray(np.zeros(9))
    Z_view = Z[:3]
    Z_view[...] = 1
    out.append(Z.copy())  # >>> Z

    Z = asarray(np.zeros(9))
    Z_copy = Z[[0, 1, 2]]
    Z_copy[...] = 1
    out.append(Z.copy())

    Z = asarray(np.zeros(9))
    index = [0, 1, 2]
    Z[index] = 1
    out.append(Z.copy())

    Z = asarray(rng.uniform(0, 1, (5, 5)))
    Z1 = Z[:3, :]
    Z2 = Z[[0, 1, 2], :]
    out.append(np.allclose(Z1, Z2))

    X = asarray(np.ones(10, dtype=int))
    Y = asarray(np.ones(10, dtype=int))
    A = 2*X + 2*Y
    out.append(A)

    X = asarray(np.ones(10, dtype=int))
    Y = asarray(np.ones(10, dtype=int))
    np.multiply(X, 2, out=X)
    np.multiply(Y, 2, out=Y)
    np.add(X, Y, out=X)
    out += [X.copy(), Y.copy()]

    # the timings' statements, once each (100000000 -> 10)
    X = X + 2.0*Y
    out.append(X)
    X = asarray(np.ones(10, dtype=int))
    X = X + 2*Y
    X += 2*Y
    np.add(X, Y, out=X); np.add(X, Y, out=X)
    out.append(X)
    return out


@program
def anatomy_view_base(asarray, rng):
    Z1 = asarray(np.arange(10))
    Z2 = Z1[1:-1:2]
    return [Z2.base is Z1]


@program
def anatomy_view_step(asarray, rng):
    Z1 = asarray(np.arange(10))
    Z2 = Z1[1:-1:2]
    step = Z2.strides[0] // Z1.strides[0]
    return [step]
