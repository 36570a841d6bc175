# SPDX-License-Identifier: MIT
# sqlite_check.py DIR LOG - open sqlite_writer.py's database after a cut
# (SQLite recovers its WAL), run PRAGMA integrity_check, and count the
# committed rows LOG names that are missing or hold other data: prints
# "COMMITTED LOST INTEGRITY" (INTEGRITY "ok"; "empty" when the database
# or its table is not there, which the cut may leave before a first
# durable commit; "bad" when the check finds anything or it does not
# open).
import hashlib
import os
import sqlite3
import sys

d, log = sys.argv[1], sys.argv[2]
ids = [int(x) for x in open(log)]
lost, integrity = 0, "ok"
try:
    con = sqlite3.connect("file:%s?mode=rw" % os.path.join(d, "db.sqlite"), uri=True)
    res = con.execute("PRAGMA integrity_check").fetchall()
    if res != [("ok",)]:
        integrity = "bad"
    if not con.execute("SELECT name FROM sqlite_master WHERE name = 't'").fetchall():
        integrity, rows = "empty" if integrity == "ok" else integrity, {}
    else:
        rows = dict(con.execute("SELECT id, v FROM t"))
    for i in ids:
        v = rows.get(i)
        want = hashlib.sha256(b"%d" % i).digest()
        if v is None or (want * (len(v) // 32 + 1))[:len(v)] != v:
            lost += 1
except sqlite3.Error as e:
    integrity = "empty" if not os.path.exists(os.path.join(d, "db.sqlite")) else "bad"
    lost = len(ids)
print(len(ids), lost, integrity)
