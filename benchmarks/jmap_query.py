"""Email/query and Email/get on one mailbox of 100,000 messages.

    .venv/bin/python benchmarks/jmap_query.py [--messages 100000] [--runs 200] [--plans]

Fills one address's inbox with generated, realistic mail: threads of one to
a dozen messages (replies carry In-Reply-To/References and "Re:"), 2,000
senders, words drawn from a Zipf distribution over a 4,000-word vocabulary,
one message in ten with a PDF or PNG attachment, seven in ten $seen. Every
message is raw MIME, parsed by ``mta.message.parse_message`` (the delivery
parser) for its columns, and loaded with COPY: the raw bytes into
``mta.inline_blobs``, the rows into ``mta.emails`` and their body words into
``mta.email_words`` (to_tsvector in the INSERT ... SELECT, as the words job
does), the memberships and threads. Then it calls the real functions (``mta.jmap.email.query.query``,
``get.get``) on a pooled connection and reports p50/p99 wall times per
call, the same statements run bare (the SQL the function sends, without
the Python around it) as the peer, and with ``--plans`` the EXPLAIN
ANALYZE of each query. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.smtp_inbound import prepare  # noqa: E402

FIRST = ["Ann", "Ben", "Cara", "Dan", "Eve", "Finn", "Gus", "Hana", "Ivan", "Jo", "Kai", "Lea", "Max", "Nia", "Omar", "Pia", "Quinn", "Rosa", "Sam", "Tia", "Uma", "Vic", "Wes", "Xia", "Yan", "Zoe"]  # fmt: skip
LAST = ["Smith", "Jones", "Brown", "Garcia", "Miller", "Davis", "Lopez", "Wilson", "Moore", "Taylor", "Thomas", "White", "Harris", "Martin", "Clark", "Lewis", "Walker", "Young", "Allen", "King"]  # fmt: skip
DOMAINS = [
    f"{w}.example"
    for w in [
        "acme",
        "globex",
        "initech",
        "umbrella",
        "hooli",
        "vandelay",
        "stark",
        "wayne",
        "wonka",
        "tyrell",
    ]
]


def vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    syllables = [
        "ba",
        "be",
        "bi",
        "bo",
        "bu",
        "ca",
        "ce",
        "ci",
        "co",
        "da",
        "de",
        "di",
        "do",
        "fa",
        "fe",
        "fi",
        "ga",
        "go",
        "ka",
        "ke",
        "ki",
        "ko",
        "la",
        "le",
        "li",
        "lo",
        "ma",
        "me",
        "mi",
        "mo",
        "na",
        "ne",
        "ni",
        "no",
        "pa",
        "pe",
        "pi",
        "po",
        "ra",
        "re",
        "ri",
        "ro",
        "sa",
        "se",
        "si",
        "so",
        "ta",
        "te",
        "ti",
        "to",
        "va",
        "ve",
        "vi",
        "vo",
        "za",
        "ze",
    ]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def zipf_words(rng: random.Random, vocab: list[str], weights: list[float], n: int) -> list[str]:
    return rng.choices(vocab, weights=weights, k=n)


def make_raw(
    *,
    sender: tuple[str, str],
    subject: str,
    body: str,
    date: datetime,
    message_id: str,
    parent: str | None,
    refs: list[str],
    attachment: tuple[str, str, bytes] | None,
) -> bytes:
    head = [
        f"Received: from mx.{sender[1].split('@')[1]} (mx [192.0.2.7]) by mx.bench.test with ESMTPS id {message_id[:8]}; {format_datetime(date)}",
        f"From: {sender[0]} <{sender[1]}>",
        "To: Alice Bench <alice@bench.test>",
        f"Subject: {subject}",
        f"Date: {format_datetime(date)}",
        f"Message-ID: <{message_id}>",
    ]
    if parent:
        head.append(f"In-Reply-To: <{parent}>")
        head.append("References: " + " ".join(f"<{r}>" for r in refs))
    head.append("MIME-Version: 1.0")
    text = "\r\n".join(body[i : i + 76] for i in range(0, len(body), 76))
    if attachment is None:
        head.append("Content-Type: text/plain; charset=utf-8")
        head.append("Content-Transfer-Encoding: 8bit")
        return ("\r\n".join(head) + "\r\n\r\n" + text + "\r\n").encode()
    import base64

    name, ctype, data = attachment
    boundary = "b-" + message_id[:16]
    encoded = base64.encodebytes(data).decode().replace("\n", "\r\n")
    head.append(f'Content-Type: multipart/mixed; boundary="{boundary}"')
    parts = (
        f"--{boundary}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n"
        f'--{boundary}\r\nContent-Type: {ctype}; name="{name}"\r\n'
        f'Content-Disposition: attachment; filename="{name}"\r\n'
        f"Content-Transfer-Encoding: base64\r\n\r\n{encoded}--{boundary}--\r\n"
    )
    return ("\r\n".join(head) + "\r\n\r\n" + parts).encode()


def _t(value: Any) -> str:
    """A COPY text-format field."""
    if value is None:
        return "\\N"
    s = str(value)
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _array(values: list[str]) -> str:
    return (
        "{"
        + ",".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values)
        + "}"
    )


def generate(
    n: int, seed: int = 7, *, parse: bool = True
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """n messages, oldest first, with their thread ids and the words to search for.
    ``parse=False``: without the parsed columns (``parsed`` is None), for a
    loader that stores the raw messages through the store, which parses them."""
    from mta.message import parse_message

    rng = random.Random(seed)
    vocab = vocabulary(rng)
    weights = [1 / (r + 1) ** 1.07 for r in range(len(vocab))]
    senders = [
        (
            f"{rng.choice(FIRST)} {rng.choice(LAST)}",
            f"{rng.choice(FIRST).lower()}.{i}@{rng.choice(DOMAINS)}",
        )
        for i in range(2000)
    ]
    sender_weights = [1 / (r + 1) ** 0.8 for r in range(len(senders))]
    start = datetime(2025, 1, 1, tzinfo=UTC)
    open_threads: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    pdf = b"%PDF-1.4\n" + bytes(rng.randrange(256) for _ in range(6000))
    png = b"\x89PNG\r\n\x1a\n" + bytes(rng.randrange(256) for _ in range(3000))
    t0 = time.perf_counter()
    df: dict[str, int] = {}
    for i in range(n):
        date = start + timedelta(seconds=i * 300 + rng.randint(0, 200))
        reply = open_threads and rng.random() < 0.45
        if reply:
            thread = rng.choice(open_threads)
            subject = "Re: " + thread["subject"]
            parent = thread["ids"][-1]
            refs = thread["ids"][-10:]
        else:
            thread = {
                "id": str(uuid.uuid4()),
                "subject": " ".join(
                    zipf_words(rng, vocab, weights, rng.randint(3, 7))
                ).capitalize(),
                "ids": [],
                "created": date,
            }
            subject, parent, refs = thread["subject"], None, []
            open_threads.append(thread)
            if len(open_threads) > 400:
                open_threads.pop(0)
        message_id = f"{uuid.uuid4().hex}@{rng.choice(DOMAINS)}"
        thread["ids"].append(message_id)
        sender = rng.choices(senders, weights=sender_weights)[0]
        words = zipf_words(rng, vocab, weights, rng.randint(40, 260))
        for w in set(words) | set(subject.lower().split()):
            df[w] = df.get(w, 0) + 1
        body = " ".join(words) + "."
        attachment = None
        if rng.random() < 0.1:
            attachment = rng.choice(
                [("report.pdf", "application/pdf", pdf), ("photo.png", "image/png", png)]
            )
        raw = make_raw(sender=sender, subject=subject, body=body, date=date, message_id=message_id,
                       parent=parent, refs=refs, attachment=attachment)  # fmt: skip
        parsed = parse_message(raw) if parse else None
        keywords = [k for k, p in (("$seen", 0.7), ("$flagged", 0.05)) if rng.random() < p]
        rows.append({"id": str(uuid.uuid4()), "thread": thread["id"], "thread_created": thread["created"],
                     "raw": raw, "parsed": parsed, "received": date, "keywords": keywords})  # fmt: skip
        if (i + 1) % 20000 == 0:
            print(f"  generated {i + 1} in {time.perf_counter() - t0:.0f} s", flush=True)

    # Search terms: words in about 1% and 0.1% of messages, and the most common word.
    def near(target: float) -> str:
        return min(df, key=lambda w: (abs(df[w] - target * n), w))

    terms = {"word_1pct": near(0.01), "word_01pct": near(0.001), "word_top": max(df, key=lambda w: df[w]),
             "sender": senders[3][0].split()[0], "sender_email": senders[3][1]}  # fmt: skip
    terms["df"] = {w: df[terms[w]] for w in ("word_1pct", "word_01pct", "word_top")}  # type: ignore[assignment]
    return rows, terms


def load(dsn: str, address_id: str, mailbox_id: str, rows: list[dict[str, Any]]) -> None:
    import psycopg2

    from common.blobs import blob_id_of

    conn = psycopg2.connect(dsn)
    cur = conn.cursor()
    cur.execute("SET mta.deferred_counts = 'on'")  # counts written once below
    threads: dict[str, datetime] = {}
    for r in rows:
        threads.setdefault(r["thread"], r["thread_created"])
    buf = io.StringIO()
    for tid, created in threads.items():
        buf.write(f"{tid}\t{address_id}\t{created.isoformat()}\n")
    buf.seek(0)
    cur.copy_expert("COPY mta.threads (id, address_id, created_at) FROM STDIN", buf)
    blobs = io.StringIO()
    seen_blobs: set[str] = set()
    stage = io.StringIO()
    members = io.StringIO()
    for r in rows:
        p = r["parsed"]
        blob = blob_id_of(r["raw"])
        r["blob"] = blob
        if blob not in seen_blobs:
            seen_blobs.add(blob)
            blobs.write(f"{blob}\t\\\\x{r['raw'].hex()}\t{r['received'].isoformat()}\n")
        stage.write("\t".join([
            r["id"], address_id, blob, r["thread"], str(len(r["raw"])), r["received"].isoformat(),
            _t(_array(r["keywords"])), _t(p.message_id), _t(_array(p.in_reply_to)), _t(_array(p.references)),
            _t(p.subject), _t(json.dumps(p.from_addrs)), _t(json.dumps(p.to_addrs)), _t(json.dumps(p.cc_addrs)),
            _t(p.sent_at.isoformat() if p.sent_at else None), _t(p.preview), "t" if p.has_attachment else "f",
            _t(p.body_text),
        ]) + "\n")  # fmt: skip
        members.write(
            f"{mailbox_id}\t{r['id']}\t{r['received'].isoformat()}\t{'t' if '$seen' in r['keywords'] else 'f'}\t{r['thread']}\n"
        )
    blobs.seek(0)
    cur.copy_expert("COPY mta.inline_blobs (blob_id, data, created_at) FROM STDIN", blobs)
    cur.execute(
        """CREATE TEMP TABLE stage (id uuid, address_id uuid, blob_id text, thread_id uuid, size int,
           received_at timestamptz, keywords text[], message_id text, in_reply_to text[], refs text[],
           subject text, from_addrs jsonb, to_addrs jsonb, cc_addrs jsonb, sent_at timestamptz,
           preview text, has_attachment boolean, body text)"""
    )
    stage.seek(0)
    cur.copy_expert("COPY stage FROM STDIN", stage)
    cur.execute(
        """INSERT INTO mta.emails (id, address_id, blob_id, thread_id, size, received_at, keywords,
               message_id, in_reply_to, "references", subject, from_addrs, to_addrs, cc_addrs,
               sent_at, preview, has_attachment)
           SELECT id, address_id, blob_id, thread_id, size, received_at, keywords, message_id,
                  in_reply_to, refs, subject, from_addrs, to_addrs, cc_addrs, sent_at, preview,
                  has_attachment
             FROM stage ORDER BY received_at"""
    )
    cur.execute(
        "INSERT INTO mta.email_words (email_id, words)"
        " SELECT id, to_tsvector('simple', body) FROM stage ORDER BY received_at"
    )
    members.seek(0)
    cur.copy_expert(
        "COPY mta.email_mailboxes (mailbox_id, email_id, received_at, seen, thread_id) FROM STDIN",
        members,
    )
    cur.execute(
        """UPDATE mta.mailboxes SET total_emails = (SELECT count(*) FROM mta.email_mailboxes WHERE mailbox_id = %s),
               unread_emails = (SELECT count(*) FROM mta.email_mailboxes WHERE mailbox_id = %s AND NOT seen)
            WHERE id = %s""",
        (mailbox_id, mailbox_id, mailbox_id),
    )
    cur.execute(
        "INSERT INTO mta.changes (address_id, type_name, object_id, change, created_at) VALUES (%s, 'Email', %s, 'created', now())",
        (address_id, rows[-1]["id"]),
    )
    conn.commit()
    conn.autocommit = True
    cur.execute("VACUUM ANALYZE mta.emails")
    cur.execute("VACUUM ANALYZE mta.email_mailboxes")
    cur.execute("VACUUM ANALYZE mta.threads")
    cur.execute("VACUUM ANALYZE mta.email_words")
    conn.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run(args: argparse.Namespace) -> None:
    from common.blobs import LocalBlobStore
    from common.clock import Clock
    from common.db import Database, fetch_all
    from common.embedded_pg import EmbeddedPostgres
    from mta.jmap.email import get, query
    from mta.jmap.email.context import EmailContext
    from mta.store import mailboxes
    from mta.store.raw import RawMessages

    # --keep DIR: fill once, measure again later (the filled database stays in DIR).
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="jmap-query-"))
    tmp.mkdir(parents=True, exist_ok=True)
    filled = (tmp / "terms.json").exists()
    pg = EmbeddedPostgres(tmp / "pgdata", delete_on_stop=not args.keep)
    pg.start()
    if args.pg:
        # --pg NAME=VALUE: server settings for this run (shared_buffers needs a restart).
        import psycopg2

        conn = psycopg2.connect(pg.dsn())
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("ALTER SYSTEM RESET ALL")
            for setting in args.pg:
                name, _, value = setting.partition("=")
                cur.execute(f"ALTER SYSTEM SET {name} = %s", (value,))
        conn.close()
        pg.stop()
        pg.start()
    try:
        dsn = pg.ensure_database("bench")
        if filled:
            terms = json.loads((tmp / "terms.json").read_text())
            address_id, inbox = terms["address_id"], terms["inbox"]
            db = await Database.connect(dsn, size=2)
            from common.migrations import migrate
            from gateway.main import all_migrations

            await migrate(db, all_migrations())
        else:
            address_id = await prepare(dsn)
            db = await Database.connect(dsn, size=2)
            async with db.transaction() as conn:
                roles = await mailboxes.ensure_defaults(conn, address_id, datetime.now(UTC))
            inbox = roles["inbox"]
            t0 = time.perf_counter()
            rows, terms = generate(args.messages)
            t1 = time.perf_counter()
            await asyncio.to_thread(load, dsn, address_id, inbox, rows)
            t2 = time.perf_counter()
            print(
                f"generated and parsed {len(rows)} messages in {t1 - t0:.1f} s, loaded in {t2 - t1:.1f} s"
            )
            terms.update(address_id=address_id, inbox=inbox)
            (tmp / "terms.json").write_text(json.dumps(terms))
        size = await db.fetch_val("SELECT pg_size_pretty(pg_total_relation_size('mta.emails'))")
        print(f"mta.emails: {size}; terms: {terms}")
        shown = await db.fetch_all(
            "SELECT name, current_setting(name) AS setting FROM pg_settings WHERE name IN"
            " ('shared_buffers', 'work_mem', 'effective_cache_size', 'random_page_cost')"
        )
        print("settings:", ", ".join(f"{r['name']}={r['setting']}" for r in shown))
        ctx = EmailContext(raw=RawMessages(db, LocalBlobStore(tmp / "blobs")), clock=Clock())
        base = {"filter": {"inMailbox": inbox}, "limit": 50}
        cases: list[tuple[str, Any, dict[str, Any]]] = [
            ("query: inbox, receivedAt desc, 50, total", query.query, {**base, "calculateTotal": True}),
            ("query: inbox, receivedAt desc, position 5000", query.query, {**base, "position": 5000}),
            ("query: text (a word in 1% of mail), total", query.query, {"filter": {"operator": "AND", "conditions": [{"inMailbox": inbox}, {"text": terms["word_1pct"]}]}, "limit": 50, "calculateTotal": True}),
            ("query: text (a word in 0.1%), total", query.query, {"filter": {"operator": "AND", "conditions": [{"inMailbox": inbox}, {"text": terms["word_01pct"]}]}, "limit": 50, "calculateTotal": True}),
            ("query: text (the commonest word), total", query.query, {"filter": {"operator": "AND", "conditions": [{"inMailbox": inbox}, {"text": terms["word_top"]}]}, "limit": 50, "calculateTotal": True}),
            ("query: from (a first name)", query.query, {"filter": {"operator": "AND", "conditions": [{"inMailbox": inbox}, {"from": terms["sender"]}]}, "limit": 50}),
            ("query: from (a whole address), total", query.query, {"filter": {"operator": "AND", "conditions": [{"inMailbox": inbox}, {"from": terms["sender_email"]}]}, "limit": 50, "calculateTotal": True}),
            ("query: collapseThreads", query.query, {**base, "collapseThreads": True}),
            ("query: collapseThreads, total", query.query, {**base, "collapseThreads": True, "calculateTotal": True}),
            ("query: unread ($seen not set)", query.query, {"filter": {"operator": "AND", "conditions": [{"inMailbox": inbox}, {"notKeyword": "$seen"}]}, "limit": 50}),
        ]  # fmt: skip
        page = await db.fetch_all(
            "SELECT email_id::text AS id FROM mta.email_mailboxes WHERE mailbox_id = %s ORDER BY received_at DESC LIMIT 50",
            (inbox,),
        )
        listing = [
            "id",
            "threadId",
            "mailboxIds",
            "keywords",
            "from",
            "subject",
            "receivedAt",
            "preview",
            "hasAttachment",
            "size",
        ]
        cases += [
            ("get: 50 emails, listing properties", get.get, {"ids": [r["id"] for r in page], "properties": listing}),
            ("get: 1 email, full body (bodyValues)", get.get, {"ids": [page[7]["id"]], "properties": ["bodyStructure", "textBody", "htmlBody", "attachments", "bodyValues", "headers"], "fetchAllBodyValues": True}),
        ]  # fmt: skip
        report = []
        async with db.connection() as conn:
            for name, fn, call_args in cases:
                call_args = {"accountId": address_id, **call_args}
                # Totals are remembered per Email state (query.py): measured cold (as
                # after every change) and then as a client's next page or poll sees them.
                for cold in (True, False) if call_args.get("calculateTotal") else (True,):
                    times = []
                    for i in range(args.runs + 5):
                        if cold:
                            query._TOTALS.clear()
                        s = time.perf_counter()
                        result = await fn(ctx, conn, address_id, call_args)
                        if i >= 5:  # warm-up
                            times.append((time.perf_counter() - s) * 1000)
                    count = len(result.get("ids", result.get("list", [])))
                    label = name + (
                        ""
                        if not call_args.get("calculateTotal")
                        else (" (cold)" if cold else " (cached total)")
                    )
                    report.append(
                        (
                            label,
                            statistics.median(times),
                            pct(times, 0.99),
                            count,
                            result.get("total"),
                        )
                    )
                    print(
                        f"{label:62} p50 {statistics.median(times):7.2f} ms  p99 {pct(times, 0.99):7.2f} ms  ({count} results, total {result.get('total')})",
                        flush=True,
                    )
            # The peer: the same statements without the Python around them.
            print("\nbare SQL (the statement Email/query sends, on the same connection):")
            for name, fn, call_args in cases:
                if fn is not query.query:
                    continue
                plan = query.compile_query(address_id, call_args)
                sql = plan.page_sql(int(call_args.get("position", 0)), 50)
                times = []
                for i in range(args.runs + 5):
                    s = time.perf_counter()
                    await fetch_all(conn, sql, plan.sql.params)
                    if i >= 5:
                        times.append((time.perf_counter() - s) * 1000)
                print(
                    f"{name:62} p50 {statistics.median(times):7.2f} ms  p99 {pct(times, 0.99):7.2f} ms",
                    flush=True,
                )
                if args.plans:
                    async with conn.cursor() as cur:
                        await cur.execute(
                            "EXPLAIN (ANALYZE, COSTS OFF, TIMING ON, SUMMARY ON) " + sql,
                            plan.sql.params,
                        )
                        print("\n".join("    " + r[0] for r in await cur.fetchall()))
                        if call_args.get("calculateTotal"):
                            count_sql, count_params = query.count_statement(plan)
                            await cur.execute(
                                "EXPLAIN (ANALYZE, COSTS OFF) " + count_sql, count_params
                            )
                            print("    -- total:")
                            print("\n".join("    " + r[0] for r in await cur.fetchall()))
        await db.close()
    finally:
        pg.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--plans", action="store_true")
    parser.add_argument("--keep", help="a directory to keep the filled database in, and reuse")
    parser.add_argument(
        "--pg",
        action="append",
        metavar="NAME=VALUE",
        help="a PostgreSQL setting for the run (ALTER SYSTEM and a restart; repeatable)",
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
