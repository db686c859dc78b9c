#!/bin/sh
# Regenerate tests/fixtures/gsd/made-with-gsd-tools/ with the real GSD tool (npm get-shit-done-cc 1.32.0).
# GSD's own commands are prompts for an agent: the agent writes ROADMAP.md and STATE.md from GSD's templates,
# and `gsd-tools` changes them. This script plays the agent with the template text and lets the tool do the
# rest: a decimal phase inserted after phase 2, phase 1 planned, summarized and completed, a decision, a blocker,
# a session record and a paused hand-off (.continue-here.md, GSD's pause-work format). Times are the tool's "now".
set -eu
VERSION=1.32.0
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT="$HERE/tests/fixtures/gsd/made-with-gsd-tools"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK" && npm install --silent --no-audit --no-fund "get-shit-done-cc@$VERSION" >/dev/null)
GSD="node $WORK/node_modules/get-shit-done-cc/get-shit-done/bin/gsd-tools.cjs"
TEMPLATES="$WORK/node_modules/get-shit-done-cc/get-shit-done/templates"
PROJECT="$WORK/demo-shop"
mkdir -p "$PROJECT/.planning"
cd "$PROJECT"
git init -q
cat > .planning/ROADMAP.md <<'MD'
# Roadmap: Demo Shop

## Overview

A small web shop, from the data model to a deployed checkout.

## Phases

**Phase Numbering:**
- Integer phases (1, 2, 3): Planned milestone work
- Decimal phases (2.1, 2.2): Urgent insertions (marked with INSERTED)

Decimal phases appear between their surrounding integers in numeric order.

- [ ] **Phase 1: Foundation** - Data model and project skeleton
- [ ] **Phase 2: Checkout API** - Cart and checkout endpoints
- [ ] **Phase 3: Deploy** - Hosting and release

## Phase Details

### Phase 1: Foundation
**Goal**: A running skeleton with the data model
**Depends on**: Nothing (first phase)
**Plans**: 1 plan

Plans:
- [ ] 01-01: Data model

### Phase 2: Checkout API
**Goal**: Customers can pay
**Depends on**: Phase 1
**Plans**: TBD

### Phase 3: Deploy
**Goal**: The shop is online
**Depends on**: Phase 2
**Plans**: TBD

## Progress

| Phase | Plans Complete | Status | Completed |
|-------|----------------|--------|-----------|
| 1. Foundation | 0/1 | Not started | - |
| 2. Checkout API | 0/? | Not started | - |
| 3. Deploy | 0/? | Not started | - |
MD
sed -n '/^```markdown/,/^```$/p' "$TEMPLATES/state.md" | sed '1d;$d' \
  | sed 's/^Phase: \[X\] of \[Y\] (\[Phase name\])/Phase: 1 of 3 (Foundation)/' \
  | sed 's/^Plan: \[A\] of \[B\] in current phase/Plan: 0 of 1 in current phase/' \
  | sed 's/^Status: \[.*\]/Status: Ready to plan/' \
  | sed 's/^- \[Phase [XY]\]: \[Decision summary\]$//' \
  | sed 's/^Last session: .*/Last session: 2026-11-20 10:00/' \
  | sed 's/^Stopped at: .*/Stopped at: Roadmap created/' \
  | sed 's/^Resume file: .*/Resume file: None/' > .planning/STATE.md
mkdir -p .planning/phases/01-foundation .planning/phases/02-checkout-api .planning/phases/03-deploy
$GSD phase insert 2 "Payment hotfix" >/dev/null
$GSD state begin-phase --phase 1 --name Foundation --plans 1 >/dev/null
$GSD template fill plan --phase 1 --plan 01 --name "Data model" >/dev/null
$GSD template fill summary --phase 1 --plan 01 --name "Data model" >/dev/null
$GSD state add-decision --phase 1 --summary "Use SQLite for the first release" --rationale "no server to run" >/dev/null
$GSD phase complete 1 >/dev/null
$GSD state add-blocker --text "Phase 3: waiting for hosting credentials" >/dev/null
$GSD state record-session --stopped-at "Completed phase 1" >/dev/null
cat > .planning/phases/02-checkout-api/.continue-here.md <<MD
---
phase: 02-checkout-api
task: 2
total_tasks: 5
status: in_progress
last_updated: $(date -u +%Y-%m-%dT%H:%M:%SZ)
---

<current_state>
Cart endpoints done; checkout endpoint half written.
</current_state>

<completed_work>

- Task 1: Cart model - Done
- Task 2: Checkout endpoint - In progress, validation written
</completed_work>

<remaining_work>

- Task 2: Checkout endpoint - call the payment provider
- Task 3: Receipts - Not started
</remaining_work>

<decisions_made>

- Decided to keep prices in cents because floats round
</decisions_made>

<blockers>

- Payment sandbox keys: asked for them, using a stub meanwhile
</blockers>

<context>
The payment hotfix (phase 2.1) may change the checkout response.
</context>

<next_action>
Start with: call the payment provider from the checkout endpoint
</next_action>
MD
rm -rf "$OUT"
mkdir -p "$OUT"
cp -r .planning "$OUT/.planning"
find "$OUT" -name .gitkeep -delete
echo "wrote $OUT with get-shit-done-cc $VERSION"
