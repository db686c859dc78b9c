"""Running the drift checks over a workspace (`Checker`, `run`) and `planstate check` itself (`check`).

A check reads each file once (reader.py) and runs the rules over what it read: each file on its
own (filerules.py), STATE.md against itself and its history (staterules.py), the records against
each other (recordrules.py), the generated regions (regionrules.py) and the whole workspace
(workspacerules.py). Findings and their codes are findings.py's; the safe fixes are fixes.py's.
The watcher keeps one `Checker` for its whole life: files whose stat identity did not change are
not read again, and its timer re-evaluates only the findings that depend on the clock (`timed`).
`check` and the resume brief run a `Checker` with `memo`: when no file of the workspace changed, the
findings come from the findings memo (memo.py).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.check import filerules, recordrules, regionrules, staterules, workspacerules
from planstate.check.findings import CODES, FIXABLE, Finding, Report, ordered
from planstate.check.reader import CLEAN, FileRead, Reader
from planstate.core.collector import without_collector
from planstate.model.kinds import RECORD_FOLDERS

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative
    from planstate.store.memo import Inputs
    from planstate.store.scan import Listing

# What other modules (and tests) take from here: the entry points, and the findings they return.
__all__ = ["CODES", "FIXABLE", "STALE_AFTER", "Checker", "Finding", "Report", "check", "run"]

STALE_AFTER = 30 * 60  # seconds without a heartbeat after which an active session is reported stale
MANY = 64  # more records of a folder to read again than this: a run in full (reading in two processes) costs less


class _NotFromRows(Exception):
    """A check from the store's rows cannot give what a run in full gives (see `Checker.run_from_rows`)."""


def check(ctx: Context, *, fix_findings: bool = False, diff: bool = False, stale_after: float = STALE_AFTER) -> Report:
    """Run the checks; with `fix_findings` apply the safe fixes and check again; with `diff` include the changes."""
    from planstate.check.fixes import fix, preview

    files, findings = run(ctx, stale_after=stale_after, memo=not fix_findings)  # a fix reads what it fixes
    changes = preview(ctx, findings) if diff else []
    if not fix_findings or not any(f.fixable for f in findings):
        return Report(files, findings, changes=changes, fixing=fix_findings)
    failures = fix(ctx, findings)
    files, after = run(ctx, stale_after=stale_after)
    remaining = {f.key for f in after}
    fixed = [f for f in findings if f.fixable and f.key not in remaining]
    return Report(files, after, fixed, failures, changes, fixing=True)


def run(
    ctx: Context, *, stale_after: float = STALE_AFTER, now: datetime | None = None, memo: bool = False
) -> tuple[int, list[Finding]]:
    """Check every file of the workspace; return how many files were checked and the findings, sorted. With `memo`,
    answer from the findings memo when no file changed since it was kept (see check/memo.py)."""
    checker = Checker(ctx, stale_after, memo=memo)
    findings = checker.run(now)
    return checker.files, findings


class Checker:
    """Runs the checks over a workspace; keep one to check again cheaply (the watcher does)."""

    def __init__(
        self,
        ctx: Context,
        stale_after: float,
        reader: Reader | None = None,
        *,
        regions: bool = True,
        resume_files: bool = True,
        drivers: bool = True,
        memo: bool = False,
    ) -> None:
        self.ctx = ctx
        self.stale_after = stale_after
        self.reader = reader or Reader(ctx)
        self.check_regions = regions  # the resume brief needs neither regions nor the resume files checked
        self.check_resume_files = resume_files
        self.check_drivers = drivers  # whether git's attributes name drivers this clone lacks (two git calls at most)
        # Whether a run may answer from the findings memo (check/memo.py): then `reads` and `records` are read only
        # when asked for. The watcher keeps its own reads between runs instead.
        self.memo = memo
        self.now: datetime | None = None
        self.findings: list[Finding] = []
        self.files = 0
        self.active: list[recordrules.ActiveSession] = []  # active sessions seen by the last run
        self.reads: dict[Path, FileRead] = {}  # every file but the records the last run read, by path
        self.records: dict[Path, list[FileRead]] = {}  # the records the last run read, by folder
        # The record files a run from the store's rows took, by folder (its path inside the workspace, then the
        # names): made into paths only when `names` is asked (17,000 strings otherwise made for nothing).
        self.record_names: list[tuple[str, list[str]]] | None = None
        self.names_asked = False  # whether the drivers' rule of the last run needed the names of the files it read
        # The memo's key and name the last run was answered or kept under (None without one): a caller may keep
        # what it derives from the same files under the same key (the resume brief's records do).
        self.memo_key: Inputs | None = None
        self.memo_label = ""
        self.listings: dict[str, Listing] = {}  # each folder's scan, as the memo's key took it

    def run(self, now: datetime | None = None, *, only: Initiative | None = None) -> list[Finding]:
        """Check every file of the workspace (or of the initiative `only`, and the workspace-wide rules); return
        the findings, sorted. With `memo`, from the findings memo when no file changed since it was kept."""
        if self.memo:
            from planstate.check import memo

            return memo.run(self, now, only)
        return self.run_in_full(now, only=only)

    def _begin(self, now: datetime | None) -> None:
        """Forget what the last run found and read, and begin reading as of `now` (None: the clock's time)."""
        from planstate.core.clock import now as clock_now

        self.now = now or clock_now()
        self.findings = []
        self.files = 0
        self.active = []
        self.reads = {}
        self.records = {}
        self.record_names = None
        self.names_asked = False
        self.reader.begin()

    def run_in_full(self, now: datetime | None = None, *, only: Initiative | None = None) -> list[Finding]:
        """Check every file as `run` does, without the memo."""
        from planstate.store.initiatives import discover

        self._begin(now)
        initiatives = discover(self.ctx.root)
        for initiative in initiatives:
            if only is None or initiative.dir == only.dir:
                self.initiative(initiative)
        if len(initiatives) > 1:  # with one initiative, neither workspace rule can be broken
            self.workspace_rules()
        if self.check_drivers:
            self.findings += workspacerules.drivers(self.ctx, self._names_asked)
        self.reader.end()
        # Saving the store makes its folders: never bring back a .planning/ deleted meanwhile.
        if self.ctx.root.is_dir():
            self.ctx.save_cache()
        return ordered(self.findings)

    @without_collector  # the names of every record folder: tens of thousands of strings, and no cycles
    def run_from_rows(
        self, now: datetime | None, only: Initiative | None, listings: dict[str, Listing]
    ) -> list[Finding] | None:
        """Check as `run_in_full` does, from the store's rows of each record folder (store/folders.vouch, with the
        scan in `listings`): only the records changed since their rows were made, and those with findings, are
        read; the rules across records run on the few records that could break them. None when that cannot be done
        (a record that does not validate, or many changed: then run in full). `records` is made when asked for."""
        from planstate.store.initiatives import discover

        self._begin(now)
        names: list[tuple[str, list[str]]] = []
        initiatives = discover(self.ctx.root)
        with self.ctx.vouching():
            try:
                for initiative in initiatives:
                    if only is None or initiative.dir == only.dir:
                        self.initiative_from_rows(initiative, listings, names)
            except _NotFromRows:
                return None
        self.record_names = names
        if len(initiatives) > 1:
            self.workspace_rules()
        if self.check_drivers:
            self.findings += workspacerules.drivers(self.ctx, self._names_asked)
        self.reader.end()
        if self.ctx.root.is_dir():
            self.ctx.save_cache()  # the rows of the records read now serve the next process
        return ordered(self.findings)

    def initiative_from_rows(
        self, initiative: Initiative, listings: dict[str, Listing], names: list[tuple[str, list[str]]]
    ) -> None:
        """Check an initiative as `initiative` does, from the store's rows of its records (see `run_from_rows`); add
        its records' names to `names`."""
        from planstate.check.memo import temp_listed
        from planstate.store import folders
        from planstate.store.folders import vouch

        ctx = self.ctx
        state = self.file(initiative.state_path, "state")
        data = state.mapping if state.valid else None
        vouched: dict[str, list[folders.Vouched]] = {}

        def prime(unsure: list[str]) -> bool:
            if len(unsure) > MANY:
                raise _NotFromRows("many records changed: a run in full reads them in two processes")
            return False

        for kind in RECORD_FOLDERS:
            vouched[kind] = []
            for where in (initiative.folder(kind), initiative.archive(kind)):
                found = vouch(ctx, where, kind, listings.get(str(where)), prime)
                if found is None:
                    raise _NotFromRows("no store to answer from")
                vouched[kind].append(found)
                record_names = found.listing.records()[0]
                self.files += len(record_names)
                names.append((found.prefix, record_names))
                unclean = ctx.store.select(found.prefix, "name", "clean IS NOT ?", (CLEAN,), "ORDER BY name")
                if len(unclean) > MANY:
                    raise _NotFromRows("many records to judge: a run in full judges them in two processes")
                for name in sorted({*found.strange, *(row[0] for row in unclean)}):
                    read = self.reader.file(where / name, kind)
                    self.judge(read)
                    self.findings.extend(read.findings or ())
        if self.check_regions and data is not None and not state.conflicts:
            for kind in RECORD_FOLDERS:
                live = vouched[kind][0]
                if live.strange or ctx.store.select(live.prefix, "1", "valid IS NOT 1", (), "LIMIT 1"):
                    # the regions would name what is wrong with them as a run in full names it: run in full
                    raise _NotFromRows("a record is not valid")
        if temp_listed(listings):
            self.findings += workspacerules.temp_files(ctx, initiative)  # else the memo's scan saw none to judge
        log_path = initiative.history_path
        log = self.file(log_path, "history") if log_path.exists() else None
        self.findings += staterules.history(initiative, log, ctx.display(log_path), data)
        assert self.now is not None
        found_across, active = recordrules.cross(
            ctx, initiative, vouched, data, self.reader, self.now, self.stale_after
        )
        self.findings += found_across
        self.active += active
        if data is not None:
            self.state_rules(initiative, state, data, None)

    def timed(self, now: datetime | None = None) -> list[Finding]:
        """The findings that depend on the clock (stale sessions) as of `now`, for the sessions the last run saw
        active; nothing is read but the heartbeat files' times."""
        from planstate.core.clock import now as clock_now

        self.now = now or clock_now()
        found = (recordrules.stale(self.ctx, session, self.now, self.stale_after) for session in self.active)
        return ordered(f for f in found if f is not None)

    def file(self, path: Path, kind: str) -> FileRead:
        """Read one file (once per run) and add its own findings: reading, parsing, conflicts, schema, keys."""
        found = self.reader.file(path, kind)
        self.reads[path] = found
        self.files += 1
        if found.findings is None:
            found.findings = filerules.file_findings(found)
        self.findings.extend(found.findings)
        return found

    def folder(self, folder: Path, kind: str) -> list[FileRead]:
        """Read the record files of a folder (see `Reader.records`) and add their own findings."""
        found = self.reader.records(folder, kind, self.judge)
        self.records[folder] = found
        self.files += len(found)
        for read in found:
            if not read.partial:  # a partial read's store's row says the per-file rules found nothing in its bytes
                self.judge(read)
                self.findings.extend(read.findings or ())
        return found

    def judge(self, read: FileRead) -> None:
        """Run the per-file rules on a record read (see `filerules.judge`)."""
        filerules.judge(self.ctx, read)

    def _names_asked(self) -> list[str]:
        """`names`, for the drivers' rule, which asks only when this clone lacks a driver: noted, so that the memo
        keeps the names only then (17,000 of them take most of its bytes)."""
        self.names_asked = True
        return self.names()

    def names(self) -> list[str]:
        """Every file the last run read, by its path inside the workspace."""
        out = [self.ctx.cache_key(path) for path in self.reads]
        if self.record_names is not None:
            return out + [prefix + name for prefix, names in self.record_names for name in names]
        for folder, found in self.records.items():
            prefix = self.ctx.cache_key(folder) + "/"
            out += [prefix + read.name for read in found]
        return out

    def initiative(self, initiative: Initiative) -> None:
        """Check an initiative: its STATE.md, its records, its history and how they refer to each other."""
        state = self.file(initiative.state_path, "state")
        data = state.mapping if state.valid else None
        records: dict[str, list[FileRead]] = {}
        archived: dict[str, list[FileRead]] = {}
        for kind in RECORD_FOLDERS:
            records[kind] = self.folder(initiative.folder(kind), kind)
            archived[kind] = self.folder(initiative.archive(kind), kind)
        self.findings += workspacerules.temp_files(self.ctx, initiative)
        log_path = initiative.history_path
        log = self.file(log_path, "history") if log_path.exists() else None
        self.findings += staterules.history(initiative, log, self.ctx.display(log_path), data)
        # Archived records are records still: their ids count for references and duplicates; regions show the others.
        usable = {kind: [r for r in records[kind] + archived[kind] if r.mapping is not None] for kind in records}
        self.findings += recordrules.references(self.ctx, initiative, usable, data)
        assert self.now is not None
        sessions, active = recordrules.sessions(self.ctx, usable["session"], self.now, self.stale_after)
        self.findings += sessions
        self.active += active
        if data is not None:
            self.state_rules(initiative, state, data, records)

    def state_rules(
        self, initiative: Initiative, state: FileRead, data: dict[str, Any], records: dict[str, list[FileRead]] | None
    ) -> None:
        """The rules of a valid STATE.md: derived copies, completion, resume files and regions (planned from the
        `records` read, else from the record files as a render plans them)."""
        self.findings += staterules.derived(initiative, state, data)
        self.findings += staterules.structure(initiative, state, data)
        self.findings += staterules.completion(state, data)
        if self.check_resume_files:
            self.findings += staterules.resume_files(self.ctx, state, data)
        if self.check_regions and not state.conflicts:  # a conflicted body has its own finding (and fix)
            self.findings += regionrules.regions(self.ctx, initiative, state, data, records)

    def workspace_rules(self) -> None:
        """At most one active initiative; each initiative's folder name matches its id; a history repair that would
        make a second initiative active is not fixable."""
        found = workspacerules.initiatives(self.ctx)
        self.findings += found
        if any(f.code == "multiple-active-initiatives" for f in found):
            self.findings = [workspacerules.no_second_active(f, self.reads) for f in self.findings]
