#!/bin/sh
# Regenerate tests/fixtures/backlog/demo-shop/backlog/ with the real Backlog.md CLI (npm backlog.md 1.52.0):
# two milestones, tasks in each (done, in progress, blocked, to do by ordinal), one task without a milestone,
# and two decisions whose sections are filled in by hand afterwards, as Backlog.md expects people to.
# Times are the tool's "now"; the `Blocked` status is added to config.yml by hand, as `backlog config` says to.
set -eu
VERSION=1.52.0
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT="$HERE/tests/fixtures/backlog/demo-shop"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK" && npm install --silent --no-audit --no-fund "backlog.md@$VERSION" >/dev/null)
B="$WORK/node_modules/.bin/backlog"
mkdir "$WORK/demo-shop"
cd "$WORK/demo-shop"
git init -q
git config user.email demo@example.com
git config user.name Demo
$B init "Demo Shop" --defaults </dev/null >/dev/null 2>&1
$B config set remoteOperations false >/dev/null
sed -i 's/^statuses: .*/statuses: ["To Do", "In Progress", "Blocked", "Done"]/' backlog/config.yml
$B milestone add "v1 Foundation" >/dev/null
$B milestone add "v2 Checkout" >/dev/null
$B task create "Set up repo" -m "v1 Foundation" -s Done >/dev/null
$B task create "Data model" -m "v1 Foundation" -s Done --final-summary "Tables for carts and orders" >/dev/null
$B task create "Cart API" -m "v2 Checkout" -s "In Progress" --plan "1. add to cart 2. list cart" >/dev/null
$B task create "Payment provider" -m "v2 Checkout" -s Blocked -d "Waiting for the sandbox keys" >/dev/null
$B task create "Receipts" -m "v2 Checkout" --ordinal 5500 -l email >/dev/null
$B task create "Order history" -m "v2 Checkout" --ordinal 5000 --priority high >/dev/null
$B task create "Write the README" >/dev/null
$B decision create "Use SQLite first" -s accepted >/dev/null
$B decision create "Pay with Stripe" >/dev/null
for f in backlog/decisions/decision-1*.md; do
  sed -i '/^## Context$/a\
\
One server, few writes; nobody to run a database.' "$f"
  sed -i '/^## Decision$/a\
\
SQLite in WAL mode until the shop outgrows it.' "$f"
  sed -i '/^## Consequences$/a\
\
A migration to Postgres later.' "$f"
done
for f in backlog/decisions/decision-2*.md; do
  sed -i '/^## Context$/a\
\
Card payments for the checkout.' "$f"
  sed -i '/^## Decision$/a\
\
Stripe Checkout.' "$f"
  printf '\n## Alternatives\n\n- Adyen: more setup\n- PayPal only: fewer customers\n' >> "$f"
done
rm -rf "$OUT"
mkdir -p "$OUT"
cp -r backlog "$OUT/backlog"
echo "wrote $OUT with backlog.md $VERSION"
