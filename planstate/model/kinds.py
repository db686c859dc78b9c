"""The .planning format v1: typed models of STATE.md and of decision, blocker, session and task records.

docs/format.md is the normative description of these models; tests check the two agree.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from planstate.model.schema import Field, ListOf, ListView, MapOf, Model, Nested
from planstate.model.types import Bool, Date, DateTime, Enum, Int, Nullable, Number, OneOf, Scalar, Str
from planstate.text.paths import first_phase

SCHEMA_VERSION = 1

LIFECYCLE_STATES = (
    "active",
    "paused",
    "suspended",
    "error",
    "failed",
    "completed",
    "abandoned",
    "archived",
)
PHASE_STATUSES = ("pending", "active", "completed", "failed", "skipped")
FINISHED = ("completed", "skipped")  # phase statuses that count as done: the initiative can complete
CHECKPOINTS = ("pending", "passed", "failed", "skipped")
TASK_STATUSES = ("pending", "in_progress", "blocked", "verifying", "done")  # position.status: the single worker's
TASK_RECORD_STATUSES = ("pending", "in_progress", "done", "dropped")  # a task record's (tasks/<id>-<slug>.md)
DECISION_STATUSES = ("proposed", "accepted", "superseded", "rejected")
BLOCKER_STATUSES = ("new", "active", "bypassed", "resolved")
OPEN_BLOCKERS = ("new", "active", "bypassed")  # not resolved: `blocker list` and the brief show them
BLOCKING = ("new", "active")  # open blockers that stop the phases they affect; a bypassed one has a workaround
SESSION_STATUSES = ("active", "ended", "crashed")
READ_ONLY_STATES = ("archived", "completed")  # the work is read-only in these until `planstate reopen`


def read_only_message(initiative: object, state: str) -> str:
    """The one wording every command uses to refuse changing an archived or completed initiative."""
    return f"initiative {initiative} is {state} (read-only): `planstate reopen` first"


# The commands that own managed fields: `planstate set/append/unset` refuse those fields and name these.
LIFECYCLE_COMMANDS = "planstate pause|resume --activate|suspend|error|fail|retry|complete|abandon|archive|reopen"
PHASE_COMMANDS = "planstate phase start|complete|fail|retry|skip"
POSITION_PHASE_COMMANDS = "planstate position --phase N|phase start N"
# Fields fixed when the initiative is created: no command changes them afterwards.
CREATION = "planstate init|initiative new (it is fixed at creation)"
# The structure snapshot: made at creation; afterwards only the commands that change the phase list change it.
STRUCTURE_COMMANDS = (
    "planstate init|initiative new|phase add|remove|move "
    "(phases_total counts the phases; the rest is fixed at creation)"
)


class Unset(enum.Enum):
    """The type of UNSET: an API keyword argument that was not given (where None means "set to null")."""

    UNSET = "unset"


UNSET = Unset.UNSET

SLUG = r"[a-z0-9][a-z0-9-]{0,62}"
RECORD_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"

_slug = Str(SLUG, hint="a slug: lowercase letters, digits and '-' (e.g. auth-rewrite)")
_record_id = Str(RECORD_ID, hint="an id: letters, digits, '.', '_' or '-' (e.g. dec-0kf3p9ab2x or block-001)")
_text = Str()
_opt_text = Nullable(Str())
_opt_time = Nullable(DateTime())
_version = Int(minimum=1)


class Structure(Model):
    """The workflow structure snapshot taken at creation; the initiative completes against it."""

    doc = "The workflow structure snapshot taken at creation: the initiative completes against it."
    phases_total = Field(Int(minimum=0), "How many phases the workflow has.", required=True, example=4)
    first_phase = Field(
        Int(minimum=0, maximum=1),
        "Number of the first phase: 0 or 1 (the numbering base).",
        required=True,
        example=1,
    )
    workflow = Field(_opt_text, "Name or version of the workflow the phases came from.", example="default")


class ImportedFrom(Model):
    """Where an imported initiative, phase or record came from: a re-import updates it instead of adding another."""

    doc = "The source an imported item came from (`planstate import`): a re-import finds and updates it."
    source = Field(
        Str(min_length=1), "The importer that made it: gsd, backlog or workflow.", required=True, example="gsd"
    )
    path = Field(
        Str(min_length=1), "The source file, relative to the imported folder.", required=True, example="ROADMAP.md"
    )
    id = Field(
        Nullable(OneOf(Int(), Str())),
        "Its id or label in the source (a GSD phase label such as `2.1`, a task id).",
        example="2.1",
    )


class Attempt(Model):
    """An earlier attempt at a phase, kept as it was when the phase started again (append-only)."""

    doc = "An earlier attempt at a phase: its timing, checkpoint, evidence and failure, as they were."
    started = Field(_opt_time, "When the attempt started.")
    ended = Field(_opt_time, "When it was completed or failed (null when that was not recorded).")
    checkpoint = Field(Enum(*CHECKPOINTS), "Its checkpoint result.", default="pending", example="failed")
    evidence = Field(MapOf(Scalar()), "Its evidence.", example={"coverage": "65%"})
    failure = Field(_opt_text, "Why it failed, when that was given.")


class Phase(Model):
    """One phase of the workflow, with its timing, checkpoint and evidence."""

    doc = "One phase: its name, status, timing, checkpoint result and evidence."
    name = Field(Str(min_length=1), "Name of the phase.", required=True, example="JWT implementation")
    status = Field(
        Enum(*PHASE_STATUSES), "Where the phase is.", default="pending", example="active", managed=PHASE_COMMANDS
    )
    started = Field(_opt_time, "When the phase was (last) started.", managed=PHASE_COMMANDS)
    completed = Field(_opt_time, "When the phase was completed.", managed=PHASE_COMMANDS)
    duration_seconds = Field(Nullable(Number()), "Seconds from started to completed.", derived=True, example=1800)
    checkpoint = Field(
        Enum(*CHECKPOINTS),
        "Result of the phase's checkpoint.",
        default="pending",
        example="passed",
        managed=PHASE_COMMANDS,
    )
    evidence = Field(MapOf(Scalar()), "Evidence for the checkpoint: name to value.", example={"tests": "42/45"})
    failure = Field(_opt_text, "Why the phase failed, when it did.", managed=PHASE_COMMANDS)
    skip_reason = Field(_opt_text, "Why the phase was skipped, when it was.", managed=PHASE_COMMANDS)
    attempts = Field(Int(minimum=0), "How many times the phase was started.", default=0, managed=PHASE_COMMANDS)
    failed_at = Field(
        _opt_time, "When the current attempt failed (`phase fail` or a failed checkpoint).", managed=PHASE_COMMANDS
    )
    previous = Field(
        ListOf(Nested(Attempt)),
        "Earlier attempts, oldest first, kept when the phase starts again (`phase retry`, `phase start`).",
        managed=PHASE_COMMANDS,
    )
    imported_from = Field(Nullable(Nested(ImportedFrom)), "Where it was imported from (`planstate import`).")


class Position(Model):
    """Where work is: phase, plan, task, wave, status and sub-phase step."""

    doc = "The current position: phase, plan, task, wave, status and step."
    phase = Field(
        Int(minimum=0),
        "Number of the current phase; always a valid phase.",
        required=True,
        example=2,
        managed=POSITION_PHASE_COMMANDS,
    )
    phase_name = Field(_opt_text, "Name of the current phase.", derived=True, example="JWT implementation")
    plan = Field(Nullable(OneOf(Int(minimum=0), Str())), "Current plan within the phase.", example=3)
    plan_name = Field(_opt_text, "Name of the current plan.", example="Refresh token rotation")
    task = Field(_opt_text, "The task being worked on.", example="Implement token rotation endpoint")
    wave = Field(Nullable(Int(minimum=0)), "Current wave of parallel work.", example=1)
    status = Field(Enum(*TASK_STATUSES), "Status of the current task.", default="pending", example="in_progress")
    step = Field(_opt_text, "Sub-phase step inside the current phase.", example="tuning")


class ErrorInfo(Model):
    """The last error of the initiative (lifecycle state `error`)."""

    doc = "Error details kept for the `error` state and for retries."
    message = Field(Str(), "What went wrong.", required=True)
    at = Field(_opt_time, "When it happened.")
    retries = Field(Int(minimum=0), "How many retries were made since.", default=0)
    details = Field(MapOf(Scalar()), "Further facts about the error.")


class Lifecycle(Model):
    """The lifecycle state with when, why and by whom it was entered."""

    doc = "The lifecycle state, from the transition table, with when, why and by whom it was entered."
    state = Field(Enum(*LIFECYCLE_STATES), "The lifecycle state.", required=True, example="active")
    since = Field(_opt_time, "When the current state was entered.")
    reason = Field(_opt_text, "Why the current state was entered.")
    by = Field(_opt_text, "Who caused the transition (a person or agent name).")
    context = Field(_opt_text, "What was being worked on when paused or suspended.")
    completed_at = Field(_opt_time, "When the initiative was completed (set explicitly).")
    total_duration_seconds = Field(
        Nullable(Number()), "Seconds from `created` to `completed_at`, recorded on completion.", example=86400
    )
    resumed_at = Field(_opt_time, "When the initiative was last resumed.")
    resume_count = Field(Int(minimum=0), "How many times it was resumed.", default=0)
    error = Field(Nullable(Nested(ErrorInfo)), "The last error, for state `error`.")


class Progress(Model):
    """Counts for readers; the phase counts are recomputed on every write."""

    doc = "Progress counts. Phase counts, percent and bar are derived from `phases`."
    phases_total = Field(Int(minimum=0), "Number of phases.", derived=True, example=4)
    phases_completed = Field(Int(minimum=0), "Number of completed phases.", derived=True, example=1)
    percent = Field(Int(minimum=0, maximum=100), "Completed phases as a percentage.", derived=True, example=25)
    bar = Field(Str(), "A text progress bar.", derived=True, example="█████░░░░░░░░░░░░░░░ 25%")
    current_phase_tasks = Field(Nullable(Int(minimum=0)), "Tasks in the current phase.", example=8)
    current_phase_completed = Field(Nullable(Int(minimum=0)), "Tasks completed in the current phase.", example=5)


class ResumeContext(Model):
    """What a returning agent needs beyond the position."""

    doc = "Context for resuming: files touched, key implementations, open questions."
    files_modified = Field(ListOf(Str()), "Files touched in the current stretch of work.")
    key_implementations = Field(ListOf(Str()), "What was built, in a sentence each.")
    open_questions = Field(ListOf(Str()), "Questions still open.")


class Transition(Model):
    """One entry of the lifecycle history (a line of history.jsonl)."""

    doc = "One lifecycle transition: a line of history.jsonl. Lines are only ever appended."
    at = Field(DateTime(), "When the transition happened.", required=True)
    from_ = Field(
        Nullable(Enum(*LIFECYCLE_STATES)),
        "The state left (null for the first entry).",
        required=True,
        key="from",
    )
    to = Field(Enum(*LIFECYCLE_STATES), "The state entered.", required=True)
    trigger = Field(Str(min_length=1), "The command or event that caused it.", required=True, example="pause")
    reason = Field(_opt_text, "Why.")
    by = Field(_opt_text, "Who (a person or agent name).")


class State(Model):
    """The front matter of STATE.md: the truth about one initiative."""

    doc = "STATE.md front matter: the truth about one initiative."
    schema_version = Field(_version, "Version of the .planning format.", required=True, example=1)
    initiative = Field(_slug, "Id of the initiative (a slug).", required=True, example="auth-rewrite", managed=CREATION)
    title = Field(Str(min_length=1), "Title of the initiative.", required=True, example="User authentication")
    created = Field(_opt_time, "When the initiative was created.")
    updated = Field(_opt_time, "When planstate last wrote this file.")
    structure = Field(Nested(Structure), "Workflow structure snapshot.", managed=STRUCTURE_COMMANDS)
    phases = Field(ListOf(Nested(Phase)), "The phases, in order.")
    position = Field(Nested(Position), "Where work is.")
    lifecycle = Field(Nested(Lifecycle), "Lifecycle state.", required=True, managed=LIFECYCLE_COMMANDS)
    progress = Field(Nested(Progress), "Progress counts for readers.")
    next_action = Field(_opt_text, "What to do next, in words.")
    resume_context = Field(Nested(ResumeContext), "Context for resuming.")
    imported_from = Field(Nullable(Nested(ImportedFrom)), "Where it was imported from (`planstate import`).")


class Decision(Model):
    """A decision record: decisions/<id>-<slug>.md."""

    doc = "A decision record (decisions/<id>-<slug>.md)."
    schema_version = Field(_version, "Version of the .planning format.", required=True, example=1)
    id = Field(_record_id, "Id of the decision; the file name starts with it.", required=True)
    title = Field(Str(min_length=1), "Short title.", required=True, example="Use jose for JWT")
    date = Field(Date(), "When it was decided.", required=True)
    status = Field(Enum(*DECISION_STATUSES), "Status of the decision.", default="accepted")
    context = Field(Str(), "Where the decision was needed.", required=True, example="JWT library")
    decision = Field(Str(), "What was decided.", required=True, example="jose over jsonwebtoken")
    reason = Field(Str(), "Why this choice.", required=True, example="Better TypeScript support")
    alternatives = Field(ListOf(Str()), "Alternatives considered, each with why it was not chosen.")
    reversible = Field(Bool(), "Whether the decision can be undone cheaply.", default=True)
    supersedes = Field(Nullable(_record_id), "Id of the decision this one replaces.")
    superseded_by = Field(Nullable(_record_id), "Id of the decision that replaced this one.")
    rejection = Field(_opt_text, "Why the decision was rejected (status rejected).")
    phase = Field(Nullable(Int(minimum=0)), "Phase in which it was made.")
    by = Field(_opt_text, "Who decided.")
    imported_from = Field(Nullable(Nested(ImportedFrom)), "Where it was imported from (`planstate import`).")
    request_id = Field(_opt_text, "Key of the call that made it: a retry with the same key answers with this record.")


class Blocker(Model):
    """A blocker record: blockers/<id>-<slug>.md."""

    doc = "A blocker record (blockers/<id>-<slug>.md)."
    schema_version = Field(_version, "Version of the .planning format.", required=True, example=1)
    id = Field(_record_id, "Id of the blocker; the file name starts with it.", required=True)
    title = Field(Str(min_length=1), "Short title.", required=True)
    status = Field(Enum(*BLOCKER_STATUSES), "Status (new, active, bypassed, resolved).", required=True)
    description = Field(Str(), "What is blocking.", required=True)
    identified = Field(DateTime(), "When it was identified.", required=True)
    affects = Field(ListOf(Str()), "What it blocks: phases, plans or tasks.")
    blocked_tasks = Field(ListOf(Str()), "Tasks that cannot proceed.")
    workaround = Field(_opt_text, "How work proceeds around it (status bypassed).")
    resolution = Field(_opt_text, "How it was resolved.")
    resolved = Field(_opt_time, "When it was resolved.")
    by = Field(_opt_text, "Who identified it.")
    log = Field(
        ListOf(Str()),
        "Its status changes, one line each (`<time> <from> → <to>: <why>`), appended by planstate.",
    )
    imported_from = Field(Nullable(Nested(ImportedFrom)), "Where it was imported from (`planstate import`).")
    request_id = Field(_opt_text, "Key of the call that made it: a retry with the same key answers with this record.")


class Session(Model):
    """A work session record: sessions/<id>-<agent>.md."""

    doc = "A work session of an agent or person (sessions/<id>-<agent>.md)."
    schema_version = Field(_version, "Version of the .planning format.", required=True, example=1)
    id = Field(_record_id, "Id of the session; the file name starts with it.", required=True)
    agent = Field(Str(min_length=1), "Agent or person working.", required=True, example="worker-abc")
    status = Field(Enum(*SESSION_STATUSES), "active, ended or crashed.", required=True)
    started = Field(DateTime(), "When the session started.", required=True)
    ended = Field(_opt_time, "When it ended (or was found crashed).")
    working_on = Field(_opt_text, "What the session is working on.")
    completed = Field(ListOf(Str()), "What was completed.")
    issues = Field(ListOf(Str()), "Issues met.")
    handoff_reason = Field(_opt_text, "Why work was handed off.")
    notes = Field(_opt_text, "Free notes.")
    context_usage = Field(Nullable(OneOf(Number(), Str())), "How much of the agent's context was used.")
    resumed_from = Field(Nullable(_record_id), "Id of the session this one continues.")
    imported_from = Field(Nullable(Nested(ImportedFrom)), "Where it was imported from (`planstate import`).")
    request_id = Field(_opt_text, "Key of the call that made it: a retry with the same key answers with this record.")


class Claim(Model):
    """Who holds a task: a session, the agent or person acting in it, since when and until when."""

    doc = "Who holds a task: the session, the agent or person, since when and (when bounded) until when."
    session = Field(_record_id, "Id of the session that holds the task.", required=True)
    by = Field(_opt_text, "Who acts in that session.")
    since = Field(DateTime(), "When the claim was made.", required=True)
    until = Field(_opt_time, "When the claim runs out, when it is bounded.")


class Task(Model):
    """A task record: tasks/<id>-<slug>.md."""

    doc = "A task record (tasks/<id>-<slug>.md): a piece of work, what it waits for and where it is."
    schema_version = Field(_version, "Version of the .planning format.", required=True, example=1)
    id = Field(_record_id, "Id of the task; the file name starts with it.", required=True)
    title = Field(Str(min_length=1), "Short title.", required=True, example="Add the users table")
    status = Field(Enum(*TASK_RECORD_STATUSES), "pending, in_progress, done or dropped.", default="pending")
    created = Field(DateTime(), "When it was added.", required=True)
    phase = Field(Nullable(Int(minimum=0)), "Number of the phase it belongs to.", example=2)
    depends_on = Field(ListOf(_record_id), "Ids of the tasks that must be done before it is ready.")
    wave = Field(Nullable(Int(minimum=0)), "Wave of parallel work it belongs to: lower waves are ready first.")
    claim = Field(Nullable(Nested(Claim)), "Who holds it, or null.")
    evidence = Field(MapOf(Scalar()), "Evidence that it is done: name to value.", example={"tests": "12/12"})
    by = Field(_opt_text, "Who added it.")
    imported_from = Field(Nullable(Nested(ImportedFrom)), "Where it was imported from (`planstate import`).")


KINDS: dict[str, type[Model]] = {
    "state": State,
    "decision": Decision,
    "blocker": Blocker,
    "session": Session,
    "task": Task,
    "history": Transition,
}
RECORD_FOLDERS: dict[str, str] = {
    "decision": "decisions",
    "blocker": "blockers",
    "session": "sessions",
    "task": "tasks",
}
RECORD_KINDS: dict[str, str] = {folder: kind for kind, folder in RECORD_FOLDERS.items()}  # `decisions` -> `decision`


def phase_numbers(state: State) -> range:
    """The valid phase numbers of a state: from the numbering base, one per phase. A phase listed beyond
    `structure.phases_total` (added by hand) is numbered too: `planstate check` warns that the snapshot lags."""
    first = state.structure.first_phase if state.structure.exists() else legacy_first_phase(state)
    total = max(state.structure.phases_total, len(state.phases)) if state.structure.exists() else len(state.phases)
    return range(first, first + total)


def legacy_first_phase(state: State) -> int:
    """The numbering base of a file without a structure snapshot (see text.paths.first_phase)."""
    return first_phase(state._data())


def phase_at(state: State, number: int) -> Phase | None:
    """The phase with number `number`, or None when out of range."""
    numbers = phase_numbers(state)
    if number not in numbers:
        return None
    index = number - numbers.start
    return state.phases[index] if index < len(state.phases) else None


_PHASE_REF = re.compile(r"\s*phase\s*[: ]\s*(\d+)\b", re.IGNORECASE)
_RECORD_REF = re.compile(r"(?:dec|blk|ses|tsk)-[0-9a-hjkmnp-tv-z]{12}")


def phase_reference(text: str) -> int | None:
    """The phase number an `affects` item names (`phase 3`, `Phase 3: OAuth`, `phase:3`), else None."""
    match = _PHASE_REF.match(text)
    return int(match.group(1)) if match else None


def with_phase_number(text: str, number: int) -> str:
    """An `affects` item that names a phase by number (`Phase 3: OAuth`) naming phase `number` instead, the rest of
    its text kept (`Phase 4: OAuth`); other text is returned as it is."""
    match = _PHASE_REF.match(text)
    return text if match is None else text[: match.start(1)] + str(number) + text[match.end(1) :]


def affected_phases(state: State, affects: Any) -> list[int]:
    """The phase numbers an `affects` list names, as `phase N` (`Phase 3: OAuth`) or by a phase's exact name
    (case and surrounding spaces aside), each once, in the order named."""
    if not affects or not isinstance(affects, list):
        return []  # most blockers name no phase: the verdicts ask this of every open one
    return phases_affected(state)(affects)


def phases_affected(state: State) -> Callable[[Any], list[int]]:
    """`affected_phases` for many `affects` lists of one state: its phases are looked at once, not per list."""
    numbers = phase_numbers(state)
    names = {str(p.name).strip().casefold(): numbers.start + i for i, p in enumerate(state.phases) if p.name}

    def affected(affects: Any) -> list[int]:
        out: list[int] = []
        for item in affects if isinstance(affects, list) else []:
            number = phase_reference(str(item))
            if number is None:
                number = names.get(str(item).strip().casefold())
            if number is not None and number in numbers and number not in out:
                out.append(number)
        return out

    return affected


def record_reference(text: str) -> str | None:
    """The record id an `affects` item names (exactly a planstate-made id such as `dec-1b2k9qx7m4fa`), else None."""
    text = text.strip()
    return text if _RECORD_REF.fullmatch(text) else None


def is_complete(state: State) -> bool:
    """Whether the initiative is complete: the explicit lifecycle state, or for a legacy file
    without a structure snapshot (written before snapshots existed), every listed phase completed."""
    if state.lifecycle.exists() and state.lifecycle._data().get("state") == "completed":
        return True
    if state.structure.exists():
        return False
    phases = list(state.phases)
    return bool(phases) and all(p.status == "completed" for p in phases)


_AS_IS = frozenset({str, int, float, bool, type(None)})


@functools.cache
def _format_datetime() -> Callable[[datetime], str]:
    """yamltext.format_datetime, imported once (an import inside a function costs microseconds on every call, and
    a cold check converts the times of 17,000 records)."""
    from planstate.text.yamltext import format_datetime

    return format_datetime


def to_json(value: Any) -> Any:
    """Convert plain data to JSON-ready values (timestamps and dates as ISO strings)."""
    if type(value) in _AS_IS:  # most values: a region item converts every value of 17,000 records
        return value
    as_is = _AS_IS
    if isinstance(value, dict):  # the values that are as they are without a call each (a record's are mostly)
        return {str(k): v if type(v) in as_is else to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | ListView):
        return [v if type(v) in as_is else to_json(v) for v in value]
    if isinstance(value, datetime):
        return _format_datetime()(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Model):
        return to_json(value._data())
    return value
