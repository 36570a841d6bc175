# SPDX-License-Identifier: MIT
# sqlite_writer.py DIR LOG SEED SYNCHRONOUS [COUNT] - commit rows to an
# SQLite database in WAL mode with PRAGMA synchronous=SYNCHRONOUS (FULL,
# NORMAL, OFF) until a statement fails (the disk under DIR lost its power),
# or COUNT transactions are committed (then close it and exit 0).  Each
# transaction inserts 1 to 5 rows whose contents follow from their ids;
# only once COMMIT has returned are their ids appended to LOG (a file
# outside the disk).  Row counts and sizes come from SEED.
import hashlib
import os
import random
import sqlite3
import sys

d, log, seed, sync = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
count = int(sys.argv[5]) if len(sys.argv) > 5 else None


def row(i, n):
    return (hashlib.sha256(b"%d" % i).digest() * (n // 32 + 1))[:n]


rnd = random.Random(seed)
lf = open(log, "a")
try:
    con = sqlite3.connect(os.path.join(d, "db.sqlite"), isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=%s" % sync)
    con.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v BLOB)")
    i = n = 0
    while count is None or n < count:
        ids = list(range(i, i + rnd.randint(1, 5)))
        con.execute("BEGIN")
        for k in ids:
            con.execute("INSERT INTO t VALUES (?, ?)", (k, row(k, rnd.randint(100, 4000))))
        con.execute("COMMIT")
        lf.write("".join("%d\n" % k for k in ids))
        lf.flush()
        i = ids[-1] + 1
        n += 1
    con.close()
except (sqlite3.Error, OSError):
    pass
