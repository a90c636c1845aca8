/** The document's introduction: what every operation has in common. */
export const API_DESCRIPTION = `
Backend for loot chests in games: players register, own chests, open them for random collectibles
that fill their collections, and hold currency balances.

**Media types.** Requests and answers are JSON:API (\`application/vnd.api+json\`, no media type
parameters: otherwise 415, or 406 for an \`Accept\` that only names it with parameters). Two
exceptions, as the spec shows: the chest-opening result has a custom \`data\` object, and the credit
endpoint takes and answers plain \`application/json\`.

**Authentication.** Every \`/api\` route and the spec's unprefixed aliases need the app's key in the
\`apikey\` header. Player operations also need \`Authorization: Bearer <access token>\` from
registration, login, refresh or guest creation; on the other routes a token is optional and adds
the player's own data (balances, ownership, progress). A token that is sent must be valid, else 401.

**Errors.** Every failure, on every route, is a JSON:API error document
(\`{"errors":[{"status","code","title","detail","source"}]}\`): \`code\` is stable and meant for
programs, \`source.pointer\` points into the body, \`source.parameter\` names a query or path
parameter. Each operation lists the statuses it can answer and when.

**Lists.** \`page[limit]\` and \`page[offset]\`; top-level \`links\` are absolute URLs with the query
brackets percent-encoded. \`fields[<type>]\` selects attributes; \`include\` adds related resources.

**Retries.** Opening a chest and crediting a balance honour an \`Idempotency-Key\` header: a retry
with the same key gets the first answer again (\`idempotent-replayed: true\`), never a second effect.

**Rate limits.** Per minute, per app and player (or address without a token), tighter on the
credential endpoints; 429 with \`Retry-After\`.

**Paths.** Everything is under \`/api/v1\`; the spec's \`POST /players/login\`, \`GET /currencies\` and
\`POST /currencies/{currency_id}/credit\` are also served at those exact paths.
`.trim();
