"""Benchmark data: the Proben1 problems and generated tasks.

Proben1 (Prechelt 1994) is read from ``.dt`` files that the library does not ship:
it finds them under a data directory (the `root` argument, then the
``FASTNET_DATA`` environment variable, then a per-user cache) and can download the
public archive into that cache (`fetch_proben1`). Generated tasks (XOR, encoder,
Lawrence's teacher task, Mackey-Glass) are built from a seed.

Every loader returns a `Dataset` whose ``train``, ``val`` and ``test`` are
``(X, Y)`` pairs of C-contiguous float64 arrays (`Split`).

Proben1
-------
* `load_proben1` -- load e.g. ``"cancer1"``, ``"glass1d"`` with its partitioning
* `read_proben1` -- strict reader of one ``.dt`` file
* `list_proben1` -- the 15 problems and whether their files are present
* `fetch_proben1` -- download and verify the archive into the cache
* `verify_proben1` -- check files against their SHA-256
* `PROBEN1_PROBLEMS` -- registry: sizes, kind, pivot architectures (Table 7)
* `PARTITIONINGS` -- set order of the partitionings a-f

Generated tasks
---------------
`make_xor`, `make_encoder`, `make_teacher`, `make_mackey_glass`

Preprocessing
-------------
`standardize` -- inputs to zero mean and unit variance by the training set
"""

from fastnet.datasets._dataset import Dataset, Split
from fastnet.datasets._fetch import DEFAULT_URL, FetchError, fetch_proben1, verify_proben1
from fastnet.datasets._format import HEADER_KEYS, Proben1File, Proben1Header, read_proben1
from fastnet.datasets._proben1 import (
    ENV_DATA_DIR,
    Proben1Listing,
    default_cache_dir,
    find_proben1_file,
    list_proben1,
    load_proben1,
    parse_proben1_name,
    proben1_search_dirs,
)
from fastnet.datasets._registry import (
    PARTITIONINGS,
    PROBEN1_PROBLEMS,
    Architecture,
    Proben1Problem,
)
from fastnet.datasets._preprocess import standardize
from fastnet.datasets._synthetic import (
    MAX_ENCODER,
    TEACHER_BIAS_RANGE,
    make_encoder,
    make_mackey_glass,
    make_teacher,
    make_xor,
)

__all__ = [
    "Architecture",
    "DEFAULT_URL",
    "Dataset",
    "ENV_DATA_DIR",
    "FetchError",
    "HEADER_KEYS",
    "MAX_ENCODER",
    "PARTITIONINGS",
    "PROBEN1_PROBLEMS",
    "Proben1File",
    "Proben1Header",
    "Proben1Listing",
    "Proben1Problem",
    "Split",
    "TEACHER_BIAS_RANGE",
    "default_cache_dir",
    "fetch_proben1",
    "find_proben1_file",
    "list_proben1",
    "load_proben1",
    "make_encoder",
    "make_mackey_glass",
    "make_teacher",
    "make_xor",
    "parse_proben1_name",
    "proben1_search_dirs",
    "read_proben1",
    "standardize",
    "verify_proben1",
]
