"""The store (store/cache.py: one SQLite file of what planstate read from the planning files) is a cache: deleting
it, a hand edit that keeps size and mtime, a `git checkout` and a merge behind planstate's back never make a command
answer from stale data."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from builders import blocker, decision, write_record
from conftest import CORPUS, Run, exits, json_data, state_file
from gitutil import commit_all, git, new_repo
from hypothesis import given, settings
from hypothesis import strategies as st

from planstate import Workspace
from planstate.core.errors import PlanstateError
from planstate.store.cache import NAME, VERSION, Store
from planstate.text import parser
from planstate.text.document import Document
from planstate.text.plaindata import same

CACHE = Path(".planning") / ".local" / "cache" / f"{NAME}-v{VERSION}.sqlite"


def age_the_cache(project: Path) -> int:
    """Make every kept identity trusted on its own, as if it had been read long after each file last changed (the
    store trusts an identity only once it is older than the filesystem's timestamp tick), and so no folder's row
    names a file as too recent; return the rows (none without a store)."""
    if not (project / CACHE).is_file():
        return 0
    with sqlite3.connect(project / CACHE) as db:
        db.execute("UPDATE files SET seen = seen + 3600000000000 WHERE dev IS NOT NULL")
        db.execute("UPDATE folders SET recent = '[]'")
        return int(db.execute("SELECT count(*) FROM files WHERE dev IS NOT NULL").fetchone()[0])


def titles(run: Run, project: Path) -> list[str]:
    """The titles `decision list --all` shows, in its order."""
    return [d["title"] for d in json_data(exits(run("decision", "list", "--all", "--json", cwd=project)))["decisions"]]


def add_decisions(project: Path, count: int) -> list[Path]:
    """Write `count` decision files by hand and render them into STATE.md."""
    paths = [write_record(project, "decision", decision(i)) for i in range(count)]
    Workspace.find(project).render()
    return paths


def same_size_edit(path: Path, old: str, new: str) -> None:
    """Change `old` to `new` (as long) in place, keeping the inode and setting the mtime back to the very
    nanosecond it had: only the ctime, which no tool can set, tells the edit."""
    assert len(old) == len(new)
    info = path.stat()
    text = path.read_text(encoding="utf-8")
    with open(path, "r+", encoding="utf-8") as handle:  # in place: the same inode
        handle.write(text.replace(old, new))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (info.st_ino, info.st_size, info.st_mtime_ns)


def test_a_deleted_cache_is_rebuilt_and_answers_the_same(run: Run, project: Path) -> None:
    add_decisions(project, 12)
    before = titles(run, project)
    assert (project / CACHE).is_file()
    (project / CACHE).unlink()
    assert titles(run, project) == before
    exits(run("decision", "add", "--context", "c", "--decision", "Use jose", "--reason", "r", cwd=project))
    (project / CACHE).unlink()
    assert sorted(titles(run, project)) == sorted([*before, "Use jose"])
    exits(run("check", cwd=project))


def test_a_corrupt_cache_costs_only_time(run: Run, project: Path) -> None:
    add_decisions(project, 3)
    before = titles(run, project)
    (project / CACHE).write_bytes(b"not a database at all" * 100)
    assert titles(run, project) == before
    exits(run("check", cwd=project))
    exits(run("validate", cwd=project))


def test_a_hand_edit_keeping_size_inode_and_mtime_is_seen(run: Run, project: Path) -> None:
    paths = add_decisions(project, 12)
    exits(run("check", cwd=project))  # reads everything: every file has a row with its identity
    assert age_the_cache(project) >= 12
    newest, oldest = paths[-1], paths[0]
    same_size_edit(newest, "Decision number 11", "Decision NUMBER 11")
    same_size_edit(oldest, "status: accepted", "status: rejected")
    shown = json_data(exits(run("decision", "show", newest.stem, "--json", cwd=project)))
    assert shown["title"] == "Decision NUMBER 11"
    listed = json_data(exits(run("decision", "list", "--all", "--json", cwd=project)))["decisions"]
    assert {d["id"]: (d["title"], d["status"]) for d in listed}[oldest.stem] == ("Decision number 0", "rejected")
    result = exits(run("check", cwd=project), 1)  # the decisions region shows the old title: stale
    assert "stale-region" in result.stdout
    exits(run("check", "--fix", cwd=project))
    assert "Decision NUMBER 11" in state_file(project).read_text(encoding="utf-8")
    assert json_data(exits(run("validate", "--json", cwd=project)))["findings"] == []


def test_a_recent_row_vouches_for_its_summary_only_while_the_bytes_have_its_digest(run: Run, project: Path) -> None:
    """A row written less than the timestamp tick after its file changed is not trusted by identity alone: its
    summary is reused when the file's bytes still have the row's digest, else the file is read and summarized."""
    (path,) = add_decisions(project, 1)
    exits(run("decision", "list", "--json", cwd=project))  # its row now has its identity
    future = path.stat().st_mtime_ns + 3600 * 10**9  # a changed mtime past every `seen`: recent, however slow
    os.utime(path, ns=(future, future))
    info = path.stat()
    identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)

    def doctor(digest: str | None) -> None:
        """Give the file's row its current identity, and a summary and status calling the decision superseded."""
        with sqlite3.connect(project / CACHE) as db:
            ((key, summary, status, real),) = db.execute(
                "SELECT key, summary, status, digest FROM files WHERE key LIKE ?", (f"%decisions/{path.name}",)
            ).fetchall()
            wrong = summary.replace('"accepted"', '"superseded"')
            assert wrong != summary and status == "accepted"
            db.execute(
                "UPDATE files SET dev = ?, ino = ?, size = ?, mtime = ?, ctime = ?, summary = ?, status = ?, "
                "digest = ? WHERE key = ?",
                (*identity, wrong, "superseded", digest or real, key),
            )

    def listed() -> list[str]:
        found = json_data(exits(run("decision", "list", "--json", cwd=project)))["decisions"]
        return [d["id"] for d in found]

    doctor("0" * 32)  # bytes that are not the ones summarized: the summary is not used
    assert listed() == [path.stem]
    doctor(None)  # the very bytes summarized: the recent row's summary is used, proof that it is what decides
    assert listed() == []


def test_a_hand_edit_that_breaks_a_record_is_reported_from_a_warm_cache(run: Run, project: Path) -> None:
    paths = add_decisions(project, 3)
    exits(run("check", cwd=project))
    age_the_cache(project)
    same_size_edit(paths[1], "status: accepted", "status: accepte!")
    found = json_data(exits(run("validate", "--json", cwd=project), 1))["findings"]
    assert [(f["field"], f["line"]) for f in found] == [("status", 6)]  # located by a round-trip parse
    result = exits(run("decision", "add", "--context", "c", "--decision", "Use jose", "--reason", "r", cwd=project))
    assert "region decisions not rendered" in result.stderr  # the region never drops the broken record


def test_a_checkout_behind_our_back_is_read_again(run: Run, tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    exits(run("init", "--title", "Cache", cwd=repo))
    add_decisions(repo, 4)
    commit_all(repo, "four decisions")
    git(repo, "checkout", "--quiet", "-b", "other")
    exits(run("decision", "add", "--context", "c", "--decision", "Use Redis", "--reason", "r", cwd=repo))
    first = (repo / ".planning" / "decisions").iterdir().__next__()
    text = first.read_text(encoding="utf-8")
    first.write_text(text.replace("Decision number", "Decision on other"), encoding="utf-8")
    commit_all(repo, "other")
    exits(run("render", cwd=repo))
    commit_all(repo, "render")
    on_other = titles(run, repo)
    exits(run("check", cwd=repo))
    age_the_cache(repo)
    git(repo, "checkout", "--quiet", "main")
    on_main = titles(run, repo)
    assert "Use Redis" in on_other and "Use Redis" not in on_main
    assert not any("on other" in t for t in on_main)
    exits(run("check", cwd=repo))
    age_the_cache(repo)
    git(repo, "checkout", "--quiet", "other")
    assert titles(run, repo) == on_other
    exits(run("check", cwd=repo))


def test_a_merge_behind_our_back_is_read_again(run: Run, tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    exits(run("init", "--title", "Cache", cwd=repo))
    commit_all(repo, "init")
    git(repo, "checkout", "--quiet", "-b", "side")
    exits(run("decision", "add", "--context", "c", "--decision", "Use Redis", "--reason", "r", cwd=repo))
    commit_all(repo, "side")
    git(repo, "checkout", "--quiet", "main")
    exits(run("decision", "add", "--context", "c", "--decision", "Use jose", "--reason", "r", cwd=repo))
    commit_all(repo, "main")
    exits(run("check", cwd=repo))
    age_the_cache(repo)
    git(repo, "merge", "--quiet", "--no-edit", "side", check=False)  # no driver: STATE.md's regions conflict
    assert sorted(titles(run, repo)) == ["Use Redis", "Use jose"]
    exits(run("check", "--fix", cwd=repo))
    text = state_file(repo).read_text(encoding="utf-8")
    assert "Use Redis" in text and "Use jose" in text


def test_a_write_of_state_md_alone_reads_no_record(run: Run, project: Path) -> None:
    """`set` cannot change what the record regions show, so it leaves them as they are without reading a record:
    a record broken meanwhile is neither read nor warned about by it; `check` and `render` still see it."""
    paths = add_decisions(project, 3)
    paths[0].write_text("---\ntitle: [broken\n", encoding="utf-8")
    result = exits(run("set", "next_action", "Carry on", cwd=project))
    assert result.stderr == ""
    assert "parse-error" in exits(run("check", cwd=project), 1).stdout


# ---------------------------------------------------------------------------- records the cache vouches for


def findings(run: Run, project: Path, *args: str) -> list[dict[str, object]]:
    """The findings of `check --json` (or another command's), whatever its exit."""
    result = run(*(args or ("check",)), "--json", cwd=project)
    assert result.returncode in (0, 1), result.stderr
    found: list[dict[str, object]] = json_data(result)["findings"]
    return found


def broken_pair(project: Path) -> list[Path]:
    """Six clean decisions, a seventh with the id of the first, and an eighth superseding one that does not exist:
    findings across records, about files each clean on its own."""
    paths = [write_record(project, "decision", decision(i)) for i in range(6)]
    twin = paths[0].with_name(f"{paths[0].stem}-twin.md")
    twin.write_text(paths[0].read_text(encoding="utf-8").replace("number 0", "number 7"), encoding="utf-8")
    lost = write_record(project, "decision", decision(8, supersedes="dec-0000000000000"))
    Workspace.find(project).render()
    return [*paths, twin, lost]


def test_a_warm_check_reads_no_clean_record_and_finds_what_a_cold_one_finds(run: Run, project: Path) -> None:
    """Records the cache vouches for are taken from their rows, not read: the findings across them (located in
    their files), check's and validate's, and the resume brief are those of a check with no cache at all."""
    broken_pair(project)
    cold = findings(run, project)
    pinned = {"PLANSTATE_NOW": "2026-11-26T12:00:00Z"}
    cold_brief = json_data(exits(run("resume", "--json", cwd=project, env=pinned)))
    assert {f["code"] for f in cold} == {"duplicate-id", "missing-reference"}
    assert all(f["line"] for f in cold)
    assert age_the_cache(project) >= 8
    with sqlite3.connect(project / CACHE) as db:  # the first check saw them clean: the next one need not read them
        clean = db.execute("SELECT count(*) FROM files WHERE clean IS NOT NULL AND facts IS NOT NULL").fetchone()[0]
    assert clean >= 8
    assert findings(run, project) == cold
    assert findings(run, project, "validate") == []
    assert json_data(exits(run("resume", "--json", cwd=project, env=pinned))) == cold_brief
    (project / CACHE).unlink()
    assert findings(run, project) == cold


def test_a_hand_edit_of_a_clean_record_keeping_size_and_mtime_is_checked_again(run: Run, project: Path) -> None:
    """A record once found clean is judged again when its bytes change, whatever its size and mtime say: a key
    misspelt in place, and git conflict markers in its body, are found from a warm cache."""
    paths = add_decisions(project, 4)
    assert findings(run, project) == []
    age_the_cache(project)
    same_size_edit(paths[1], "reason:", "reasom:")
    found = {(f["code"], f["field"]): f for f in findings(run, project)}
    assert found["unknown-key", "reasom"]["line"] == 9
    assert "did you mean reason?" in str(found["unknown-key", "reasom"]["hint"])
    assert ("schema-error", "reason") in found  # a required field gone
    text = paths[2].read_text(encoding="utf-8")
    paths[2].write_text(text + "<<<<<<< ours\nmine\n=======\ntheirs\n>>>>>>> theirs\n", encoding="utf-8")
    exits(run("check", cwd=project), 1)
    age_the_cache(project)
    conflicts = [f for f in findings(run, project) if f["code"] == "conflict-marker"]
    assert [f["path"] for f in conflicts] == [str(paths[2].relative_to(project))]


def test_a_cold_read_of_many_records_in_two_processes_finds_what_one_finds(run: Run, project: Path) -> None:
    """Past `PRIME_AT` records a cold check parses in two processes; it finds exactly what a warm check then finds,
    and every row it saved (the other process's too) lets the next check read no clean record."""
    from planstate.check.reader import PRIME_AT

    paths = add_decisions(project, PRIME_AT + 10)
    same_size_edit(paths[-1], "status: accepted", "status: accepte!")  # in the last batch of records
    same_size_edit(paths[0], "title:", "titel:")  # in the first
    (project / CACHE).unlink()
    cold = findings(run, project)
    assert {(f["code"], f["field"]) for f in cold} >= {("unknown-key", "titel"), ("schema-error", "status")}
    assert age_the_cache(project) >= PRIME_AT + 10
    with sqlite3.connect(project / CACHE) as db:
        clean = db.execute("SELECT count(*) FROM files WHERE clean IS NOT NULL").fetchone()[0]
    assert clean == PRIME_AT + 8  # every decision but the two with findings
    assert findings(run, project) == cold


def test_what_a_cold_read_keeps_of_the_records_it_judged_is_what_their_rows_give(project: Path) -> None:
    """Each process of a cold read judges its records and saves their rows; a later check takes a clean record's facts
    and summary from its row (reader._decoded) instead of reading it: what each clean one's saved row decodes to is
    exactly what reading the file gives (dates, lists, nulls), and the one with a finding is not marked clean."""
    from planstate.check.filerules import judge
    from planstate.check.reader import CLEAN, Reader, _decoded
    from planstate.store import recordfiles

    extra = [{"supersedes": None, "phase": 2}, {"alternatives": ["a", "b"], "reversible": True}, {"by": "x"}, {}]
    paths = [write_record(project, "decision", decision(i, **extra[i % 4])) for i in range(8)]
    paths.append(write_record(project, "decision", {**decision(8), "status": "accepte!"}))  # has a finding
    ctx = Workspace.find(project).ctx
    reader = Reader(ctx)
    folder = paths[0].parent
    reader._judge_all(folder, "decision", [path.name for path in paths], lambda read: judge(ctx, read))
    assert ctx.save_cache()
    rows = Store(project / CACHE.parent).select(ctx.cache_key(folder) + "/", "name, clean, facts, summary")
    clean = {name: (facts, summary) for name, marked, facts, summary in rows if marked == CLEAN}
    assert sorted(clean) == sorted(path.name for path in paths[:8])  # the clean ones
    for name, (facts, summary) in clean.items():
        [decoded] = _decoded([(0, name, (0, 0, 0, 0, 0), facts, summary)])
        data = Document.from_bytes((folder / name).read_bytes(), name).data
        expected = recordfiles.summarize("decision", folder / name, data)
        assert decoded is not None and expected is not None, name
        assert same(decoded[0], recordfiles.facts(data)) and decoded[1] == list(expected[2:]), name


# ---------------------------------------------------------------------------- the fast read path


CORPUS_FILES = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".md", ".markdown") and p.is_file())


@settings(max_examples=40)
@given(st.sampled_from(CORPUS_FILES))
def test_cached_data_is_the_round_trip_parsers_data(path: Path) -> None:
    """What a read answers from the store (stored, then read back from the database by a new process's store) is
    exactly what the round-trip parser gives for the same bytes."""
    import tempfile

    raw = path.read_bytes()
    try:
        expected = Document.from_bytes(raw, path.name).data
    except PlanstateError:
        return  # a file planstate refuses is never cached
    with tempfile.TemporaryDirectory() as folder:
        first = Store(Path(folder))
        first.get(raw, "x.md", lambda data: Document.from_bytes(data, path.name).data)
        first.save()
        first.close()
        again = Store(Path(folder))

        def refuse(data: bytes) -> None:
            raise AssertionError("parsed again: the store should have answered")

        cached = None
        try:
            cached = again.get(raw, "x.md", refuse)
        except AssertionError:
            return  # data JSON cannot carry exactly (int keys, sets): never cached, always parsed
        finally:
            again.close()
        assert same(cached, expected)


_SCALARS = st.one_of(
    st.text(max_size=8),
    st.integers(),
    st.booleans(),
    st.floats(),
    st.none(),
    st.dates(),
    st.datetimes(timezones=st.one_of(st.none(), st.timezones())),
)
_KEYS = st.one_of(st.sampled_from(["$d", "$dt", "id"]), st.text(max_size=4), st.integers(0, 3))
_PLAIN = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3))


@settings(max_examples=150)
@given(_PLAIN)
def test_data_stored_without_decoding_it_again_decodes_to_itself(value: object) -> None:
    """The cache stores data as JSON without decoding it again when `_exact` vouches for it, else only after the
    round trip proves it: whatever it stores decodes to the same data."""
    from planstate.store.cache import decode, exact_json

    text = exact_json(value)
    if text is not None:
        assert same(decode(text), value)


def test_data_json_cannot_carry_is_not_stored() -> None:
    """Int keys, a mapping that looks like an encoded date, NaN and tuples are never stored (always parsed)."""
    from datetime import date

    from planstate.store.cache import exact_json

    for value in ({1: "a"}, {"$d": "2020-01-01"}, {"x": [{"$dt": "2020-01-01T00:00:00"}]}, float("nan"), ("a",)):
        assert exact_json(value) is None, value
    assert exact_json({"when": date(2020, 1, 1), "n": [1, 2.5, True, None]}) is not None


EXAMPLES = sorted((CORPUS.parent / "examples").rglob("*.md"))


def round_trip(raw: bytes) -> object:
    """The round-trip parser's data of a file's bytes, or the error it refuses them with."""
    try:
        text = Document.from_bytes(raw, "x.md").front_matter_text
        return parser.parse(text, lambda index: (0, 0), "x.md", fast=False).data if text.strip() else None
    except PlanstateError as exc:
        return exc


@settings(max_examples=60)
@given(st.sampled_from(CORPUS_FILES + EXAMPLES))
def test_the_fast_path_gives_the_round_trip_parsers_data_or_nothing(path: Path) -> None:
    """The C path answers a file only with exactly the round-trip parser's data, and never answers a file that
    parser refuses (that one is parsed round trip, which locates the error)."""
    from planstate.text.fastyaml import MISS, front_matter_data

    raw = path.read_bytes()
    fast, expected = front_matter_data(raw), round_trip(raw)
    if fast is MISS:
        return
    assert not isinstance(expected, PlanstateError), f"answered a file the round-trip parser refuses: {expected}"
    assert same(fast, expected)


def test_the_fast_path_answers_plain_front_matter_and_leaves_the_rest() -> None:
    """Plain YAML goes the fast way (so it is not a path that never runs); anchors, tags, merge keys, duplicate keys
    and errors go round trip."""
    from planstate.text.fastyaml import MISS, front_matter_data

    plain = b"---\nid: dec-1\ndate: 2026-01-02\nwhen: 2026-01-02T03:04:05Z\nn: 0o17\nok: yes\nlist: [1, 2.5]\n---\n"
    assert same(front_matter_data(plain), round_trip(plain))
    for text in (
        b"---\na: &x 1\nb: *x\n---\n",
        b"---\na: !!str 12\n---\n",
        b"---\nbase: {a: 1}\nc:\n  <<: {a: 2}\n---\n",
        b"---\na: 1\na: 2\n---\n",
        b"---\na: [1\n---\n",
        b"---\n%YAML 1.2\n---\n",
        b"no front matter\n",
    ):
        assert front_matter_data(text) is MISS, text


def test_a_warm_get_or_status_imports_no_yaml_parser_and_no_jinja(run: Run, project: Path) -> None:
    """Once STATE.md's row is trusted, `get` and `status` answer from the cache: no ruamel, no Jinja."""
    import subprocess
    import sys

    exits(run("check", cwd=project))
    age_the_cache(project)
    for command in (["get", "next_action"], ["status"]):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "planstate", *command],
            cwd=project,
            capture_output=True,
            text=True,
            env={**os.environ, "PLANSTATE_ACTOR": "tester"},
        )
        assert done.returncode == 0, done.stderr
        imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time")}
        assert "planstate.store.cache" in imported  # it did read through the cache...
        assert not any(name.split(".")[0] in ("ruamel", "jinja2", "yaml") for name in imported), command  # ...only


def test_a_render_that_changes_nothing_imports_no_yaml_parser_and_no_jinja(run: Run, project: Path) -> None:
    """`render` of a STATE.md whose regions are current takes its front matter from the cache, as a write's region
    refresh does, and leaves the file as it was."""
    import subprocess
    import sys

    exits(run("render", cwd=project))
    age_the_cache(project)
    before = state_file(project).read_bytes()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "planstate", "render"],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PLANSTATE_ACTOR": "tester"},
    )
    assert done.returncode == 0, done.stderr
    assert "up to date" in done.stdout
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time")}
    assert "planstate.store.cache" in imported
    assert not any(name.split(".")[0] in ("ruamel", "jinja2", "yaml") for name in imported)
    assert state_file(project).read_bytes() == before


def test_status_takes_open_blockers_from_their_facts_and_sees_a_hand_edit_of_one(run: Run, project: Path) -> None:
    """`status` decides which open blockers stop the current phase from their cached facts (their files are not
    read whole unless they block it): a blocker that does, shown with its title, and a same-size hand edit that
    makes another one block it, are both seen."""
    for i, affects in enumerate([["phase 1"], ["phase 2"], [], ["phase 3"]]):
        write_record(project, "blocker", blocker(i, affects=affects, status="active" if i != 3 else "resolved"))
    exits(run("check", "--fix", cwd=project))
    exits(run("check", cwd=project))
    assert age_the_cache(project) >= 4

    def stopped() -> tuple[str, list[str]]:
        found = json_data(exits(run("status", "--json", cwd=project)))
        return found["status"], [b["title"] for b in found["blockers"]]

    assert stopped() == ("blocked", ["Blocker number 0"])
    folder = project / ".planning" / "blockers"
    second = next(p for p in folder.iterdir() if "phase 2" in p.read_text(encoding="utf-8"))
    same_size_edit(second, "- phase 2", "- phase 1")
    assert stopped() == ("blocked", ["Blocker number 0", "Blocker number 1"])
    first = next(p for p in folder.iterdir() if "number 0" in p.read_text(encoding="utf-8"))
    same_size_edit(first, "Blocker number 0", "Blocker NUMBER 0")  # a title alone: read whole, so seen
    assert stopped() == ("blocked", ["Blocker NUMBER 0", "Blocker number 1"])


def test_kept_facts_answer_only_for_files_whose_identity_vouches_for_their_row(run: Run, project: Path) -> None:
    """The facts kept of a record (store/folders.facts_of) answer for it only while its stat identity vouches for its
    row: not for a row read within the timestamp tick of the file's change, nor after a same-size edit or a
    deletion."""
    from planstate.store.folders import facts_of

    paths = [write_record(project, "blocker", blocker(i)) for i in range(3)]
    folder, names = paths[0].parent, [p.name for p in paths]
    later = time.time_ns() + 1_800_000_000_000  # changed half an hour from now, as a busy machine sees it: too recent
    for path in paths:
        os.utime(path, ns=(later, later))
    exits(run("check", "--fix", cwd=project))
    assert facts_of(Workspace.find(project).ctx, folder, names) == {}  # rows read "just after" the change
    age_the_cache(project)
    facts = facts_of(Workspace.find(project).ctx, folder, names)
    assert [facts[name]["status"] for name in names] == ["active"] * 3 and "title" not in facts[names[0]]
    same_size_edit(paths[1], "status: active", "status: resolv")
    paths[2].unlink()
    assert list(facts_of(Workspace.find(project).ctx, folder, names)) == [names[0]]


def test_resume_judges_blockers_from_their_facts_and_shows_them_whole(run: Run, project: Path) -> None:
    """The brief judges open blockers from the facts the checks kept (their files unread), and makes whole only
    those that block a phase or are shown: their titles, and a same-size hand edit of one, are what it says."""
    for i, affects in enumerate([["phase 1"], ["phase 2"], []]):
        write_record(project, "blocker", blocker(i, affects=affects))
    exits(run("check", "--fix", cwd=project))
    exits(run("check", cwd=project))
    age_the_cache(project)

    def brief() -> tuple[list[tuple[int, list[str]]], list[str]]:
        found = json_data(exits(run("resume", "--json", cwd=project)))
        phases = [(p["number"], [b["title"] for b in p["blockers"]]) for p in found["blocked_phases"]]
        return phases, sorted(b["title"] for b in found["blockers"]["items"])

    titles = ["Blocker number 0", "Blocker number 1", "Blocker number 2"]
    assert brief() == ([(1, titles[:1]), (2, titles[1:2])], titles)
    folder = project / ".planning" / "blockers"
    third = next(p for p in folder.iterdir() if "number 2" in p.read_text(encoding="utf-8"))
    same_size_edit(third, "Blocker number 2", "Blocker NUMBER 2")
    assert brief() == ([(1, titles[:1]), (2, titles[1:2])], sorted([*titles[:2], "Blocker NUMBER 2"]))
    second = next(p for p in folder.iterdir() if "number 1" in p.read_text(encoding="utf-8"))
    same_size_edit(second, "- phase 2", "- phase 1")
    assert brief()[0] == [(1, titles[:2])]


def test_resume_shows_the_newest_decisions_from_their_summaries_and_sees_hand_edits(run: Run, project: Path) -> None:
    """The brief's decisions come from their cached summaries, the newest read whole: a same-size hand edit of a
    title or a status, and a deleted cache, are seen."""
    paths = add_decisions(project, 8)
    exits(run("check", cwd=project))
    age_the_cache(project)

    def shown() -> tuple[list[str], int, int]:
        found = json_data(exits(run("resume", "--json", cwd=project)))["decisions"]
        return [d["title"] for d in found["items"]], found["total"], found["rejected"]

    newest = [f"Decision number {i}" for i in range(7, 2, -1)]
    assert shown() == (newest, 8, 0)
    same_size_edit(paths[7], "Decision number 7", "Decision NUMBER 7")
    same_size_edit(paths[6], "status: accepted", "status: rejected")
    assert shown() == (["Decision NUMBER 7", *[f"Decision number {i}" for i in range(5, 1, -1)]], 8, 1)
    (project / CACHE).unlink()
    assert shown() == (["Decision NUMBER 7", *[f"Decision number {i}" for i in range(5, 1, -1)]], 8, 1)


def test_the_brief_takes_the_same_records_from_the_checks_reads_as_from_the_cache(run: Run, project: Path) -> None:
    """The brief takes a folder's records from the checks' reads when they read it, else from the cache's
    summaries and facts, or from queries over the store's rows (a findings-memo hit reads none): each gives the same
    summaries and facts, and the same part of the brief."""
    from planstate.check.checks import STALE_AFTER, Checker
    from planstate.report import brief
    from planstate.store import folders
    from planstate.store.recordfiles import FACTS

    add_decisions(project, 4)
    for i in range(3):
        write_record(project, "blocker", blocker(i, affects=["phase 1"], status=("active", "new", "resolved")[i]))
    exits(run("session", "start", "--by", "worker-1", cwd=project))
    exits(run("check", "--fix", cwd=project))
    age_the_cache(project)
    ctx = Workspace.find(project).ctx
    checker = Checker(ctx, STALE_AFTER, regions=False, resume_files=False, drivers=False)
    checker.run(only=ctx.target)
    for kind in ("decision", "blocker", "session"):
        from_reads = brief._summaries(ctx, ctx.target, kind, dict(checker.records.items()))
        from_cache = brief._summaries(ctx, ctx.target, kind, {})
        assert from_reads[:2] == from_cache[:2] and from_reads[0]
        items = [brief._with_facts(ctx, found[0], found[2]) for found in (from_reads, from_cache)]
        facts = [[(i.id, {k: v for k, v in i.data.items() if k in FACTS}) for i in each] for each in items]
        assert facts[0] == facts[1]
        vouched = folders.vouch(ctx, ctx.target.folder(kind), kind)
        assert vouched is not None and checker.now is not None
        part = brief._PARTS[kind](ctx, ctx.target, dict(checker.records.items()), checker.now)
        assert brief._FROM_STORE[kind](ctx, vouched) == part
